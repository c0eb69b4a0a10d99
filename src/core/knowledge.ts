/**
 * Read knowledge of one session (SPEC §6.3): the incremental branch replay
 * plus the in-flight overlay of reads served in the current turn but not yet
 * persisted.
 *
 * Specified by SPEC.md §6.3, §6.4.
 *
 * @module
 */
import type { ReadCacheEditMetaV1, ReadCacheMetaV1 } from "./meta.ts";
import {
  applyEditEvent,
  applyReadEvent,
  type BranchItem,
  compactEntry as compactEntryImported,
  itemId as itemIdImported,
  type ReadCall,
  ReplayCursor,
  type ReplayEntry,
  type ReplaySnapshot,
  type ReplayState,
  type TurnChange,
  type ViewSink,
} from "./replay.ts";
import type { ScopeKey } from "./scope.ts";
import type { PathTrust } from "./trust.ts";
import { addView, type LineView, TO_END } from "./view.ts";

// Names used for every entry a walk meets, bound once: pi loads an extension with jiti, whose
// modules are read through a proxy, so each use of an imported name would cost a proxy call.
const compactEntry = compactEntryImported;
const itemId = itemIdImported;

/**
 * A read served but not yet visible in the session branch.
 *
 * @example
 * ```ts
 * import type { InFlightRead } from "@readcache/core/replay";
 * const r: InFlightRead = { callId: "call_1", meta: { v: 1, pathKey: "/a", scopeKey: "full",
 *   servedHash: "h", mode: "full", totalLines: 1, rangeStart: 1, rangeEnd: 1, bytes: 1 } };
 * ```
 */
export interface InFlightRead {
  /** The metadata the read was served with; absent when it was served without (plain read). */
  meta?: ReadCacheMetaV1;
  /** The resolved call it answers (the name the model used and the file's identity). */
  call?: ReadCall;
  /** Tool call id; when an entry with this id appears in the branch, the read is persisted. */
  callId?: string;
}

/**
 * Everything the decision needs to know about one file for one request: the
 * trust slots of its `pathKey` and the model's views under that `pathKey` and
 * under the name the model used.
 *
 * @example
 * ```ts
 * import type { FileKnowledge } from "@readcache/core/replay";
 * const k: FileKnowledge = { trust: undefined, keyViews: [], nameViews: [] };
 * ```
 */
export interface FileKnowledge {
  /** Trust slots of the file. */
  trust: PathTrust | undefined;
  /** Views under the file's canonical identity, oldest first. */
  keyViews: readonly LineView[];
  /** Views under the name of the request, oldest first. */
  nameViews: readonly LineView[];
}

/**
 * An edit call of the current message planned before another edit of the same
 * file, whose result is not on the branch yet: its belief, applied as replay
 * will apply it (SPEC §5.9 rule 4).
 *
 * @example
 * ```ts ignore
 * const p: PendingEdit = { call: { name: "/w/a.ts", pathKey: "/w/a.ts" }, meta: editMeta };
 * ```
 */
export interface PendingEdit {
  /** The file the edit targets. */
  call: ReadCall;
  /** The belief planned for it. */
  meta: ReadCacheEditMetaV1;
}

/** Most entries `syncTip` walks through (a parent cycle in a corrupt session ends here). */
const MAX_WALK = 50_000_000;

/**
 * Entries `syncTip` walks without meeting the end of the synced branch before
 * it indexes that branch to find where the walk meets it (a moved leaf).
 */
const INDEX_AFTER = 256;

interface OverlayRead {
  read: InFlightRead;
  /** Serve order within this process. */
  rank: number;
  /** Branch index and id of the leaf when it was served (-1 / null: empty branch). */
  anchorIndex: number;
  anchorId: string | null;
  /** A read of the same file served after this one is already persisted. */
  overtaken: boolean;
}

function touches(read: { meta?: unknown; call?: ReadCall }, keys: Set<string>): boolean {
  const meta = read.meta as { pathKey?: unknown } | undefined;
  return (typeof meta?.pathKey === "string" && keys.has(meta.pathKey)) ||
    (read.call !== undefined && (keys.has(read.call.pathKey) || keys.has(read.call.name)));
}

