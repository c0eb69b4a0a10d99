// What a `bash` or `grep` step showed the model, and which files it may have
// changed: the oracle's own reading of the family of commands the generator
// emits (SPEC §5.10 does not parse output; the oracle knows the command it
// generated, so it can). Independent of src/: nothing here is imported from
// the implementation.
//
// Two readings:
// - the STRICTEST reading, for a command the oracle does not recognise (and
//   for an output pi cut): it may have changed any file, and its result
//   showed every file whole as it was when the command returned;
// - the PRECISE reading, for the commands below: the model's view of a file
//   the command printed becomes exactly the lines it printed (computed from
//   the file model at that moment), other files keep their views; a command
//   that changes files and prints nothing leaves every view as it was (out
//   of date where it changed the file: a cached answer that treats such a
//   line as current is caught by the line's text).
//
// Recognised commands (a path `P` is a name or `./name`, as the generator types it):
//   read-only, printing lines of one file: `cat P`, `cat -n P`,
//     `sed -n 'A,Bp' P` / `sed -n 'Ap' P`, `head -n N P`, `tail -n N P`,
//     `cat P | head -N`, `grep -n W P` (W a plain word);
//   read-only, printing no line of any file: `true`, `pwd`, `ls` and `wc` (flags, paths);
//   changing the files they name, printing nothing of any file:
//     `sed -i 's/X/Y/' P`, `printf '...' >> P`, `echo '...' > P`, `cp A B` (B), `rm P`;
//   a CHAIN of those joined by `&&` or `;` (split outside single quotes), e.g.
//     `cat P && sed -i 's/X/Y/' P`, `sed -i 's/X/Y/' P; cat P`, `cat P && cp K P`,
//     `cp P K && sed -i 's/X/Y/' P && cat P && cp K P`: read part by part, in the
//     order the shell runs them (a `&&` part runs only when the part that ran
//     last succeeded, a `;` part always: each part is run alone on the file
//     model, and its real exit status decides), each change part changing the
//     file model when it runs, each view part showing the lines it printed
//     computed from the file model AT THAT MOMENT (not at the end), those
//     lines becoming the model's newest view of them in the order printed (a
//     later part's over an earlier one's). A chain with any part the oracle
//     does not recognise, or whose output (all parts together) pi cut, gets
//     the strictest reading.
// pi's `grep` tool (a plain word as pattern, a file or a directory or the
// cwd as path) is read precisely too, unless pi cut its output (more than 100
// matches, 50 KB, a line over 500 characters): then the strictest reading.
//
// Why the precise reading never calls a truly safe answer unsafe: it grants
// the model exactly what the output put in front of it, line by line, with
// the line numbers the output carries or implies, and nothing else.
// - `cat`, `cat -n`, `head`, `cat | head` and `sed -n` print lines from a
//   known line number on (1, or A), so each printed line IS the model's
//   newest view of that line number; where the file ends is shown only when
//   the output proves it (fewer lines than asked for, or a last line without
//   a line break, which no further line can follow), never merely because the
//   file happened to end there. Lines not printed keep the model's older views.
// - `grep -n W P` prints `N:text` for each matching line: those lines are
//   known; and every line it did NOT print does not contain W, so an older
//   view of a line that contains W is known to be out of date (the model
//   cannot tell what the line holds now: unknown), while an older view of a
//   line without W is consistent with the output and stays. pi's `grep` tool
//   likewise (it drops carriage returns from what it prints: a printed line
//   equal to the file's line without its CR counts as the file's line, as
//   the model cannot tell them apart).
// - `tail -n N P` prints the last N lines without numbers. When they are the
//   whole file (N at least its line count) they are numbered from 1. Else
//   they get the numbers they had in the file: the model can number them
//   exactly when it knows how many lines the file has, i.e. when the end it
//   last saw is still where the file ends; when the file's length changed
//   since, a cache that aligned the printed lines to another end than the
//   file's could be told unsafe for an answer only such an alignment makes
//   true. No cache does that (the reference records no view for them, and a
//   file whose length changed differs from the model's view, so its record
//   makes it unknown).
// - A command that printed nothing of a file (a missing file: an error) makes
//   it unknown: the model learned that what it holds is gone.
// - A changing command (`sed -i`, `>`, `>>`, `cp`, `rm`) printed nothing: the
//   model's views are what it was shown before, and a cached answer is
//   judged against them and the file as any other (an answer that says a
//   line it changed is unchanged is caught by the line's text; one that is
//   true of the file and of the model's view, e.g. `unchanged in lines 4-4`
//   when the command changed other lines, is safe: SPEC §5.10 keeps the held
//   lines that still agree). Making its files unknown instead would call such
//   answers unsafe. In the same message as other calls it shows nothing
//   either, so nothing there depends on when it ran.
// - A chain shows the model each view part's output in turn, each exactly
//   what that command alone prints on the files as they were when it ran
//   (the parts share no shell state: a part run alone does what it does in
//   the chain; the oracle checks that the parts run one by one leave the
//   files the whole command left, else the strictest reading). So each view
//   part is granted exactly what it is granted as a command of its own, at
//   its moment, and a later part's lines are newer than an earlier part's,
//   as in the output; change parts show nothing, as alone. The view the
//   oracle rebuilds for a line is thus the last text the output put in front
//   of the model for it. A file printed between two changes (`cat P && cp K
//   P` after another process changed P; `cp P K && sed -i ... P && cat P &&
//   cp K P`) may hold, at the result, the text the model held before the
//   call, but what the model saw last is what `cat` printed: an `unchanged`
//   answer then contradicts the output. A view that runs after every change
//   (`sed -i ... P && cat P`) shows the file as it is at the result. Within a
//   message the chain runs where its step is (as the runners run it), like
//   any recognised command.
// - An output pi cut (over 2000 lines or 50 KB for bash; over 100 matches,
//   50 KB or a line over 500 characters for grep) falls back to the
//   strictest reading (what was kept is harder to pin down than to skip).
import { type FsModel, nameOf, PI_TRUNCATE } from "./fs_model.ts";
import type { Effect } from "./view.ts";

