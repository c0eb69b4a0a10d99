/**
 * Branch replay: derives what the model provably holds from the entries on the
 * active root-to-leaf path, behind the strict compaction barrier, plus the
 * in-flight overlay of reads served but not yet persisted.
 *
 * Generic over a small entry model ({@linkcode ReplayEntry}) so that a pi
 * session is only one adapter of it.
 *
 * @module
 */
import {
  parseInvalidation,
  parseReadCacheMeta,
  READ_MODES,
  type ReadCacheMetaV1,
  type ReadMode,
} from "./meta.ts";
import {
  type PathTrust,
  pathTrustAfterInvalidation,
  pathTrustAfterRead,
  type TrustState,
} from "./trust.ts";

/**
 * One session entry as replay sees it. `meta` and `data` are raw (unparsed)
 * values: replay validates them and ignores invalid ones.
 *
 * @example
 * ```ts
 * import type { ReplayEntry } from "@readcache/core";
 * const e: ReplayEntry = { id: "c1", parentId: "m3", kind: "compaction", firstKeptEntryId: "m2" };
 * ```
 */
export type ReplayEntry =
  | {
    id: string;
    parentId: string | null;
    kind: "read";
    /** Raw `details.readcache` of a `read` tool result. */
    meta: unknown;
    /** Tool call id, used to drop persisted reads from the in-flight overlay. */
    callId?: string;
  }
  | {
    id: string;
    parentId: string | null;
    kind: "invalidate";
    /** Raw data of a `pi-readcache` custom entry. */
    data: unknown;
  }
  | {
    id: string;
    parentId: string | null;
    kind: "compaction";
    /** Recorded by pi for context rebuilding; intentionally ignored for trust. */
    firstKeptEntryId?: string;
  }
  | { id: string; parentId: string | null; kind: "other" };

/**
 * Where the replay window of a branch starts.
 *
 * @example
 * ```ts
 * import type { ReplayBoundary } from "@readcache/core";
 * const b: ReplayBoundary = { startIndex: 0, compactionId: null };
 * ```
 */
export interface ReplayBoundary {
  /** Index in the branch of the first entry replayed. */
  startIndex: number;
  /** Id of the latest compaction on the branch, `null` when there is none. */
  compactionId: string | null;
}

/**
 * Finds the replay window: one past the latest compaction on the branch, or
 * the root when there is none. `firstKeptEntryId` is ignored.
 *
 * @example
 * ```ts
 * import { findReplayBoundary } from "@readcache/core";
 * findReplayBoundary([
 *   { id: "a", parentId: null, kind: "other" },
 *   { id: "c", parentId: "a", kind: "compaction", firstKeptEntryId: "a" },
 * ]); // { startIndex: 2, compactionId: "c" }
 * ```
 */
export function findReplayBoundary(branch: readonly ReplayEntry[]): ReplayBoundary {
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i];
    if (e.kind === "compaction") return { startIndex: i + 1, compactionId: e.id };
  }
  return { startIndex: 0, compactionId: null };
}

/**
 * The root-to-leaf path ending at `leafId` in a tree of entries (each naming
 * its parent). Throws a `ReadCacheError`-free `Error`-less result: returns an
 * empty list when `leafId` is `null`, and stops at a missing parent.
 *
 * @example
 * ```ts
 * import { activeBranch } from "@readcache/core";
 * const entries = [
 *   { id: "a", parentId: null, kind: "other" as const },
 *   { id: "b", parentId: "a", kind: "other" as const },
 *   { id: "c", parentId: "a", kind: "other" as const },
 * ];
 * activeBranch(entries, "c").map((e) => e.id); // ["a", "c"]
 * ```
 */
export function activeBranch(
  entries: readonly ReplayEntry[],
  leafId: string | null,
): ReplayEntry[] {
  const byId = new Map(entries.map((e) => [e.id, e] as const));
  const out: ReplayEntry[] = [];
  const seen = new Set<string>();
  let cur = leafId === null ? undefined : byId.get(leafId);
  while (cur && !seen.has(cur.id)) {
    seen.add(cur.id);
    out.push(cur);
    cur = cur.parentId === null ? undefined : byId.get(cur.parentId);
  }
  return out.reverse();
}

/** Counts of valid read events by mode. */
export type ModeCounts = Record<ReadMode, number>;

function zeroCounts(): ModeCounts {
  return Object.fromEntries(READ_MODES.map((m) => [m, 0])) as ModeCounts;
}

/**
 * A snapshot of a replayed branch.
 *
 * @example
 * ```ts
 * import { replayBranch } from "@readcache/core";
 * const s = replayBranch([]);
 * s.seq; // 0
 * ```
 */
export interface ReplaySnapshot {
  /** Trust derived from the replay window. */
  trust: TrustState;
  /** Number of valid read-meta events in the window (the last `seq` used). */
  seq: number;
  /** The replay window. */
  boundary: ReplayBoundary;
  /** Id of the last entry replayed (`null` for an empty branch). */
  leafId: string | null;
  /** Entries in the replay window. */
  windowSize: number;
  /** Valid read events in the window by mode (applied or not). */
  modeCounts: ModeCounts;
  /** Valid read-meta events the guards ignored. */
  ignoredReads: number;
}

