/**
 * The identities (realpaths, SPEC §3.2) of the files one walk of a session
 * names, taken directory by directory: a walk that converts hundreds of
 * reads of files in a few directories asks each directory once instead of
 * asking a realpath of every file. Same answers as `realpathOrUndefined`.
 *
 * @module
 */
import { type Dirent, opendirSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/** A directory is listed once this many of its files were asked for in the walk. */
const LIST_AFTER = 3;
/** Directories with more entries than this are not listed (each file is asked on its own). */
const MAX_LISTED = 4096;

interface Directory {
  /** Files asked for so far. */
  asked: number;
  /** Its realpath, once listed. */
  real?: string;
  /** Its entries, name to "is a symbolic link", once listed; `null` when it cannot be. */
  names?: Map<string, boolean> | null;
}

/**
 * Realpaths for one walk (make a new one for the next: files change
 * between walks). A file whose directory was asked for few files gets its
 * own realpath; once a directory was asked for three, it is listed once
 * (at most 4,096 entries) and a regular file or directory in it (not a
 * symbolic link) is the directory's realpath joined with its name, which is
 * what realpath gives for it; links, names the listing does not hold and
 * directories that cannot be listed get their own realpath.
 *
 * @example
 * ```ts ignore
 * import { realpathOrUndefined } from "@readcache/core/service";
 * const ids = new WalkIdentities(realpathOrUndefined);
 * ids.realpath("/work/app/src/a.ts"); // "/work/app/src/a.ts"
 * ```
 */
export class WalkIdentities {
  readonly #dirs = new Map<string, Directory>();

  /** `realpathOrUndefined`: one path's realpath, `undefined` when it has none. */
  constructor(readonly realpathOrUndefined: (path: string) => string | undefined) {}

  /** The realpath of `path`, or `undefined` when it does not exist or cannot be resolved. */
  readonly realpath = (path: string): string | undefined => {
    const dir = dirname(path);
    const name = basename(path);
    if (dir === path || name === "" || name === "." || name === "..") {
      return this.realpathOrUndefined(path);
    }
    let d = this.#dirs.get(dir);
    if (d === undefined) this.#dirs.set(dir, d = { asked: 0 });
    if (++d.asked < LIST_AFTER) return this.realpathOrUndefined(path);
    if (d.names === undefined) {
      d.real = this.realpathOrUndefined(dir);
      d.names = d.real === undefined ? null : listed(dir);
    }
    const link = d.names?.get(name);
    if (d.real === undefined || link === undefined || link) return this.realpathOrUndefined(path);
    return join(d.real, name);
  };
}

/** A directory's entries (name to "is a symbolic link"), or `null` when it cannot be listed whole. */
function listed(dir: string): Map<string, boolean> | null {
  let handle;
  try {
    handle = opendirSync(dir);
    const names = new Map<string, boolean>();
    for (let e: Dirent | null; (e = handle.readSync()) !== null;) {
      if (names.size >= MAX_LISTED) return null;
      names.set(e.name, e.isSymbolicLink());
    }
    return names;
  } catch {
    return null;
  } finally {
    try {
      handle?.closeSync();
    } catch { /* closed */ }
  }
}
