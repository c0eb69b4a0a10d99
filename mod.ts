/**
 * `@readcache/core`: context-safe read caching for coding agents.
 *
 * A read cache answers a repeated `read` with a short `[readcache: unchanged
 * ...]` marker or a unified diff instead of the whole file, but only when the
 * model provably holds that content in its current context (SPEC §2). This
 * module is what a host needs: `createReadCache`, its results and errors, and
 * the store choice. The rules are in `@readcache/core/rules`, branch replay in
 * `@readcache/core/replay`, the building blocks of a host adapter in
 * `@readcache/core/service`, the pi extension in `@readcache/core/pi`, the
 * OpenCode plugin in `@readcache/core/opencode`, the on-disk store in
 * `@readcache/core/fs`, and the porter's kit in `@readcache/core/conformance`.
 *
 * @example
 * ```ts
 * import { createReadCache, type ReadCacheResult } from "@readcache/core";
 *
 * const cache = createReadCache({ cwd: Deno.cwd(), store: "memory" });
 *
 * // the text to send the model: the cache's answer, or a word on a file it hands back (an image,
 * // a FIFO or device, a file over the size cap: serve those your own way, never by reading a
 * // FIFO blindly, which can wait forever)
 * async function read(path: string): Promise<string> {
 *   const r: ReadCacheResult = await cache.read({ path });
 *   return r.kind === "answer" ? r.text : `[${r.path} not read: ${r.reason}]`;
 * }
 *
 * await read("deno.json"); // the whole file, exactly as pi's read shows it
 * await read("deno.json"); // "[readcache: unchanged, N lines]"
 * ```
 *
 * @module
 */
export {
  createReadCache,
  ReadCache,
  type ReadCacheAnswer,
  type ReadCacheContext,
  type ReadCacheDelegation,
  type ReadCacheOptions,
  type ReadCacheRequest,
  type ReadCacheResult,
} from "./src/shell/read_cache.ts";
export {
  FileReadError,
  OffsetBeyondEndError,
  RangeSyntaxError,
  ReadCacheError,
  type ReadCacheErrorCode,
} from "./src/core/errors.ts";
export {
  MemoryObjectStore,
  type ObjectStore,
  type StoreProblem,
  type StoreStats,
} from "./src/core/object_store.ts";
export type { ReadCacheMetaV1, ReadMode } from "./src/core/meta.ts";
export type { FileChange, ReadCall, ReplayEntry } from "./src/core/replay.ts";
export type { EditReplacement } from "./src/core/edit.ts";
export type { DecisionConfig } from "./src/core/decision.ts";
export type { TruncationResult } from "./src/core/truncate.ts";
export type { ScopeKey } from "./src/core/scope.ts";
