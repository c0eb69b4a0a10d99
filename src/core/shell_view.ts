/**
 * Shell commands the cache understands (SPEC §5.10): which commands only
 * read files (a read in the same message as one of them is trusted as
 * usual); which print lines of files in a form whose output can be checked
 * against the files (`cat F`, `cat -n F`, `sed -n 'A,Bp' F`, `head -n N F`,
 * `tail -n +N F`, `grep -n P F`, after a leading `cd DIR &&`; pipes into
 * `head`, `sed -n` and `tail`; `cat F1 F2`, `grep -rn`, `rg -n`,
 * `git diff`), so that what they showed counts as a view of those lines;
 * and which files a command may have printed while it changed files. Also
 * pi's `grep` tool lines (`path:N: text`).
 *
 * Every function here is pure: it looks at the command text and the output,
 * never at a file; a caller compares the output with the file's content
 * with {@linkcode shownLinesOf}.
 *
 * Specified by SPEC.md §5.10.
 *
 * @module
 */
import { TO_END } from "./view.ts";

/**
 * Which lines of one file a recognised command prints, and in what form.
 *
 * @example
 * ```ts
 * import type { ShellLines } from "@readcache/core/rules";
 * const s: ShellLines = { kind: "range", start: 3, end: 7 }; // sed -n '3,7p' F
 * ```
 */
export type ShellLines =
  /** `cat F`: the file as it is. */
  | { kind: "whole" }
  /** `cat -n F`: every line, numbered as GNU cat numbers them. */
  | { kind: "numbered" }
  /** `sed -n 'A,Bp' F`, `tail -n +A F` (`end` {@linkcode TO_END}): lines `start..end`. */
  | { kind: "range"; start: number; end: number }
  /** `head -n N F`, `cat F | head -N`: the first `count` lines. */
  | { kind: "head"; count: number }
  /** `tail -n N F`: the last `count` lines (a view only when that is the whole file). */
  | { kind: "tail"; count: number }
  /** `grep -n P F`: matching lines as `N:text`. */
  | { kind: "grep" }
  /** `cat -n F | sed -n 'A,Bp'`, `nl -ba F | sed -n 'A,Bp'`, `cat -n F | head -N`: numbered. */
  | { kind: "numberedRange"; start: number; end: number }
  /**
   * `head -n H F | tail -n T`: lines `H-T+1..H` without numbers (a view only
   * when the file has at least `H` lines: otherwise the model cannot tell
   * which lines they are).
   */
  | { kind: "headTail"; head: number; tail: number };

/**
 * Lines of several files a recognised command prints (SPEC §5.10), each
 * checked against its file as it is at the result.
 *
 * @example
 * ```ts
 * import type { MultiView } from "@readcache/core/rules";
 * const v: MultiView = { kind: "rows", paths: ["src"], bare: true }; // grep -rn P src
 * ```
 */
export type MultiView =
  /**
   * `grep -rn P PATH...`, `grep -n P F1 F2`, `rg -n P PATH...`: rows
   * `path:N:text` (a path as the search printed it); bare `N:text` rows when
   * `bare` and the one path searched is a file.
   */
  | { kind: "rows"; paths: string[]; bare: boolean }
  /** `cat F1 F2 ...`: the files one after another (each but the last ending with a line break). */
  | { kind: "concat"; paths: string[] }
  /**
   * `git diff` of the working tree (one revision at most, no `--cached`):
   * the new side of each hunk (context and added lines), in files named
   * relative to the repository's top directory; `dir` is where a leading
   * `cd` moved.
   */
  | { kind: "gitDiff"; dir: string };

/**
 * What a shell command is, as far as the cache is concerned.
 *
 * @example
 * ```ts
 * import { classifyShellCommand } from "@readcache/core/rules";
 * classifyShellCommand("sed -n '1,20p' src/a.ts");
 * // { readOnly: true, showsContent: true,
 * //   view: { path: "src/a.ts", lines: { kind: "range", start: 1, end: 20 } } }
 * ```
 */
export interface ShellCommand {
  /**
   * True when the command changes no file: every part of it is a command
   * the cache knows to only read, with no output redirection except to
   * `/dev/null`, no command substitution and no background job.
   */
  readOnly: boolean;
  /**
   * For a read-only command: true when some part of it may print file
   * content (`cat`, `grep`, `git diff`, ...), false when every part prints
   * only names, counts or its arguments (`ls`, `find`, `wc`, `pwd`, `echo`).
   */
  showsContent?: boolean;
  /**
   * For a command that prints lines of one file in a known form: the file
   * (joined to the directories of a leading `cd`) and the lines.
   */
  view?: { path: string; lines: ShellLines };
  /** For a command that prints lines of several files in a known form. */
  multi?: MultiView;
}

type Token = { word: string; plain: boolean } | { op: string };

/**
 * Splits a command into words and operators as bash would for the simple
 * commands the cache knows; `undefined` for anything else (command
 * substitution, process substitution, here-documents, unmatched quotes).
 * A word is `plain` when no part of it is expanded by the shell.
 */
