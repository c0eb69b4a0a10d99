/**
 * The directory the Claude Code service lives in (SPEC §11.9): its socket,
 * its hook client, its lock. Only the user may reach anything in it, so it
 * must be a real directory owned by the user with no access for group or
 * others, and no other user may be able to rename or replace it or any
 * directory above it (each one owned by the user or root, and writable by
 * no one else unless it is sticky, like `/tmp`). {@linkcode privateDirProblem}
 * says what is wrong in words; {@linkcode ensurePrivateDir} makes the
 * directory or refuses.
 *
 * Specified by SPEC.md §11.9.
 *
 * @module
 */
import { chmodSync, lstatSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import process from "node:process";

/**
 * Thrown when the service's directory is not private (another user could
 * reach or replace it): `code` is stable, the message says what to do.
 *
 * @example
 * ```ts
 * import { ClaudePrivateDirError } from "@readcache/core/claude-code";
 * new ClaudePrivateDirError("x").code; // "claude_dir_not_private"
 * ```
 */
export class ClaudePrivateDirError extends Error {
  /** Stable code. */
  readonly code = "claude_dir_not_private";
  /** An error with this message (what is wrong and what to do). */
  constructor(message: string) {
    super(message);
    this.name = "ClaudePrivateDirError";
  }
}

function uid(): number | undefined {
  return typeof process.getuid === "function" ? process.getuid() : undefined;
}

/**
 * What makes `dir` unfit to hold the service's socket, in words, or
 * `undefined` when only the user can reach it: it must exist, be a directory
 * (not a link), be owned by the user and have no permission bits for group
 * and others; every directory above it must be owned by the user or root and
 * writable by no one else unless it is sticky.
 *
 * @example
 * ```ts ignore
 * import { privateDirProblem } from "@readcache/core/claude-code";
 * privateDirProblem("/home/me/.claude/readcache"); // undefined when it is private
 * ```
 */
export function privateDirProblem(dir: string): string | undefined {
  const me = uid();
  const path = resolve(dir);
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return `${path} does not exist`;
  }
  if (st.isSymbolicLink()) return `${path} is a symbolic link, not a directory`;
  if (!st.isDirectory()) return `${path} is not a directory`;
  if (me !== undefined && st.uid !== me) {
    return `${path} belongs to user ${st.uid}, not to you (user ${me})`;
  }
  if ((st.mode & 0o077) !== 0) {
    return `${path} can be opened by other users (mode ${(st.mode & 0o777).toString(8)})`;
  }
  for (let d = dirname(path);; d = dirname(d)) {
    let up;
    try {
      up = lstatSync(d);
    } catch {
      return `${d} cannot be examined`;
    }
    if (me !== undefined && up.uid !== me && up.uid !== 0) {
      return `${d} belongs to user ${up.uid}, who could replace what is inside it`;
    }
    const sticky = (up.mode & 0o1000) !== 0;
    if ((up.mode & 0o022) !== 0 && !sticky) {
      return `${d} can be written by other users (mode ${(up.mode & 0o777).toString(8)})`;
    }
    if (dirname(d) === d) break;
  }
  return undefined;
}

/**
 * Makes `dir` (and the directories above it that are missing) with mode
 * 0700, tightens an existing one that is the user's, and throws
 * {@linkcode ClaudePrivateDirError} when it still is not private.
 *
 * @example
 * ```ts ignore
 * import { ensurePrivateDir } from "@readcache/core/claude-code";
 * ensurePrivateDir("/home/me/.claude/readcache");
 * ```
 */
export function ensurePrivateDir(dir: string): void {
  const path = resolve(dir);
  mkdirSync(path, { recursive: true, mode: 0o700 });
  try {
    const st = lstatSync(path);
    if (st.isDirectory() && (uid() === undefined || st.uid === uid())) chmodSync(path, 0o700);
  } catch {
    // examined below
  }
  const problem = privateDirProblem(path);
  if (problem !== undefined) {
    throw new ClaudePrivateDirError(
      `${problem}. readcache keeps the socket Claude Code's hooks reach there, so it must be a ` +
        "directory only you can open, inside directories no other user can change. Fix the " +
        "owner or mode (or set CLAUDE_CONFIG_DIR to a directory of your own), then run this again.",
    );
  }
}
