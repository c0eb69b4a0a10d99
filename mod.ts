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
export * from "./src/core/errors.ts";
export * from "./src/core/hash.ts";
export * from "./src/core/scope.ts";
export * from "./src/core/path.ts";
export * from "./src/core/path_key.ts";
export * from "./src/core/range.ts";
export * from "./src/core/meta.ts";
export * from "./src/core/trust.ts";
export * from "./src/core/view.ts";
export * from "./src/core/edit.ts";
export * from "./src/core/replay.ts";
export * from "./src/core/knowledge.ts";
export * from "./src/core/truncate.ts";
export * from "./src/core/baseline.ts";
export * from "./src/core/markers.ts";
export * from "./src/core/diff.ts";
export * from "./src/core/sensitive.ts";
export * from "./src/core/decision.ts";
export * from "./src/core/object_store.ts";
export * from "./src/shell/read_service.ts";
export * from "./src/shell/read_cache.ts";
export * from "./src/core/refresh.ts";
export * from "./src/core/status.ts";