function tokenize(command: string): Token[] | undefined {
  const tokens: Token[] = [];
  let word = "";
  let inWord = false;
  let plain = true;
  const flush = () => {
    if (inWord) tokens.push({ word, plain });
    word = "";
    inWord = false;
    plain = true;
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end === -1) return undefined;
      word += command.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < command.length && command[j] !== '"'; j++) {
        const d = command[j];
        if (d === "`" || (d === "$" && command[j + 1] === "(")) return undefined;
        if (d === "$") plain = false;
        if (d === "\\" && j + 1 < command.length) {
          const n = command[++j];
          if (!'"\\$`'.includes(n)) word += "\\";
          word += n;
          continue;
        }
        word += d;
      }
      if (j >= command.length) return undefined;
      inWord = true;
      i = j;
    } else if (c === "\\") {
      if (i + 1 >= command.length || command[i + 1] === "\n") return undefined;
      word += command[++i];
      inWord = true;
    } else if (c === "`" || (c === "$" && command[i + 1] === "(")) {
      return undefined;
    } else if (c === " " || c === "\t") {
      flush();
    } else if ("|&;\n<>()".includes(c)) {
      // a redirection's file descriptor number belongs to the operator: `2>`, `2>&1`
      let op = c;
      if (inWord && /^[0-9]+$/.test(word) && (c === ">" || c === "<")) {
        op = word + c;
        word = "";
        inWord = false;
      }
      flush();
      const two = command.slice(i, i + 2);
      if (two === "&&" || two === "||" || two === ">>" || two === "&>" || two === "<<") {
        op = op.slice(0, -1) + two;
        i++;
      } else if ((c === ">" || c === "<") && command[i + 1] === "&") {
        op += "&";
        i++;
      } else if (c === "<" && command[i + 1] === "(") return undefined;
      if (op.endsWith("<<")) return undefined;
      tokens.push({ op });
    } else {
      if (c === "$" || c === "*" || c === "?" || c === "[" || c === "~" || c === "{") {
        plain = false;
      }
      word += c;
      inWord = true;
    }
  }
  flush();
  return tokens;
}

/** Commands that read files and change none, with the arguments that would make them write. */
type ArgsCheck = (args: readonly string[]) => boolean;
const READ_ONLY: ReadonlyMap<string, ArgsCheck> = new Map<string, ArgsCheck>([
  ["cat", () => true],
  ["head", () => true],
  ["tail", () => true],
  ["wc", () => true],
  ["ls", () => true],
  ["pwd", () => true],
  ["echo", () => true],
  ["nl", () => true],
  ["cd", () => true],
  ["true", () => true],
  ["stat", () => true],
  // file -C compiles a magic file
  ["file", (args) => !args.some((a) => a === "--compile" || /^-\w*C/.test(a))],
  ["du", () => true],
  ["diff", () => true],
  ["which", () => true],
  ["basename", () => true],
  ["dirname", () => true],
  ["realpath", () => true],
  ["cut", () => true],
  ["grep", () => true],
  ["egrep", () => true],
  ["fgrep", () => true],
  // ripgrep runs a program per file with --pre
  ["rg", (args) => !args.some((a) => a.startsWith("--pre"))],
  [
    "find",
    (args) =>
      !args.some((a) => /^-(exec|execdir|ok|okdir|delete|fprint|fprint0|fprintf|fls)$/.test(a)),
  ],
  ["sort", (args) => !args.some((a) => a === "-o" || a.startsWith("--output") || /^-\w*o/.test(a))],
  // sed only as `sed -n` with print commands: no in-place edit, no `w` command
  [
    "sed",
    (args) =>
      args.includes("-n") &&
      args.every((a) => a === "-n" || !a.startsWith("-")) &&
      args.filter((a) => a !== "-n").length >= 1 &&
      SED_PRINT.test(args.filter((a) => a !== "-n")[0]),
  ],
  [
    "git",
    (args) =>
      ["status", "diff", "log", "show", "blame", "ls-files", "rev-parse"].includes(args[0]) &&
      !args.some((a) => a.startsWith("--output") || a === "-o" || a === "--ext-diff"),
  ],
]);

/** Read-only commands that print no file content: names, counts, types, their arguments. */
const NO_CONTENT: ReadonlySet<string> = new Set([
  "ls",
  "pwd",
  "cd",
  "true",
  "wc",
  "stat",
  "du",
  "which",
  "basename",
  "dirname",
  "realpath",
  "find",
  "echo",
  "file",
]);

const SED_PRINT = /^([0-9]+)(?:,([0-9]+|\$))?p$/;
const NUMBER = /^[0-9]+$/;

/** Output redirections that write no file. */
function harmlessRedirect(op: string, target: string | undefined): boolean {
  if (op === "<") return true; // input: reads a file
  if (/^[0-9]*>&$/.test(op)) return target !== undefined && /^[0-9]$/.test(target);
  if (/^[0-9]*>>?$/.test(op) || op === "&>") return target === "/dev/null";
  return false;
}

