/**
 * `@readcache/core/replay`: what the model holds, derived by replaying the
 * active branch of a session (SPEC §5.6, §5.8, §5.9, §6): the replay entry
 * model, the incremental replay cursor behind the strict compaction barrier,
 * `BranchKnowledge` (replay plus the reads of the current turn not yet in
 * the session), and the host-neutral mapping of tool calls and results onto
 * replay entries (`messageEntry`, `resultEntries`) a host's converter uses.
 * Pure; the rules it applies are in `@readcache/core/rules`.
 *
 * @example
 * ```ts
 * import { replayBranch } from "@readcache/core/replay";
 * const snap = replayBranch([
 *   { id: "r1", parentId: null, kind: "read", meta: { v: 1, pathKey: "/w/a.ts", scopeKey: "full",
 *     servedHash: "h1", mode: "full", totalLines: 3, rangeStart: 1, rangeEnd: 3, bytes: 12 } },
 *   { id: "c1", parentId: "r1", kind: "compaction" },
 * ]);
 * snap.trust["/w/a.ts"]; // undefined: the compaction dropped it
 * ```
 *
 * @module
 */
export * from "./src/core/replay.ts";
export * from "./src/core/knowledge.ts";
// one interface from any host's history to the replay entries (SPEC §11.10)
export * from "./src/core/host_calls.ts";
// the types replay states are made of (their home is @readcache/core/rules)
export type {
  LineStretch,
  ReadCacheEditMetaV1,
  ReadCacheInvalidationV1,
  ReadCacheMetaV1,
  ReadMode,
  ToolShownV1,
} from "./src/core/meta.ts";
export type { PathTrust, ScopeTrust, TrustState } from "./src/core/trust.ts";
export type { LineView } from "./src/core/view.ts";
export type { ScopeKey } from "./src/core/scope.ts";
