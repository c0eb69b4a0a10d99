// What a recorded bash call showed and did, for the savings check of `readcache savings` and for
// `deno task bench:real` (bench/pi/real.ts): the lines its output showed, and the file commands
// bench:real applies to its rebuild: only plain `cd`, `cp`, `mv` and `rm` of named paths, chained with `&&` or
// `;`. pi's agent created files it then read this way (`cp main.ts main-new.ts`); without them
// those reads would fail in the replay. Anything else in the command (a glob, a variable, a pipe,
// `git checkout`, a formatter) and the whole command is left out: reads resync what it changed.
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";

/** One file operation of a bash command. */
export type FileOp =
  | { op: "cd"; dir: string }
  | { op: "cp" | "mv"; sources: string[]; target: string }
  | { op: "rm"; paths: string[]; recursive: boolean };

const IGNORED = new Set(["echo", "ls", "pwd", "mkdir", "rmdir", "true"]);
const SHELL_SYNTAX = /[*?$|<>`'"(){}[\]\\&;!#=]/;

/** The file operations of `command`, or `undefined` when it is more than plain file commands. */
export function fileOpsOf(command: string): FileOp[] | undefined {
  const ops: FileOp[] = [];
  for (const part of command.replaceAll(/\s2>\/dev\/null/g, "").split(/&&|;|\n/)) {
    const words = part.trim().split(/\s+/).filter((w) => w !== "");
    if (words.length === 0) continue;
    const [cmd, ...rest] = words;
    if (IGNORED.has(cmd)) continue;
    if (rest.some((w) => SHELL_SYNTAX.test(w))) return undefined;
    const flags = rest.filter((w) => w.startsWith("-"));
    const args = rest.filter((w) => !w.startsWith("-"));
    if (cmd === "cd" && flags.length === 0 && args.length === 1) {
      ops.push({ op: "cd", dir: args[0] });
    } else if (
      (cmd === "cp" || cmd === "mv") && flags.every((f) => f === "-f") && args.length >= 2
    ) {
      ops.push({ op: cmd, sources: args.slice(0, -1), target: args[args.length - 1] });
    } else if (cmd === "rm" && flags.every((f) => /^-[rf]+$/.test(f)) && args.length >= 1) {
      ops.push({ op: "rm", paths: args, recursive: flags.some((f) => f.includes("r")) });
    } else return undefined;
  }
  return ops.some((o) => o.op !== "cd") ? ops : undefined;
}

/**
 * Applies `ops` in the replay's file system: `root` holds the recording machine's paths (an
 * absolute path `/p` is `root/p`), `cwd` and `home` are the session's. Returns whether any file
 * changed.
 */
export function applyFileOps(
  ops: readonly FileOp[],
  where: { root: string; cwd: string; home: string },
): boolean {
  let wd = where.cwd;
  let changed = false;
  const at = (p: string) =>
    p === "~"
      ? where.home
      : p.startsWith("~/")
      ? join(where.home, p.slice(2))
      : isAbsolute(p)
      ? (p.startsWith(where.root + "/") ? p : join(where.root, p))
      : resolve(wd, p);
  const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();
  for (const o of ops) {
    if (o.op === "cd") {
      wd = at(o.dir);
      continue;
    }
    if (o.op === "rm") {
      for (const p of o.paths) {
        const path = at(p);
        if (!existsSync(path) || (isDir(path) && !o.recursive)) continue;
        rmSync(path, { recursive: true, force: true });
        changed = true;
      }
      continue;
    }
    const target = at(o.target);
    const into = o.sources.length > 1 || o.target.endsWith("/") || isDir(target);
    for (const s of o.sources) {
      const source = at(s);
      if (!existsSync(source) || (o.op === "cp" && isDir(source))) continue;
      const to = into ? join(target, basename(source)) : target;
      mkdirSync(dirname(to), { recursive: true });
      if (o.op === "cp") copyFileSync(source, to);
      else renameSync(source, to);
      changed = true;
    }
  }
  return changed;
}

/** Lines of one file the model was shown by a bash command or pi's grep, exactly as the file. */
export interface ShownLines {
  file: string;
  /** Line number of `lines[0]`. */
  start: number;
  lines: string[];
  /** The output also showed where the file ends (`cat`, or fewer lines than asked for). */
  toEnd: boolean;
}

/**
 * What a bash command's output showed of files, read by the bench on its own (nothing from
 * src/), after any leading `cd DIR &&` / `cd DIR;`: the output of `cat F`, `cat -n F`,
 * `nl -ba F`, `sed -n 'A,Bp' F`, `head -n N F`, `head -N F`, `tail -n +A F`, `cat F | head -N`,
 * `cat F | sed -n 'A,Bp'` or `head -n H F | tail -n T` (a file of at least H lines) that is
 * exactly what the command prints for the file as the rebuild holds it; the rows `N\ttext` of
 * `cat -n F` / `nl -ba F` piped into `sed -n` or `head`; the rows `N:text` of `grep -n P F`
 * and `path:N:text` of `grep -n`/`-rn` over several paths and `rg -n` (also piped into `head`,
 * `tail` or another `grep`)
 * that are exactly line N of their file; `cat F1 F2 ...` when the output is the files one after
 * another (each but the last ending with a line break); and the new side of `git diff` hunks of
 * the working tree (`top`: the repository's directory). Anything else: nothing. With `adopt`,
 * lines a recognised form printed at known places that the rebuild does not hold are handed to
 * it (not for rows of several files' forms, `cat F1 F2`, `git diff`, numbered whole files, or
 * output pi cut): the session's output is the truth for them.
 */
export function bashShown(
  command: string,
  output: string,
  cwd: string,
  text: (path: string) => string | undefined,
  top: string = cwd,
  adopt?: Adopt,
): ShownLines[] {
  let c = command.trim();
  // pi cut the output (the last lines of it, with a notice): not the file's lines
  if (/\n\n\[Showing (?:lines|last) /.test(output)) adopt = undefined;
  const unq = (s: string) => s.replace(/^'(.*)'$/, "$1").replace(/^"([^"$\x60\\]*)"$/, "$1");
  const word = String.raw`('[^']*'|"[^"$\x60\\]*"|[^\s'"|;&<>$*?~]+)`;
  let dir = cwd;
  for (let m; (m = new RegExp(`^cd ${word} *(?:&&|;) *`).exec(c)) !== null;) {
    dir = resolve(dir, unq(m[1]));
    c = c.slice(m[0].length);
  }
  if (output === "") return [];
  const at = (p: string) => resolve(dir, unq(p));
  const path = word;
  // a pattern: quoted (backslashes allowed inside double quotes) or a plain word
  const pattern = String.raw`('[^']*'|"(?:[^"$\x60\\]|\\.)*"|[^\s'"|;&<>$*?~-][^\s'"|;&<>$*?~]*)`;
  const linesOf = (file: string) => {
    const content = text(file);
    return content === undefined || content.includes("\r") ? undefined : content.split("\n");
  };
  let m: RegExpExecArray | null;
  // rows that carry their line numbers, each checked on its own
  const rowsOf = (rowRe: RegExp, fileOf: (m: RegExpExecArray) => string): ShownLines[] => {
    const shown: ShownLines[] = [];
    for (const row of output.split("\n")) {
      const r = rowRe.exec(row);
      if (!r) continue;
      const file = fileOf(r);
      const n = Number(r[r.length - 2]);
      const lines = linesOf(file);
      if (lines !== undefined && n >= 1 && lines[n - 1] === r[r.length - 1]) {
        shown.push({ file, start: n, lines: [r[r.length - 1]], toEnd: false });
      } else if (lines !== undefined && n >= 1 && n <= lines.length) {
        adopt?.(file, n, [r[r.length - 1]], false);
      }
    }
    return shown;
  };
  const head = String.raw`head -n? ?(\d+)`;
  // what keeps some rows of a search as they are
  const rowFilter = String.raw`(?:head -n? ?\d+|tail -n? ?\d+|grep(?: -\w+)* ${pattern})`;
  const sedRange = String.raw`sed -n '?(\d+)(?:,(\d+|\$))?p'?`;
  // numbered: cat -n F / nl -ba F, alone or piped into sed -n or head
  if ((m = new RegExp(`^(?:cat -n|nl -ba) ${path}$`).exec(c))) {
    // the whole file, numbered: it also shows where the file ends
    const file = at(m[1]);
    const lines = linesOf(file);
    if (lines === undefined) return [];
    const real = lines.at(-1) === "" ? lines.slice(0, -1) : lines;
    const expected = real.map((l, i) => `${String(i + 1).padStart(6)}\t${l}`).join("\n") +
      (real.length < lines.length ? "\n" : "");
    const same = output === expected || output + "\n" === expected;
    return same ? [{ file, start: 1, lines, toEnd: true }] : [];
  }
  if ((m = new RegExp(`^(?:cat -n|nl -ba) ${path} \\| (?:${sedRange}|${head})$`).exec(c))) {
    const file = at(m[1]);
    return rowsOf(/^ *(\d+)\t(.*)$/, () => file);
  }
  // grep -n P F [| head -N]: N:text rows
  if ((m = new RegExp(`^grep -n[iwFE]* ${pattern} ${path}(?: \\| ${rowFilter})?$`).exec(c))) {
    const file = at(m[2]);
    return rowsOf(/^(\d+):(.*)$/, () => file);
  }
  // grep -n / -rn over several paths, rg -n: path:N:text rows under a path searched; the file
  // filters agents add (`--include="*.ts"`, `--exclude-dir=x`, before or after the paths) choose
  // which files, not what a row shows
  const filters = String.raw`(?: --(?:include|exclude|exclude-dir)=${
    pattern.replace("(", "(?:")
  })*`;
  if (
    (m = new RegExp(
      `^(?:grep -[rRn]*n[rRiwFEHsI]*|rg -n[iwFSH]*)${filters} ${pattern}((?: ${path})*)${filters}` +
        `(?: \\| ${rowFilter})?$`,
    )
      .exec(c)) &&
    (m[2].trim().split(/ +/).length > 1 || c.startsWith("rg") || /^grep -\w*[rR]/.test(c))
  ) {
    const searched = m[2].trim() === "" ? [dir] : m[2].trim().split(/ +/).map(at);
    if (searched.length === 1 && linesOf(searched[0]) !== undefined) {
      return rowsOf(/^(\d+):(.*)$/, () => searched[0]);
    }
    const under = (f: string) => searched.some((s) => f === s || f.startsWith(s + "/"));
    return rowsOf(/^(.+?):(\d+):(.*)$/, (r) => resolve(dir, r[1])).filter((s) => under(s.file));
  }
  // cat F1 F2 ...: the files one after another
  if ((m = new RegExp(`^cat((?: ${path}){2,})$`).exec(c))) {
    const files = m[1].trim().split(/ +/).map(at);
    const contents = files.map((f) => text(f));
    if (contents.some((t) => t === undefined || t.includes("\r"))) return [];
    if (contents.slice(0, -1).some((t) => t !== "" && !t!.endsWith("\n"))) return [];
    const all = contents.join("");
    if (output !== all && output + "\n" !== all) return [];
    return files.filter((_, i) => contents[i] !== "").map((file, i) => ({
      file,
      start: 1,
      lines: contents[i]!.split("\n"),
      toEnd: true,
    }));
  }
  // git diff of the working tree: the new side of each hunk
  if (/^git diff(?: --)?(?: [^\s-][^\s]*)*$/.test(c) && !c.includes("..")) {
    return gitDiffRows(output, top, linesOf);
  }
  // [file, first line, last line (Infinity: to the end)]
  let want: [string, number, number] | undefined;
  if ((m = new RegExp(`^cat ${path}$`).exec(c))) want = [at(m[1]), 1, Infinity];
  else if ((m = new RegExp(`^sed -n '?(\\d+)(?:,(\\d+|\\$))?p'? ${path}$`).exec(c))) {
    const end = m[2] === undefined ? Number(m[1]) : m[2] === "$" ? Infinity : Number(m[2]);
    want = [at(m[3]), Number(m[1]), end];
  } else if ((m = new RegExp(`^cat ${path} \\| sed -n '?(\\d+)(?:,(\\d+|\\$))?p'?$`).exec(c))) {
    const end = m[3] === undefined ? Number(m[2]) : m[3] === "$" ? Infinity : Number(m[3]);
    want = [at(m[1]), Number(m[2]), end];
  } else if ((m = new RegExp(`^head -n ?(\\d+) ${path}$`).exec(c))) {
    want = [at(m[2]), 1, Number(m[1])];
  } else if ((m = new RegExp(`^head -(\\d+) ${path}$`).exec(c))) {
    want = [at(m[2]), 1, Number(m[1])];
  } else if ((m = new RegExp(`^cat ${path} \\| head -n? ?(\\d+)$`).exec(c))) {
    want = [at(m[1]), 1, Number(m[2])];
  } else if ((m = new RegExp(`^tail -n \\+(\\d+) ${path}$`).exec(c))) {
    want = [at(m[2]), Number(m[1]), Infinity];
  } else if ((m = new RegExp(`^head -n ?(\\d+) ${path} \\| tail -n ?(\\d+)$`).exec(c))) {
    // the model numbers them from H back: only a file of at least H lines prints those
    const h = Number(m[1]);
    const lines = linesOf(at(m[2]));
    const real = lines === undefined ? 0 : lines.at(-1) === "" ? lines.length - 1 : lines.length;
    if (real < h) return [];
    want = [at(m[2]), Math.max(1, h - Number(m[3]) + 1), h];
  }
  if (want === undefined) return [];
  const [file, first, last] = want;
  const lines = linesOf(file);
  if (lines === undefined || first < 1) return [];
  const same = (expected: string) => output === expected || output + "\n" === expected;
  const end = Math.min(last, lines.length);
  if (
    first > lines.length ||
    !same(lines.slice(first - 1, end).join("\n") + (end < lines.length ? "\n" : ""))
  ) {
    // the session's output is the truth for the lines it printed (to the end: all of them)
    const printed = (output.endsWith("\n") ? output.slice(0, -1) : output).split("\n");
    const toEnd = last === Infinity || printed.length < last - first + 1;
    if (first <= lines.length + 1) adopt?.(file, first, printed, toEnd);
    return [];
  }
  return [{ file, start: first, lines: lines.slice(first - 1, end), toEnd: last > lines.length }];
}