/**
 * What a shell command is: whether it only reads files, and whether it
 * prints lines of one file in a known form (then the output can be checked
 * against the file and count as a view). Anything the cache does not
 * recognise is not read-only and shows nothing it can use.
 *
 * @example
 * ```ts
 * import { classifyShellCommand } from "@readcache/core/rules";
 * classifyShellCommand("find . -name '*.ts' | head -20").readOnly; // true
 * classifyShellCommand("sed -i 's/a/b/' x.txt").readOnly; // false
 * classifyShellCommand("cat a.txt").view; // { path: "a.txt", lines: { kind: "whole" } }
 * ```
 */
export function classifyShellCommand(command: string): ShellCommand {
  const parts = partsOf(command);
  if (parts === undefined) return { readOnly: false };
  let readOnly = true;
  let showsContent = false;
  for (const c of parts) {
    if (c.writes) return { readOnly: false };
    if (c.words.length === 0) continue;
    const [name, ...rest] = c.words.map((w) => w.word);
    // an assignment before the command (`GIT_EXTERNAL_DIFF=...`) or a path to a program
    if (!isProgramName(c.words[0])) return { readOnly: false };
    const check = READ_ONLY.get(name);
    if (check === undefined || !check(rest)) readOnly = false;
    if (!NO_CONTENT.has(name)) showsContent = true;
  }
  if (!readOnly) return { readOnly: false };
  const shown = viewOf(parts.filter((c) => c.words.length > 0));
  return { readOnly, showsContent, ...shown };
}

type Word = { word: string; plain: boolean };
/** A simple command: its words, the operator after it, and whether it redirects output to a file. */
type Part = { words: Word[]; after?: string; writes: boolean };

/**
 * The simple commands of a command line, split at `|`, `&&`, `||`, `;` and
 * newlines, with redirections dropped (`writes` when one writes a file);
 * `undefined` when the line holds anything else (a background job, a
 * subshell, substitutions, here-documents).
 */
function partsOf(command: string): Part[] | undefined {
  const tokens = tokenize(command);
  if (tokens === undefined) return undefined;
  const parts: Part[] = [];
  let current: Part = { words: [], writes: false };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if ("word" in t) {
      current.words.push(t);
      continue;
    }
    if (/[<>]/.test(t.op)) {
      const next = tokens[i + 1];
      const target = next !== undefined && "word" in next ? next.word : undefined;
      if (!harmlessRedirect(t.op, target)) {
        // `>&` / `<&` to something other than a descriptor, `<>`: not understood
        if (target === undefined || !/^[0-9]*(>>?|&>)$/.test(t.op)) return undefined;
        current.writes = true;
      }
      if (target !== undefined) i++;
      continue;
    }
    if (!["|", "&&", "||", ";", "\n"].includes(t.op)) return undefined;
    current.after = t.op;
    parts.push(current);
    current = { words: [], writes: false };
  }
  parts.push(current);
  return parts;
}

/** A command word naming a program the cache may know: plain, no assignment, no path. */
function isProgramName(w: Word): boolean {
  return w.plain && !w.word.includes("=") && !w.word.includes("/");
}

/**
 * Which files a shell command may have printed at a moment when a part of
 * it that changes files had not yet finished (SPEC §5.10, "Printed while
 * changing"): `none` when no part changes a file, or no part that prints
 * file content can run before or beside one that changes; `paths` (as
 * typed, joined to each directory a `cd` may have moved to; a directory
 * stands for every file under it) when the cache understands every part;
 * `all` when some part is a program the cache cannot see into (it may
 * print any file and change it back before the call returns), or a printed
 * path is not plain. With `besideChanges` (another call of the same
 * message may change files while this one runs), every part that prints
 * counts. The caller decides what an empty output means.
 *
 * @example
 * ```ts
 * import { printedWhileChanging } from "@readcache/core/rules";
 * printedWhileChanging("cat a.txt && cp a.keep a.txt"); // { kind: "paths", paths: ["a.txt"] }
 * printedWhileChanging("cp a.keep a.txt && cat a.txt"); // { kind: "none" }
 * printedWhileChanging("npm test"); // { kind: "all" }
 * printedWhileChanging("cat a.txt", { besideChanges: true }); // { kind: "paths", paths: ["a.txt"] }
 * printedWhileChanging("cat a.txt"); // { kind: "none" }
 * ```
 */
export function printedWhileChanging(
  command: string,
  options: { besideChanges?: boolean } = {},
): MidCallPrints {
  const parts = partsOf(command);
  if (parts === undefined) return { kind: "all" };
  // the directories the shell may be in (relative to where it started; "" is that)
  let dirs: string[] | undefined = [""];
  const effects: { changes: boolean; prints: string[] | "all"; pipeline: number }[] = [];
  let pipeline = 0;
  for (const p of parts) {
    const here = pipeline;
    if (p.after !== "|") pipeline++;
    if (p.words.length === 0) {
      // `> F` alone truncates F
      if (p.writes) effects.push({ changes: true, prints: [], pipeline: here });
      continue;
    }
    const effect = partEffect(p, dirs);
    if (effect === "opaque") return { kind: "all" };
    if ("cd" in effect) {
      // a failed cd leaves the directory as it was: both stay possible; in a pipeline it is a subshell
      dirs = effect.cd === undefined || dirs === undefined
        ? undefined
        : [...new Set([...dirs, ...dirs.map((d) => joinDir(d, effect.cd!))])];
      continue;
    }
    effects.push({ ...effect, pipeline: here });
  }
  const paths = new Set<string>();
  for (let i = 0; i < effects.length; i++) {
    const e = effects[i];
    if (e.prints !== "all" && e.prints.length === 0) continue;
    // a part that changes files after it, beside it in a pipeline, or itself (`sed -i`); or
    // another call of its message
    const changedLater = options.besideChanges === true ||
      effects.some((o, j) => o.changes && (j >= i || o.pipeline === e.pipeline));
    if (!changedLater) continue;
    if (e.prints === "all") return { kind: "all" };
    for (const path of e.prints) paths.add(path);
  }
  return paths.size === 0 ? { kind: "none" } : { kind: "paths", paths: [...paths].sort() };
}