/** Which lines of one file a recognised read-only command prints. */
export type ShownShape =
  | { kind: "whole" }
  | { kind: "numbered" }
  | { kind: "range"; start: number; end: number }
  | { kind: "head"; count: number }
  | { kind: "tail"; count: number }
  | { kind: "grep"; word: string };

/** What the oracle makes of one recognised command (a whole command, or a part of a chain). */
export type PartReading =
  /** Read-only; prints lines of the file at `path` (as typed). */
  | { kind: "view"; path: string; shape: ShownShape }
  /** Read-only; prints no line of any file (`true`, `ls`, `wc`). */
  | { kind: "quiet" }
  /** Changes the files at `paths` (as typed), prints nothing of any file (shows nothing). */
  | { kind: "change"; paths: string[] };

/** One part of a chain: its text, its reading, and how it joins the part before it. */
export interface ChainPart {
  command: string;
  reading: PartReading;
  /** `&&`: runs only when the part that ran last succeeded; `;` (and the first part): always. */
  join: "&&" | ";";
}

/** What the oracle makes of a shell command. */
export type BashReading =
  | PartReading
  /** Recognised commands joined by `&&` or `;`, run in order (see the module comment). */
  | { kind: "chain"; parts: ChainPart[] }
  /** Anything else: the strictest reading. */
  | { kind: "unknown" };

/** Splits a command into words (single quotes only, as the generator writes them) and operators. */
function words(command: string): string[] | undefined {
  const out: string[] = [];
  let cur = "";
  let inWord = false;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end === -1) return undefined;
      cur += command.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === " ") {
      if (inWord) out.push(cur);
      cur = "";
      inWord = false;
    } else if (`"\\$\`;&(){}<>*?[~\n\t`.includes(c) && !(c === ">" || c === "|")) {
      return undefined;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord) out.push(cur);
  return out;
}

const PATH = /^(?:\.\/)?[A-Za-z0-9_.+-]+(?:\/[A-Za-z0-9_.+-]+)*$/;
const NUM = /^[1-9][0-9]*$/;
const WORD = /^[A-Za-z0-9_]+$/;
const isPath = (p: string | undefined): p is string =>
  p !== undefined && PATH.test(p) && !p.startsWith("-") && !p.split("/").includes("..");

/**
 * A command split at `&&` and `;` outside single quotes, each part trimmed,
 * with how it joins the part before; `undefined` when a part is empty (`a;`,
 * `&& a`) or a quote is not closed. Any other operator stays in its part
 * (and makes that part unknown to {@linkcode readBash}).
 */
function splitChain(command: string): { command: string; join: "&&" | ";" }[] | undefined {
  const out: { command: string; join: "&&" | ";" }[] = [];
  let join: "&&" | ";" = ";";
  let start = 0;
  const cut = (end: number, next: "&&" | ";") => {
    out.push({ command: command.slice(start, end).trim(), join });
    join = next;
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end === -1) return undefined;
      i = end;
    } else if (c === ";") {
      cut(i, ";");
      start = i + 1;
    } else if (c === "&" && command[i + 1] === "&") {
      cut(i, "&&");
      start = i + 2;
      i++;
    }
  }
  cut(command.length, ";");
  return out.every((p) => p.command !== "") ? out : undefined;
}

