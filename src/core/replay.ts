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
  type LineStretch,
  parseEditMeta,
  parseInvalidation,
  parseReadCacheMeta as parseReadCacheMetaImported,
  parseToolMeta,
  READ_MODES,
  type ReadCacheEditMetaV1,
  type ReadCacheInvalidationV1,
  type ReadCacheMetaV1,
  type ReadMode,
  type ToolShownV1,
} from "./meta.ts";
import { type Interval, subtractLines } from "./interval.ts";
import { REPLAY_STATE_FORMAT, type ReplayState, type ReplayStateGroup } from "./replay_state.ts";
import { isContentHash } from "./hash.ts";
import {
  FULL_SCOPE as FULL_SCOPE_IMPORTED,
  parseScopeKey,
  type ScopeKey,
  scopeKeyFor as scopeKeyForImported,
} from "./scope.ts";
import {
  type PathTrust,
  pathTrustAfterInvalidation,
  pathTrustAfterRead,
  pathTrustAfterWrite,
  type ScopeTrust,
  type TrustState,
} from "./trust.ts";
import {
  addView,
  type LineView,
  newestViewsOf,
  TO_END,
  viewLinesOf,
  viewsCoverWith,
  viewsHoldBase,
} from "./view.ts";

// Names used for every entry, bound once: pi loads an extension with jiti, whose modules are
// read through a proxy, so each use of an imported name would cost a proxy call per entry.
const parseReadCacheMeta = parseReadCacheMetaImported;
const FULL_SCOPE = FULL_SCOPE_IMPORTED;
const scopeKeyFor = scopeKeyForImported;

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
    kind: "wrote";
    /**
     * A successful `write` tool call (SPEC §5.8): the model sent the whole
     * content in its own tool-call arguments. `call` is the resolved target
     * (no offset/limit), `hash` the SHA-256 of the UTF-8 bytes written.
     */
    call: ReadCall;
    hash: string;
    /** Tool call id of the write. */
    callId?: string;
    /** Lines of the content written (for status reports; replay does not use it). */
    totalLines?: number;
    /** UTF-8 bytes of the content written (for status reports; replay does not use it). */
    bytes?: number;
  }
  | {
    id: string;
    parentId: string | null;
    kind: "changed";
    /**
     * The result of a file-changing call that is not proof of content (SPEC
     * §5.9): an `edit` (with its raw `details.readcache` when it succeeded,
     * else none), or a successful `write` whose content is not well-formed
     * Unicode. `call` is the file it targets.
     */
    call: ReadCall;
    /** Raw `details.readcache` of a successful edit; replay validates it. */
    meta?: unknown;
    /** Tool call id of the change. */
    callId?: string;
  }
  | {
    id: string;
    parentId: string | null;
    kind: "tool";
    /**
     * The result of a call of any tool but `read`, `write` and `edit` that can
     * show or change file content (a shell command, a search, a tool the
     * adapter does not know; SPEC §5.10).
     */
    tool: string;
    /**
     * Raw `details.readcache` (`ReadCacheToolMetaV1`): the files that differed
     * from the model's newest view when the result came back. Absent or
     * invalid: every file counts as changed.
     */
    meta?: unknown;
    /** Tool call id. */
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
  | {
    id: string;
    parentId: string | null;
    kind: "other";
    /** True for the result of a tool call (of any tool): it keeps the in-flight overlay. */
    toolResult?: boolean;
    /** For a tool result: the id of the call it answers. */
    callId?: string;
    /**
     * For an assistant message: its calls of file-changing tools (`write`,
     * `edit`), each with the file it targets (SPEC §5.8).
     */
    changes?: readonly FileChange[];
    /**
     * For an assistant message: the ids of its calls of tools that may change
     * any file in ways the cache cannot follow (a shell command, a tool the
     * adapter does not know; SPEC §5.10). Until each has a result, no read is
     * answered from the cache; the message's reads, writes and edits give no
     * trust.
     */
    opaque?: readonly string[];
    /**
     * For an assistant message: the ids of its calls of tools that may show file content the
     * cache cannot follow but change no file (a search, a read-only shell command; SPEC §5.10).
     * The message's writes and edits are no proof and no belief: such a result may have shown
     * the file before or after the change.
     */
    shows?: readonly string[];
  };

/**
 * A call of a file-changing tool (`write`, `edit`) made by an assistant
 * message: until its result is on the branch, the model's newest view of the
 * file is its own pending change (SPEC §5.8).
 *
 * @example
 * ```ts
 * import type { FileChange } from "@readcache/core";
 * const c: FileChange = { callId: "call_2", call: { name: "/w/a.ts", pathKey: "/w/a.ts" } };
 * ```
 */
export interface FileChange {
  /** Tool call id. */
  callId: string;
  /** The file it targets (no offset/limit). */
  call: ReadCall;
  /**
   * `"edit"` for the host's edit tool: several edits of one file in one
   * message can be one belief (SPEC §5.9 rule 4). Anything else counts as a
   * write.
   */
  tool?: "edit" | "write";
}

/**
 * A file-changing call of the current turn, in call order, and whether its
 * result is on the branch yet.
 *
 * @example
 * ```ts
 * import type { TurnChange } from "@readcache/core/replay";
 * const c: TurnChange = { callId: "c1", call: { name: "/w/a.ts", pathKey: "/w/a.ts" }, tool: "edit", answered: false };
 * ```
 */
export interface TurnChange extends FileChange {
  /** The call's result is on the branch. */
  answered: boolean;
}

/**
 * An entry of a branch as {@linkcode ReplayCursor.advance} takes it and
 * `BranchKnowledge` keeps it: a {@linkcode ReplayEntry}, or, for an entry of
 * kind `other` without any of its optional fields (a user message, an
 * assistant message that calls only reads: most entries of a session), its
 * id alone. The same entry without an object of its own: a long session's
 * synced branch holds one reference per such entry (SPEC §6.4).
 *
 * @example
 * ```ts
 * import type { BranchItem } from "@readcache/core/replay";
 * const branch: BranchItem[] = ["u1", { id: "c1", parentId: "u1", kind: "compaction" }];
 * ```
 */
export type BranchItem = ReplayEntry | string;

/**
 * The id of a branch item.
 *
 * @example
 * ```ts
 * import { itemId } from "@readcache/core/replay";
 * itemId("u1"); // "u1"
 * itemId({ id: "c1", parentId: "u1", kind: "compaction" }); // "c1"
 * ```
 */
export function itemId(item: BranchItem): string {
  return typeof item === "string" ? item : item.id;
}

/** The id of the item at `i`, `undefined` past either end. */
function idAt(branch: readonly BranchItem[], i: number): string | undefined {
  const e = branch[i];
  return e === undefined ? undefined : typeof e === "string" ? e : e.id;
}

/**
 * A replay entry as a branch keeps it ({@linkcode BranchItem}): its id alone
 * for an entry of kind `other` without optional fields, else the entry.
 *
 * @example
 * ```ts
 * import { compactEntry } from "@readcache/core/replay";
 * compactEntry({ id: "u1", parentId: null, kind: "other" }); // "u1"
 * compactEntry({ id: "t1", parentId: "a1", kind: "other", toolResult: true }).kind; // "other"
 * ```
 */
export function compactEntry(e: ReplayEntry): BranchItem {
  return e.kind === "other" && e.toolResult === undefined && e.callId === undefined &&
      e.changes === undefined && e.opaque === undefined && e.shows === undefined
    ? e.id
    : e;
}

/**
 * Where the replay window of a branch starts.
 *
 * @example
 * ```ts
 * import type { ReplayBoundary } from "@readcache/core/replay";
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
 * import { findReplayBoundary } from "@readcache/core/replay";
 * findReplayBoundary([
 *   { id: "a", parentId: null, kind: "other" },
 *   { id: "c", parentId: "a", kind: "compaction", firstKeptEntryId: "a" },
 * ]); // { startIndex: 2, compactionId: "c" }
 * ```
 */
export function findReplayBoundary(branch: readonly BranchItem[]): ReplayBoundary {
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i];
    if (typeof e === "string") continue;
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
 * import { activeBranch } from "@readcache/core/replay";
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

export {
  packReplayState,
  parseReplayState,
  REPLAY_STATE_FORMAT,
  unpackReplayState,
  validateReplayState,
} from "./replay_state.ts";
export type { PackedReplayState, ReplayState, ReplayStateGroup } from "./replay_state.ts";

function zeroCounts(): ModeCounts {
  return Object.fromEntries(READ_MODES.map((m) => [m, 0])) as ModeCounts;
}

/**
 * A snapshot of a replayed branch.
 *
 * @example
 * ```ts
 * import { replayBranch } from "@readcache/core/replay";
 * const s = replayBranch([]);
 * s.seq; // 0
 * ```
 */
export interface ReplaySnapshot {
  /** Trust derived from the replay window. */
  trust: TrustState;
  /**
   * Number of events in the window that took a `seq`: valid read-meta events
   * and writes (the last `seq` used).
   */
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
 * import { metaMatchesCall } from "@readcache/core/replay";
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
  // the scope key of those lines, compared without building it
  const key = meta.scopeKey;
  if (meta.rangeStart === 1 && meta.rangeEnd === meta.totalLines) return key === FULL_SCOPE;
  return key === scopeKeyFor(meta.rangeStart, meta.rangeEnd, meta.totalLines);
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
    // A partial answer (SPEC §8.4) showed the lines it did not mark; it is held when the newest
    // views show every marked stretch with its own content, and then counts as an anchor.
    const partial = meta.mode === "partial" && meta.held !== undefined &&
      meta.held.every((h) =>
        viewsCoverWith(
          h.hash,
          h.start,
          h.end,
          sink.keyViews(meta.pathKey),
          sink.nameViews(name),
        )
      );
    if (covered || partial) r = pathTrustAfterRead(before, { ...meta, mode: "full" }, seq);
    // A derived answer is held only if its base was the model's newest view (SPEC §5.5):
    // otherwise (e.g. its base was an in-flight read that never reached the session) its lines
    // are unknown.
    const held = r.outcome === "applied" &&
      (isAnchorMode(meta.mode) || covered || partial ||
        derivedBaseHeld(sink, before, meta, name));
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
 * One event of the replay window that concerns files, in branch order (`ord`). A read keeps its
 * metadata raw (`raw`: the entry's own value, set only when it parsed as valid) and parses it
 * again when its file is folded: no parsed copy is held for every read of the session.
 */
type FileEvent =
  | { ord: number; kind: "read"; raw: unknown; call?: ReadCall; seq: number }
  | { ord: number; kind: "wrote"; call: ReadCall; hash: string; seq: number }
  | { ord: number; kind: "edit"; call: ReadCall; meta: ReadCacheEditMetaV1; seq: number }
  | { ord: number; kind: "invalidate"; inv: ReadCacheInvalidationV1; seq: number }
  | { ord: number; kind: "unknown"; call: ReadCall; seq: number }
  | { ord: number; kind: "shown"; shown: ToolShownV1; seq: number };

/** A result after which every file the model held is unknown (SPEC §5.10), in branch order. */
interface GlobalUnknown {
  ord: number;
  seq: number;
}

/** The folded trust and views of one group of identities, up to `upTo` of its events. */
interface Folded {
  trust: Map<string, PathTrust>;
  keyViews: Map<string, LineView[]>;
  nameViews: Map<string, LineView[]>;
  upTo: number;
  /** Global unknowns applied (an index into the cursor's list). */
  globalsUpTo: number;
  /** `ord` of the last event or global unknown applied. */
  lastOrd: number;
  ignored: number;
}

/**
 * Identities (`pathKey`s and names) that events connect, with their events:
 * an event's effect depends only on the state of the identities it names, so
 * each group folds on its own, when first asked (SPEC §6.4).
 */
interface Group {
  events: FileEvent[];
  folded?: Folded;
  /** Folded from a saved state: its earlier events are not here, so it can never fold again. */
  restored?: true;
}

/**
 * Incremental replay engine. Holds the replay of one branch and extends it by
 * appended entries in O(new entries); when the branch no longer continues the
 * replayed one (the leaf moved elsewhere, or a new compaction appeared) it
 * replays from the latest compaction instead.
 *
 * Consuming entries only validates them, numbers them (`seq`) and files each
 * event under the identities it names; the trust and views of a file are
 * folded from its events when first asked for, and kept (SPEC §6.4). A cold
 * read of one file folds that file only.
 *
 * The cursor owns its state and mutates it; use {@linkcode replayBranch} for a
 * one-shot pure replay.
 *
 * @example
 * ```ts
 * import { ReplayCursor } from "@readcache/core/replay";
 * const cursor = new ReplayCursor();
 * cursor.advance([{ id: "a", parentId: null, kind: "other" }]);
 * cursor.advance([{ id: "a", parentId: null, kind: "other" }, { id: "b", parentId: "a", kind: "other" }]);
 * cursor.lastAdvance; // "extended"
 * ```
 */
export class ReplayCursor {
  /** Union-find parent of each identity; a root maps to itself. */
  #parent = new Map<string, string>();
  /** Events and folded state of each group, by root identity. */
  #groups = new Map<string, Group>();
  /** Scope shown by the latest trusted read of each request: pathKey -> offset/limit -> scope. */
  #shown = new Map<string, Map<string, ScopeKey>>();
  /** Branch index of the entry that started the current turn (the last non-result entry). */
  #turnStart = -1;
  /** Event order and `seq` at the start of the current turn (where its calls sit in context). */
  #turnOrd = -1;
  #turnSeq = 0;
  /** File-changing calls of the current turn without a result yet, by call id. */
  #pending = new Map<string, ReadCall>();
  /** Every file-changing call of the current turn's assistant message. */
  #turnChanges: readonly FileChange[] = [];
  /** Call ids of the edit results of the current turn taken as beliefs (SPEC §5.9 rule 4). */
  #takenEdits = new Set<string>();
  /** Calls of the current turn that may change any file, without a result yet (SPEC §5.10). */
  #opaquePending = new Set<string>();
  /** The current turn's message has a call that may change any file (SPEC §5.10). */
  #turnOpaque = false;
  /** The ids of the current turn's calls that may change any file (SPEC §5.10). */
  #turnOpaqueIds: readonly string[] = [];
  /** The current turn's message has a call that may show file content (SPEC §5.10). */
  #turnShows = false;
  /** Calls of the current turn that may show file content, without a result yet (SPEC §5.10). */
  #showsPending = new Set<string>();
  /** Results after which every file held is unknown, in branch order (SPEC §5.10). */
  #globals: GlobalUnknown[] = [];
  #ord = 0;
  #seq = 0;
  #boundary: ReplayBoundary = { startIndex: 0, compactionId: null };
  #consumed = 0;
  #leafId: string | null = null;
  #counts: ModeCounts = zeroCounts();
  #last: "replayed" | "extended" | "unchanged" = "replayed";
  /** Restored from a saved state: the window's entries up to the restored leaf, less that one. */
  #restoredBefore = 0;
  /** The compaction the restored window starts after (the branch does not hold it). */
  #restoredCompaction: string | null = null;
  /** A restored group had to fold again without its earlier events: the state is unusable. */
  #lost = false;

  /** How the last {@linkcode ReplayCursor.advance} call proceeded. */
  get lastAdvance(): "replayed" | "extended" | "unchanged" {
    return this.#last;
  }

  /** Last `seq` used (events in the window that took one). */
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
  advance(branch: readonly BranchItem[]): void {
    const continues = this.#consumed <= branch.length &&
      (this.#consumed === 0
        ? this.#leafId === null
        : idAt(branch, this.#consumed - 1) === this.#leafId) &&
      (this.#boundary.compactionId === null ||
        idAt(branch, this.#boundary.startIndex - 1) === this.#boundary.compactionId);
    if (continues) {
      this.#last = this.#consumed === branch.length ? "unchanged" : "extended";
      this.#consume(branch, this.#consumed);
      return;
    }
    this.#reset(findReplayBoundary(branch));
    this.#last = "replayed";
    this.#consume(branch, this.#boundary.startIndex);
  }

  /** Trust of one file, `undefined` when none. */
  pathTrust(pathKey: string): PathTrust | undefined {
    return this.#fold(pathKey)?.trust.get(pathKey);
  }

  /** The model's views of a file under its canonical identity, oldest first. */
  keyViews(pathKey: string): readonly LineView[] {
    return this.#fold(pathKey)?.keyViews.get(pathKey) ?? [];
  }

  /** The model's views of a file under a name it used, oldest first. */
  nameViews(name: string): readonly LineView[] {
    return this.#fold(name)?.nameViews.get(name) ?? [];
  }

  /**
   * The scope the latest trusted read of `pathKey` with exactly this
   * `offset`/`limit` showed (what a refresh of that request must drop), or
   * `undefined` when there is none in the window.
   */
  shownScope(pathKey: string, offset?: number, limit?: number): ScopeKey | undefined {
    return this.#shown.get(pathKey)?.get(limitsKey(offset, limit));
  }

  /**
   * Files that file-changing calls of the current turn target and that have
   * no result on the branch yet (SPEC §5.8): a read of one of them must not
   * be answered from the cache.
   */
  pendingChanges(): ReadCall[] {
    return [...this.#pending.values()];
  }

  /**
   * True while a call of the current turn that may change any file (a shell
   * command, a tool the adapter does not know) or show file content (a
   * search, a read-only command that prints files) has no result on the
   * branch (SPEC §5.10): its output may come before the read's answer, so
   * no read may be answered from the cache.
   */
  opaqueInFlight(): boolean {
    return this.#opaquePending.size > 0 || this.#showsPending.size > 0;
  }

  /**
   * True when the current turn's message has a call that may change any
   * file (SPEC §5.10): its reads, writes and edits give no trust.
   */
  turnIsOpaque(): boolean {
    return this.#turnOpaque;
  }

  /**
   * The ids of the current turn's calls that may change any file (SPEC
   * §5.10), answered or not: what another call of the message may have
   * printed while they ran.
   */
  turnOpaqueCalls(): readonly string[] {
    return this.#turnOpaqueIds;
  }

  /**
   * Every identity (`pathKey`s under `keys`, names under `names`) whose
   * newest views show some known content: what a tool result must be checked
   * against (SPEC §5.10). Folds every file.
   */
  heldIdentities(): { keys: string[]; names: string[] } {
    const keys: string[] = [];
    const names: string[] = [];
    // the newest view of some line is of known content
    const known = (views: readonly LineView[]) =>
      newestViewsOf(views, 1, TO_END).some((p) => p.hash !== null);
    for (const root of this.#groups.keys()) {
      const f = this.#fold(root)!;
      for (const [k, v] of f.keyViews) if (known(v)) keys.push(k);
      for (const [n, v] of f.nameViews) if (known(v)) names.push(n);
    }
    return { keys, names };
  }

  /**
   * The file-changing calls of the current turn (the latest assistant
   * message), in call order, each with whether its result is on the branch.
   */
  turnChanges(): TurnChange[] {
    return this.#turnChanges.map((c) => ({ ...c, answered: !this.#pending.has(c.callId) }));
  }

  /**
   * True when a state restored by {@linkcode ReplayCursor.restore} can no
   * longer be continued (SPEC §6.5): an entry joined two files' histories or
   * placed an event before what the saved state had folded, and the events
   * before the saved leaf are not here. Replay the whole window instead.
   */
  get lost(): boolean {
    return this.#lost;
  }

  /**
   * The replay saved at this point (SPEC §6.5), or `undefined` when this is
   * not a quiet point: the last entry consumed must have ended a turn with no
   * call of it waiting for a result (a user message, a message calling only
   * reads), and the state must not be lost. Folds every file.
   */
  saveState(): ReplayState | undefined {
    if (
      this.#lost || this.#leafId === null || this.#turnStart !== this.#consumed - 1 ||
      this.#pending.size > 0 || this.#opaquePending.size > 0 || this.#showsPending.size > 0 ||
      this.#turnChanges.length > 0 || this.#takenEdits.size > 0 || this.#turnOpaque ||
      this.#turnShows
    ) return undefined;
    const ids = new Map<string, string[]>();
    for (const root of this.#groups.keys()) ids.set(root, [root]);
    for (const id of this.#parent.keys()) {
      const root = this.#root(id)!;
      if (id !== root) ids.get(root)?.push(id);
    }
    const groups: ReplayStateGroup[] = [];
    for (const [root, members] of ids) {
      const f = this.#fold(root)!;
      groups.push({
        ids: members,
        trust: [...f.trust],
        keyViews: [...f.keyViews],
        nameViews: [...f.nameViews],
        lastOrd: f.lastOrd,
        ignored: f.ignored,
      });
    }
    return {
      format: REPLAY_STATE_FORMAT,
      leafId: this.#leafId,
      compactionId: this.#restoredCompaction ?? this.#boundary.compactionId,
      windowSize: this.#consumed - this.#boundary.startIndex + this.#restoredBefore,
      seq: this.#seq,
      ord: this.#ord,
      turnOrd: this.#turnOrd,
      turnSeq: this.#turnSeq,
      modeCounts: { ...this.#counts },
      groups,
      shown: [...this.#shown].map(([k, m]) => [k, [...m]]),
    };
  }

  /**
   * A cursor that continues from a saved state (SPEC §6.5) as the replay of
   * the whole branch up to `state.leafId` would. Its branch starts at that
   * entry: {@linkcode ReplayCursor.advance} extends it with branches whose
   * first item is the saved leaf; any other branch is replayed from its
   * latest compaction as usual. Check {@linkcode ReplayCursor.lost} after
   * each advance.
   *
   * @example
   * ```ts
   * import { ReplayCursor } from "@readcache/core/replay";
   * const c = new ReplayCursor();
   * c.advance([{ id: "u1", parentId: null, kind: "other" }]);
   * const again = ReplayCursor.restore(JSON.parse(JSON.stringify(c.saveState())));
   * again.advance(["u1", { id: "u2", parentId: "u1", kind: "other" }]);
   * again.lastAdvance; // "extended"
   * ```
   */
  static restore(state: ReplayState): ReplayCursor {
    const c = new ReplayCursor();
    for (const g of state.groups) {
      const root = g.ids[0];
      for (const id of g.ids) c.#parent.set(id, root);
      c.#groups.set(root, {
        events: [],
        restored: true,
        folded: {
          trust: new Map(g.trust),
          keyViews: new Map(g.keyViews),
          nameViews: new Map(g.nameViews),
          upTo: 0,
          globalsUpTo: 0,
          lastOrd: g.lastOrd,
          ignored: g.ignored,
        },
      });
    }
    c.#shown = new Map(state.shown.map(([k, m]) => [k, new Map(m)]));
    c.#seq = state.seq;
    c.#ord = state.ord;
    c.#turnOrd = state.turnOrd;
    c.#turnSeq = state.turnSeq;
    c.#counts = { ...zeroCounts(), ...state.modeCounts };
    c.#turnStart = 0;
    c.#consumed = 1;
    c.#leafId = state.leafId;
    c.#restoredBefore = state.windowSize - 1;
    c.#restoredCompaction = state.compactionId;
    return c;
  }

  /** A frozen copy of the replay state. Folds every file. */
  snapshot(): ReplaySnapshot {
    const trust: Record<string, PathTrust> = {};
    let ignored = 0;
    for (const root of this.#groups.keys()) {
      const f = this.#fold(root)!;
      for (const [k, t] of f.trust) trust[k] = t;
      ignored += f.ignored;
    }
    return {
      trust,
      seq: this.#seq,
      // (a restored replay's branch starts at its saved leaf: indices count from there)
      boundary: {
        startIndex: this.#boundary.startIndex,
        compactionId: this.#restoredCompaction ?? this.#boundary.compactionId,
      },
      leafId: this.#leafId,
      windowSize: this.#consumed - this.#boundary.startIndex + this.#restoredBefore,
      modeCounts: { ...this.#counts },
      ignoredReads: ignored,
    };
  }

  #reset(boundary: ReplayBoundary): void {
    this.#parent = new Map();
    this.#groups = new Map();
    this.#shown = new Map();
    this.#turnStart = -1;
    this.#turnOrd = this.#ord++;
    this.#turnSeq = 0;
    this.#pending = new Map();
    this.#takenEdits = new Set();
    this.#turnChanges = [];
    this.#opaquePending = new Set();
    this.#turnOpaque = false;
    this.#turnOpaqueIds = [];
    this.#turnShows = false;
    this.#showsPending = new Set();
    this.#globals = [];
    this.#seq = 0;
    this.#boundary = boundary;
    this.#counts = zeroCounts();
    this.#restoredBefore = 0;
    this.#restoredCompaction = null;
    this.#lost = false;
  }

  #root(id: string): string | undefined {
    const parent = this.#parent;
    let r = parent.get(id);
    // a root, or a direct child of one (nearly every lookup): nothing to compress
    if (r === undefined || r === id) return r;
    let up = parent.get(r)!;
    if (up === r) return r;
    while (r !== up) {
      const next = parent.get(up)!;
      parent.set(r, next);
      r = up;
      up = next;
    }
    parent.set(id, r);
    return r;
  }

  /**
   * Files an event under every identity it names, joining their groups.
   * `inOrder`: the event belongs earlier than events already filed (its
   * `ord`); it is inserted in order and a group folded past it folds again.
   */
  #file(
    event: FileEvent,
    a: string | undefined,
    b?: string,
    c?: string,
    inOrder = false,
  ): void {
    let root: string | undefined;
    // up to three identities, passed apart (no array per event); repeats are skipped
    for (let k = 0; k < 3; k++) {
      const id = k === 0 ? a : k === 1 ? b : c;
      if (id === undefined || (k > 0 && id === a) || (k === 2 && id === b)) continue;
      let r = this.#root(id);
      if (r === undefined) {
        this.#parent.set(id, id);
        r = id;
      }
      if (root === undefined) {
        root = r;
        if (!this.#groups.has(r)) this.#groups.set(r, { events: [] });
      } else if (r !== root) {
        // two groups meet: one group with both event lists in order, folded again when asked
        const a: Group = this.#groups.get(root)!;
        const b: Group = this.#groups.get(r) ?? { events: [] };
        // a restored group's earlier events are not here: it cannot fold again (SPEC §6.5)
        if (a.restored || b.restored) this.#lost = true;
        this.#parent.set(r, root);
        this.#groups.delete(r);
        a.events = mergeByOrd(a.events, b.events);
        a.folded = undefined;
      }
    }
    if (root === undefined) return;
    const g = this.#groups.get(root)!;
    let at = g.events.length;
    if (inOrder) { while (at > 0 && g.events[at - 1].ord > event.ord) at--; }
    if (at === g.events.length) g.events.push(event);
    else g.events.splice(at, 0, event);
    if (g.folded !== undefined && g.folded.lastOrd > event.ord) {
      if (g.restored) this.#lost = true;
      g.folded = undefined;
    }
  }

  /** The folded state of the group of `id`, brought up to its last event. */
  #fold(id: string): Folded | undefined {
    const root = this.#root(id);
    if (root === undefined) return undefined;
    const g = this.#groups.get(root)!;
    const f: Folded = g.folded ?? {
      trust: new Map(),
      keyViews: new Map(),
      nameViews: new Map(),
      upTo: 0,
      globalsUpTo: 0,
      lastOrd: -Infinity,
      ignored: 0,
    };
    g.folded = f;
    const globals = this.#globals;
    if (f.upTo === g.events.length && f.globalsUpTo === globals.length) return f;
    const sink: ViewSink = {
      trust: (k) => f.trust.get(k),
      setTrust: (k, t) => {
        if (t === undefined) f.trust.delete(k);
        else f.trust.set(k, t);
      },
      addKeyView: (k, v) => f.keyViews.set(k, addView(f.keyViews.get(k) ?? [], v)),
      addNameView: (n, v) => f.nameViews.set(n, addView(f.nameViews.get(n) ?? [], v)),
      keyViews: (k) => f.keyViews.get(k) ?? [],
      nameViews: (n) => f.nameViews.get(n) ?? [],
    };
    for (;;) {
      const e = f.upTo < g.events.length ? g.events[f.upTo] : undefined;
      const all = f.globalsUpTo < globals.length ? globals[f.globalsUpTo] : undefined;
      if (all !== undefined && (e === undefined || all.ord < e.ord)) {
        // every file of the group the model held anything of is unknown from here on
        const unknown: LineView = { seq: all.seq, start: 1, end: TO_END, hash: null };
        for (const k of [...f.keyViews.keys()]) sink.addKeyView(k, unknown);
        for (const n of [...f.nameViews.keys()]) sink.addNameView(n, unknown);
        f.globalsUpTo++;
        f.lastOrd = all.ord;
        continue;
      }
      if (e === undefined) break;
      f.upTo++;
      f.lastOrd = e.ord;
      if (e.kind === "read") {
        const meta = e.raw === undefined ? undefined : parseReadCacheMeta(e.raw);
        if (applyReadEvent(sink, meta, e.call, e.seq) === "ignored") f.ignored++;
      } else if (e.kind === "wrote") {
        applyWriteEvent(sink, e.call, e.hash, e.seq);
      } else if (e.kind === "edit") {
        applyEditEvent(sink, e.meta, e.call, e.seq);
      } else if (e.kind === "invalidate") {
        applyInvalidationEvent(sink, e.inv, e.seq);
      } else if (e.kind === "shown") {
        applyShownEvent(sink, e.shown, e.seq);
      } else {
        const unknown: LineView = { seq: e.seq, start: 1, end: TO_END, hash: null };
        sink.addKeyView(e.call.pathKey, unknown);
        sink.addNameView(e.call.name, unknown);
      }
    }
    return f;
  }

  /** True when a tool result that showed lines of the file of `call` (SPEC §5.10) lies in the current turn before `index`. */
  #shownInTurn(branch: readonly BranchItem[], index: number, call: ReadCall): boolean {
    for (let j = Math.max(this.#turnStart + 1, this.#boundary.startIndex); j < index; j++) {
      const e = branch[j];
      if (typeof e === "string" || e.kind !== "tool" || e.meta === undefined) continue;
      const shown = parseToolMeta(e.meta)?.shown ?? [];
      if (shown.some((s) => sameFile(s, call))) return true;
    }
    return false;
  }

  /** Makes the file of `call` unknown from here on (the current entry). */
  #unknownHere(call: ReadCall): void {
    this.#file(
      { ord: this.#ord++, kind: "unknown", call, seq: this.#seq + 0.5 },
      call.pathKey,
      call.name,
    );
  }

  /** True when a read result of the file of `call` lies in the current turn before `index`. */
  #readInTurn(branch: readonly BranchItem[], index: number, call: ReadCall): boolean {
    for (let j = Math.max(this.#turnStart + 1, this.#boundary.startIndex); j < index; j++) {
      const e = branch[j];
      if (typeof e === "string" || e.kind !== "read") continue;
      const key = (e.meta as { pathKey?: unknown } | undefined)?.pathKey;
      const ids = [key, e.call?.pathKey, e.call?.name];
      if (ids.includes(call.pathKey) || ids.includes(call.name)) return true;
    }
    return false;
  }

  /** True when another file-changing call of the current turn targets the file of `call`. */
  #otherChangeInTurn(callId: string | undefined, call: ReadCall): boolean {
    return this.#turnChanges.some((c) => c.callId !== callId && sameFile(c.call, call));
  }

  /**
   * For an edit result: true unless every other call of its message that
   * changes the file is an edit, those before it in call order have results
   * that were taken as beliefs, and those after it have no result yet
   * (SPEC §5.9 rule 4: several edits of one file in one message are one
   * belief, applied in call order).
   */
  #editChainBroken(callId: string | undefined, call: ReadCall): boolean {
    const at = this.#turnChanges.findIndex((c) => c.callId === callId);
    if (at === -1) return this.#otherChangeInTurn(callId, call);
    return this.#turnChanges.some((c, k) =>
      k !== at && sameFile(c.call, call) &&
      (c.tool !== "edit" ||
        (k < at ? !this.#takenEdits.has(c.callId) : !this.#pending.has(c.callId)))
    );
  }

  /**
   * Makes the file of `call` unknown from the start of the current turn,
   * where the call sits in the model's context: results of the turn that
   * came after it (reads) stay newer (SPEC §5.8).
   */
  #unknownFromTurnStart(call: ReadCall): void {
    const event: FileEvent = {
      ord: this.#turnOrd,
      kind: "unknown",
      call,
      seq: this.#turnSeq + 0.5,
    };
    // (an edit of the same message taken before now rests on unknown lines: the fold drops it)
    this.#file(event, call.pathKey, call.name, undefined, true);
  }

  /**
   * A new assistant or user message ends the turn: a file-changing call that
   * never got a result leaves its file unknown (the model sent a change it
   * never saw confirmed) from the start of the turn, so only what reads of
   * the turn showed stays known.
   */
  #endTurn(index: number): void {
    // (nothing is allocated when the turn had nothing pending: most turns)
    if (this.#pending.size > 0) {
      for (const call of this.#pending.values()) this.#unknownFromTurnStart(call);
      this.#pending.clear();
    }
    // a call that may have changed any file and never returned: every file is unknown (the
    // turn's reads, writes and edits gave no trust, so here is as good as the turn start)
    if (this.#opaquePending.size > 0) {
      this.#everyFileUnknown();
      this.#opaquePending.clear();
    }
    if (this.#showsPending.size > 0) this.#showsPending.clear();
    this.#turnOpaque = false;
    this.#turnOpaqueIds = [];
    this.#turnShows = false;
    if (this.#takenEdits.size > 0) this.#takenEdits.clear();
    if (this.#turnChanges.length > 0) this.#turnChanges = [];
    this.#turnStart = index;
    this.#turnOrd = this.#ord++;
    this.#turnSeq = this.#seq;
  }

  /** From here on, every file the model held is unknown (SPEC §5.10). */
  #everyFileUnknown(): void {
    this.#globals.push({ ord: this.#ord++, seq: this.#seq + 0.5 });
  }

  #consume(branch: readonly BranchItem[], from: number): void {
    for (let i = from; i < branch.length; i++) {
      const e = branch[i];
      if (typeof e === "string") {
        // an entry of kind `other` without fields (a user message, a message calling only
        // reads): it ends the turn and starts one with no calls to follow
        this.#endTurn(i);
        continue;
      }
      if (e.kind === "compaction") {
        this.#reset({ startIndex: i + 1, compactionId: e.id });
      } else if (e.kind === "read") {
        if (e.callId !== undefined) this.#pending.delete(e.callId);
        // a read in the same message as a call that may change any file may have run before or
        // after it: what it showed is not known to be the model's view (SPEC §5.10)
        const meta = e.meta === undefined || this.#turnOpaque
          ? undefined
          : parseReadCacheMeta(e.meta);
        const call = e.call;
        const trusted = meta !== undefined && (call === undefined || metaMatchesCall(meta, call));
        this.#file(
          {
            ord: this.#ord++,
            kind: "read",
            raw: meta === undefined ? undefined : e.meta,
            call,
            seq: this.#seq + 1,
          },
          meta?.pathKey,
          call?.pathKey,
          call?.name,
        );
        if (trusted) {
          if (call !== undefined) {
            let byLimits = this.#shown.get(call.pathKey);
            if (byLimits === undefined) this.#shown.set(call.pathKey, byLimits = new Map());
            byLimits.set(limitsKey(call.offset, call.limit), meta.scopeKey);
          }
          this.#seq++;
          this.#counts[meta.mode]++;
        }
      } else if (e.kind === "wrote") {
        if (e.callId !== undefined) this.#pending.delete(e.callId);
        // The model sent the content in the assistant message that made the call, so a read
        // result of the same file earlier in this turn is newer than the write: then the file is
        // unknown from the turn start, below what the turn's reads showed (SPEC §5.8). So is a
        // file another call of the same message changes too (pi runs them in parallel).
        // A call of the message that may show files (a search, a read-only command) may have
        // shown it before or after the write, and its output may sit on either side of the
        // result: the file is unknown from the result on (SPEC §5.10).
        const viewed = this.#turnShows || this.#shownInTurn(branch, i, e.call);
        if (
          !isContentHash(e.hash) || this.#turnOpaque || viewed ||
          this.#readInTurn(branch, i, e.call) ||
          this.#otherChangeInTurn(e.callId, e.call)
        ) {
          this.#unknownFromTurnStart(e.call);
          if (viewed) this.#unknownHere(e.call);
        } else {
          const { call, hash } = e;
          this.#file(
            { ord: this.#ord++, kind: "wrote", call, hash, seq: ++this.#seq },
            call.pathKey,
            call.name,
          );
        }
      } else if (e.kind === "changed") {
        if (e.callId !== undefined) this.#pending.delete(e.callId);
        // An edit is the model's belief only with valid metadata for this file and alone in its
        // turn; anything else leaves the file unknown from the turn start (SPEC §5.9).
        const meta = e.meta === undefined ? undefined : parseEditMeta(e.meta);
        const call = e.call;
        const viewed = this.#turnShows || this.#shownInTurn(branch, i, call);
        if (
          meta === undefined || meta.pathKey !== call.pathKey || this.#turnOpaque || viewed ||
          this.#readInTurn(branch, i, call) || this.#editChainBroken(e.callId, call)
        ) {
          this.#unknownFromTurnStart(call);
          if (viewed) this.#unknownHere(call);
          if (meta !== undefined && meta.pathKey !== call.pathKey) {
            this.#unknownFromTurnStart({ name: meta.pathKey, pathKey: meta.pathKey });
          }
        } else {
          this.#file(
            { ord: this.#ord++, kind: "edit", call, meta, seq: ++this.#seq },
            call.pathKey,
            call.name,
          );
          if (e.callId !== undefined) this.#takenEdits.add(e.callId);
        }
      } else if (e.kind === "tool") {
        if (e.callId !== undefined) {
          this.#pending.delete(e.callId);
          this.#opaquePending.delete(e.callId);
          this.#showsPending.delete(e.callId);
        }
        // what the tool showed or changed (SPEC §5.10): the files that differed from the
        // model's newest view are unknown from here on; without a record, every file is
        const meta = e.meta === undefined ? undefined : parseToolMeta(e.meta);
        if (meta === undefined) this.#everyFileUnknown();
        else {
          for (const id of meta.changed) {
            const call = { name: id, pathKey: id };
            this.#file({ ord: this.#ord++, kind: "unknown", call, seq: this.#seq + 0.5 }, id);
          }
          // then what it showed, checked against the file when it came back: the newest view
          for (const shown of meta.shown ?? []) {
            this.#file(
              { ord: this.#ord++, kind: "shown", shown, seq: ++this.#seq },
              shown.pathKey,
              shown.name,
            );
          }
        }
      } else if (e.kind === "other" && e.toolResult === true) {
        if (e.callId !== undefined) {
          this.#pending.delete(e.callId);
          // the result of a call that may change any file, with no record of what it did
          if (this.#opaquePending.delete(e.callId)) this.#everyFileUnknown();
          this.#showsPending.delete(e.callId);
        }
      } else if (e.kind === "other") {
        this.#endTurn(i);
        // the turn's sets and list are empty here: filled in place (no new Set per message)
        if (e.changes !== undefined) {
          this.#turnChanges = e.changes;
          for (const c of e.changes) this.#pending.set(c.callId, c.call);
        }
        if (e.opaque !== undefined) {
          for (const id of e.opaque) this.#opaquePending.add(id);
          this.#turnOpaqueIds = e.opaque;
        }
        this.#turnOpaque = this.#opaquePending.size > 0;
        if (e.shows !== undefined) { for (const id of e.shows) this.#showsPending.add(id); }
        this.#turnShows = this.#showsPending.size > 0;
      } else if (e.kind === "invalidate") {
        const inv = parseInvalidation(e.data);
        if (inv) {
          this.#file(
            { ord: this.#ord++, kind: "invalidate", inv, seq: this.#seq + 1 },
            inv.pathKey,
          );
        }
      }
    }
    this.#consumed = branch.length;
    this.#leafId = branch.length > 0 ? itemId(branch[branch.length - 1]) : null;
  }
}

/** Positions from `from` on where one of `views` holds text or unknown lines (not vacant ones). */
function viewedFrom(views: readonly LineView[], from: number): Interval[] {
  const parts = views.filter((v) => v.vacant !== true && v.end >= from)
    .map((v): Interval => [Math.max(v.start, from), v.end])
    .sort((a, b) => a[0] - b[0]);
  const out: Interval[] = [];
  for (const [a, b] of parts) {
    const last = out.at(-1);
    if (last !== undefined && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/**
 * Where the text of `viewed` lines that lie between the `held` stretches of
 * an edit is after it: each gap moves by the lines the edit added or removed
 * before it (the last shown end minus the last held end of the stretch
 * before it); held lines are left out (they are `shown`).
 */
function movedLines(
  viewed: readonly Interval[],
  held: readonly LineStretch[],
  shown: readonly LineStretch[],
): Interval[] {
  const gaps: { start: number; end: number; shift: number }[] = [];
  let start = 1;
  let shift = 0;
  for (const [k, h] of held.entries()) {
    if (h.start > start) gaps.push({ start, end: h.start - 1, shift });
    if (h.end === undefined) return moveInto(viewed, gaps);
    start = h.end + 1;
    shift = (shown[k]?.end ?? h.end) - h.end;
  }
  gaps.push({ start, end: TO_END, shift });
  return moveInto(viewed, gaps);
}

function moveInto(
  viewed: readonly Interval[],
  gaps: readonly { start: number; end: number; shift: number }[],
): Interval[] {
  const out: Interval[] = [];
  for (const g of gaps) {
    for (const [a, b] of viewed) {
      const x = Math.max(a, g.start);
      const y = Math.min(b, g.end);
      if (x > y) continue;
      out.push([x + g.shift, y >= TO_END ? TO_END : y + g.shift]);
    }
  }
  return out.filter(([a, b]) => a <= b);
}

/**
 * True when two calls name the same file: by identity or by name, either way
 * round (the file changes of a turn are matched so, SPEC §5.8, §5.9).
 *
 * @example
 * ```ts
 * import { sameFile } from "@readcache/core/replay";
 * sameFile({ name: "/w/l.ts", pathKey: "/w/a.ts" }, { name: "/w/a.ts", pathKey: "/w/a.ts" }); // true
 * ```
 */
export function sameFile(a: ReadCall, b: ReadCall): boolean {
  return a.pathKey === b.pathKey || a.pathKey === b.name || a.name === b.pathKey ||
    a.name === b.name;
}

/** Key of a request's offset and limit ("" for a whole-file request: no string is built). */
function limitsKey(offset?: number, limit?: number): string {
  return offset === undefined && limit === undefined ? "" : `${offset ?? ""}:${limit ?? ""}`;
}

/** Merges two event lists, each in branch order, into one in branch order. */
function mergeByOrd(a: readonly FileEvent[], b: readonly FileEvent[]): FileEvent[] {
  const out: FileEvent[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i].ord < b[j].ord)) out.push(a[i++]);
    else out.push(b[j++]);
  }
  return out;
}

/**
 * Applies a successful `write` tool call (SPEC §5.8): the model holds the
 * whole content it wrote, like a full read of it. Sets the full slot of the
 * file to `hash` at `seq` and adds a whole-file view under its identity and
 * its name.
 *
 * @example
 * ```ts ignore
 * applyWriteEvent(sink, { name: "/w/a.ts", pathKey: "/w/a.ts" }, sha256Hex("x\n"), cursorSeq + 1);
 * ```
 */
export function applyWriteEvent(sink: ViewSink, call: ReadCall, hash: string, seq: number): void {
  sink.setTrust(call.pathKey, pathTrustAfterWrite(sink.trust(call.pathKey), hash, seq));
  const view: LineView = { seq, start: 1, end: TO_END, hash };
  sink.addKeyView(call.pathKey, view);
  sink.addNameView(call.name, view);
}

/**
 * Applies a successful `edit` tool call with its metadata (SPEC §5.9). When
 * the model's views before it hold the base's content on every `held`
 * stretch (hashes only, under the file's identity and the edit's name), the
 * model's older views from line `from` on become unknown and it holds the
 * `shown` lines of the believed content: views of them, and a trust slot
 * (the full slot when it holds the whole file). Otherwise the whole file
 * becomes unknown. Returns whether the belief was taken.
 *
 * @example
 * ```ts ignore
 * applyEditEvent(sink, meta, { name: "/w/a.ts", pathKey: "/w/a.ts" }, cursorSeq + 1); // true
 * ```
 */
export function applyEditEvent(
  sink: ViewSink,
  meta: ReadCacheEditMetaV1,
  call: ReadCall,
  seq: number,
): boolean {
  const keyViews = sink.keyViews(call.pathKey);
  const nameViews = sink.nameViews(call.name);
  const held = meta.held.every((h) =>
    viewsCoverWith(h.hash ?? meta.baseHash, h.start, h.end ?? TO_END, keyViews, nameViews)
  );
  const add = (v: LineView) => {
    sink.addKeyView(call.pathKey, v);
    sink.addNameView(call.name, v);
  };
  if (!held) {
    add({ seq: seq - 0.5, start: 1, end: TO_END, hash: null });
    return false;
  }
  // From the first touched line on, the model's older views are out of date. Lines between the
  // held stretches (no line there was touched) moved by the lines the edit added or removed
  // before them: where an older view held text, its new place is unknown (a view cannot move);
  // where an older view was but no text moved to, the model holds nothing there (vacant); lines
  // no view reached stay unseen. The held lines themselves are the `shown` stretches below.
  const viewed = viewedFrom([...keyViews, ...nameViews], meta.from);
  const moved = meta.held.length === 0
    ? [[meta.from, TO_END] as Interval]
    : movedLines(viewed, meta.held, meta.shown);
  for (const [a, b] of moved) add({ seq: seq - 0.5, start: a, end: b, hash: null });
  let stale = viewed;
  for (const [a, b] of moved) stale = subtractLines(stale, a, b);
  for (const st of meta.shown) stale = subtractLines(stale, st.start, st.end ?? TO_END);
  for (const [a, b] of stale) add({ seq: seq - 0.5, start: a, end: b, hash: null, vacant: true });
  let trust = sink.trust(call.pathKey);
  const total = meta.totalLines;
  // held as several contents, the lines are one stretch of the believed content
  const shown: LineStretch[] = [];
  for (const s of meta.shown) {
    const last = shown.at(-1);
    if (last !== undefined && last.end !== undefined && s.start === last.end + 1) {
      if (s.end === undefined) delete last.end;
      else last.end = s.end;
    } else shown.push({ ...s });
  }
  for (const s of shown) {
    add({ seq, start: s.start, end: s.end ?? TO_END, hash: meta.servedHash });
    trust = trustHolding(trust, call.pathKey, meta.servedHash, total, s, seq);
  }
  sink.setTrust(call.pathKey, trust);
  return true;
}

/**
 * The trust of a file after the model was shown lines `start..end` (`end`
 * omitted: to the end) of the content `hash` (`total` lines) other than by a
 * read: the whole file sets the full slot; a stretch, the range slot of
 * those lines (a stretch that happens to be the whole text but did not show
 * where it ends sets none).
 */
function trustHolding(
  trust: PathTrust | undefined,
  pathKey: string,
  hash: string,
  total: number,
  s: LineStretch,
  seq: number,
): PathTrust | undefined {
  if (s.start === 1 && s.end === undefined) return pathTrustAfterWrite(trust, hash, seq);
  const last = Math.min(s.end ?? total, total);
  if (s.start > last) return trust;
  const scopeKey = scopeKeyFor(s.start, last, total);
  if (scopeKey === FULL_SCOPE) return trust;
  return pathTrustAfterRead(trust, {
    v: 1,
    pathKey,
    scopeKey,
    servedHash: hash,
    mode: "full",
    totalLines: total,
    rangeStart: s.start,
    rangeEnd: last,
    bytes: 0,
  }, seq).trust;
}

/**
 * Applies lines a tool result showed (SPEC §5.10), checked against the file
 * when the result came back: they are the model's newest view of those
 * lines, under the file's identity and the name the command used, and set a
 * trust slot like a read of them.
 *
 * @example
 * ```ts ignore
 * applyShownEvent(sink, { pathKey: "/w/a.txt", name: "/w/a.txt", hash, totalLines: 13, start: 1 }, 4);
 * ```
 */
export function applyShownEvent(sink: ViewSink, shown: ToolShownV1, seq: number): void {
  const view: LineView = { seq, start: shown.start, end: shown.end ?? TO_END, hash: shown.hash };
  sink.addKeyView(shown.pathKey, view);
  sink.addNameView(shown.name, view);
  const stretch: LineStretch = shown.end === undefined
    ? { start: shown.start }
    : { start: shown.start, end: shown.end };
  sink.setTrust(
    shown.pathKey,
    trustHolding(
      sink.trust(shown.pathKey),
      shown.pathKey,
      shown.hash,
      shown.totalLines,
      stretch,
      seq,
    ),
  );
}

/**
 * A string key of a request (file, offset, limit), for a port that keys
 * requests the way {@linkcode ReplayCursor.shownScope} looks them up.
 *
 * @example
 * ```ts
 * import { requestKey } from "@readcache/core/replay";
 * requestKey("/w/a.ts", 5, 10); // "5:10:/w/a.ts"
 * ```
 */
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
 * import { replayBranch } from "@readcache/core/replay";
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
