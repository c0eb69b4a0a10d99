/**
 * Branch replay: derives what the model provably holds from the entries on the
 * active root-to-leaf path, behind the strict compaction barrier, plus the
 * in-flight overlay of reads served but not yet persisted.
 *
 * Generic over a small entry model ({@linkcode ReplayEntry}) so that a pi
 * session is only one adapter of it.
 *
 * Specified by SPEC.md §5.6, §6.
 *
 * @module
 */
import {
  isAnchorMode,
  parseInvalidation,
  parseReadCacheMeta,
  READ_MODES,
  type ReadCacheInvalidationV1,
  type ReadCacheMetaV1,
  type ReadMode,
} from "./meta.ts";
import { FULL_SCOPE, parseScopeKey, type ScopeKey, scopeKeyFor } from "./scope.ts";
import {
  type PathTrust,
  pathTrustAfterInvalidation,
  pathTrustAfterRead,
  type ScopeTrust,
  type TrustState,
} from "./trust.ts";
import {
  addView,
  type LineView,
  TO_END,
  viewLinesOf,
  viewsCoverWith,
  viewsHoldBase,
} from "./view.ts";

/**
 * The tool call a read result answers, resolved by the shell (SPEC §3) from
 * the call's own arguments: the name the model used (the resolved path it
 * typed), the file's canonical identity, and the requested `offset`/`limit`
 * (after `path:N-M` shorthand).
 *
 * @example
 * ```ts
 * import type { ReadCall } from "@readcache/core";
 * const call: ReadCall = { name: "/w/link.txt", pathKey: "/w/v1.txt", offset: 5, limit: 3 };
 * ```
 */
export interface ReadCall {
  /** The resolved path the model typed (its name for the file). */
  name: string;
  /** Canonical identity of the file the name resolved to. */
  pathKey: string;
  /** Requested first line. */
  offset?: number;
  /** Requested number of lines. */
  limit?: number;
}

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
    /**
     * Raw `details.readcache` of a `read` tool result; `undefined` for a read
     * served without metadata (its content is unknown to the cache).
     */
    meta: unknown;
    /** Tool call id, used to drop persisted reads from the in-flight overlay. */
    callId?: string;
    /** The call this result answers, when it is on the branch (metadata is checked against it). */
    call?: ReadCall;
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
  | {
    id: string;
    parentId: string | null;
    kind: "other";
    /** True for the result of a tool call (of any tool): it keeps the in-flight overlay. */
    toolResult?: boolean;
  };

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
 * True when read metadata is consistent with the tool call it answers
 * (SPEC §5.6): same `pathKey`, the scope starts at the requested offset, ends
 * within the requested limit and the file, and names the scope key of those
 * lines. Metadata that fails this creates no trust.
 *
 * @example
 * ```ts
 * import { metaMatchesCall } from "@readcache/core";
 * const meta = { v: 1, pathKey: "/w/a", scopeKey: "r:5:7", servedHash: "h", mode: "full",
 *   totalLines: 40, rangeStart: 5, rangeEnd: 7, bytes: 3 } as const;
 * metaMatchesCall(meta, { name: "/w/a", pathKey: "/w/a", offset: 5, limit: 3 }); // true
 * metaMatchesCall(meta, { name: "/w/b", pathKey: "/w/b", offset: 5, limit: 3 }); // false
 * ```
 */
export function metaMatchesCall(meta: ReadCacheMetaV1, call: ReadCall): boolean {
  if (meta.pathKey !== call.pathKey) return false;
  const start = call.offset ?? 1;
  const last = call.limit === undefined ? meta.totalLines : start + call.limit - 1;
  if (meta.rangeStart !== start || meta.rangeEnd > last || meta.rangeEnd > meta.totalLines) {
    return false;
  }
  return meta.scopeKey === scopeKeyFor(meta.rangeStart, meta.rangeEnd, meta.totalLines);
}

/**
 * Where {@linkcode applyReadEvent} keeps trust and views. The replay cursor
 * keeps every file; the in-flight overlay keeps one file.
 *
 * @example
 * ```ts ignore
 * const sink: ViewSink = { trust: (k) => map.get(k), setTrust: (k, t) => map.set(k, t),
 *   addKeyView: () => {}, addNameView: () => {} };
 * ```
 */