/**
 * What {@linkcode printedWhileChanging} finds a command may have printed
 * while it changed files.
 *
 * @example
 * ```ts
 * import type { MidCallPrints } from "@readcache/core/rules";
 * const m: MidCallPrints = { kind: "paths", paths: ["a.txt"] };
 * ```
 */
export type MidCallPrints =
  | { kind: "none" }
  | { kind: "paths"; paths: string[] }
  | { kind: "all" };

/** `dir` then `path`, as the shell resolves a relative path after `cd dir`. */
function joinDir(dir: string, path: string): string {
  if (path.startsWith("/") || dir === "") return path;
  return `${dir}/${path}`;
}

/** Commands that change files and print no file content (names at most). */
const CHANGING: ReadonlySet<string> = new Set([
  "cp",
  "mv",
  "rm",
  "rmdir",
  "mkdir",
  "touch",
  "ln",
  "chmod",
]);

/** git subcommands that change the working tree and print names at most (without `-p`). */
const GIT_CHANGING: ReadonlySet<string> = new Set([
  "stash",
  "checkout",
  "restore",
  "reset",
  "add",
  "rm",
  "mv",
  "switch",
]);

/** git stash subcommands that print no file content. */
const STASH_QUIET: ReadonlySet<string> = new Set(["push", "pop", "apply", "drop", "save"]);

/**
 * What one simple command does, for {@linkcode printedWhileChanging}: a
 * `cd` (its target, `undefined` when not plain), whether it changes files
 * and which paths it may print (resolved against each possible directory;
 * `all` when unknown), or `opaque` for a program the cache cannot see into.
 */
function partEffect(
  p: Part,
  dirs: string[] | undefined,
): "opaque" | { cd: string | undefined } | { changes: boolean; prints: string[] | "all" } {
  const [first, ...args] = p.words;
  if (!isProgramName(first)) return "opaque";
  const name = first.word;
  const words = args.map((w) => w.word);
  if (name === "cd") {
    const target = args.filter((w) => w.word !== "--");
    if (p.after === "|" || target.length !== 1 || !target[0].plain || target[0].word === "-") {
      return { cd: undefined };
    }
    return { cd: target[0].word };
  }
  const printsArgs = (): string[] | "all" => {
    let paths = args.filter((w) => !w.word.startsWith("-"));
    // a search's first operand is its pattern, unless an option gave it
    const search = ["grep", "egrep", "fgrep", "rg"].includes(name);
    if (search && !words.some((w) => /^-[a-zA-Z]*[ef]|^--(regexp|file)/.test(w))) {
      paths = paths.slice(1);
    }
    if (paths.some((w) => !w.plain) || dirs === undefined) return "all";
    // a recursive search without a path searches the directory it runs in
    const here = search && paths.length === 0 &&
        (name === "rg" ||
          words.some((w) => /^-\w*[rR]|^--(recursive|dereference-recursive)/.test(w)))
      ? ["."]
      : [];
    return dirs.flatMap((d) => [...paths.map((w) => w.word), ...here].map((w) => joinDir(d, w)));
  };
  const check = READ_ONLY.get(name);
  if (check !== undefined && check(words)) {
    if (NO_CONTENT.has(name)) return { changes: p.writes, prints: [] };
    return { changes: p.writes, prints: name === "git" ? "all" : printsArgs() };
  }
  if (CHANGING.has(name)) return { changes: true, prints: [] };
  // sed -i: its script may print (a `w /dev/stdout`), so its files count as printed too
  if (name === "sed" && words.some((w) => /^-\w*i|^--in-place/.test(w))) {
    return { changes: true, prints: printsArgs() };
  }
  if (name === "git" && GIT_CHANGING.has(words[0] ?? "")) {
    // `-p`, `-i` and their long forms print hunks and ask; `stash show`, `stash list` print
    const interactive = words.some((w) =>
      /^-[a-zA-Z]*[pi]/.test(w) || /^--(patch|interactive)/.test(w)
    );
    const stashPrints = words[0] === "stash" && words.length > 1 && !STASH_QUIET.has(words[1]) &&
      !words[1].startsWith("-");
    if (interactive || stashPrints) return "opaque";
    return { changes: true, prints: [] };
  }
  return "opaque";
}