/** The oracle's reading of a shell command (see the module comment). */
export function readBash(command: string): BashReading {
  const split = splitChain(command);
  if (split === undefined) return { kind: "unknown" };
  if (split.length === 1) return readPart(command);
  const parts: ChainPart[] = [];
  for (const p of split) {
    const reading = readPart(p.command);
    if (reading.kind === "unknown") return { kind: "unknown" };
    parts.push({ command: p.command, reading, join: p.join });
  }
  return { kind: "chain", parts };
}

/** The reading of one command without `&&` or `;`. */
function readPart(command: string): PartReading | { kind: "unknown" } {
  type R = PartReading | { kind: "unknown" };
  const w = words(command);
  if (w === undefined || w.length === 0) return { kind: "unknown" };
  const view = (path: string | undefined, shape: ShownShape): R =>
    isPath(path) ? { kind: "view", path, shape } : { kind: "unknown" };
  const change = (path: string | undefined): R =>
    isPath(path) ? { kind: "change", paths: [path] } : { kind: "unknown" };
  const [name, ...args] = w;
  if (w.includes("|")) {
    // cat P | head -N
    if (w.length === 5 && name === "cat" && w[2] === "|" && w[3] === "head") {
      const m = /^-([1-9][0-9]*)$/.exec(w[4]);
      if (m) return view(w[1], { kind: "head", count: Number(m[1]) });
    }
    return { kind: "unknown" };
  }
  if (w.includes(">") || w.includes(">>")) {
    // printf '...' >> P, echo '...' > P
    if (
      w.length === 4 && ((name === "printf" && w[2] === ">>") || (name === "echo" && w[2] === ">"))
    ) {
      return change(w[3]);
    }
    return { kind: "unknown" };
  }
  switch (name) {
    case "true":
    case "pwd":
      return w.length === 1 ? { kind: "quiet" } : { kind: "unknown" };
    case "ls":
    case "wc":
      // names, sizes, dates or counts: no line of any file
      return args.every((a) => /^-[A-Za-z]+$/.test(a) || isPath(a))
        ? { kind: "quiet" }
        : { kind: "unknown" };
    case "cat":
      if (args.length === 1) return view(args[0], { kind: "whole" });
      if (args.length === 2 && args[0] === "-n") return view(args[1], { kind: "numbered" });
      return { kind: "unknown" };
    case "sed": {
      if (args.length === 3 && args[0] === "-n") {
        const m = /^([1-9][0-9]*)(?:,([1-9][0-9]*))?p$/.exec(args[1]);
        if (!m) return { kind: "unknown" };
        const start = Number(m[1]);
        const end = m[2] === undefined ? start : Number(m[2]);
        return end < start ? { kind: "unknown" } : view(args[2], { kind: "range", start, end });
      }
      if (args.length === 3 && args[0] === "-i" && /^s\/[^/]*\/[^/]*\/$/.test(args[1])) {
        return change(args[2]);
      }
      return { kind: "unknown" };
    }
    case "head":
    case "tail":
      if (args.length === 3 && args[0] === "-n" && NUM.test(args[1])) {
        const count = Number(args[1]);
        return view(args[2], name === "head" ? { kind: "head", count } : { kind: "tail", count });
      }
      return { kind: "unknown" };
    case "grep":
      if (args.length === 3 && args[0] === "-n" && WORD.test(args[1])) {
        return view(args[2], { kind: "grep", word: args[1] });
      }
      return { kind: "unknown" };
    case "cp":
      return args.length === 2 && isPath(args[0]) ? change(args[1]) : { kind: "unknown" };
    case "rm":
      return args.length === 1 ? change(args[0]) : { kind: "unknown" };
  }
  return { kind: "unknown" };
}

/** Whether a command only reads files, by the oracle's reading. */
export function readOnly(r: BashReading): boolean {
  if (r.kind === "chain") return r.parts.every((p) => readOnly(p.reading));
  return r.kind === "view" || r.kind === "quiet";
}

/** The names a command names (its paths, resolved like the model's names; links not followed). */
export function namedIn(command: string): string[] {
  const r = readBash(command);
  if (r.kind === "chain") return r.parts.flatMap((p) => namedIn(p.command));
  if (r.kind === "view") return [nameOf(r.path)];
  if (r.kind === "change") {
    const w = words(command) ?? [];
    return w[0] === "cp" ? [nameOf(w[1]), nameOf(w[2])] : r.paths.map(nameOf);
  }
  // anything else: every word that could be a file's path
  return (words(command) ?? command.split(/\s+/)).filter((w) => isPath(w) && /[./]/.test(w))
    .map(nameOf);
}

