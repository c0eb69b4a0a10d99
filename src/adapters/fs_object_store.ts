/**
 * On-disk content-addressed object store:
 * `<cwd>/.pi/readcache/objects/sha256-<64 hex>.txt`, written to `tmp/`, fsynced,
 * then atomically renamed. Directories are 0700, files 0600. Loading verifies
 * the SHA-256 before the content is used; reads never delete or rewrite.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, open, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { ReadCacheError } from "../errors.ts";
import { isContentHash, sha256Hex } from "../hash.ts";
import { assertContentHash, type ObjectStore, type StoreStats } from "../object_store.ts";

const OBJECT_NAME = /^sha256-[0-9a-f]{64}\.txt$/;

/**
 * {@linkcode ObjectStore} on the local file system.
 *
 * @example
 * ```ts ignore
 * import { FsObjectStore } from "@readcache/core/fs";
 * const store = FsObjectStore.forCwd(Deno.cwd());
 * console.log(await store.stats());
 * ```
 */
export class FsObjectStore implements ObjectStore {
  /** Store root, e.g. `<cwd>/.pi/readcache`. */
  readonly root: string;

  /** @param root the store root (`<cwd>/.pi/readcache`) */
  constructor(root: string) {
    this.root = root;
  }

  /** The store of a working directory: `<cwd>/.pi/readcache`. */
  static forCwd(cwd: string): FsObjectStore {
    return new FsObjectStore(join(cwd, ".pi", "readcache"));
  }

  /** Where the object of `hash` lives. */
  objectPath(hash: string): string {
    return join(this.root, "objects", `sha256-${hash}.txt`);
  }

  async #ensureDir(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chmod(dir, 0o700);
  }

  /** Stores `bytes` under `hash` atomically; an existing object is left as is. */
  async put(hash: string, bytes: Uint8Array): Promise<void> {
    assertContentHash(hash, bytes);
    const target = this.objectPath(hash);
    if (await this.get(hash)) return;
    const tmpDir = join(this.root, "tmp");
    const tmp = join(
      tmpDir,
      `${hash.slice(0, 16)}-${process.pid}-${randomBytes(8).toString("hex")}.tmp`,
    );
    try {
      await this.#ensureDir(this.root);
      await this.#ensureDir(join(this.root, "objects"));
      await this.#ensureDir(tmpDir);
      const fh = await open(tmp, "wx", 0o600);
      try {
        await fh.writeFile(bytes);
        await fh.sync();
      } finally {
        await fh.close();
      }
      // rename is atomic; a concurrent writer of the same hash wrote identical bytes
      await rename(tmp, target);
    } catch (e) {
      await rm(tmp, { force: true }).catch(() => {});
      throw new ReadCacheError(
        "STORE_WRITE_FAILED",
        `Could not write object ${target}: ${e instanceof Error ? e.message : String(e)}. ` +
          `Check that ${this.root} is writable; reads still work without the store.`,
      );
    }
  }

  /** Verified bytes of `hash`, or `undefined` (missing, unreadable, corrupt). */
  async get(hash: string): Promise<Uint8Array | undefined> {
    if (!isContentHash(hash)) return undefined;
    try {
      const bytes = new Uint8Array(await readFile(this.objectPath(hash)));
      return sha256Hex(bytes) === hash ? bytes : undefined;
    } catch {
      return undefined;
    }
  }

  /** Object count and bytes; creates nothing. */
  async stats(): Promise<StoreStats> {
    let names: string[];
    try {
      names = await readdir(join(this.root, "objects"));
    } catch {
      return { objects: 0, bytes: 0 };
    }
    let objects = 0;
    let bytes = 0;
    for (const n of names) {
      if (!OBJECT_NAME.test(n)) continue;
      try {
        const s = await stat(join(this.root, "objects", n));
        if (s.isFile()) {
          objects++;
          bytes += s.size;
        }
      } catch {
        // vanished meanwhile
      }
    }
    return { objects, bytes };
  }
}
