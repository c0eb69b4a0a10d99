/**
 * On-disk content-addressed object store.
 *
 * Layout under the store root (`<cwd>/.pi/readcache`):
 *
 * - `objects/sha256-<64 hex>.txt`: one file per object, holding the exact bytes
 * - `tmp/`: temporary files of writes in progress
 *
 * Directories are mode 0700 and object files 0600 (set explicitly, whatever the
 * umask). A write goes to a fresh temporary file in `tmp/`, is fsynced, then
 * atomically renamed into `objects/`, so a reader (or another process) never
 * sees a partial object. Reads verify the SHA-256 before returning anything and
 * never delete or rewrite files.
 *
 * Uses only `node:` APIs so it runs under Deno and Node alike.
 *
 * @module
 */
import type { Buffer } from "node:buffer";
import { randomBytes } from "node:crypto";
import {
  chmod,
  type FileHandle,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
} from "node:fs/promises";
import { join } from "node:path";
import { pid } from "node:process";
import { ReadCacheError } from "../errors.ts";
import { isContentHash, sha256Hex } from "../hash.ts";
import { assertContentHash, type ObjectStore, type StoreStats } from "../object_store.ts";

/** File name of a well-formed object. */
const OBJECT_NAME: RegExp = /^sha256-[0-9a-f]{64}\.txt$/;

/** Creates `dir` (and missing parents) and forces mode 0700 on it. */
async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // mkdir's mode is filtered by the umask and ignored for an existing directory
  await chmod(dir, 0o700);
}

/** True when `path` is an existing regular file (an object, valid or not). Never throws. */
async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** fsyncs a directory so a rename into it is durable. Best-effort (not possible everywhere). */
async function syncDirBestEffort(dir: string): Promise<void> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(dir, "r");
    await fh.sync();
  } catch {
    // e.g. Windows cannot open or fsync a directory; the rename itself is still atomic
  } finally {
    await fh?.close().catch(() => {});
  }
}

/** Human-readable cause of a caught value. */
function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * {@linkcode ObjectStore} on the local file system, rooted at
 * `<cwd>/.pi/readcache`.
 *
 * `put` throws `ReadCacheError` with code `INVALID_HASH` when the hash does
 * not match the bytes and `STORE_WRITE_FAILED` (naming the object path and the
 * cause) when the object cannot be written; a failed write leaves no temporary
 * file behind. Concurrent writers of the same object, in one process or many,
 * are safe.
 *
 * @example
 * ```ts
 * import { FsObjectStore } from "@readcache/core/fs";
 * import { sha256Hex } from "@readcache/core";
 * import { mkdtemp, rm } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 *
 * const cwd = await mkdtemp(join(tmpdir(), "readcache-"));
 * const store = FsObjectStore.forCwd(cwd);
 * const bytes = new TextEncoder().encode("export const x = 1;\n");
 * const hash = sha256Hex(bytes);
 * await store.put(hash, bytes);
 * console.log(store.objectPath(hash)); // <cwd>/.pi/readcache/objects/sha256-<hash>.txt
 * console.log(await store.stats()); // { objects: 1, bytes: 20 }
 * await rm(cwd, { recursive: true });
 * ```
 */
export class FsObjectStore implements ObjectStore {
  /** Store root, normally `<cwd>/.pi/readcache`. */
  readonly root: string;

  /**
   * Creates a store rooted at `root`.
   *
   * @example
   * ```ts
   * import { FsObjectStore } from "@readcache/core/fs";
   * const store = new FsObjectStore("/work/project/.pi/readcache");
   * ```
   *
   * @param root the store root, normally `<cwd>/.pi/readcache` (see
   * {@linkcode FsObjectStore.forCwd}). Nothing is created until the first `put`.
   */
  constructor(root: string) {
    this.root = root;
  }

  /**
   * The store of a working directory, rooted at `<cwd>/.pi/readcache`.
   *
   * @example
   * ```ts
   * import { FsObjectStore } from "@readcache/core/fs";
   * FsObjectStore.forCwd("/work/project").root; // "/work/project/.pi/readcache"
   * ```
   */
  static forCwd(cwd: string): FsObjectStore {
    return new FsObjectStore(join(cwd, ".pi", "readcache"));
  }

  /**
   * Path of the object file of `hash` (for tests and diagnostics; the file
   * may not exist). Throws `ReadCacheError` with code `INVALID_HASH` when
   * `hash` is not 64 lowercase hex digits, so no other path can be built.
   *
   * @example
   * ```ts
   * import { FsObjectStore } from "@readcache/core/fs";
   * import { sha256Hex } from "@readcache/core";
   * FsObjectStore.forCwd("/w").objectPath(sha256Hex("abc"));
   * // "/w/.pi/readcache/objects/sha256-ba7816bf...15ad.txt"
   * ```
   */
  objectPath(hash: string): string {
    if (!isContentHash(hash)) {
      throw new ReadCacheError(
        "INVALID_HASH",
        `No object path for '${hash}': not a content hash (64 lowercase hex digits).`,
      );
    }
    return join(this.root, "objects", `sha256-${hash}.txt`);
  }

