/**
 * Read knowledge of one session: the incremental branch replay plus the
 * in-flight overlay of reads served in the current turn but not yet persisted.
 *
 * @module
 */
import type { ReadCacheMetaV1 } from "./meta.ts";
import { ReplayCursor, type ReplayEntry, type ReplaySnapshot } from "./replay.ts";
import { type PathTrust, pathTrustAfterRead } from "./trust.ts";

/**
 * A read served but not yet visible in the session branch.
 *
 * @example
 * ```ts
 * import type { InFlightRead } from "@readcache/core";
 * const r: InFlightRead = { callId: "call_1", meta: { v: 1, pathKey: "/a", scopeKey: "full",
 *   servedHash: "h", mode: "full", totalLines: 1, rangeStart: 1, rangeEnd: 1, bytes: 1 } };
 * ```
 */
export interface InFlightRead {
  /** The metadata the read was served with. */
  meta: ReadCacheMetaV1;
  /** Tool call id; when an entry with this id appears in the branch, the read is persisted. */
  callId?: string;
}

/**
 * Replay plus overlay for one session. Call {@linkcode BranchKnowledge.sync}
 * with the current branch before every decision. The overlay is anchored at
 * the leaf it was recorded on: it survives while the branch extends that leaf
 * (reads that appear in the branch leave it) and is dropped when the leaf moves
 * anywhere else (any move that is not a pure extension of the synced branch)
 * or a compaction is appended. Overlay events get sequence numbers after every replayed one,
 * so they are always fresher, and go through the same guarded transitions.
 *
 * @example
 * ```ts
 * import { BranchKnowledge } from "@readcache/core";
 * const k = new BranchKnowledge();
 * k.sync([{ id: "u1", parentId: null, kind: "other" }]);
 * k.recordServed({ meta: { v: 1, pathKey: "/a", scopeKey: "full", servedHash: "h", mode: "full",
 *   totalLines: 1, rangeStart: 1, rangeEnd: 1, bytes: 1 } });
 * k.pathTrust("/a")?.full?.hash; // "h"
 * ```
 */
export class BranchKnowledge {
  #cursor = new ReplayCursor();
  #overlay: InFlightRead[] = [];
  #anchorIndex = -1;
  #anchorLeafId: string | null = null;

  /** Brings the replay to `branch` and reconciles the overlay. */
  sync(branch: readonly ReplayEntry[]): void {
    const before = this.#cursor.consumed;
    this.#cursor.advance(branch);
    if (this.#overlay.length === 0) return;
    const moved = this.#cursor.lastAdvance === "replayed" ||
      branch.slice(before).some((e) => e.kind === "compaction");
    const anchorOk = !moved &&
      (this.#anchorIndex === -1
        ? this.#anchorLeafId === null
        : branch[this.#anchorIndex]?.id === this.#anchorLeafId);
    if (!anchorOk) {
      this.clearOverlay();
      return;
    }
    const persisted = new Set<string>();
    for (let i = this.#anchorIndex + 1; i < branch.length; i++) {
      const e = branch[i];
      if (e.kind === "read" && e.callId !== undefined) persisted.add(e.callId);
    }
    if (persisted.size > 0) {
      this.#overlay = this.#overlay.filter((r) =>
        r.callId === undefined || !persisted.has(r.callId)
      );
    }
  }

  /** Records a read just served at the current leaf. */
  recordServed(read: InFlightRead): void {
    if (this.#overlay.length === 0) {
      this.#anchorIndex = this.#cursor.consumed - 1;
      this.#anchorLeafId = this.#cursor.leafId;
    }
    this.#overlay.push(read);
  }

  /** Drops the in-flight overlay (the replay memo is kept). */
  clearOverlay(): void {
    this.#overlay = [];
    this.#anchorIndex = -1;
    this.#anchorLeafId = null;
  }

  /** Drops everything: the next {@linkcode BranchKnowledge.sync} replays from scratch. */
  reset(): void {
    this.#cursor = new ReplayCursor();
    this.clearOverlay();
  }

  /** Reads in the overlay, oldest first. */
  get inFlight(): readonly InFlightRead[] {
    return this.#overlay;
  }

  /** Trust of one file: replayed trust with the overlay applied on top. */
  pathTrust(pathKey: string): PathTrust | undefined {
    let trust = this.#cursor.pathTrust(pathKey);
    let seq = this.#cursor.seq;
    for (const r of this.#overlay) {
      seq++;
      if (r.meta.pathKey === pathKey) trust = pathTrustAfterRead(trust, r.meta, seq).trust;
    }
    return trust;
  }

  /** Snapshot of the replayed part (without the overlay). */
  snapshot(): ReplaySnapshot {
    return this.#cursor.snapshot();
  }
}
