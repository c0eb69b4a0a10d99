/**
 * `@readcache/core`: context-safe read caching for coding agents.
 *
 * A read cache answers a repeated `read` with a short unchanged marker or a
 * unified diff instead of the whole file, but only when the active session
 * branch provably holds the base content. This module is the reference
 * implementation: pure path/range normalisation, the trust state machine,
 * branch replay with the strict compaction barrier, and the read decision.
 *
 * @example
 * ```ts
 * import { replayBranch, selectBase } from "@readcache/core";
 * const snap = replayBranch([
 *   { id: "r1", parentId: null, kind: "read", meta: { v: 1, pathKey: "/w/a.ts", scopeKey: "full",
 *     servedHash: "h1", mode: "full", totalLines: 3, rangeStart: 1, rangeEnd: 3, bytes: 12 } },
 *   { id: "c1", parentId: "r1", kind: "compaction" },
 * ]);
 * selectBase(snap.trust["/w/a.ts"], "full"); // undefined: the compaction dropped it
 * ```
 *
 * @module
 */
export * from "./src/errors.ts";
export * from "./src/hash.ts";
export * from "./src/scope.ts";
export * from "./src/path.ts";
export * from "./src/path_key.ts";
export * from "./src/range.ts";
export * from "./src/meta.ts";
export * from "./src/trust.ts";
export * from "./src/view.ts";
export * from "./src/replay.ts";
export * from "./src/knowledge.ts";
export * from "./src/truncate.ts";
export * from "./src/baseline.ts";
export * from "./src/markers.ts";
export * from "./src/diff.ts";
export * from "./src/sensitive.ts";
export * from "./src/decision.ts";
export * from "./src/object_store.ts";
export * from "./src/read_service.ts";
export * from "./src/read_cache.ts";
export * from "./src/refresh.ts";
export * from "./src/status.ts";