export interface ViewSink {
  /** Trust of a file. */
  trust(pathKey: string): PathTrust | undefined;
  /** Replaces the trust of a file. */
  setTrust(pathKey: string, trust: PathTrust | undefined): void;
  /** Adds a view under a canonical identity. */
  addKeyView(pathKey: string, view: LineView): void;
  /** Adds a view under a name. */
  addNameView(name: string, view: LineView): void;
  /** Views under a canonical identity, oldest first. */
  keyViews(pathKey: string): readonly LineView[];
  /** Views under a name, oldest first. */
  nameViews(name: string): readonly LineView[];
}

/**
 * How a read event was taken: `applied` / `ignored` by the transition guards
 * (it took a `seq`), or `untrusted` (no metadata, invalid metadata, or
 * metadata that does not match its call: no `seq`, and its lines count as
 * unknown to the model's view).
 */
export type ReadEventOutcome = "applied" | "ignored" | "untrusted";

/**
 * Applies one read result to trust and views (SPEC §5.2, §5.5, §5.6). `seq`
 * is the sequence number it takes if its metadata is valid and matches its
 * call. An applied read adds a view of its content; a read the guards ignore,
 * or one without trustworthy metadata, adds a view of unknown content
 * (`hash: null`) under every identity it names.
 *
 * @example
 * ```ts ignore
 * applyReadEvent(sink, meta, call, cursorSeq + 1); // "applied"
 * ```
 */
export function applyReadEvent(
  sink: ViewSink,
  meta: ReadCacheMetaV1 | undefined,
  call: ReadCall | undefined,
  seq: number,
): ReadEventOutcome {
  if (meta !== undefined && (call === undefined || metaMatchesCall(meta, call))) {
    const name = call?.name ?? meta.pathKey;
    const before = sink.trust(meta.pathKey);
    let r = pathTrustAfterRead(before, meta, seq);
    // Interval coverage (SPEC §5.7): an unchanged range whose base is its own content, shown by
    // the newest views under the identity and the name, sets its slot like an anchor.
    const covered = r.outcome === "ignored" && meta.mode === "unchanged_range" &&
      meta.baseHash === meta.servedHash &&
      viewsCoverWith(
        meta.servedHash,
        meta.rangeStart,
        meta.rangeEnd,
        sink.keyViews(meta.pathKey),
        sink.nameViews(name),
      );
    if (covered) r = pathTrustAfterRead(before, { ...meta, mode: "full" }, seq);
    // A derived answer is held only if its base was the model's newest view (SPEC §5.5):
    // otherwise (e.g. its base was an in-flight read that never reached the session) its lines
    // are unknown.
    const held = r.outcome === "applied" &&
      (isAnchorMode(meta.mode) || covered || derivedBaseHeld(sink, before, meta, name));
    if (held) sink.setTrust(meta.pathKey, r.trust);
    const view: LineView = { seq, ...viewLinesOf(meta), hash: held ? meta.servedHash : null };
    sink.addKeyView(meta.pathKey, view);
    sink.addNameView(name, view);
    return held ? "applied" : "ignored";
  }
  const unknown: LineView = { seq: seq - 0.5, start: 1, end: TO_END, hash: null };
  if (meta !== undefined) sink.addKeyView(meta.pathKey, unknown);
  if (call !== undefined) {
    sink.addKeyView(call.pathKey, unknown);
    sink.addNameView(call.name, unknown);
  }
  return "untrusted";
}

/** The slot a derived read's guard accepted, checked against the views (hashes only). */
function derivedBaseHeld(
  sink: ViewSink,
  trust: PathTrust | undefined,
  meta: ReadCacheMetaV1,
  name: string,
): boolean {
  const B = meta.baseHash;
  const exact = meta.scopeKey === FULL_SCOPE ? undefined : trust?.ranges[meta.scopeKey];
  const candidates = [trust?.full, exact].filter((t): t is ScopeTrust => t?.hash === B);
  if (candidates.length === 0) return false;
  const base = candidates.reduce((a, b) => a.seq >= b.seq ? a : b);
  const { start, end } = viewLinesOf(meta);
  return viewsHoldBase({
    base,
    start,
    end,
    keyViews: sink.keyViews(meta.pathKey),
    nameViews: sink.nameViews(name),
  });
}