/**
 * Incremental replay engine. Holds the trust of one branch and extends it by
 * appended entries in O(new entries); when the branch no longer continues the
 * replayed one (the leaf moved elsewhere, or a new compaction appeared) it
 * replays from the latest compaction instead.
 *
 * The cursor owns its state and mutates it; use {@linkcode replayBranch} for a
 * one-shot pure replay.
 *
 * @example
 * ```ts
 * import { ReplayCursor } from "@readcache/core";
 * const cursor = new ReplayCursor();
 * cursor.advance([{ id: "a", parentId: null, kind: "other" }]);
 * cursor.advance([{ id: "a", parentId: null, kind: "other" }, { id: "b", parentId: "a", kind: "other" }]);
 * cursor.lastAdvance; // "extended"
 * ```
 */
export class ReplayCursor {
  #trust = new Map<string, PathTrust>();
  #seq = 0;
  #boundary: ReplayBoundary = { startIndex: 0, compactionId: null };
  #consumed = 0;
  #leafId: string | null = null;
  #counts: ModeCounts = zeroCounts();
  #ignored = 0;
  #last: "replayed" | "extended" | "unchanged" = "replayed";

  /** How the last {@linkcode ReplayCursor.advance} call proceeded. */
  get lastAdvance(): "replayed" | "extended" | "unchanged" {
    return this.#last;
  }

  /** Last `seq` used (valid read events in the window). */
  get seq(): number {
    return this.#seq;
  }

  /** Id of the last entry consumed. */
  get leafId(): string | null {
    return this.#leafId;
  }

  /** Number of branch entries consumed (index one past the leaf). */
  get consumed(): number {
    return this.#consumed;
  }

  /**
   * Brings the cursor to the given branch (root to leaf). Extends when the
   * branch continues the consumed one, else replays from the boundary.
   */
  advance(branch: readonly ReplayEntry[]): void {
    const continues = this.#consumed <= branch.length &&
      (this.#consumed === 0
        ? this.#leafId === null
        : branch[this.#consumed - 1].id === this.#leafId) &&
      (this.#boundary.compactionId === null ||
        branch[this.#boundary.startIndex - 1]?.id === this.#boundary.compactionId);
    if (continues) {
      this.#last = this.#consumed === branch.length ? "unchanged" : "extended";
      this.#consume(branch, this.#consumed);
      return;
    }
    this.#reset(findReplayBoundary(branch));
    this.#last = "replayed";
    this.#consume(branch, this.#boundary.startIndex);
  }

  /** Trust of one file, `undefined` when none. O(1). */
  pathTrust(pathKey: string): PathTrust | undefined {
    return this.#trust.get(pathKey);
  }

  /** A frozen copy of the replay state. O(tracked files). */
  snapshot(): ReplaySnapshot {
    return {
      trust: Object.fromEntries(this.#trust),
      seq: this.#seq,
      boundary: { ...this.#boundary },
      leafId: this.#leafId,
      windowSize: this.#consumed - this.#boundary.startIndex,
      modeCounts: { ...this.#counts },
      ignoredReads: this.#ignored,
    };
  }

  #reset(boundary: ReplayBoundary): void {
    this.#trust = new Map();
    this.#seq = 0;
    this.#boundary = boundary;
    this.#counts = zeroCounts();
    this.#ignored = 0;
  }

  #consume(branch: readonly ReplayEntry[], from: number): void {
    for (let i = from; i < branch.length; i++) {
      const e = branch[i];
      if (e.kind === "compaction") {
        this.#reset({ startIndex: i + 1, compactionId: e.id });
      } else if (e.kind === "read") {
        const meta = parseReadCacheMeta(e.meta);
        if (meta) this.#applyRead(meta);
      } else if (e.kind === "invalidate") {
        const inv = parseInvalidation(e.data);
        if (inv) {
          const next = pathTrustAfterInvalidation(this.#trust.get(inv.pathKey), inv.scopeKey);
          if (next) this.#trust.set(inv.pathKey, next);
          else this.#trust.delete(inv.pathKey);
        }
      }
    }
    this.#consumed = branch.length;
    this.#leafId = branch.length > 0 ? branch[branch.length - 1].id : null;
  }

  #applyRead(meta: ReadCacheMetaV1): void {
    this.#seq++;
    this.#counts[meta.mode]++;
    const r = pathTrustAfterRead(this.#trust.get(meta.pathKey), meta, this.#seq);
    if (r.outcome === "ignored") this.#ignored++;
    else if (r.trust) this.#trust.set(meta.pathKey, r.trust);
  }
}

/**
 * Replays a branch (root to leaf) from scratch. Pure.
 *
 * @example
 * ```ts
 * import { replayBranch } from "@readcache/core";
 * const s = replayBranch([{ id: "r1", parentId: null, kind: "read", meta: { v: 1, pathKey: "/a",
 *   scopeKey: "full", servedHash: "h", mode: "full", totalLines: 1, rangeStart: 1, rangeEnd: 1, bytes: 1 } }]);
 * s.trust["/a"].full; // { hash: "h", seq: 1 }
 * ```
 */
export function replayBranch(branch: readonly ReplayEntry[]): ReplaySnapshot {
  const c = new ReplayCursor();
  c.advance(branch);
  return c.snapshot();
}
