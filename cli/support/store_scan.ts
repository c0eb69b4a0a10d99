/**
 * Looking inside an object store directory without following links and
 * without changing anything: the entries of `objects/` and `tmp/` with their
 * types, sizes, modes and times, and re-hashing one object. Used by
 * `readcache doctor` (reports) and `readcache gc` (removes).
 *
 * @module
 */
import { constants, type Stats } from "node:fs";
import { type FileHandle, lstat, open, readdir, readlink } from "node:fs/promises";
import { join } from "node:path";
import { sha256Hex } from "../../src/core/hash.ts";
import { REPLAY_STATE_FORMAT } from "../../src/core/replay_state.ts";

/** File name of an object: `sha256-<64 hex>.txt` (the store's own pattern). */
export const OBJECT_NAME: RegExp = /^sha256-([0-9a-f]{64})\.txt$/;
/** File name of a temporary file of the store: `<pid>-<24 hex>.tmp`. */
export const TMP_NAME: RegExp = /^[0-9]+-[0-9a-f]{24}\.tmp$/;
/** File name of a saved replay in `state/`: `<64 hex>.json` (SPEC §6.5). */
export const STATE_NAME: RegExp = /^[0-9a-f]{64}\.json$/;
/** Temporary files older than this are leftovers of an interrupted write (the store's rule). */
export const STALE_TMP_MS: number = 60 * 60 * 1000;

/**
 * One entry of a store directory, from `lstat` (a link is a link, never its
 * target).
 *
 * @example
 * ```ts
 * import type { StoreEntry } from "./store_scan.ts";
 * const e: StoreEntry = { name: "x", path: "/w/.pi/readcache/objects/x", type: "file", size: 3,
 *   mode: 0o600, mtimeMs: 0, ino: 1, linkTarget: undefined };
 * ```
 */
export interface StoreEntry {
  /** File name. */
  name: string;
  /** Full path. */
  path: string;
  /** What it is. */
  type: "file" | "symbolic link" | "directory" | "named pipe" | "socket" | "device" | "other";
  /** Size in bytes. */
  size: number;
  /** Permission bits. */
  mode: number;
  /** Modification time (ms). */
  mtimeMs: number;
  /** Inode number (to notice a replaced file). */
  ino: number;
  /** For a symbolic link: where it points. */
  linkTarget: string | undefined;
}

function typeOf(st: Stats): StoreEntry["type"] {
  if (st.isFile()) return "file";
  if (st.isSymbolicLink()) return "symbolic link";
  if (st.isDirectory()) return "directory";
  if (st.isFIFO()) return "named pipe";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "device";
  return "other";
}

/**
 * The entries of `dir` with their `lstat`, sorted by name; `undefined` when
 * `dir` does not exist. Entries removed meanwhile are skipped.
 *
 * @example
 * ```ts
 * import { listStoreDir } from "./store_scan.ts";
 * await listStoreDir("/nonexistent"); // undefined
 * ```
 */
export async function listStoreDir(dir: string): Promise<StoreEntry[] | undefined> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return undefined;
    throw e;
  }
  const out: StoreEntry[] = [];
  for (const name of names.sort()) {
    const path = join(dir, name);
    try {
      const st = await lstat(path);
      out.push({
        name,
        path,
        type: typeOf(st),
        size: st.size,
        mode: st.mode & 0o777,
        mtimeMs: st.mtimeMs,
        ino: st.ino,
        linkTarget: st.isSymbolicLink() ? await readlink(path).catch(() => undefined) : undefined,
      });
    } catch {
      // removed meanwhile
    }
  }
  return out;
}

/**
 * The result of re-hashing an object: `intact`, `damaged` (its bytes do not
 * hash to its name), `too_large` (over the cap: the store never loads it),
 * `not_a_file` (a link, pipe, device... found at open), or `unreadable`
 * with the reason.
 *
 * @example
 * ```ts
 * import type { ObjectCheck } from "./store_scan.ts";
 * const c: ObjectCheck = { state: "unreadable", why: "EACCES" };
 * ```
 */
export type ObjectCheck =
  | { state: "intact" | "damaged" | "too_large" | "not_a_file" }
  | { state: "unreadable"; why: string };

/**
 * Re-hashes one object file: opened without following a link and without
 * blocking (a named pipe is no object), checked to be a regular file of at
 * most `cap` bytes, read and hashed. Never throws, never writes.
 *
 * @example
 * ```ts
 * import { checkObject } from "./store_scan.ts";
 * await checkObject("/nonexistent", "0".repeat(64), 1024); // { state: "unreadable", why: "ENOENT" }
 * ```
 */
export async function checkObject(path: string, hash: string, cap: number): Promise<ObjectCheck> {
  const r = await readStoreFile(path, cap);
  if (!(r instanceof Uint8Array)) return r;
  return { state: sha256Hex(r) === hash ? "intact" : "damaged" };
}

/**
 * The bytes of one file of the store, read without following a link and
 * without blocking (a named pipe is no file of the store), when it is a
 * regular file of at most `cap` bytes; else what it is. Never throws.
 */
