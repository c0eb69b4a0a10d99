// The file commands of a recorded bash call that `deno task bench:real` applies to its rebuild
// (bench/pi/real.ts): only plain `cd`, `cp`, `mv` and `rm` of named paths, chained with `&&` or
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
      ? join(where.root, p)
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
 * What a bash command's output showed of a file, read by the bench on its own (nothing from
 * src/): the output of `cat F`, `cat -n F`, `sed -n 'A,Bp' F`, `head -n N F`, `head -N F`,
 * `cat F | head -N`, `tail -n +A F` or `grep -n P F` that is exactly what the command prints for
 * the file as the rebuild holds it (`text` gives a file's content). Anything else: nothing.
 */
export function bashShown(
  command: string,
  output: string,
  cwd: string,
  text: (path: string) => string | undefined,
): ShownLines[] {
  const c = command.trim();
  const unq = (s: string) => s.replace(/^'(.*)'$/, "$1");
  const path = String.raw`('[^']*'|[^\s'"|;&<>$*?~]+)`;
  let m: RegExpExecArray | null;
  const at = (p: string) => resolve(cwd, unq(p));
  // [file, first line, last line (Infinity: to the end), how the lines print]
  let want: [string, number, number, "plain" | "numbered" | "grep"] | undefined;
  if ((m = new RegExp(`^cat ${path}$`).exec(c))) want = [at(m[1]), 1, Infinity, "plain"];
  else if ((m = new RegExp(`^cat -n ${path}$`).exec(c))) {
    want = [at(m[1]), 1, Infinity, "numbered"];
  } else if ((m = new RegExp(`^sed -n '?(\\d+)(?:,(\\d+|\\$))?p'? ${path}$`).exec(c))) {
    const end = m[2] === undefined ? Number(m[1]) : m[2] === "$" ? Infinity : Number(m[2]);
    want = [at(m[3]), Number(m[1]), end, "plain"];
  } else if ((m = new RegExp(`^head -n ?(\\d+) ${path}$`).exec(c))) {
    want = [at(m[2]), 1, Number(m[1]), "plain"];
  } else if ((m = new RegExp(`^head -(\\d+) ${path}$`).exec(c))) {
    want = [at(m[2]), 1, Number(m[1]), "plain"];
  } else if ((m = new RegExp(`^cat ${path} \\| head -n? ?(\\d+)$`).exec(c))) {
    want = [at(m[1]), 1, Number(m[2]), "plain"];
  } else if ((m = new RegExp(`^tail -n \\+(\\d+) ${path}$`).exec(c))) {
    want = [at(m[2]), Number(m[1]), Infinity, "plain"];
  } else if ((m = new RegExp(`^grep -n ('[^']*'|\\S+) ${path}$`).exec(c))) {
    want = [at(m[2]), 1, Infinity, "grep"];
  }
  if (want === undefined || output === "") return [];
  const [file, first, last, form] = want;
  const content = text(file);
  if (content === undefined || content.includes("\r") || first < 1) return [];
  const lines = content.split("\n");
  const same = (expected: string) => output === expected || output + "\n" === expected;
  if (form === "grep") {
    const rows = (output.endsWith("\n") ? output.slice(0, -1) : output).split("\n");
    const shown: ShownLines[] = [];
    for (const row of rows) {
      const g = /^(\d+):(.*)$/.exec(row);
      if (!g || lines[Number(g[1]) - 1] !== g[2]) return [];
      shown.push({ file, start: Number(g[1]), lines: [g[2]], toEnd: false });
    }
    return shown;
  }
  if (form === "numbered") {
    const real = lines.at(-1) === "" ? lines.slice(0, -1) : lines;
    const expected = real.map((l, i) => `${String(i + 1).padStart(6)}\t${l}`).join("\n") +
      (real.length < lines.length ? "\n" : "");
    return same(expected) ? [{ file, start: 1, lines, toEnd: true }] : [];
  }
  if (first > lines.length) return [];
  const end = Math.min(last, lines.length);
  const part = lines.slice(first - 1, end);
  if (!same(part.join("\n") + (end < lines.length ? "\n" : ""))) return [];
  return [{ file, start: first, lines: part, toEnd: last > lines.length }];
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