/**
 * Takes what a bash output printed of a file into the rebuild (`deno task bench:real`): lines
 * from `start` on; `toEnd` when they run to the end of the file (the rest goes).
 */
export type Adopt = (file: string, start: number, lines: string[], toEnd: boolean) => void;

/** The new side of `git diff` hunks (files named from `top`), each row checked against its file. */
function gitDiffRows(
  output: string,
  top: string,
  linesOf: (file: string) => string[] | undefined,
): ShownLines[] {
  const shown: ShownLines[] = [];
  let file: string | undefined;
  let n = 0;
  let newLeft = 0;
  let oldLeft = 0;
  for (const row of output.split("\n")) {
    if (newLeft > 0 || oldLeft > 0) {
      if (row.startsWith(" ") || row.startsWith("+")) {
        const lines = file === undefined ? undefined : linesOf(file);
        if (lines !== undefined && lines[n - 1] === row.slice(1)) {
          shown.push({ file: file!, start: n, lines: [row.slice(1)], toEnd: false });
        }
        n++;
        newLeft--;
        if (row.startsWith(" ")) oldLeft--;
        continue;
      }
      if (row.startsWith("-")) {
        oldLeft--;
        continue;
      }
      if (row.startsWith("\\")) continue;
      newLeft = oldLeft = 0;
    }
    const plus = /^\+\+\+ b\/(.*)$/.exec(row);
    if (plus) file = resolve(top, plus[1]);
    else if (row.startsWith("+++ ")) file = undefined;
    const hunk = /^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(row);
    if (hunk) {
      oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
      n = Number(hunk[2]);
      newLeft = hunk[3] === undefined ? 1 : Number(hunk[3]);
    }
  }
  return shown;
}