function idsOf(read: InFlightRead): Set<string> {
  const s = new Set<string>();
  if (read.meta) s.add(read.meta.pathKey);
  if (read.call) {
    s.add(read.call.pathKey);
    s.add(read.call.name);
  }
  return s;
}

/**
 * Replay plus overlay for one session. Call {@linkcode BranchKnowledge.sync}
 * with the current branch before every decision.
 *
 * An in-flight read counts only while the entry that was the leaf when it was
 * served is still on the branch at the same place and everything after it is
 * a tool result (the rest of the same turn): a user or assistant message, a
 * compaction, a custom entry or a move of the leaf ends it, whatever events
 * the host delivered. A persisted read leaves the overlay (it is replayed).
 * Overlay reads are fresher than every replayed read, unless a read of the
 * same file served AFTER it is already persisted: then the true order is not
 * the overlay order and its lines count as unknown.
 *
 * @example
 * ```ts
 * import { BranchKnowledge } from "@readcache/core/replay";
 * const k = new BranchKnowledge();
 * k.sync([{ id: "u1", parentId: null, kind: "other" }]);
 * k.recordServed({ meta: { v: 1, pathKey: "/a", scopeKey: "full", servedHash: "h", mode: "full",
 *   totalLines: 1, rangeStart: 1, rangeEnd: 1, bytes: 1 } });
 * k.pathTrust("/a")?.full?.hash; // "h"
 * ```
 */
export class BranchKnowledge {
  #cursor = new ReplayCursor();
  /** The branch as last synced (from the latest compaction on, for {@linkcode BranchKnowledge.syncTip}). */
  #branch: BranchItem[] = [];
  /** Index in `#branch` of each entry id (built lazily by `syncTip`). */
  #index: Map<string, number> | undefined;
  #overlay: OverlayRead[] = [];
  #ranks = new Map<string, number>();
  #served = 0;
  /** The entry a restored replay continues from (SPEC §6.5), while the cursor is restored. */
  #restoredLeaf: string | undefined;
  /** The state restored from, while the cursor is restored: a move back to it restores again. */
  #restoredState: ReplayState | undefined;

  /**
   * Knowledge that continues from a saved replay (SPEC §6.5) as a replay of
   * the whole branch up to `state.leafId` would: its synced branch starts at
   * that entry. {@linkcode BranchKnowledge.syncTip} then walks up from the
   * leaf only to that entry when it is on the branch, and replays the branch
   * from its latest compaction as usual when it is not (or when the saved
   * replay cannot be continued: `ReplayCursor.lost`).
   *
   * @example
   * ```ts
   * import { BranchKnowledge } from "@readcache/core/replay";
   * const k = new BranchKnowledge();
   * k.sync([{ id: "u1", parentId: null, kind: "other" }]);
   * const again = BranchKnowledge.restore(k.saveState()!);
   * again.syncTip("u2", (id) => ({ id, parentId: "u1", kind: "other" }));
   * again.snapshot().windowSize; // 2
   * ```
   */
  static restore(state: ReplayState): BranchKnowledge {
    const k = new BranchKnowledge();
    k.#cursor = ReplayCursor.restore(state);
    k.#branch = [state.leafId];
    k.#restoredLeaf = state.leafId;
    k.#restoredState = state;
    return k;
  }

  /**
   * The replay of the synced branch, saved for a later cold start (SPEC
   * §6.5), or `undefined` when its leaf is not a quiet point (see
   * `ReplayCursor.saveState`). The in-flight overlay is never part of it.
   */
  saveState(): ReplayState | undefined {
    return this.#cursor.saveState();
  }

