/**
 * `@readcache/core/rules`: the pure rules of the read cache, for ports and
 * for hosts that build their own adapter. No IO: paths and ranges (SPEC §3,
 * §4), metadata and hashes (§5.1), the trust state machine and base selection
 * (§5.2-§5.4), the model's view (§5.5), the model's own edits (§5.9), the read
 * decision and its exact output text (§7, §8), status wording (§11.4), and the
 * object store interface with its in-memory store (§9). Replay is in
 * `@readcache/core/replay`.
 *
 * @example
 * ```ts
 * import { normalizeRange, resolveReadPath } from "@readcache/core/rules";
 * resolveReadPath("@src/a.ts", { cwd: "/w", home: "/home/me", exists: () => true }); // "/w/src/a.ts"
 * normalizeRange(5, 10, 8).scopeKey; // "r:5:8"
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
export * from "./src/core/shell_view.ts";
export * from "./src/core/edit.ts";
export * from "./src/core/truncate.ts";
export * from "./src/core/baseline.ts";
export * from "./src/core/markers.ts";
export * from "./src/core/diff.ts";
export * from "./src/core/sensitive.ts";
export * from "./src/core/decision.ts";
export * from "./src/core/object_store.ts";
export * from "./src/core/refresh.ts";
export * from "./src/core/status.ts";
// types of the replay that rules take as input (their home is @readcache/core/replay)
export type { FileChange, ModeCounts, ReadCall, ReplayEntry } from "./src/core/replay.ts";
export type { FileKnowledge, InFlightRead } from "./src/core/knowledge.ts";