/** The view a command prints, when it is one of the recognised forms. */
function viewOf(
  parts: Part[],
): { view?: { path: string; lines: ShellLines }; multi?: MultiView } | undefined {
  if (parts.some((c) => c.words.some((w) => !w.plain))) return undefined;
  // a leading `cd DIR &&` or `cd DIR;` (several): paths resolve against DIR (a failed cd
  // prints an error, so the output is no longer what the command prints for the file)
  let dir = "";
  let i = 0;
  for (; i < parts.length && parts[i].words[0]?.word === "cd"; i++) {
    const args = parts[i].words.slice(1).map((w) => w.word);
    if (args.length !== 1 || args[0] === "-" || !["&&", ";"].includes(parts[i].after ?? "")) {
      return undefined;
    }
    dir = joinDir(dir, args[0]);
  }
  const rest = parts.slice(i);
  if (rest.length === 0 || rest.length > 2) return undefined;
  if (rest.length === 2 && rest[0].after !== "|") return undefined;
  const words = rest.map((c) => c.words.map((w) => w.word));
  const at = (path: string) => joinDir(dir, path);
  const single = (path: string | undefined, lines: ShellLines | undefined) => {
    if (path === undefined || lines === undefined) return undefined;
    const v = file(path, lines);
    return v === undefined ? undefined : { view: { path: at(v.path), lines: v.lines } };
  };
  if (rest.length === 2) {
    const [source, filter] = words;
    // a search piped into `head`, `tail` or another `grep`: the rows it kept, each checked
    const search = searchOf(source[0], source.slice(1));
    if (search !== undefined && rowFilter(filter)) {
      if (search.bare && !search.recursive) return single(search.paths[0], { kind: "grep" });
      return { multi: { kind: "rows", paths: search.paths.map(at), bare: search.bare } };
    }
    const src = sourceOf(source);
    if (src === undefined) return undefined;
    // cat F | head -N, cat F | sed -n 'A,Bp'
    if (src.lines.kind === "whole") {
      const count = headOnly(filter);
      if (count !== undefined) return single(src.path, { kind: "head", count });
      const range = sedRange(filter);
      if (range !== undefined) return single(src.path, { kind: "range", ...range });
      return undefined;
    }
    // cat -n F | sed -n 'A,Bp', nl -ba F | sed -n 'A,Bp', cat -n F | head -N
    if (src.lines.kind === "numbered") {
      const range = sedRange(filter);
      if (range !== undefined) return single(src.path, { kind: "numberedRange", ...range });
      const count = headOnly(filter);
      if (count !== undefined) {
        return single(src.path, { kind: "numberedRange", start: 1, end: count });
      }
      return undefined;
    }
    // head -n N F | tail -n M
    if (src.lines.kind === "head" && filter[0] === "tail") {
      const count = headCount(filter.slice(1));
      if (count === undefined || count.from || count.file !== undefined) return undefined;
      return single(src.path, { kind: "headTail", head: src.lines.count, tail: count.n });
    }
    return undefined;
  }
  const [name, ...args] = words[0];
  // several files: `cat F1 F2`, `grep -n P F1 F2`, `grep -rn P DIR`, `rg -n P DIR`
  if (name === "cat" && args.length >= 2 && args.every((a) => !a.startsWith("-"))) {
    return { multi: { kind: "concat", paths: args.map(at) } };
  }
  const search = searchOf(name, args);
  if (search !== undefined) {
    if (search.bare && !search.recursive) return single(search.paths[0], { kind: "grep" });
    return { multi: { kind: "rows", paths: search.paths.map(at), bare: search.bare } };
  }
  if (name === "git" && args[0] === "diff" && workingTreeDiff(args.slice(1))) {
    return { multi: { kind: "gitDiff", dir } };
  }
  const src = sourceOf(words[0]);
  return src === undefined ? undefined : single(src.path, src.lines);
}

/** A command that prints lines of one file on its own: its file and lines. */
function sourceOf(words: string[]): { path: string; lines: ShellLines } | undefined {
  const [name, ...args] = words;
  if (name === "cat") {
    if (args.length === 1) return file(args[0], { kind: "whole" });
    if (args.length === 2 && args[0] === "-n") return file(args[1], { kind: "numbered" });
    return undefined;
  }
  // nl numbers empty lines only with -ba (then it prints as cat -n does)
  if (name === "nl") {
    if (args.length === 2 && args[0] === "-ba") return file(args[1], { kind: "numbered" });
    if (args.length === 3 && args[0] === "-b" && args[1] === "a") {
      return file(args[2], { kind: "numbered" });
    }
    return undefined;
  }
  if (name === "sed") {
    if (args.length !== 3 || args[0] !== "-n") return undefined;
    const range = sedRange(["sed", "-n", args[1]]);
    return range === undefined ? undefined : file(args[2], { kind: "range", ...range });
  }
  if (name === "head" || name === "tail") {
    const count = headCount(args);
    if (count === undefined || count.file === undefined) return undefined;
    if (name === "head") return file(count.file, { kind: "head", count: count.n });
    if (count.from) return file(count.file, { kind: "range", start: count.n, end: TO_END });
    return file(count.file, { kind: "tail", count: count.n });
  }
  if (name === "grep") {
    const search = searchOf(name, args);
    return search !== undefined && search.bare && !search.recursive
      ? file(search.paths[0], { kind: "grep" })
      : undefined;
  }
  return undefined;
}