  /**
   * Brings the knowledge to the branch ending at `leafId` by walking up from
   * the leaf through parent ids (`lookup` returns a converted entry, or
   * `undefined` when the id is unknown) until an entry already synced, a
   * compaction (the replay window starts after it) or the root: warm work is
   * O(entries appended since the last sync), a cold start O(entries since the
   * latest compaction), and the root-to-leaf branch is never built (SPEC
   * §6.4). A move of the leaf onto an already synced entry replays the window
   * from its start.
   *
   * The walk meets a warm branch at its last entry; an index of the synced
   * entries (id to place) is made only when the leaf has moved elsewhere (the
   * walk passed 256 entries without meeting it), and kept from then on. A walk
   * that reaches the root or a compaction first replays what it walked, which
   * is the same branch.
   */
  syncTip(leafId: string | null, lookup: (id: string) => ReplayEntry | undefined): void {
    if (leafId !== null && leafId === this.#cursor.leafId) return;
    if (leafId === null) return this.sync([]);
    const branch = this.#branch;
    const lastId = branch.length > 0 ? itemId(branch[branch.length - 1]) : undefined;
    let index = this.#index;
    // (an entry of kind `other` without fields is kept as its id: no object per message)
    const tail: BranchItem[] = [];
    let known = -1;
    // a session is a tree; the step bound only guards against a corrupt parent cycle
    let steps = 0;
    for (let id: string | null = leafId; id !== null && steps++ < MAX_WALK;) {
      if (id === lastId) {
        known = branch.length - 1;
        break;
      }
      if (index === undefined && steps > INDEX_AFTER && branch.length > 0) {
        // the leaf moved off the synced branch's end: find where it meets the branch
        index = this.#indexed();
        const at = tail.findIndex((e) => index!.has(itemId(e)));
        if (at !== -1) {
          known = index.get(itemId(tail[at]))!;
          tail.length = at;
          break;
        }
      }
      if (index !== undefined) {
        const at = index.get(id);
        if (at !== undefined) {
          known = at;
          break;
        }
      }
      const e = lookup(id);
      if (e === undefined) break;
      tail.push(compactEntry(e));
      if (e.kind === "compaction") break;
      id = e.parentId;
    }
    tail.reverse();
    if (known === -1) {
      // the walk's own array becomes the synced branch (no copy)
      this.#replace(tail);
      return;
    }
    if (known < branch.length - 1) {
      // the leaf moved: the synced branch up to where the walk met it, then the walk
      if (index !== undefined) {
        for (let i = known + 1; i < branch.length; i++) index.delete(itemId(branch[i]));
      }
      branch.length = known + 1;
      // a restored cursor cannot go back over what it consumed (the events before the saved
      // entry are not here): it starts again from the state, as a cold start on this leaf would
      if (this.#restoredState !== undefined) {
        this.#cursor = ReplayCursor.restore(this.#restoredState);
      }
    }
    for (const e of tail) {
      index?.set(itemId(e), branch.length);
      branch.push(e);
    }
    this.#apply(branch);
    if (this.#cursor.lost) this.#replayWhole(leafId, lookup);
  }

  /**
   * A restored replay that cannot be continued (SPEC §6.5): replays the
   * branch from its latest compaction instead, keeping the in-flight reads
   * (their places move from counting at the restored entry to counting at
   * the window's start).
   */
  #replayWhole(leafId: string, lookup: (id: string) => ReplayEntry | undefined): void {
    const restoredLeaf = this.#restoredLeaf;
    const overlay = this.#overlay;
    this.#cursor = new ReplayCursor();
    this.#branch = [];
    this.#index = undefined;
    this.#overlay = [];
    this.#restoredLeaf = undefined;
    this.#restoredState = undefined;
    this.syncTip(leafId, lookup);
    const at = this.#branch.findIndex((e) => itemId(e) === restoredLeaf);
    for (const o of overlay) o.anchorIndex += at;
    this.#overlay = overlay;
    this.#apply(this.#branch);
  }

  /** The index of the synced branch (id to place), made now if there is none. */
  #indexed(): Map<string, number> {
    if (this.#index === undefined) {
      const index = new Map<string, number>();
      const branch = this.#branch;
      for (let i = 0; i < branch.length; i++) index.set(itemId(branch[i]), i);
      this.#index = index;
    }
    return this.#index;
  }

  /** Brings the replay to `branch` (root to leaf) and reconciles the overlay. */
  sync(branch: readonly ReplayEntry[]): void {
    this.#replace(branch.map((e) => compactEntry(e)));
  }