/**
 * What pi's grep output showed: each `path:N: text` or `path-N- text` row whose text is exactly
 * line N of the file (path relative to the directory searched, or the file searched itself).
 */
export function grepShown(
  searched: string,
  output: string,
  text: (path: string) => string | undefined,
): ShownLines[] {
  let isFile = false;
  try {
    isFile = statSync(searched).isFile();
  } catch {
    return [];
  }
  const shown: ShownLines[] = [];
  for (const row of output.split("\n")) {
    const m = /^(.+?)(?::(\d+): |-(\d+)- )(.*)$/.exec(row);
    if (!m) continue;
    const file = isFile ? searched : resolve(searched, m[1]);
    const content = text(file);
    if (content === undefined || content.includes("\r")) continue;
    const n = Number(m[2] ?? m[3]);
    if (content.split("\n")[n - 1] === m[4]) {
      shown.push({ file, start: n, lines: [m[4]], toEnd: false });
    }
  }
  return shown;
}

/**
 * What a bash command prints, by the bench's own reading (nothing from src/), for the share of
 * views the cache recognises: `positioned` when, after any leading `cd DIR &&` / `cd DIR;`, it is
 * one pipeline whose source prints lines of files the model can place (`cat`, `cat -n`,
 * `nl -ba`, `head`, `tail`, `sed -n`, `grep -n`, `rg -n`), kept by `head`, `tail`, `sed -n` or
 * `grep`; `unpositioned` for the same with lines the model cannot place (`grep` without `-n`,
 * plain `nl`); `undefined` for anything else (names, counts, several commands, other programs).
 */