/** `sed -n 'A,Bp'` (or `Ap`, `A,$p`) reading its input: the lines it prints. */
function sedRange(words: string[]): { start: number; end: number } | undefined {
  if (words.length !== 3 || words[0] !== "sed" || words[1] !== "-n") return undefined;
  const m = SED_PRINT.exec(words[2]);
  if (m === null) return undefined;
  const start = Number(m[1]);
  const end = m[2] === undefined ? start : m[2] === "$" ? TO_END : Number(m[2]);
  return start < 1 || end < start ? undefined : { start, end };
}

/** A filter that keeps some of a search's rows as they are: `head`, `tail -N`, `grep`. */
function rowFilter(words: string[]): boolean {
  if (headOnly(words) !== undefined) return true;
  if (words[0] === "tail") {
    const count = headCount(words.slice(1));
    return count !== undefined && !count.from && count.file === undefined;
  }
  // another grep reading the rows (no file of its own: every operand but the pattern is a flag)
  return words[0] === "grep" && words.slice(1).filter((w) => !w.startsWith("-")).length === 1;
}

/** `head -N` / `head -n N` reading its input: how many lines it keeps. */
function headOnly(words: string[]): number | undefined {
  if (words[0] !== "head") return undefined;
  const count = headCount(words.slice(1));
  return count === undefined || count.from || count.file !== undefined ? undefined : count.n;
}

/**
 * `grep -n P PATH...` (flags of `-nrRiwFEsIH`, `--include=`, `--exclude=`,
 * `--exclude-dir=`) or `rg -n P PATH...` (`-nHiwFS`, `--no-heading`,
 * `--hidden`, `-g`/`--glob`): the paths searched, whether a row may be
 * bare `N:text` (one path and no `-H`: when it is a file) and whether
 * directories are searched.
 */
function searchOf(
  name: string,
  args: string[],
): { paths: string[]; bare: boolean; recursive: boolean } | undefined {
  if (name !== "grep" && name !== "rg") return undefined;
  const operands: string[] = [];
  let numbered = false;
  let recursive = false;
  let withNames = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "-g" || a === "--glob") {
      if (name !== "rg" || args[i + 1] === undefined) return undefined;
      i++;
      continue;
    }
    if (!a.startsWith("-") || a === "-") {
      operands.push(a);
      continue;
    }
    if (name === "grep" && /^--(include|exclude|exclude-dir)=/.test(a)) continue;
    if (name === "rg" && /^(--no-heading|--hidden|--glob=.*|-g.+)$/.test(a)) continue;
    const flags = name === "grep" ? /^-[nrRiwFEsIH]+$/ : /^-[nHiwFS]+$/;
    if (!flags.test(a)) return undefined;
    if (a.includes("n")) numbered = true;
    if (/[rR]/.test(a)) recursive = true;
    if (a.includes("H")) withNames = true;
  }
  if (!numbered || operands.length < 1) return undefined;
  const [, ...paths] = operands;
  // rg searches where it runs without a path; grep only with -r
  if (paths.length === 0) {
    return name === "rg" || recursive ? { paths: ["."], bare: false, recursive: true } : undefined;
  }
  return { paths, bare: paths.length === 1 && !withNames, recursive: recursive || name === "rg" };
}

/** `git diff` arguments whose new side is the working tree: one revision at most, no index. */
function workingTreeDiff(args: string[]): boolean {
  const dash = args.indexOf("--");
  const before = dash === -1 ? args : args.slice(0, dash);
  const options = before.filter((a) => a.startsWith("-"));
  const revs = before.filter((a) => !a.startsWith("-"));
  if (
    !options.every((o) =>
      /^(--no-color|--color=never|--no-ext-diff|-p|--patch|-U[0-9]+|--unified=[0-9]+)$/.test(o)
    )
  ) {
    return false;
  }
  // without `--` a word may be a revision or a path: at most one
  return revs.length <= 1 && revs.every((r) => !r.includes(".."));
}

function file(path: string, lines: ShellLines): { path: string; lines: ShellLines } | undefined {
  return path === "" || path.startsWith("-") ? undefined : { path, lines };
}

/** `-n N F`, `-nN F`, `-N F`, `F` (10 lines); `from` for tail's `+N`. */
function headCount(
  args: readonly string[],
): { n: number; from: boolean; file?: string } | undefined {
  let n = 10;
  let from = false;
  let i = 0;
  const count = (s: string): boolean => {
    const plus = s.startsWith("+");
    const digits = plus ? s.slice(1) : s;
    if (!NUMBER.test(digits)) return false;
    n = Number(digits);
    from = plus;
    return true;
  };
  if (args[i] === "-n") {
    if (args[i + 1] === undefined || !count(args[i + 1])) return undefined;
    i += 2;
  } else if (args[i]?.startsWith("-n")) {
    if (!count(args[i].slice(2))) return undefined;
    i++;
  } else if (args[i] !== undefined && /^-[0-9]+$/.test(args[i])) {
    count(args[i].slice(1));
    i++;
  }
  const rest = args.slice(i);
  if (rest.length > 1 || rest.some((a) => a.startsWith("-"))) return undefined;
  if (from && n < 1) return undefined;
  return rest.length === 1 ? { n, from, file: rest[0] } : { n, from };
}