/**
 * Incremental replay engine. Holds the trust and the model's views of one
 * branch and extends them by appended entries in O(new entries); when the
 * branch no longer continues the replayed one (the leaf moved elsewhere, or
 * a new compaction appeared) it replays from the latest compaction instead.
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
  #keyViews = new Map<string, LineView[]>();
  #nameViews = new Map<string, LineView[]>();
  #shown = new Map<string, ScopeKey>();
  #seq = 0;
  #boundary: ReplayBoundary = { startIndex: 0, compactionId: null };
  #consumed = 0;
  #leafId: string | null = null;
  #counts: ModeCounts = zeroCounts();
  #ignored = 0;
  #last: "replayed" | "extended" | "unchanged" = "replayed";
  readonly #sink: ViewSink = {
    trust: (k) => this.#trust.get(k),
    setTrust: (k, t) => {
      if (t === undefined) this.#trust.delete(k);
      else this.#trust.set(k, t);
    },
    addKeyView: (k, v) => this.#keyViews.set(k, addView(this.#keyViews.get(k) ?? [], v)),
    addNameView: (n, v) => this.#nameViews.set(n, addView(this.#nameViews.get(n) ?? [], v)),
    keyViews: (k) => this.#keyViews.get(k) ?? [],
    nameViews: (n) => this.#nameViews.get(n) ?? [],
  };

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

  /** The model's views of a file under its canonical identity, oldest first. */
  keyViews(pathKey: string): readonly LineView[] {
    return this.#keyViews.get(pathKey) ?? [];
  }

  /** The model's views of a file under a name it used, oldest first. */
  nameViews(name: string): readonly LineView[] {
    return this.#nameViews.get(name) ?? [];
  }

  /**
   * The scope the latest trusted read of `pathKey` with exactly this
   * `offset`/`limit` showed (what a refresh of that request must drop), or
   * `undefined` when there is none in the window.
   */
  shownScope(pathKey: string, offset?: number, limit?: number): ScopeKey | undefined {
    return this.#shown.get(requestKey(pathKey, offset, limit));
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
    this.#keyViews = new Map();
    this.#nameViews = new Map();
    this.#shown = new Map();
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
        const meta = e.meta === undefined ? undefined : parseReadCacheMeta(e.meta);
        const outcome = applyReadEvent(this.#sink, meta, e.call, this.#seq + 1);
        if (outcome !== "untrusted") {
          if (e.call !== undefined) {
            this.#shown.set(
              requestKey(e.call.pathKey, e.call.offset, e.call.limit),
              meta!.scopeKey,
            );
          }
          this.#seq++;
          this.#counts[meta!.mode]++;
          if (outcome === "ignored") this.#ignored++;
        }
      } else if (e.kind === "invalidate") {
        const inv = parseInvalidation(e.data);
        if (inv) applyInvalidationEvent(this.#sink, inv, this.#seq + 1);
      }
    }
    this.#consumed = branch.length;
    this.#leafId = branch.length > 0 ? branch[branch.length - 1].id : null;
  }
}

/** Key of a request (file, offset, limit) for {@linkcode ReplayCursor.shownScope}. */
export function requestKey(pathKey: string, offset?: number, limit?: number): string {
  return `${offset ?? ""}:${limit ?? ""}:${pathKey}`;
}

/**
 * Applies an invalidation (SPEC §5.3): `full` drops every trust slot of the
 * file; a range drops that range slot. Either marks its lines unknown in the
 * model's view, so no older base or view vouches for them until a read shows
 * them again. `seq` is the sequence number the next read would take.
 *
 * @example
 * ```ts ignore
 * applyInvalidationEvent(sink, { v: 1, kind: "invalidate", pathKey: "/a", scopeKey: "r:2:3", at: 1 }, 4);
 * ```
 */
export function applyInvalidationEvent(
  sink: ViewSink,
  inv: ReadCacheInvalidationV1,
  seq: number,
): void {
  sink.setTrust(inv.pathKey, pathTrustAfterInvalidation(sink.trust(inv.pathKey), inv.scopeKey));
  const scope = parseScopeKey(inv.scopeKey);
  const lines = scope === FULL_SCOPE || scope === undefined
    ? { start: 1, end: TO_END }
    : { start: scope.start, end: scope.end };
  sink.addKeyView(inv.pathKey, { seq: seq - 0.5, ...lines, hash: null });
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