export function viewKind(command: string): "positioned" | "unpositioned" | undefined {
  let s = command.trim();
  for (let m; (m = /^cd +(?:'[^']*'|"[^"]*"|\S+) *(?:&&|;) */.exec(s)) !== null;) {
    s = s.slice(m[0].length);
  }
  const quoted = /'[^']*'|"(?:[^"\\]|\\.)*"/g;
  if (/&&|\|\||;|\n/.test(s.replace(quoted, "''"))) return undefined;
  const stages = s.replace(quoted, (q) => q.replaceAll("|", "\u0000")).split(/ *\| */)
    .map((x) => x.replaceAll("\u0000", "|"));
  const [source, ...filters] = stages;
  if (filters.some((f) => !/^(head|tail|sed -n|grep)\b/.test(f))) return undefined;
  const words = source.split(/ +/);
  const flags = words.filter((w) => w.startsWith("-")).join(" ");
  switch (words[0]) {
    case "cat":
    case "head":
    case "tail":
      return "positioned";
    case "sed":
      return flags.includes("-n") ? "positioned" : undefined;
    case "nl":
      return /-ba|-b a/.test(flags) ? "positioned" : "unpositioned";
    case "grep":
    case "egrep":
    case "fgrep":
    case "rg":
      if (/(^| )-\w*[clLq]|--count|--files/.test(flags)) return undefined;
      return /(^| )-\w*n/.test(flags) ? "positioned" : "unpositioned";
  }
  return undefined;
}
