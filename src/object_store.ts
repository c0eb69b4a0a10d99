/**
 * Content-addressed object store interface (supporting data for diff bases,
 * never the source of truth) and an in-memory implementation for tests.
 *
 * @module
 */
import { ReadCacheError } from "./errors.ts";
import { isContentHash, sha256Hex } from "./hash.ts";

/**
 * Object count and total bytes of a store.
 *
 * @example
 * ```ts
 * import type { StoreStats } from "@readcache/core";
 * const s: StoreStats = { objects: 0, bytes: 0 };
 * ```
 */
export interface StoreStats {
  /** Number of objects. */
  objects: number;
  /** Sum of object sizes in bytes. */
  bytes: number;
}

/**
 * A content-addressed store of file contents keyed by SHA-256.
 *
 * @example
 * ```ts
 * import { MemoryObjectStore, type ObjectStore } from "@readcache/core";
 * const store: ObjectStore = new MemoryObjectStore();
 * ```
 */
export interface ObjectStore {
  /**
   * Stores `bytes` under `hash`. Idempotent. Throws `ReadCacheError`
   * (`INVALID_HASH`) when `hash` is not the SHA-256 of `bytes`.
   */
  put(hash: string, bytes: Uint8Array): Promise<void>;
  /**
   * The bytes stored under `hash`, or `undefined` when missing, unreadable or
   * not matching their hash. Never throws, never deletes or rewrites.
   */
  get(hash: string): Promise<Uint8Array | undefined>;
  /** Object count and bytes. Read-only: creates nothing. */
  stats(): Promise<StoreStats>;
}

/**
 * Verifies that `hash` is the SHA-256 of `bytes`; throws `INVALID_HASH` if not.
 *
 * @example
 * ```ts
 * import { assertContentHash, sha256Hex } from "@readcache/core";
 * const bytes = new TextEncoder().encode("x");
 * assertContentHash(sha256Hex(bytes), bytes); // ok
 * ```
 */
export function assertContentHash(hash: string, bytes: Uint8Array): void {
  if (!isContentHash(hash) || sha256Hex(bytes) !== hash) {
    throw new ReadCacheError(
      "INVALID_HASH",
      `Refusing to store content under '${hash}': it is not the SHA-256 (64 lowercase hex) of the content.`,
    );
  }
}

/**
 * In-memory {@linkcode ObjectStore}, with fault hooks for tests.
 *
 * @example
 * ```ts
 * import { MemoryObjectStore, sha256Hex } from "@readcache/core";
 * const store = new MemoryObjectStore();
 * const bytes = new TextEncoder().encode("hello");
 * await store.put(sha256Hex(bytes), bytes);
 * (await store.stats()).objects; // 1
 * ```
 */
export class MemoryObjectStore implements ObjectStore {
  #objects = new Map<string, Uint8Array>();

  /** Stores a copy of `bytes` under `hash`. */
  put(hash: string, bytes: Uint8Array): Promise<void> {
    assertContentHash(hash, bytes);
    if (!this.#objects.has(hash)) this.#objects.set(hash, bytes.slice());
    return Promise.resolve();
  }

  /** A copy of the verified bytes, or `undefined`. */
  get(hash: string): Promise<Uint8Array | undefined> {
    const b = this.#objects.get(hash);
    return Promise.resolve(b && sha256Hex(b) === hash ? b.slice() : undefined);
  }

  /** Object count and bytes. */
  stats(): Promise<StoreStats> {
    let bytes = 0;
    for (const b of this.#objects.values()) bytes += b.length;
    return Promise.resolve({ objects: this.#objects.size, bytes });
  }

  /** Test hook: forget an object. */
  deleteObject(hash: string): void {
    this.#objects.delete(hash);
  }

  /** Test hook: replace an object's bytes with bytes that do not match its hash. */
  corruptObject(hash: string): void {
    const b = this.#objects.get(hash);
    if (b) this.#objects.set(hash, new Uint8Array([...b, 0x21]));
  }
}
