/**
 * Content-addressed object store: the file contents the read cache served,
 * keyed by their SHA-256, kept so a later read can be answered with a diff
 * against them. The store is supporting data, never the source of truth: a
 * missing or corrupt object only means the next read falls back to the full
 * baseline text.
 *
 * This module is pure (no IO): the {@linkcode ObjectStore} contract and an
 * in-memory implementation with fault hooks for tests. The on-disk store is
 * `FsObjectStore` in `@readcache/core/fs`.
 *
 * Specified by SPEC.md §9.
 *
 * @module
 */
import { ReadCacheError } from "./errors.ts";
import { isContentHash, sha256Hex } from "./hash.ts";

/**
 * Why a store cannot be used, in words a user understands: which path, what
 * is wrong with it, and what to do. A store with a problem is "no store":
 * nothing is written, nothing is loaded, and reads are served in full.
 *
 * @example
 * ```ts
 * import type { StoreProblem } from "@readcache/core";
 * const problem: StoreProblem = {
 *   path: "/work/project/.pi/readcache",
 *   what: "is a symbolic link (to /elsewhere); the read cache never writes through a link",
 *   fix: "Remove the link (rm /work/project/.pi/readcache); the read cache then creates a private directory there.",
 * };
 * ```
 */
export interface StoreProblem {
  /** The path that is wrong. */
  path: string;
  /** What is wrong with it. */
  what: string;
  /** What the user can do about it. */
  fix: string;
}

/**
 * Object count and total bytes of a store, and why it cannot be used when it
 * cannot.
 *
 * @example
 * ```ts
 * import type { StoreStats } from "@readcache/core";
 * const empty: StoreStats = { objects: 0, bytes: 0 };
 * ```
 */
export interface StoreStats {
  /** Number of stored objects. */
  objects: number;
  /** Sum of the stored objects' sizes, in bytes. */
  bytes: number;
  /**
   * Present only when the store cannot be used (for example its directory is
   * a symbolic link, a file, or belongs to another user). Absent for a store
   * that works or does not exist yet.
   */
  problem?: StoreProblem;
}

/**
 * A content-addressed store of file contents keyed by their SHA-256 (64
 * lowercase hex digits, as produced by `sha256Hex`).
 *
 * @example
 * ```ts
 * import { MemoryObjectStore, type ObjectStore, sha256Hex } from "@readcache/core/rules";
 * const store: ObjectStore = new MemoryObjectStore();
 * const bytes = new TextEncoder().encode("export const x = 1;\n");
 * await store.put(sha256Hex(bytes), bytes);
 * const back = await store.get(sha256Hex(bytes)); // the same bytes
 * ```
 */
export interface ObjectStore {
  /**
   * Stores `bytes` under `hash`, which the caller computed. Throws
   * `ReadCacheError` with code `INVALID_HASH` when `hash` is not the SHA-256
   * of `bytes`. Idempotent: when an object already exists under `hash` this
   * is a no-op; an existing object is never rewritten (SPEC §9), not even a
   * corrupt one, which `get` keeps reporting as missing.
   */
  put(hash: string, bytes: Uint8Array): Promise<void>;
  /**
   * The bytes stored under `hash`, or `undefined` when the object is missing,
   * unreadable, or its stored bytes do not hash to `hash` (corrupt), or when
   * `hash` is not a well-formed content hash. Never throws for those, and
   * never deletes or rewrites anything.
   */
  get(hash: string): Promise<Uint8Array | undefined>;
  /**
   * Cheap check that an object file exists under `hash` (its bytes are not
   * verified: `get` does that). Optional: a caller without it stores again
   * (`put` is idempotent).
   */
  has?(hash: string): Promise<boolean>;
  /**
   * Saves `bytes` under `key` (64 lowercase hex digits), replacing what was
   * saved there: a host adapter's saved replay of a session (SPEC §6.5).
   * Optional: without it, every cold start replays the branch.
   */
  putState?(key: string, bytes: Uint8Array): Promise<void>;
  /**
   * The bytes last saved under `key` by `putState`, or `undefined` (none,
   * damaged). Never throws.
   */
  getState?(key: string): Promise<Uint8Array | undefined>;
  /**
   * Count and total bytes of the stored objects. Read-only: a store that does
   * not exist yet gives `{ objects: 0, bytes: 0 }` and nothing is created.
   */
  stats(): Promise<StoreStats>;
}

/**
 * Checks that `hash` is the SHA-256 of `bytes` and throws `ReadCacheError`
 * with code `INVALID_HASH` when it is not (including a malformed `hash`).
 * Every {@linkcode ObjectStore.put} calls this before storing anything.
 *
 * @example
 * ```ts
 * import { assertContentHash, sha256Hex } from "@readcache/core/rules";
 * const bytes = new TextEncoder().encode("x");
 * assertContentHash(sha256Hex(bytes), bytes); // ok
 * try {
 *   assertContentHash(sha256Hex("y"), bytes);
 * } catch (e) {
 *   console.log((e as { code?: string }).code); // "INVALID_HASH"
 * }
 * ```
 */