async function readStoreFile(
  path: string,
  cap: number,
): Promise<
  Uint8Array | { state: "too_large" | "not_a_file" } | { state: "unreadable"; why: string }
> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(
      path,
      constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0),
    );
    const st = await fh.stat();
    if (!st.isFile()) return { state: "not_a_file" };
    if (st.size > cap) return { state: "too_large" };
    return await fh.readFile();
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ELOOP") return { state: "not_a_file" };
    return { state: "unreadable", why: code ?? (e instanceof Error ? e.message : String(e)) };
  } finally {
    await fh?.close().catch(() => {});
  }
}

/**
 * What a saved replay in the store's `state/` is (SPEC §6.5): `usable` (its
 * session file is there), `damaged` (its bytes do not match the checksum it
 * starts with, or are not a saved replay), `outdated` (saved by another
 * format of the replay: never continued), `orphaned` (its session file is
 * gone), or it cannot be read.
 *
 * @example
 * ```ts
 * import type { SavedReplayCheck } from "./store_scan.ts";
 * const c: SavedReplayCheck = { state: "orphaned", file: "/home/me/.pi/agent/sessions/s.jsonl" };
 * ```
 */
export type SavedReplayCheck =
  | { state: "usable" | "orphaned"; file: string }
  | { state: "damaged" | "outdated" | "not_a_file" | "too_large" }
  | { state: "unreadable"; why: string };

/**
 * Reads the saved replay at `path` (never through a link, never waiting on
 * a FIFO) and says what it is.
 *
 * @example
 * ```ts
 * import { checkSavedReplay } from "./store_scan.ts";
 * (await checkSavedReplay("/nonexistent/state/x.json", 1024)).state; // "unreadable"
 * ```
 */
export async function checkSavedReplay(path: string, cap: number): Promise<SavedReplayCheck> {
  // the replay's bytes after a SHA-256 line (64 hex digits and a line break)
  const bytes = await readStoreFile(path, cap + 65);
  if (!(bytes instanceof Uint8Array)) return bytes;
  const cut = bytes.indexOf(0x0a);
  const header = new TextDecoder().decode(bytes.subarray(0, Math.max(cut, 0)));
  const body = bytes.subarray(cut + 1);
  if (cut !== 64 || sha256Hex(body) !== header) return { state: "damaged" };
  // its first line says whose it is and its format (the packed state is on the second)
  const firstLine = body.indexOf(0x0a);
  let saved: { file?: unknown; format?: unknown };
  try {
    saved = JSON.parse(
      new TextDecoder().decode(firstLine < 0 ? body : body.subarray(0, firstLine)),
    );
  } catch {
    return { state: "damaged" };
  }
  if (typeof saved?.file !== "string") return { state: "damaged" };
  if (firstLine < 0 || saved.format !== REPLAY_STATE_FORMAT) return { state: "outdated" };
  try {
    await lstat(saved.file);
    return { state: "usable", file: saved.file };
  } catch (e) {
    return (e as { code?: string }).code === "ENOENT"
      ? { state: "orphaned", file: saved.file }
      : { state: "usable", file: saved.file };
  }
}

/**
 * Whether each directory from the project down to the store's `objects/`,
 * `tmp/` and `state/` (under `.pi/`, `.opencode/` for the OpenCode plugin, `.claude/` for Claude Code) is
 * a real directory (not a link): the first that is not, or
 * `undefined`. Missing directories below the first missing one are not
 * looked at.
 *
 * @example
 * ```ts
 * import { unsafeStoreDir } from "./store_scan.ts";
 * await unsafeStoreDir("/work/app"); // undefined when nothing is linked
 * ```
 */
export async function unsafeStoreDir(
  cwd: string,
  hostDir: ".pi" | ".opencode" | ".claude" = ".pi",
): Promise<{ path: string; type: StoreEntry["type"] } | undefined> {
  const chain = [
    join(cwd, hostDir),
    join(cwd, hostDir, "readcache"),
    join(cwd, hostDir, "readcache", "objects"),
    join(cwd, hostDir, "readcache", "tmp"),
    join(cwd, hostDir, "readcache", "state"),
  ];
  for (const path of chain) {
    let st: Stats;
    try {
      st = await lstat(path);
    } catch {
      continue; // missing: nothing below it is used
    }
    if (!st.isDirectory()) return { path, type: typeOf(st) };
  }
  return undefined;
}

/**
 * A path quoted for a POSIX shell when it needs it.
 *
 * @example
 * ```ts
 * import { shellQuote } from "./store_scan.ts";
 * shellQuote("/w/a b"); // "'/w/a b'"
 * ```
 */
export function shellQuote(path: string): string {
  return /^[A-Za-z0-9_./@:+-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}

/**
 * A type of directory entry with its article: `a symbolic link`, `a named
 * pipe`; `something else` for `other`.
 *
 * @example
 * ```ts
 * import { aType } from "./store_scan.ts";
 * aType("directory"); // "a directory"
 * ```
 */
export function aType(type: StoreEntry["type"]): string {
  return type === "other" ? "something else" : `a ${type}`;
}
