/**
 * `@readcache/core/service`: the shell an adapter for a new host is built
 * from (SPEC §7, §11, §13): one read of the file's bytes (never blocking on a
 * FIFO, capped in size), the base lookup in the object store, the decision and
 * what to persist (`serveRead`; `decideWithStores` for a host that reads
 * and renders the file itself); resolving a tool call's arguments the way pi
 * resolves them (`resolveCall`, `resolveWriteCall`, `resolveWriteTarget`,
 * `callResolvers`); the model's belief before its own edit (`planEdit`);
 * refreshes (`resolveInvalidation`). The one-call API for a host without its
 * own session tree is `createReadCache` in `@readcache/core`.
 *
 * @example
 * ```ts
 * import { resolveCall } from "@readcache/core/service";
 * resolveCall({ path: "/tmp/x.txt", offset: 2 }, { cwd: "/", home: "/root" });
 * // { name: "/tmp/x.txt", pathKey: "/tmp/x.txt", offset: 2 }
 * ```
 *
 * @module
 */
export * from "./src/shell/read_service.ts";
export * from "./src/shell/tool_result.ts";
export type { CallSnapshot } from "./src/shell/call_snapshot.ts";
// what the service takes and gives (their homes are @readcache/core/rules and /replay)
export * from "./replay.ts";
export type {
  DecisionConfig,
  DecisionInput,
  DecisionReason,
  ReadDecision,
  ReadPlan,
} from "./src/core/decision.ts";
export type { ObjectStore, StoreProblem, StoreStats } from "./src/core/object_store.ts";
export type { ReadCacheToolMetaV1, ToolShownV1 } from "./src/core/meta.ts";
export type { ReadRequest, ReadTarget } from "./src/core/range.ts";
export type { TruncationResult } from "./src/core/truncate.ts";