/** What one step showed or did to one name: effects in order (a call's part of a view). */
export interface NameEffects {
  name: string;
  effects: Effect[];
}

/** The strictest reading of a result: every file whole as it is now. */
export function strictView(fs: FsModel): NameEffects[] {
  const out: NameEffects[] = [];
  for (const name of fs.nodes.keys()) {
    const t = fs.text(name);
    out.push({
      name,
      effects: [
        t === undefined || !t.utf8
          ? { kind: "unknown" }
          : { kind: "shown", start: 1, lines: t.lines, eof: true },
      ],
    });
  }
  return out;
}

/** Lines as a line-oriented tool sees them: a final line break ends the last line. */
function realLines(text: string): string[] {
  const l = text.split("\n");
  return l[l.length - 1] === "" ? l.slice(0, -1) : l;
}

/**
 * The effects of rows `first..first+rows.length-1` (1-based, as tools count
 * lines) printed from a file of `text`: known lines, and where the file ends
 * when the output proves it: `asked` more lines than printed (the output
 * ended because the file did), or a last printed line without a line break.
 */
function printed(text: string, first: number, rows: string[], asked: number): Effect[] {
  const real = realLines(text);
  const eol = text.endsWith("\n");
  const lastIsFinal = rows.length > 0 && first - 1 + rows.length === real.length;
  const provesEnd = (lastIsFinal && !eol) ||
    (rows.length < asked && first - 1 + rows.length >= real.length);
  if (rows.length === 0) {
    // nothing from line 1 on: the file is empty; from a later line on: it has fewer lines, and
    // what the model held there is gone
    return first === 1
      ? [{ kind: "shown", start: 1, lines: [""], eof: true }]
      : [{ kind: "dropFrom", line: first }];
  }
  const lines = provesEnd && eol ? [...rows, ""] : rows;
  return [{ kind: "shown", start: first, lines, eof: provesEnd }];
}

/** pi's bash tool keeps the output whole only under these limits (else the tail). */
function cutByPi(output: string): boolean {
  return PI_TRUNCATE.truncateTail(output).truncated;
}

/**
 * What a `bash` step showed, by the precise reading when the oracle
 * recognises the command and pi kept its output whole; `undefined` for the
 * strictest reading. `fs` is the file model when the command started (for
 * a command that is not a chain, views change nothing and a changing
 * command shows nothing: the model when it returned does as well). `after`,
 * the file model when the command returned, is checked against the chain's
 * parts run one by one (a difference: the strictest reading).
 */
export function bashShown(
  command: string,
  fs: FsModel,
  after?: FsModel,
): NameEffects[] | undefined {
  const r = readBash(command);
  if (r.kind === "unknown") return undefined;
  if (r.kind === "quiet") return [];
  if (r.kind === "change") return []; // it printed nothing: the model's views stay as they were
  if (r.kind === "chain") return chainShown(r.parts, fs, after);
  const v = viewShown(r, fs);
  if (v.output !== undefined && cutByPi(v.output)) return undefined;
  return [v.shown];
}

/**
 * What a chain showed (see the module comment): its parts run one by one on
 * a copy of the file model, in the order the shell runs them (a `&&` part
 * only after a part that succeeded, by the exit status of the real command
 * on the model's files), each view's lines taken from the files as they are
 * when it runs; `undefined` (the strictest reading) when pi cut the output of
 * all parts together, or the parts run one by one did not leave what the
 * whole command left.
 */
function chainShown(
  parts: ChainPart[],
  before: FsModel,
  after: FsModel | undefined,
): NameEffects[] | undefined {
  const fs = before.clone();
  const out: NameEffects[] = [];
  let output = "";
  let status = 0;
  for (const part of parts) {
    if (part.join === "&&" && status !== 0) continue; // skipped: the status stays the failed one
    if (part.reading.kind === "view") {
      const v = viewShown(part.reading, fs);
      out.push(v.shown);
      output += v.output ?? "";
    }
    status = fs.run(part.command);
  }
  if (after !== undefined && !fs.sameAs(after)) return undefined;
  if (cutByPi(output)) return undefined;
  return out;
}

/**
 * What one view command printed of its file, as it is in `fs`: the effects,
 * and the output (`undefined` for an error, nothing of the file printed, and
 * for a file that is not text, which no line of shows).
 */
