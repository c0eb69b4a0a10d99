/**
 * The read cache status of a branch (`/readcache-status`): what the replay
 * window holds, how reads were served, and an estimate of what was saved.
 * Derived from the branch alone (no global counters), pure, and read-only.
 *
 * Specified by SPEC.md §11.4.
 *
 * @module
 */
import type { InFlightRead } from "./knowledge.ts";
import { isAnchorMode, parseReadCacheMeta, READ_MODES } from "./meta.ts";
import { type ModeCounts, replayBranch, type ReplayEntry } from "./replay.ts";
import type { StoreStats } from "./object_store.ts";
import { formatSize } from "./truncate.ts";

/** Bytes per token used by the savings estimate. */
export const BYTES_PER_TOKEN = 4;

/**
 * Status of one branch.
 *
 * @example
 * ```ts
 * import { branchStatus } from "@readcache/core";
 * const s = branchStatus([]);
 * s.files.length; // 0
 * ```
 */
export interface BranchStatus {
  /** Files with trust, each with the scopes held (`full` or `r:<start>:<end>`). */
  files: { pathKey: string; scopes: string[] }[];
  /** Entries in the replay window (after the latest compaction). */
  windowSize: number;
  /** Id of the compaction the window starts after, `null` when none. */
  compactionId: string | null;
  /** Valid read events in the window, by mode. */
  modeCounts: ModeCounts;
  /** Reads served in this process but not yet in the session. */
  inFlight: number;
  /** Bytes of output served by the reads in the window. */
  servedBytes: number;
  /**
   * Estimated bytes the same reads would have cost as plain reads: for
   * `unchanged`, `unchanged_range` and `diff` reads, the lines in scope times
   * the bytes per line of the latest anchor read of that file in the window.
   */
  estimatedBaselineBytes: number;
  /** `(estimatedBaselineBytes - servedBytes) / BYTES_PER_TOKEN`, rounded, at least 0. */
  estimatedTokensSaved: number;
}

/**
 * Computes the status of a branch (root to leaf) plus the in-flight overlay.
 * Pure.
 *
 * @example
 * ```ts
 * import { branchStatus } from "@readcache/core";
 * const meta = { v: 1, pathKey: "/a", scopeKey: "full", servedHash: "h", mode: "full",
 *   totalLines: 10, rangeStart: 1, rangeEnd: 10, bytes: 400 };
 * const s = branchStatus([
 *   { id: "r1", parentId: null, kind: "read", meta },
 *   { id: "r2", parentId: "r1", kind: "read", meta: { ...meta, mode: "unchanged", baseHash: "h", bytes: 40 } },
 * ]);
 * s.estimatedTokensSaved; // 90
 * ```
 */
export function branchStatus(
  branch: readonly ReplayEntry[],
  inFlight: readonly InFlightRead[] = [],
): BranchStatus {
  const snap = replayBranch(branch);
  const perLine = new Map<string, number>();
  let served = 0;
  let baseline = 0;
  for (let i = snap.boundary.startIndex; i < branch.length; i++) {
    const e = branch[i];
    if (e.kind !== "read") continue;
    const meta = parseReadCacheMeta(e.meta);
    if (!meta) continue;
    const lines = meta.rangeEnd - meta.rangeStart + 1;
    served += meta.bytes;
    if (isAnchorMode(meta.mode)) {
      perLine.set(meta.pathKey, meta.bytes / lines);
      baseline += meta.bytes;
    } else {
      baseline += Math.max(meta.bytes, Math.round((perLine.get(meta.pathKey) ?? 0) * lines));
    }
  }
  const files = Object.entries(snap.trust).map(([pathKey, t]) => ({
    pathKey,
    scopes: [...(t.full ? ["full"] : []), ...Object.keys(t.ranges).sort()],
  })).sort((a, b) => a.pathKey < b.pathKey ? -1 : a.pathKey > b.pathKey ? 1 : 0);
  return {
    files,
    windowSize: snap.windowSize,
    compactionId: snap.boundary.compactionId,
    modeCounts: snap.modeCounts,
    inFlight: inFlight.length,
    servedBytes: served,
    estimatedBaselineBytes: baseline,
    estimatedTokensSaved: Math.max(0, Math.round((baseline - served) / BYTES_PER_TOKEN)),
  };
}

/**
 * Renders a status report as plain text. `store` is the object store's
 * statistics, or a message saying why they are not available.
 *
 * @example
 * ```ts
 * import { branchStatus, formatBranchStatus } from "@readcache/core";
 * console.log(formatBranchStatus(branchStatus([]), { objects: 0, bytes: 0 }));
 * ```
 */
export function formatBranchStatus(status: BranchStatus, store: StoreStats | string): string {
  const lines: string[] = ["readcache status (active branch)"];
  const since = status.compactionId === null
    ? "session start"
    : `compaction ${status.compactionId}`;
  lines.push(`replay window: ${status.windowSize} entries since ${since}`);
  lines.push(
    `reads by mode: ${READ_MODES.map((m) => `${m} ${status.modeCounts[m]}`).join(", ")}`,
  );
  if (status.inFlight > 0) lines.push(`in flight (not yet in the session): ${status.inFlight}`);
  lines.push(
    `served ${formatSize(status.servedBytes)} for an estimated ${
      formatSize(status.estimatedBaselineBytes)
    } of plain reads: about ${status.estimatedTokensSaved} tokens saved (estimate, ${BYTES_PER_TOKEN} bytes per token)`,
  );
  lines.push(
    typeof store === "string"
      ? `object store: ${store}`
      : `object store: ${store.objects} objects, ${formatSize(store.bytes)}`,
  );
  if (typeof store !== "string" && store.problem !== undefined) {
    const p = store.problem;
    lines.push(`object store problem: ${p.path} ${p.what}; reads are served in full meanwhile.`);
    lines.push(`  fix: ${p.fix}`);
  }
  if (status.files.length === 0) lines.push("tracked files: none");
  else {
    lines.push(`tracked files: ${status.files.length}`);
    for (const f of status.files) lines.push(`  ${f.pathKey}  [${f.scopes.join(", ")}]`);
  }
  return lines.join("\n");
}
