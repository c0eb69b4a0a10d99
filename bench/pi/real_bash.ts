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