/**
 * The stretches of lines (1-based, `end` {@linkcode TO_END} when the output
 * also showed where the file ends) that `output` shows of a file whose
 * content is `text`, when `output` is exactly what the command prints for
 * it (a missing final newline is allowed: hosts trim it); `[]` when it is
 * not. A file with a carriage return shows nothing (line breaks would be
 * ambiguous), nor does empty output.
 *
 * @example
 * ```ts
 * import { shownLinesOf } from "@readcache/core/rules";
 * shownLinesOf({ kind: "range", start: 2, end: 3 }, "a\nb\nc\nd\n", "b\nc\n");
 * // [{ start: 2, end: 3 }]
 * shownLinesOf({ kind: "whole" }, "a\nb\n", "a\nB\n"); // []
 * ```
 */
export function shownLinesOf(
  shape: ShellLines,
  text: string,
  output: string,
): { start: number; end: number }[] {
  if (output === "" || text.includes("\r")) return [];
  // lines as the cache counts them (SPEC §4): a final newline ends the last line but one
  const lines = text.split("\n");
  const total = lines.length;
  /** The bytes of lines a..b as the file holds them. */
  const slice = (a: number, b: number) =>
    lines.slice(a - 1, b).join("\n") + (b < total ? "\n" : "");
  const same = (expected: string) => output === expected || output + "\n" === expected;
  switch (shape.kind) {
    case "whole":
      return same(text) ? [{ start: 1, end: TO_END }] : [];
    case "numbered": {
      const real = lines.at(-1) === "" ? lines.slice(0, -1) : lines;
      const expected = real.map((l, i) => `${String(i + 1).padStart(6)}\t${l}`).join("\n") +
        (real.length < total ? "\n" : "");
      return same(expected) ? [{ start: 1, end: TO_END }] : [];
    }
    case "numberedRange": {
      // the rows of `cat -n` (`nl -ba`) from `start` on: one per line a line-oriented tool sees
      const real = lines.at(-1) === "" ? lines.slice(0, -1) : lines;
      if (shape.start > real.length) return [];
      const last = Math.min(shape.end, real.length);
      const rows = real.slice(shape.start - 1, last)
        .map((l, i) => `${String(shape.start + i).padStart(6)}\t${l}`);
      // every row ends with a line break but the file's last line when it has none
      const expected = rows.join("\n") + (last < real.length || real.length < total ? "\n" : "");
      return same(expected)
        ? [{ start: shape.start, end: shape.end > real.length ? TO_END : last }]
        : [];
    }
    case "headTail": {
      // only where the model can number the lines: the file has at least `head` of them
      const real = lines.at(-1) === "" ? lines.slice(0, -1) : lines;
      if (shape.head === 0 || shape.tail === 0 || real.length < shape.head) return [];
      const first = Math.max(1, shape.head - shape.tail + 1);
      return same(slice(first, shape.head)) ? [{ start: first, end: shape.head }] : [];
    }
    case "range": {
      if (shape.start > total) return [];
      const last = Math.min(shape.end, total);
      // fewer lines than asked for: the output showed where the file ends
      return same(slice(shape.start, last))
        ? [{ start: shape.start, end: shape.end > total ? TO_END : last }]
        : [];
    }
    case "head": {
      if (shape.count === 0) return [];
      const last = Math.min(shape.count, total);
      return same(slice(1, last)) ? [{ start: 1, end: shape.count > total ? TO_END : last }] : [];
    }
    case "tail":
      // the last lines without their numbers: a view only when they are the whole file
      return shape.count >= total - 1 && same(text) ? [{ start: 1, end: TO_END }] : [];
    case "grep": {
      const out = output.endsWith("\n") ? output.slice(0, -1) : output;
      const shown: number[] = [];
      for (const row of out.split("\n")) {
        const m = /^([0-9]+):/.exec(row);
        if (m === null) return [];
        const n = Number(m[1]);
        if (n < 1 || n > total || lines[n - 1] !== row.slice(m[0].length)) return [];
        shown.push(n);
      }
      return stretches(shown);
    }
  }
}

/** Sorted line numbers as stretches of consecutive lines. */
function stretches(numbers: number[]): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  for (const n of [...new Set(numbers)].sort((a, b) => a - b)) {
    const last = out.at(-1);
    if (last !== undefined && last.end === n - 1) last.end = n;
    else out.push({ start: n, end: n });
  }
  return out;
}

/** pi's grep prints a line of up to this many characters whole (a longer one is cut). */
const GREP_TOOL_LINE_CHARS = 500;