export function assertContentHash(hash: string, bytes: Uint8Array): void {
  if (!isContentHash(hash)) {
    throw new ReadCacheError(
      "INVALID_HASH",
      `Refusing to store content under '${hash}': not a content hash. ` +
        `Pass sha256Hex(bytes), 64 lowercase hex digits.`,
    );
  }
  const actual = sha256Hex(bytes);
  if (actual !== hash) {
    throw new ReadCacheError(
      "INVALID_HASH",
      `Refusing to store content under '${hash}': the content hashes to '${actual}'. ` +
        `Pass sha256Hex(bytes) of the exact bytes being stored.`,
    );
  }
}

/**
 * In-memory {@linkcode ObjectStore} (SPEC §9): for one process, for tests,
 * and for bases of files outside the project (SPEC §13.2). Stores and returns
 * copies, so callers cannot mutate stored objects through a shared buffer;
 * `get` verifies the hash like the disk store. The backing map may be passed
 * in (it is the caller's to inspect).
 *
 * @example
 * ```ts
 * import { MemoryObjectStore, sha256Hex } from "@readcache/core/rules";
 * const store = new MemoryObjectStore();
 * const bytes = new TextEncoder().encode("hello");
 * const hash = sha256Hex(bytes);
 * await store.put(hash, bytes);
 * console.log(await store.stats()); // { objects: 1, bytes: 5 }
 * console.log(await store.get(hash)); // the bytes of "hello"
 * ```
 */
export class MemoryObjectStore implements ObjectStore {
  readonly #objects: Map<string, Uint8Array>;
  readonly #maxBytes: number;
  #bytes = 0;

  /**
   * `objects`: the map the store keeps its objects in (default: a new, private one);
   * `maxBytes`: past this many bytes the objects used longest ago go (a long-lived process keeps
   * a bounded memory; a lost base only makes a later answer plain).
   *
   * @example
   * ```ts
   * import { MemoryObjectStore } from "@readcache/core/rules";
   * const store = new MemoryObjectStore(new Map(), { maxBytes: 64 * 1024 * 1024 });
   * ```
   */
  constructor(
    objects: Map<string, Uint8Array> = new Map(),
    options: { maxBytes?: number } = {},
  ) {
    this.#objects = objects;
    this.#maxBytes = options.maxBytes ?? Infinity;
    for (const stored of objects.values()) this.#bytes += stored.length;
  }

  /**
   * Stores a copy of `bytes` under `hash`; an existing object is left as is.
   *
   * @example
   * ```ts
   * import { MemoryObjectStore, sha256Hex } from "@readcache/core/rules";
   * const bytes = new TextEncoder().encode("a");
   * await new MemoryObjectStore().put(sha256Hex(bytes), bytes);
   * ```
   */
  put(hash: string, bytes: Uint8Array): Promise<void> {
    try {
      assertContentHash(hash, bytes);
    } catch (e) {
      return Promise.reject(e);
    }
    if (!this.#objects.has(hash)) {
      this.#objects.set(hash, bytes.slice());
      this.#bytes += bytes.length;
      // the objects used longest ago go first (the map's order), never the one just stored
      for (const [h, stored] of this.#objects) {
        if (this.#bytes <= this.#maxBytes || h === hash) break;
        this.#objects.delete(h);
        this.#bytes -= stored.length;
      }
    }
    return Promise.resolve();
  }

  /**
   * A copy of the verified bytes of `hash`, or `undefined` (missing, corrupt,
   * malformed hash).
   *
   * @example
   * ```ts
   * import { MemoryObjectStore, sha256Hex } from "@readcache/core/rules";
   * await new MemoryObjectStore().get(sha256Hex("never stored")); // undefined
   * ```
   */
  get(hash: string): Promise<Uint8Array | undefined> {
    const stored = this.#objects.get(hash);
    if (stored === undefined || sha256Hex(stored) !== hash) return Promise.resolve(undefined);
    if (this.#maxBytes !== Infinity) {
      // used now: it goes last
      this.#objects.delete(hash);
      this.#objects.set(hash, stored);
    }
    return Promise.resolve(stored.slice());
  }

  /**
   * True when an object is stored under `hash` (corrupt or not).
   *
   * @example
   * ```ts
   * import { MemoryObjectStore, sha256Hex } from "@readcache/core/rules";
   * await new MemoryObjectStore().has(sha256Hex("x")); // false
   * ```
   */
  has(hash: string): Promise<boolean> {
    return Promise.resolve(this.#objects.has(hash));
  }

  /**
   * Count and total bytes of the stored objects (corrupt ones included).
   *
   * @example
   * ```ts
   * import { MemoryObjectStore } from "@readcache/core";
   * await new MemoryObjectStore().stats(); // { objects: 0, bytes: 0 }
   * ```
   */
  stats(): Promise<StoreStats> {
    let bytes = 0;
    for (const stored of this.#objects.values()) bytes += stored.length;
    return Promise.resolve({ objects: this.#objects.size, bytes });
  }
}