  /** Makes `branch` (owned from now on) the synced branch and replays to it. */
  #replace(branch: BranchItem[]): void {
    this.#branch = branch;
    this.#index = undefined;
    this.#restoredLeaf = undefined;
    this.#restoredState = undefined;
    this.#apply(branch);
  }

  #apply(branch: readonly BranchItem[]): void {
    this.#cursor.advance(branch);
    if (this.#overlay.length === 0) return;
    let from = branch.length;
    for (const o of this.#overlay) from = Math.min(from, o.anchorIndex + 1);
    // The last entry after the earliest anchor that is not a tool result ends every overlay
    // read anchored before it.
    let barrier = -1;
    const persisted: { index: number; entry: ReplayEntry & { kind: "read" } }[] = [];
    for (let i = from; i < branch.length; i++) {
      const e = branch[i];
      if (typeof e === "string") barrier = i; // a message: not a tool result
      else if (e.kind === "read") persisted.push({ index: i, entry: e });
      else if (
        !(e.kind === "wrote" || e.kind === "changed" || e.kind === "tool" ||
          (e.kind === "other" && e.toolResult === true))
      ) {
        barrier = i;
      }
    }
    const persistedIds = new Set<string>();
    for (const p of persisted) if (p.entry.callId !== undefined) persistedIds.add(p.entry.callId);
    this.#overlay = this.#overlay.filter((o) => {
      const anchored = o.anchorIndex === -1
        ? o.anchorId === null
        : o.anchorIndex < branch.length && itemId(branch[o.anchorIndex]) === o.anchorId;
      if (!anchored || o.anchorIndex < barrier || o.anchorIndex >= branch.length) return false;
      return o.read.callId === undefined || !persistedIds.has(o.read.callId);
    });
    for (const o of this.#overlay) {
      const ids = idsOf(o.read);
      o.overtaken = persisted.some((p) =>
        p.index > o.anchorIndex && p.entry.callId !== undefined &&
        (this.#ranks.get(p.entry.callId) ?? -1) > o.rank && touches(p.entry, ids)
      );
    }
    if (this.#overlay.length === 0) this.#ranks.clear();
  }

  /** Records a read just served at the current leaf (call after {@linkcode BranchKnowledge.sync}). */
  recordServed(read: InFlightRead): void {
    if (this.#overlay.length === 0) this.#ranks.clear();
    const rank = ++this.#served;
    if (read.callId !== undefined) this.#ranks.set(read.callId, rank);
    this.#overlay.push({
      read,
      rank,
      anchorIndex: this.#cursor.consumed - 1,
      anchorId: this.#cursor.leafId,
      overtaken: false,
    });
  }

  /** Drops the in-flight overlay (the replay memo is kept). */
  clearOverlay(): void {
    this.#overlay = [];
    this.#ranks.clear();
  }

  /** Drops everything: the next {@linkcode BranchKnowledge.sync} replays from scratch. */
  reset(): void {
    this.#cursor = new ReplayCursor();
    this.#branch = [];
    this.#index = undefined;
    this.#restoredLeaf = undefined;
    this.#restoredState = undefined;
    this.clearOverlay();
  }

  /**
   * Entries in the synced branch: from the latest compaction on, or from the
   * entry a restored replay continues from (SPEC §6.5).
   */
  get size(): number {
    return this.#branch.length;
  }

  /** Reads in the overlay, oldest first. */
  get inFlight(): readonly InFlightRead[] {
    return this.#overlay.map((o) => o.read);
  }

  /**
   * What the model holds of one file: replayed trust and views with the
   * overlay applied on top (SPEC §5.5, §6.3). `name` is the resolved path of
   * the request (defaults to `pathKey`).
   */
  file(
    pathKey: string,
    name: string = pathKey,
    pendingEdits: readonly PendingEdit[] = [],
  ): FileKnowledge {
    const trusts = new Map<string, PathTrust | undefined>();
    // the overlay's views of every identity and name its reads touch: a read in flight is
    // checked against the views of its own name, which may be another than the request's
    const keys = new Map<string, LineView[]>();
    const names = new Map<string, LineView[]>();
    const sink: ViewSink = {
      trust: (k) => trusts.has(k) ? trusts.get(k) : this.#cursor.pathTrust(k),
      setTrust: (k, t) => void trusts.set(k, t),
      addKeyView: (k, v) => void keys.set(k, addView(sink.keyViews(k), v)),
      addNameView: (n, v) => void names.set(n, addView(sink.nameViews(n), v)),
      keyViews: (k) => keys.get(k) ?? this.#cursor.keyViews(k),
      nameViews: (n) => names.get(n) ?? this.#cursor.nameViews(n),
    };
    let seq = this.#cursor.seq;
    const ids = new Set([pathKey, name]);
    for (const o of this.#overlay) {
      seq++;
      if (o.overtaken && touches(o.read, ids)) {
        const unknown: LineView = { seq, start: 1, end: TO_END, hash: null };
        sink.addKeyView(pathKey, unknown);
        sink.addNameView(name, unknown);
        // its trust effect is unknown too: no slot of this file may back an answer now
        continue;
      }
      if (o.overtaken) continue;
      applyReadEvent(sink, o.read.meta, o.read.call, seq);
    }
    // edits of the same message planned before, whose results are not on the branch yet
    for (const p of pendingEdits) applyEditEvent(sink, p.meta, p.call, ++seq);
    const trust = sink.trust(pathKey);
    return { trust, keyViews: sink.keyViews(pathKey), nameViews: sink.nameViews(name) };
  }

  /**
   * The model's views of one file from the branch alone, without the reads
   * still in flight: what it holds if none of them reaches the session (SPEC
   * §5.10, §6.3). `name` defaults to `pathKey`.
   */
  replayedViews(
    pathKey: string,
    name: string = pathKey,
  ): Pick<FileKnowledge, "keyViews" | "nameViews"> {
    return { keyViews: this.#cursor.keyViews(pathKey), nameViews: this.#cursor.nameViews(name) };
  }

  /**
   * The scope the latest read of `pathKey` with exactly this `offset`/`limit`
   * showed (in flight or replayed), or `undefined`: a refresh of that request
   * drops what the model was shown, not what the request would show now.
   */
  shownScope(pathKey: string, offset?: number, limit?: number): ScopeKey | undefined {
    for (let i = this.#overlay.length - 1; i >= 0; i--) {
      const { meta, call } = this.#overlay[i].read;
      if (
        meta !== undefined && call !== undefined && call.pathKey === pathKey &&
        call.offset === offset && call.limit === limit
      ) return meta.scopeKey;
    }
    return this.#cursor.shownScope(pathKey, offset, limit);
  }

  /**
   * Files targeted by file-changing calls (`write`, `edit`) of the current
   * turn that have no result on the branch yet (SPEC §5.8).
   */
  pendingChanges(): ReadCall[] {
    return this.#cursor.pendingChanges();
  }

  /**
   * True while a call of the current turn that may change any file (a shell
   * command, a tool the adapter does not know) or show file content (a
   * search, a read-only command that prints files) has no result on the
   * branch (SPEC §5.10): its output may come before the read's answer, so
   * every read is then served in full.
   */
  opaqueInFlight(): boolean {
    return this.#cursor.opaqueInFlight();
  }

  /**
   * True when the current turn's message has a call that may change any file
   * (SPEC §5.10): its reads, writes and edits give no trust.
   */
  turnIsOpaque(): boolean {
    return this.#cursor.turnIsOpaque();
  }

  /**
   * The ids of the current turn's calls that may change any file (SPEC
   * §5.10), answered or not: a call of the same message that prints may
   * have printed a file while they changed it.
   */
  turnOpaqueCalls(): readonly string[] {
    return this.#cursor.turnOpaqueCalls();
  }

  /**
   * Identities the model holds some known content of, replayed and in
   * flight: `keys` (canonical identities) and `names` (names it used). What a
   * tool result is checked against (SPEC §5.10).
   */
  heldIdentities(): { keys: string[]; names: string[] } {
    const { keys, names } = this.#cursor.heldIdentities();
    const k = new Set(keys);
    const n = new Set(names);
    for (const o of this.#overlay) {
      if (o.read.meta === undefined) continue;
      k.add(o.read.meta.pathKey);
      n.add(o.read.call?.name ?? o.read.meta.pathKey);
    }
    return { keys: [...k], names: [...n] };
  }

  /**
   * The file-changing calls of the current turn in call order, each with
   * whether its result is on the branch (SPEC §5.9 rule 4).
   */
  turnChanges(): TurnChange[] {
    return this.#cursor.turnChanges();
  }

  /** Trust of one file: replayed trust with the overlay applied on top. */
  pathTrust(pathKey: string): PathTrust | undefined {
    return this.file(pathKey).trust;
  }

  /** Snapshot of the replayed part (without the overlay). */
  snapshot(): ReplaySnapshot {
    return this.#cursor.snapshot();
  }
}