  /**
   * Stores `bytes` under `hash` (write to `tmp/`, fsync, atomic rename). An
   * existing object file makes this a no-op: it is never rewritten.
   *
   * @example
   * ```ts
   * import { FsObjectStore } from "@readcache/core/fs";
   * import { sha256Hex } from "@readcache/core";
   * import { mkdtemp, rm } from "node:fs/promises";
   * import { tmpdir } from "node:os";
   * import { join } from "node:path";
   *
   * const cwd = await mkdtemp(join(tmpdir(), "readcache-"));
   * const store = FsObjectStore.forCwd(cwd);
   * const bytes = new TextEncoder().encode("a\n");
   * await store.put(sha256Hex(bytes), bytes);
   * await store.put(sha256Hex(bytes), bytes); // no-op
   * await rm(cwd, { recursive: true });
   * ```
   */
  async put(hash: string, bytes: Uint8Array): Promise<void> {
    assertContentHash(hash, bytes);
    const target = this.objectPath(hash);
    // an existing object is never rewritten (SPEC §9), so existence is enough
    if (await isFile(target)) return;

    const objectsDir = join(this.root, "objects");
    const tmpDir = join(this.root, "tmp");
    // set only once this call has created the file, so a failure never removes another writer's file
    let tmp: string | undefined;
    try {
      await ensurePrivateDir(this.root);
      await ensurePrivateDir(objectsDir);
      await ensurePrivateDir(tmpDir);
      const candidate = join(tmpDir, `${pid}-${randomBytes(12).toString("hex")}.tmp`);
      const fh = await open(candidate, "wx", 0o600);
      tmp = candidate;
      try {
        await fh.chmod(0o600); // the open mode is filtered by the umask
        await fh.writeFile(bytes);
        await fh.sync();
      } finally {
        await fh.close();
      }
      try {
        // Atomic. If a concurrent writer renamed its copy into place since the
        // existence check, this replaces it with identical verified bytes: readers
        // see one complete file or the other, never a partial one.
        await rename(tmp, target);
        tmp = undefined;
      } catch (e) {
        // Windows refuses to replace a target another process holds open. If an
        // object file is now in place, a concurrent writer won: that is success.
        if (!(await isFile(target))) throw e;
      }
      await syncDirBestEffort(objectsDir);
    } catch (e) {
      const err = new ReadCacheError(
        "STORE_WRITE_FAILED",
        `Could not store object ${target}: ${describe(e)}. ` +
          `Check that ${this.root} is a writable directory; reads still work without the store.`,
      );
      err.cause = e;
      throw err;
    } finally {
      if (tmp !== undefined) await rm(tmp, { force: true }).catch(() => {});
    }
  }

  /**
   * The verified bytes of `hash`, or `undefined` when missing, unreadable,
   * corrupt (bytes do not hash to `hash`) or `hash` is malformed. Never
   * throws; never deletes or rewrites.
   *
   * @example
   * ```ts
   * import { FsObjectStore } from "@readcache/core/fs";
   * import { sha256Hex } from "@readcache/core";
   * await FsObjectStore.forCwd("/nonexistent").get(sha256Hex("x")); // undefined
   * ```
   */
  async get(hash: string): Promise<Uint8Array | undefined> {
    if (!isContentHash(hash)) return undefined;
    let onDisk: Buffer;
    try {
      onDisk = await readFile(this.objectPath(hash));
    } catch {
      return undefined;
    }
    if (sha256Hex(onDisk) !== hash) return undefined;
    return new Uint8Array(onDisk);
  }

  /**
   * Count and total bytes of the well-formed object files
   * (`objects/sha256-<64 hex>.txt`). Read-only: creates nothing; a store that
   * does not exist (or cannot be listed) gives `{ objects: 0, bytes: 0 }`.
   * Objects are not verified here.
   *
   * @example
   * ```ts
   * import { FsObjectStore } from "@readcache/core/fs";
   * await FsObjectStore.forCwd("/nonexistent").stats(); // { objects: 0, bytes: 0 }
   * ```
   */
  async stats(): Promise<StoreStats> {
    const objectsDir = join(this.root, "objects");
    let names: string[];
    try {
      names = await readdir(objectsDir);
    } catch {
      return { objects: 0, bytes: 0 };
    }
    const sizes = await Promise.all(
      names.filter((n) => OBJECT_NAME.test(n)).map(async (n): Promise<number | undefined> => {
        try {
          const s = await stat(join(objectsDir, n));
          return s.isFile() ? s.size : undefined;
        } catch {
          return undefined; // removed meanwhile
        }
      }),
    );
    let objects = 0;
    let bytes = 0;
    for (const size of sizes) {
      if (size === undefined) continue;
      objects++;
      bytes += size;
    }
    return { objects, bytes };
  }
}