/**
 * The lines pi's `grep` tool printed (`path:N: text` for a match,
 * `path-N- text` around one), each with the path as printed (relative to
 * the directory searched, or the file's name when a file was searched).
 * Notices, lines of another shape and rows over 500 characters (lines pi
 * cut to 500 and `... [truncated]`, whatever the line holds) are skipped.
 *
 * @example
 * ```ts
 * import { grepToolLines } from "@readcache/core/rules";
 * grepToolLines("src/a.ts:3: const x = 1;\nsrc/a.ts-4- }");
 * // [{ path: "src/a.ts", line: 3, text: "const x = 1;" }, { path: "src/a.ts", line: 4, text: "}" }]
 * ```
 */
export function grepToolLines(output: string): { path: string; line: number; text: string }[] {
  const out: { path: string; line: number; text: string }[] = [];
  for (const row of output.split("\n")) {
    const m = /^(.+?)(?::([0-9]+): |-([0-9]+)- )(.*)$/.exec(row);
    if (m === null || m[4].length > GREP_TOOL_LINE_CHARS) continue;
    out.push({ path: m[1], line: Number(m[2] ?? m[3]), text: m[4] });
  }
  return out;
}

/**
 * The stretches of a file (content `text`) that rows of pi's `grep` tool
 * output show as they are in the file: lines whose printed text equals the
 * line exactly (pi drops carriage returns and cuts long lines; such lines
 * show nothing).
 *
 * @example
 * ```ts
 * import { grepShownLines } from "@readcache/core/rules";
 * grepShownLines([{ line: 2, text: "b" }, { line: 3, text: "c" }], "a\nb\nc\n");
 * // [{ start: 2, end: 3 }]
 * ```
 */
export function grepShownLines(
  rows: readonly { line: number; text: string }[],
  text: string,
): { start: number; end: number }[] {
  const lines = text.split("\n");
  const shown = rows
    .filter((r) => r.line >= 1 && r.line <= lines.length && !r.text.includes("\r"))
    .filter((r) => !lines[r.line - 1].includes("\r") && lines[r.line - 1] === r.text)
    .map((r) => r.line);
  return stretches(shown);
}

/**
 * The rows of a search that prints `path:N:text` (`grep -rn`, `grep -n`
 * over several files, `rg -n`), or `N:text` when `bare` (one file
 * searched). Rows of another shape (binary file notices, context lines)
 * are skipped.
 *
 * @example
 * ```ts
 * import { searchRows } from "@readcache/core/rules";
 * searchRows("src/a.ts:3:const x = 1;\nBinary file b matches", false);
 * // [{ path: "src/a.ts", line: 3, text: "const x = 1;" }]
 * searchRows("3:const x = 1;", true); // [{ path: "", line: 3, text: "const x = 1;" }]
 * ```
 */
export function searchRows(
  output: string,
  bare: boolean,
): { path: string; line: number; text: string }[] {
  const out: { path: string; line: number; text: string }[] = [];
  for (const row of output.split("\n")) {
    const m = bare ? /^()([0-9]+):(.*)$/.exec(row) : /^(.+?):([0-9]+):(.*)$/.exec(row);
    if (m !== null) out.push({ path: m[1], line: Number(m[2]), text: m[3] });
  }
  return out;
}

/**
 * The new side of each hunk of a unified `git diff` (context and added
 * lines, with their line numbers in the working file), per file as named
 * after `+++ b/` (relative to the repository's top directory). A file whose
 * new side is `/dev/null` or whose name is quoted shows nothing.
 *
 * @example
 * ```ts
 * import { gitDiffNewSide } from "@readcache/core/rules";
 * gitDiffNewSide("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
 * // [{ path: "x", rows: [{ line: 1, text: "a" }, { line: 2, text: "c" }] }]
 * ```
 */
export function gitDiffNewSide(
  output: string,
): { path: string; rows: { line: number; text: string }[] }[] {
  const files: { path: string; rows: { line: number; text: string }[] }[] = [];
  let current: { path: string; rows: { line: number; text: string }[] } | undefined;
  let next = 0; // the new side's next line number inside a hunk, 0 outside
  let left = 0; // lines of the new side left in the hunk
  let oldLeft = 0; // lines of the old side left in the hunk
  for (const row of output.split("\n")) {
    if (left > 0 || oldLeft > 0) {
      if (row.startsWith(" ") || row.startsWith("+")) {
        if (row.startsWith("+") && left === 0) continue;
        current?.rows.push({ line: next++, text: row.slice(1) });
        left--;
        if (row.startsWith(" ")) oldLeft--;
        continue;
      }
      if (row.startsWith("-")) {
        oldLeft--;
        continue;
      }
      if (row.startsWith("\\")) continue;
      left = oldLeft = 0;
    }
    if (row.startsWith("diff ")) current = undefined;
    else if (row.startsWith("+++ ")) {
      const name = row.slice(4);
      current = name.startsWith("b/") ? { path: name.slice(2), rows: [] } : undefined;
      if (current !== undefined) files.push(current);
    } else if (row.startsWith("@@ ")) {
      const m = /^@@ -[0-9]+(?:,([0-9]+))? \+([0-9]+)(?:,([0-9]+))? @@/.exec(row);
      if (m === null) continue;
      oldLeft = m[1] === undefined ? 1 : Number(m[1]);
      next = Number(m[2]);
      left = m[3] === undefined ? 1 : Number(m[3]);
    }
  }
  return files.filter((f) => f.rows.length > 0);
}
