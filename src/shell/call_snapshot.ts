/**
 * What the files the model holds looked like on disk when a tool call
 * started (SPEC §5.10, "Printed while changing"): for each identity (and
 * its real path), the status of the file, of its directory and of every
 * directory between it and the project directory (device, inode, mode,
 * size, change and modification times), and the device and inode of every
 * directory above those. A file whose statuses are all the same at the
 * call's result was not written, replaced, moved or reached through another
 * entry while the call ran, so nothing the call printed of it can differ
 * from what it holds at the result.
 *
 * A status whose change time is within {@linkcode RACY_WINDOW_MS} (fine
 * timestamps) or {@linkcode COARSE_RACY_WINDOW_MS} (whole seconds) of the
 * snapshot is **racy**: a change right after the snapshot could leave every
 * time as it was (the clock had not ticked), so such a file always counts
 * as touched.
 *
 * Reads only file statuses (never contents); never writes.
 *
 * Specified by SPEC.md §5.10.
 *
 * @module
 */
import { lstat, realpath } from "node:fs/promises";
import { dirname } from "node:path";
import { isAtOrUnder } from "./read_service.ts";

/**
 * How close to the snapshot (milliseconds) a change time with sub-second
 * digits must be to count as racy: the kernel stamps files from a clock that
 * ticks every few milliseconds (at most 10 on common systems).
 */
export const RACY_WINDOW_MS = 50;

/**
 * The same for a file system that keeps whole seconds (a change time
 * without sub-second digits): FAT keeps two seconds.
 */
export const COARSE_RACY_WINDOW_MS = 3000;

/**
 * The files the model held when a tool call started, as their statuses on
 * disk. Make it with {@linkcode snapshotCall} before the call runs; pass it
 * to {@linkcode touchedSince} (or `toolResultMeta`) at its result.
 *
 * @example
 * ```ts ignore
 * const snap = await snapshotCall(["/w/a.txt"], "/w");
 * // ... the call runs ...
 * await touchedSince(snap, "/w/a.txt"); // false when nothing wrote, moved or replaced it
 * ```
 */
export interface CallSnapshot {
  /** `Date.now()` when the snapshot was taken (before any status was read). */
  readonly taken: number;
  /**
   * The racy window in force (milliseconds), when not the default: a replay
   * of a recorded session faster than it ran sets 0 where the recording
   * shows the calls came later than the window after every change.
   */
  readonly racyWindowMs?: number;
  /** The project directory: directories from it down are compared in full. */
  readonly root: string;
  /** Each identity's paths, with whether each one's full status counts. */
  readonly paths: ReadonlyMap<string, ReadonlyMap<string, boolean>>;
  /** Each path's status (keyed `f`/`i` and the path), `"missing"`, or `"racy"`. */
  readonly stamps: ReadonlyMap<string, string>;
}

/**
 * The status of `path` (not followed) as one string: every field when
 * `full`, else its device and inode; `"missing"` when there is none,
 * `"racy"` when a full status changed too close to `taken` to tell.
 */
async function stampOf(
  path: string,
  full: boolean,
  taken: number,
  racyWindowMs: number | undefined,
): Promise<string> {
  let s;
  try {
    s = await lstat(path, { bigint: true });
  } catch {
    return "missing";
  }
  if (!full) return `${s.dev}:${s.ino}`;
  const ctimeMs = Number(s.ctimeNs / 1_000_000n);
  const fine = s.ctimeNs % 1_000_000_000n !== 0n;
  const window = racyWindowMs ?? (fine ? RACY_WINDOW_MS : COARSE_RACY_WINDOW_MS);
  if (ctimeMs >= taken - window) return "racy";
  return `${s.dev}:${s.ino}:${s.mode}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}

/**
 * The paths whose statuses say whether `id` was touched, each with whether
 * its full status counts: `id` and its real path, their directories, and
 * every directory between them and `root` in full; the directories above
 * by device and inode (their entries change all the time: temporary files).
 */
async function pathsOf(id: string, root: string): Promise<Map<string, boolean>> {
  const out = new Map<string, boolean>();
  const chain = (p: string) => {
    out.set(p, true);
    out.set(dirname(p), true);
    for (let d = dirname(p); dirname(d) !== d; d = dirname(d)) {
      const up = dirname(d);
      if (!out.has(up)) out.set(up, isAtOrUnder(up, root));
    }
  };
  chain(id);
  const real = await realpath(id).catch(() => undefined);
  if (real !== undefined && real !== id) chain(real);
  return out;
}

/**
 * Takes the statuses of every identity in `ids` (absolute paths: the
 * files the model holds), before a tool call runs; `root` is the project
 * directory; `racyWindowMs` replaces the default windows
 * ({@linkcode RACY_WINDOW_MS}, {@linkcode COARSE_RACY_WINDOW_MS}); keep
 * them unless the calls really start that long after any change.
 *
 * @example
 * ```ts ignore
 * const snap = await snapshotCall(knowledge.heldIdentities().keys, "/w");
 * ```
 */
export async function snapshotCall(
  ids: Iterable<string>,
  root: string,
  racyWindowMs?: number,
): Promise<CallSnapshot> {
  const taken = Date.now();
  const paths = new Map<string, ReadonlyMap<string, boolean>>();
  const stamps = new Map<string, string>();
  for (const id of new Set(ids)) {
    const p = await pathsOf(id, root);
    paths.set(id, p);
    for (const [path, full] of p) {
      const key = `${full ? "f" : "i"}${path}`;
      if (!stamps.has(key)) stamps.set(key, await stampOf(path, full, taken, racyWindowMs));
    }
  }
  return { taken, racyWindowMs, root, paths, stamps };
}

/**
 * True when identity `id` may have been written, replaced or reached
 * through another entry since `snapshot` was taken: it was not in the
 * snapshot, one of its paths was racy then, or one of them has another
 * status now (a path that resolves elsewhere now counts too).
 *
 * @example
 * ```ts ignore
 * if (await touchedSince(snap, "/w/a.txt")) changed.push("/w/a.txt");
 * ```
 */
export async function touchedSince(snapshot: CallSnapshot, id: string): Promise<boolean> {
  const before = snapshot.paths.get(id);
  if (before === undefined) return true;
  const now = await pathsOf(id, snapshot.root);
  if ([...now.keys()].some((p) => !before.has(p))) return true;
  for (const [path, full] of before) {
    const then = snapshot.stamps.get(`${full ? "f" : "i"}${path}`);
    if (then === undefined || then === "racy") return true;
    if ((await stampOf(path, full, snapshot.taken, snapshot.racyWindowMs)) !== then) return true;
  }
  return false;
}