function viewShown(
  r: { path: string; shape: ShownShape },
  fs: FsModel,
): { shown: NameEffects; output?: string } {
  const name = nameOf(r.path);
  const bytes = fs.read(name);
  if (bytes === undefined) return { shown: unknown(name) }; // an error: the model learns it is gone
  const t = fs.text(name)!;
  if (!t.utf8) {
    // the output is not text the model can hold; like a plain read of it, no line is known
    return {
      shown: {
        name,
        effects: [{ kind: "shown", start: 1, lines: t.lines.map(() => null), eof: true }],
      },
    };
  }
  const real = realLines(t.text);
  const eol = t.text.endsWith("\n");
  const join = (rows: string[], endsFile: boolean) =>
    rows.join("\n") + (rows.length > 0 && (!endsFile || eol) ? "\n" : "");
  let output: string;
  let effects: Effect[];
  const s = r.shape;
  switch (s.kind) {
    case "whole":
      output = t.text;
      effects = [{ kind: "shown", start: 1, lines: t.lines, eof: true }];
      break;
    case "numbered":
      output = join(real.map((l, i) => `${String(i + 1).padStart(6)}\t${l}`), true);
      effects = [{ kind: "shown", start: 1, lines: t.lines, eof: true }];
      break;
    case "range":
    case "head": {
      const [a, b] = s.kind === "range" ? [s.start, s.end] : [1, s.count];
      const rows = real.slice(a - 1, b);
      output = join(rows, a - 1 + rows.length === real.length);
      effects = printed(t.text, a, rows, b - a + 1);
      break;
    }
    case "tail": {
      const from = Math.max(0, real.length - s.count);
      const rows = real.slice(from);
      output = join(rows, true);
      effects = from === 0
        ? [{ kind: "shown", start: 1, lines: t.lines, eof: true }]
        : [{ kind: "shown", start: from + 1, lines: eol ? [...rows, ""] : rows, eof: true }];
      break;
    }
    case "grep": {
      const hits = real.flatMap((l, i) => l.includes(s.word) ? [i] : []);
      output = hits.map((i) => `${i + 1}:${real[i]}\n`).join("");
      effects = [
        { kind: "absent", text: s.word },
        ...hits.map((i): Effect => ({ kind: "shown", start: i + 1, lines: [real[i]], eof: false })),
      ];
      break;
    }
  }
  return { shown: { name, effects }, output };
}

function unknown(name: string): NameEffects {
  return { name, effects: [{ kind: "unknown" }] };
}

/** A `grep` step as the scenario gives it. */
export interface GrepStep {
  pattern: string;
  path?: string;
}

/**
 * What pi's `grep` tool showed (the precise reading, see the module
 * comment), or `undefined` for the strictest reading (a pattern that is not
 * a plain word, or an output pi cut). The tool searches the regular files
 * under a directory (links are not followed: ripgrep's default) or the one
 * file named (through links); it prints `path:N: text` per matching line,
 * carriage returns dropped.
 */
export function grepShown(step: GrepStep, fs: FsModel): NameEffects[] | undefined {
  if (!WORD.test(step.pattern)) return undefined;
  const at = nameOf(step.path ?? ".");
  let names: string[];
  if (fs.read(at) !== undefined && step.path !== undefined) names = [at];
  else {
    const dir = at === "" ? "" : `${at}/`;
    names = [...fs.nodes].filter(([n, node]) =>
      node.kind === "file" && n.startsWith(dir) && !n.startsWith("..")
    ).map(([n]) => n);
    if (names.length === 0 && !fs.dirs.has(at)) return []; // path not found: an error, nothing shown
  }
  const out: NameEffects[] = [];
  let matches = 0;
  let bytes = 0;
  for (const name of names) {
    const t = fs.text(name)!;
    if (!t.utf8) {
      out.push(unknown(name));
      continue;
    }
    const lines = t.lines;
    const effects: Effect[] = [{ kind: "absent", text: step.pattern }];
    lines.forEach((l, i) => {
      if (!l.includes(step.pattern)) return;
      matches++;
      const shownText = l.replace(/\r/g, "");
      if (shownText.length > 500) matches = Infinity; // pi cuts the line: strictest reading
      bytes += new TextEncoder().encode(`${name}:${i + 1}: ${shownText}\n`).length;
      effects.push({ kind: "shown", start: i + 1, lines: [l], eof: false });
    });
    out.push({ name, effects });
  }
  if (matches > 100 || bytes > 50 * 1024) return undefined;
  return out;
}
