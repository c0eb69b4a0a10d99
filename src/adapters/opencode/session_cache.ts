/**
 * What the OpenCode plugin keeps of one session between reads, so that a read
 * costs what changed since the previous one instead of the whole session:
 * the converted messages (`OpenCodeBranchConverter.convertMessage`), the
 * replay entries they make, and the `BranchKnowledge` replayed to them.
 *
 * **Which messages to fetch.** OpenCode (1.18.33) publishes every change to a
 * message or a part on its bus (`message.updated`, `message.part.updated`,
 * `message.removed`, `message.part.removed`, ...) and hands each event to the
 * plugins' `event` hook synchronously, after the change is written. The
 * cache records the messages events name ({@linkcode OpenCodeSessionCache.onEvent});
 * a read then fetches only the newest messages, back to the oldest one an event
 * named (`GET /session/{id}/message?limit=N`, older pages with the
 * `X-Next-Cursor` cursor), and rebuilds the branch from there on, reusing
 * every message before it. Events are trusted for a session only while they
 * are seen to arrive: the call being served must have had its part event
 * (OpenCode publishes the part as `running` before the tool runs). Anything
 * else falls back to fetching every message:
 *
 * - the first read of a session, or after an event the cache does not know;
 * - no part event for the call being served (a host without events);
 * - a pending revert (`session.revert`), or a call found in an old message;
 * - a fetched page that does not fit the cache: a message no event announced,
 *   one gone without a `message.removed`, a changed conversion of a message
 *   no event named (the session's events are then no longer trusted), or no
 *   paging where the newest page was not enough.
 *
 * **The same branch either way.** The branch is built message by message in
 * list order with the same conversion as `OpenCodeBranchConverter.convert`,
 * stopping at the message holding the call being served; a message is only
 * reused when its conversion cannot have changed. The knowledge is extended
 * with the entries appended since the last read (`BranchKnowledge.syncTip`)
 * only when every entry it replayed is still on the branch unchanged (a
 * pruned read, a revert, a message that gained a call since it was in
 * flight: replayed again from the latest compaction).
 *
 * Specified by SPEC.md §6.4 (a read costs what was appended since the last
 * one) for OpenCode; see docs/opencode-integration-notes.md.
 *
 * @module
 */
import { BranchKnowledge } from "../../core/knowledge.ts";
import type { ReplayEntry } from "../../core/replay.ts";
import type { OpenCodeClientLike } from "./plugin.ts";
import type { OpenCodeTipReader } from "./session_tip.ts";
import {
  isCompactionRequest,
  messagesBeforeRevert,
  type OpenCodeBranch,
  OpenCodeBranchConverter,
  type OpenCodeMessageLike,
  type OpenCodePartLike,
  type OpenCodeRevertLike,
} from "./branch.ts";

/**
 * An event as OpenCode's `event` hook gets it (`{type, properties}`).
 *
 * @example
 * ```ts
 * import type { OpenCodeEventLike } from "@readcache/core/opencode";
 * const e: OpenCodeEventLike = { type: "message.removed", properties: { sessionID: "s", messageID: "m" } };
 * ```
 */
export interface OpenCodeEventLike {
  /** `message.updated`, `message.part.updated`, `session.idle`, ... */
  type: string;
  /** Its payload. */
  properties?: unknown;
}

/**
 * One page of a session's messages, as {@linkcode OpenCodeSessionSource.page}
 * answers it.
 *
 * @example
 * ```ts
 * import type { OpenCodeMessagePage } from "@readcache/core/opencode";
 * const p: OpenCodeMessagePage = { messages: [], complete: true };
 * ```
 */
export interface OpenCodeMessagePage {
  /** The messages, oldest first. */
  messages: readonly OpenCodeMessageLike[];
  /** The cursor of the next older page, when there is one and the host gives it. */
  older?: string;
  /** True when these are all the session's messages (from its first on). */
  complete: boolean;
}

/**
 * Where a session's messages come from (the plugin wraps OpenCode's client).
 *
 * @example
 * ```ts
 * import type { OpenCodeSessionSource } from "@readcache/core/opencode";
 * const src: OpenCodeSessionSource = {
 *   all: () => Promise.resolve([]),
 *   page: () => Promise.resolve({ messages: [], complete: true }),
 *   revert: () => Promise.resolve(undefined),
 * };
 * ```
 */
export interface OpenCodeSessionSource {
  /** Every message, oldest first; `undefined` when they cannot be fetched. */
  all(): Promise<readonly OpenCodeMessageLike[] | undefined>;
  /** The newest `limit` messages older than the cursor `before`; `undefined`: no page. */
  page(limit: number, before?: string): Promise<OpenCodeMessagePage | undefined>;
  /** The session's pending revert point, if any. */
  revert(): Promise<OpenCodeRevertLike | undefined>;
  /**
   * The newest messages (ids and part ids suffice) and the revert point,
   * without waiting; `undefined` when this source cannot tell so (then
   * `page` and `revert` are asked).
   */
  check?(
    limit?: number,
  ): { page: OpenCodeMessagePage; revert: OpenCodeRevertLike | undefined } | undefined;
}

/**
 * How the session was brought up to date for a read.
 *
 * @example
 * ```ts
 * import type { OpenCodeSyncStats } from "@readcache/core/opencode";
 * const s: OpenCodeSyncStats = { full: 1, tail: 0, fetched: 10, converted: 10, replays: 1,
 *   fallbacks: { "first read": 1 } };
 * ```
 */
export interface OpenCodeSyncStats {
  /** Reads that fetched every message. */
  full: number;
  /** Reads that fetched the newest messages only. */
  tail: number;
  /** Reads brought up to date from OpenCode's events alone, without a fetch. */
  events?: number;
  /** Of those, reads whose check read OpenCode's database (the source's `check`). */
  databaseChecks?: number;
  /**
   * Reads left as OpenCode's own (no metadata) while a long session's
   * messages were fetched in the background after its first read.
   */
  background?: number;
  /** Messages fetched, in all. */
  fetched: number;
  /** Messages converted, in all. */
  converted: number;
  /** Times the knowledge was replayed from scratch (from the latest compaction). */
  replays: number;
  /** Why reads fetched every message, by reason. */
  fallbacks: Record<string, number>;
}

/** A message as the cache keeps it (no parts: its entries are in the flat array). */
interface CachedMessage {
  id: string;
  /** The fields of `info` the conversion reads. */
  infoKey: string;
  /** A user message with a `compaction` part. */
  compactionRequest: boolean;
  /** `info.time.created`: messages are listed by it, then by id. */
  created: number;
  /** Converted as not in flight: its entries are `flat[start, start + count)`. */
  settled: boolean;
  start: number;
  count: number;
  /** An assistant message the branch can end in: its call ids. */
  callIds?: string[];
}

/** Fewest messages a tail fetch asks for, and how many older ones it adds to check the fit. */
const MIN_PAGE = 8;
const SLACK = 2;
/** Largest page asked for when paging back. */
const MAX_PAGE = 1000;
/** Call ids with a part event kept (a bound; a read whose call fell out fetches everything). */
const MAX_LIVE_CALLS = 512;
/** A first read fetches every message itself up to this many; more are fetched in the background. */
const FIRST_PAGE = 200;
/** Messages per page of the background fetch. */
const WALK_PAGE = 250;
/** Calls with a check fetched when they started (a bound). */
const MAX_PREFETCHED = 16;
/** Settled messages whose whole content is kept from the events, newest first (a bound). */
const RAW_KEPT = 16;

/** A message whose every part came in OpenCode's events (or in a fetch no event interrupted). */
interface RawMessage {
  info: OpenCodeMessageLike["info"];
  /** Its parts by id, ascending (OpenCode lists them so). */
  parts: OpenCodePartLike[];
}

function createdOf(info: unknown): number {
  const t = record(record(info)?.time)?.created;
  return typeof t === "number" ? t : NaN;
}

/** Orders messages as OpenCode lists them: by creation time, then id. */
function before(a: { created: number; id: string }, b: { created: number; id: string }): boolean {
  return a.created < b.created || (a.created === b.created && a.id < b.id);
}

function record(v: unknown): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null ? v as Record<string, unknown> : undefined;
}

/** The fields of a message's `info` its conversion reads. */
function infoKey(info: unknown): string {
  const i = record(info) ?? {};
  const error = record(i.error);
  return `${i.role}|${i.parentID ?? ""}|${i.summary === true}|${i.finish ? 1 : 0}|` +
    (i.error ? `E${error?.name ?? ""}` : "");
}

/** An entry list without its links, to compare two conversions of a message. */
function sig(entries: readonly ReplayEntry[]): string {
  return JSON.stringify(entries.map(({ parentId: _, ...e }) => e));
}

/**
 * The cache of one session (see the module documentation). Keep one per
 * session; feed it the plugin's events with
 * {@linkcode OpenCodeSessionCache.onEvent}.
 *
 * @example
 * ```ts
 * import { OpenCodeSessionCache } from "@readcache/core/opencode";
 * const cache = new OpenCodeSessionCache();
 * const messages = [{ info: { id: "msg_1", role: "user" }, parts: [] }];
 * const synced = await cache.sync({
 *   all: () => Promise.resolve(messages),
 *   page: () => Promise.resolve(undefined),
 *   revert: () => Promise.resolve(undefined),
 * }, { directory: "/w" });
 * synced?.knowledge.snapshot().leafId; // "m:msg_1"
 * ```
 */
export class OpenCodeSessionCache {
  /** Converts this session's messages (its file resolutions are cached per part). */
  readonly converter: OpenCodeBranchConverter = new OpenCodeBranchConverter();
  /** Replayed to the branch of the last {@linkcode OpenCodeSessionCache.sync}, without overlay. */
  readonly knowledge: BranchKnowledge = new BranchKnowledge();
  /** How reads were served so far. */
  readonly stats: OpenCodeSyncStats = {
    full: 0,
    tail: 0,
    fetched: 0,
    converted: 0,
    replays: 0,
    events: 0,
    fallbacks: {},
  };

  #messages: CachedMessage[] = [];
  #index = new Map<string, number>();
  /** The entries of the settled messages, linked, in branch order. */
  #flat: ReplayEntry[] = [];
  /** First message index with each call id, among settled assistant messages. */
  #callIndex = new Map<string, number>();
  /** Index of the first message not settled (the one in flight, the ones after it). */
  #unsettledFrom = 0;
  /** The cached messages are the session's, up to the events recorded since. */
  #valid = false;

  /** Messages events named since the last fetch, and those removed. */
  #dirty = new Set<string>();
  #removed = new Set<string>();
  /** An event the cache cannot place: the next read fetches everything. */
  #stale = false;
  /** The session's events disagreed with what was fetched: never trusted again. */
  #untrusted = false;
  /** Call ids whose tool part had an event. */
  #liveCalls = new Set<string>();
  /** A fetch is under way: every `message.updated` counts as a change. */
  #fetching = false;
  /** A long session's messages are being fetched in the background (see `#startWalk`). */
  #walking = false;

  /** What the knowledge was last synced to: `flat[0, flatLen)`, then `tail` if set. */
  #synced: { flatLen: number; tail?: ReplayEntry; tailSig?: string } | undefined;
  /** First position of `#flat` changed since the last sync. */
  #firstChanged = Infinity;
  /** The branch's last entry when it is the head of the message in flight. */
  #head: ReplayEntry | undefined;
  /** Messages whose whole content the cache holds (see {@linkcode RawMessage}). */
  #raw = new Map<string, RawMessage>();
  /** Messages an event named whose whole content the cache does not hold. */
  #partial = new Set<string>();
  /** The session's revert point as of the last fetch and the events since; `false`: unknown. */
  #revert: OpenCodeRevertLike | undefined | false = false;
  /** `session.updated` events seen (a fetch of the revert point is stale when this moved). */
  #sessionEvents = 0;
  /** Checks fetched when a call started, by call id ({@linkcode OpenCodeSessionCache.prefetch}). */
  #prefetched = new Map<string, Promise<EventCheck | undefined>>();

  /**
   * Records one of OpenCode's events for this session (the caller routes
   * them by `sessionID`).
   */
  onEvent(event: OpenCodeEventLike): void {
    const p = record(event.properties) ?? {};
    switch (event.type) {
      case "message.updated": {
        const info = record(p.info);
        const id = info?.id;
        if (typeof id !== "string") return void (this.#stale = true);
        const at = this.#index.get(id);
        if (this.#fetching || at === undefined || this.#messages[at].infoKey !== infoKey(info)) {
          this.#dirty.add(id);
        }
        const raw = this.#raw.get(id);
        if (raw !== undefined) raw.info = structuredClone(info) as unknown as RawMessage["info"];
        else if (
          // a message created now, while the cache holds every message of the session: its
          // parts can only come after it, each in its own event
          at === undefined && this.#valid && !this.#fetching && !this.#partial.has(id)
        ) {
          this.#raw.set(id, {
            info: structuredClone(info) as unknown as RawMessage["info"],
            parts: [],
          });
        } else if (at === undefined || this.#fetching) this.#partial.add(id);
        return;
      }
      case "message.part.updated": {
        const part = record(p.part);
        if (typeof part?.messageID !== "string") return void (this.#stale = true);
        this.#dirty.add(part.messageID);
        const raw = this.#raw.get(part.messageID);
        if (raw === undefined || typeof part.id !== "string") this.#partial.add(part.messageID);
        else putPart(raw.parts, structuredClone(part) as unknown as OpenCodePartLike);
        if (part.type === "tool" && typeof part.callID === "string") {
          if (this.#liveCalls.size >= MAX_LIVE_CALLS) this.#liveCalls.clear();
          this.#liveCalls.add(part.callID);
        }
        return;
      }
      case "message.part.delta":
        // streamed text: no conversion reads it (the part itself came in its own event)
        if (typeof p.messageID !== "string") return void (this.#stale = true);
        this.#dirty.add(p.messageID);
        return;
      case "message.part.removed": {
        if (typeof p.messageID !== "string") return void (this.#stale = true);
        this.#dirty.add(p.messageID);
        const raw = this.#raw.get(p.messageID);
        const at = raw?.parts.findIndex((x) => x.id === p.partID) ?? -1;
        if (raw !== undefined && typeof p.partID === "string") {
          if (at >= 0) raw.parts.splice(at, 1);
        } else this.#partial.add(p.messageID);
        return;
      }
      case "message.removed":
        if (typeof p.messageID !== "string") return void (this.#stale = true);
        this.#removed.add(p.messageID);
        this.#raw.delete(p.messageID);
        return;
      case "session.updated": {
        // the revert point, set or cleared
        this.#sessionEvents++;
        const info = record(p.info);
        this.#revert = info === undefined ? false : revertOf(info);
        return;
      }
      default:
        // a message event this version does not know: it may have changed anything
        if (event.type.startsWith("message.")) this.#stale = true;
    }
  }

  /**
   * Brings the branch up to date with the session (see the module
   * documentation) and replays the knowledge to it: the branch ends at the
   * message holding `currentCallId` (its first entry), or after every message
   * before the revert point. The knowledge's overlay is cleared. `undefined`
   * when the session's messages cannot be fetched.
   */
  async sync(
    source: OpenCodeSessionSource,
    options: { directory: string; currentCallId?: string },
  ): Promise<{ current?: OpenCodeBranch["current"]; knowledge: BranchKnowledge } | undefined> {
    if (this.#walking) {
      this.stats.background = (this.stats.background ?? 0) + 1;
      return undefined;
    }
    const dirty = this.#dirty;
    const removed = this.#removed;
    const stale = this.#stale;
    this.#dirty = new Set();
    this.#removed = new Set();
    this.#stale = false;
    this.#fetching = true;
    // the events taken above are only accounted for once the cache is rebuilt from a fetch;
    // until then (a failed fetch, a throw) the next read fetches everything
    const valid = this.#valid;
    this.#valid = false;
    try {
      const call = options.currentCallId;
      let why = this.#synced === undefined
        ? "first read"
        : !valid
        ? "after a revert or a failed fetch"
        : this.#untrusted
        ? "events not trusted"
        : stale
        ? "unknown event"
        : call === undefined || !this.#liveCalls.has(call)
        ? "no event for the call"
        : undefined;
      // the events alone, when they brought the whole content of every message to convert
      const fromEvents = why === undefined && this.#revert === undefined
        ? this.#eventTail(dirty, removed)
        : undefined;
      const at0 = call === undefined ? undefined : this.#callIndex.get(call);
      const early = call === undefined ? undefined : this.#prefetched.get(call);
      if (call !== undefined) this.#prefetched.delete(call);
      // checked against the newest messages as they were when the call started (fetched then,
      // while OpenCode ran the tool), or now: no message the events did not bring
      const check = fromEvents === undefined || (at0 !== undefined && at0 < fromEvents.from)
        ? undefined
        : this.#checkNow(source) ?? await (early ?? startCheck(source));
      if (
        fromEvents !== undefined && check !== undefined && check.revert === undefined &&
        this.#verifies(check.page, dirty, removed)
      ) {
        this.stats.fetched += check.page.messages.length;
        const current = this.#apply(fromEvents.from, fromEvents.messages, options, dirty);
        if (current !== false) {
          this.#valid = true;
          this.stats.tail++;
          this.stats.events = (this.stats.events ?? 0) + 1;
          this.#keepRaw();
          return { current, knowledge: this.#syncKnowledge() };
        }
        why = "change without event";
        this.#untrusted = true; // a conversion changed that no event announced
      }
      const sessionEvents = this.#sessionEvents;
      const revertP = source.revert();
      revertP.catch(() => undefined); // awaited below; a page failing first must not orphan it
      // every message when the newest cannot do, fetched with the revert point
      let allP: Promise<readonly OpenCodeMessageLike[] | undefined> | undefined;
      if (why === "first read") {
        // a long session's first read: its messages are fetched in the background, page by
        // page, and this read and those until it is done stay OpenCode's own (no metadata:
        // unknown on replay), so that no read waits for the whole session; how long it is comes
        // from OpenCode's database where it can be read (then this read fetches nothing)
        const long = source.check?.(FIRST_PAGE + 1)?.page.complete === false;
        const first = long ? undefined : await source.page(FIRST_PAGE);
        if (first?.complete) allP = Promise.resolve(first.messages);
        else if (long || (first !== undefined && first.older !== undefined)) {
          this.#startWalk(source, first, options.directory);
          this.stats.background = (this.stats.background ?? 0) + 1;
          return undefined;
        }
      }
      allP ??= why === undefined ? undefined : source.all();
      allP?.catch(() => undefined);
      const tail = why === undefined ? await this.#fetchTail(source, dirty, removed) : undefined;
      if (why === undefined && tail === undefined) why = "pages do not fit";
      const revert = await revertP;
      // the point as fetched, unless an event changed it while the fetch ran
      this.#revert = this.#sessionEvents === sessionEvents ? revert : false;
      if (tail !== undefined && revert) why = "revert pending";
      // a call found in a message kept from before: the branch ends there, which only a full
      // conversion gets right (it converts nothing after that message)
      const at = call === undefined ? undefined : this.#callIndex.get(call);
      if (tail !== undefined && at !== undefined && at < tail.from) why = "call in an old message";
      if (tail !== undefined && why === undefined) {
        const current = this.#apply(tail.from, tail.messages, options, dirty);
        if (current !== false) {
          this.#valid = true;
          this.stats.tail++;
          this.stats.fetched += tail.messages.length;
          this.#keepRaw(tail.messages);
          return { current, knowledge: this.#syncKnowledge() };
        }
        why = "change without event";
        this.#untrusted = true; // a conversion changed that no event announced
      }
      const all = await (allP ?? source.all());
      if (all === undefined) return undefined;
      return this.#takeAll(all, revert, why!, options);
    } finally {
      this.#fetching = this.#walking;
    }
  }

  /**
   * Fetches the messages older than `first` page by page in the background
   * (letting OpenCode's own work run between pages), then the revert point,
   * and builds the cache from them as a full fetch would; the events since
   * the first read started are then the next read's to account for. A page
   * that fails leaves the cache as it was: the next read is a first read.
   */
  #startWalk(
    source: OpenCodeSessionSource,
    first: OpenCodeMessagePage | undefined,
    directory: string,
  ): void {
    this.#walking = true;
    const sessionEvents = this.#sessionEvents;
    const walk = async (): Promise<
      { messages: OpenCodeMessageLike[]; revert: OpenCodeRevertLike | undefined } | undefined
    > => {
      const pages = first === undefined ? [] : [first.messages];
      let before = first?.older;
      for (let newest = first === undefined; newest || before !== undefined; newest = false) {
        await new Promise((r) => setTimeout(r, 0));
        const page = await source.page(WALK_PAGE, before);
        if (page === undefined) return undefined;
        pages.push(page.messages);
        if (page.complete) break;
        if (page.older === undefined || page.messages.length === 0) return undefined;
        before = page.older;
      }
      const revert = await source.revert();
      return { messages: pages.reverse().flat(), revert };
    };
    const done = (r: Awaited<ReturnType<typeof walk>>): void => {
      this.#walking = false;
      this.#fetching = false;
      if (r === undefined) return;
      this.#revert = this.#sessionEvents === sessionEvents ? r.revert : false;
      this.#takeAll(r.messages, r.revert, "first read", { directory });
    };
    walk().then(done, () => done(undefined));
  }

  /**
   * Rebuilds the cache from every message of the session (fetched because
   * of `why`) and replays the knowledge to it.
   */
  #takeAll(
    all: readonly OpenCodeMessageLike[],
    revert: OpenCodeRevertLike | undefined,
    why: string,
    options: { directory: string; currentCallId?: string },
  ): { current?: OpenCodeBranch["current"]; knowledge: BranchKnowledge } {
    this.stats.full++;
    this.stats.fallbacks[why] = (this.stats.fallbacks[why] ?? 0) + 1;
    this.stats.fetched += all.length;
    const current = this.#apply(0, messagesBeforeRevert(all, revert), options, undefined) ||
      undefined;
    // the cache holds the session only without a revert point (the messages after it are
    // not converted); otherwise the next read fetches everything again
    this.#valid = !revert;
    this.#keepRaw(revert ? [] : all);
    return { current, knowledge: this.#syncKnowledge() };
  }

  /** The entries of the branch as last synced (a copy). */
  entries(): ReplayEntry[] {
    const synced = this.#synced;
    if (synced === undefined) return [];
    const out = this.#flat.slice(0, synced.flatLen);
    if (synced.tail !== undefined) out.push(synced.tail);
    return out;
  }

  /**
   * Starts fetching the newest messages and the revert point for the call
   * `callId` about to run (OpenCode's `tool.execute.before`), so that the
   * read it makes checks the events against them without waiting
   * ({@linkcode OpenCodeSessionCache.sync}). What the model holds for the
   * call was sent before the call started, so a page of that moment shows
   * every message it can hold.
   */
  prefetch(source: OpenCodeSessionSource, callId: string): void {
    if (this.#synced === undefined) return; // the first read fetches every message anyway
    if (this.#prefetched.size >= MAX_PREFETCHED) this.#prefetched.clear();
    this.#prefetched.set(callId, startCheck(source));
  }

  /** The source's check without waiting, counted; `undefined` when it has none. */
  #checkNow(source: OpenCodeSessionSource): EventCheck | undefined {
    const check = source.check?.();
    if (check !== undefined) this.stats.databaseChecks = (this.stats.databaseChecks ?? 0) + 1;
    return check;
  }

  /**
   * True when `page` (the newest messages) holds no message the cache and
   * the events do not know, in the cache's order, every cached message from
   * its first on is in it or removed by an event, and every message held
   * whole has each part the page shows of it.
   */
  #verifies(
    page: OpenCodeMessagePage,
    dirty: ReadonlySet<string>,
    removed: ReadonlySet<string>,
  ): boolean {
    const first = page.messages[0]?.info?.id;
    const from = page.complete ? 0 : first === undefined ? undefined : this.#index.get(first);
    if (from === undefined) return false;
    const known = new Set([...dirty, ...this.#raw.keys()]);
    if (!this.#fits(from, page.messages, this.#messages.length, known, removed)) return false;
    // a message held whole has every part it had then (later events may have added more)
    return page.messages.every((m) => {
      const raw = this.#raw.get(m.info.id);
      if (raw === undefined) return true;
      const held = new Set(raw.parts.map((p) => p.id));
      return m.parts.every((p) => held.has(p.id));
    });
  }

  /**
   * The messages to convert again, from the events alone: every message from
   * the oldest one not settled or named by an event on, and the new ones,
   * each held whole (`#raw`), the new ones after the others in OpenCode's
   * order. `undefined`: a fetch is needed.
   */
  #eventTail(
    dirty: ReadonlySet<string>,
    removed: ReadonlySet<string>,
  ): { from: number; messages: readonly OpenCodeMessageLike[] } | undefined {
    const cached = this.#messages;
    let need = this.#unsettledFrom;
    for (const id of [...dirty, ...removed]) {
      const at = this.#index.get(id);
      if (at !== undefined && at < need) need = at;
    }
    const messages: OpenCodeMessageLike[] = [];
    let last: { created: number; id: string } | undefined = need > 0 ? cached[need - 1] : undefined;
    for (let i = need; i < cached.length; i++) {
      if (removed.has(cached[i].id)) continue;
      const raw = this.#raw.get(cached[i].id);
      if (raw === undefined) return undefined;
      messages.push(raw);
      last = cached[i];
    }
    const added: RawMessage[] = [];
    for (const id of dirty) {
      if (this.#index.has(id) || removed.has(id)) continue;
      const raw = this.#raw.get(id);
      if (raw === undefined) return undefined;
      added.push(raw);
    }
    const keyOf = (m: RawMessage) => ({ created: createdOf(m.info), id: m.info.id });
    added.sort((a, b) => before(keyOf(a), keyOf(b)) ? -1 : 1);
    for (const m of added) {
      const k = keyOf(m);
      if (Number.isNaN(k.created) || (last !== undefined && !before(last, k))) return undefined;
      messages.push(m);
      last = k;
    }
    return { from: need, messages };
  }

  /**
   * After a sync: keeps whole the messages not settled and the newest
   * settled ones (later events may name them), taking those of `fetched`
   * that no event named while the fetch ran; drops the others.
   */
  #keepRaw(fetched: readonly OpenCodeMessageLike[] = []): void {
    const cached = this.#messages;
    const keepFrom = Math.max(0, Math.min(this.#unsettledFrom, cached.length) - RAW_KEPT);
    const raw = new Map<string, RawMessage>();
    const seeds = new Map(fetched.map((m) => [m.info.id, m] as const));
    for (let i = keepFrom; i < cached.length; i++) {
      const id = cached[i].id;
      const held = this.#raw.get(id);
      const seed = seeds.get(id);
      if (seed === undefined) {
        if (held !== undefined) raw.set(id, held);
      } else if (!this.#dirty.has(id) && !this.#removed.has(id)) {
        // as fetched, no event since: what the events held of it may have been partial
        raw.set(id, { info: seed.info, parts: [...seed.parts] });
      }
    }
    this.#raw = raw;
    // a message named while the fetch ran and not listed may have parts no event brought
    const partial = new Set<string>();
    for (const id of [...this.#partial, ...this.#dirty]) if (!this.#index.has(id)) partial.add(id);
    this.#partial = partial;
  }

  /**
   * The newest messages, back to the oldest one events named, checked
   * against the cache: `{from, messages}` replaces the cached messages from
   * index `from` on. `undefined`: fetch everything.
   */
  async #fetchTail(
    source: OpenCodeSessionSource,
    dirty: ReadonlySet<string>,
    removed: ReadonlySet<string>,
  ): Promise<{ from: number; messages: readonly OpenCodeMessageLike[] } | undefined> {
    const n = this.#messages.length;
    // every message not settled, and every one an event named, is fetched again
    let need = this.#unsettledFrom;
    for (const id of [...dirty, ...removed]) {
      const at = this.#index.get(id);
      if (at !== undefined && at < need) need = at;
    }
    const added = [...dirty].filter((id) => !this.#index.has(id) && !removed.has(id));
    let limit = Math.max(MIN_PAGE, n - need + added.length + SLACK);
    let messages: readonly OpenCodeMessageLike[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await source.page(limit, before);
      if (page === undefined) return undefined;
      messages = messages.length === 0 ? page.messages : [...page.messages, ...messages];
      if (page.complete) {
        return this.#fits(0, messages, n, dirty, removed) ? { from: 0, messages } : undefined;
      }
      const from = messages.length === 0 ? undefined : this.#index.get(messages[0].info.id);
      const ids = new Set(messages.map((m) => m?.info?.id));
      if (from !== undefined && from <= need && added.every((id) => ids.has(id))) {
        return this.#fits(from, messages, n, dirty, removed) ? { from, messages } : undefined;
      }
      if (page.older === undefined || page.messages.length === 0) return undefined;
      before = page.older;
      limit = Math.min(limit * 2, MAX_PAGE);
    }
  }

  /**
   * True when `messages` can replace the cached messages from `from` on: no
   * message twice, the cached ones in their order, a new one only where an
   * event announced it, a cached one missing only where an event removed it.
   */
  #fits(
    from: number,
    messages: readonly OpenCodeMessageLike[],
    n: number,
    dirty: ReadonlySet<string>,
    removed: ReadonlySet<string>,
  ): boolean {
    const seen = new Set<string>();
    let last = from - 1;
    for (const m of messages) {
      const id = m?.info?.id;
      if (typeof id !== "string" || seen.has(id) || !Array.isArray(m.parts)) return false;
      seen.add(id);
      const at = this.#index.get(id);
      if (at === undefined) {
        if (!dirty.has(id)) return false;
        continue;
      }
      if (at <= last) return false;
      last = at;
    }
    for (let i = from; i < n; i++) {
      const id = this.#messages[i].id;
      if (!seen.has(id) && !removed.has(id)) return false;
    }
    return true;
  }

  /**
   * Replaces the cached messages from index `from` on with `messages`,
   * converting them in order up to the message holding the current call.
   * `dirty` (a tail fetch): the messages events named; a message reused
   * from before that no event named must convert as before, else `false`.
   */
  #apply(
    from: number,
    messages: readonly OpenCodeMessageLike[],
    options: { directory: string; currentCallId?: string },
    dirty: ReadonlySet<string> | undefined,
  ): OpenCodeBranch["current"] | false {
    const { directory, currentCallId } = options;
    // everything from `from` on is replaced in place (the messages before it stay as they are)
    const kept = this.#messages;
    const replaced = kept.splice(from);
    const index = this.#index;
    const callIndex = this.#callIndex;
    for (const m of replaced) {
      index.delete(m.id);
      for (const c of m.callIds ?? []) if ((callIndex.get(c) ?? -1) >= from) callIndex.delete(c);
    }
    const startAt = from === 0 ? 0 : kept[from - 1].start + kept[from - 1].count;
    const flat = this.#flat;
    const oldTail = flat.splice(startAt);
    const oldById = new Map(replaced.map((m) => [m.id, m] as const));
    const requests = new Set(messages.filter(isCompactionRequest).map((m) => m.info.id));
    const isCompactionUser = (id: string): boolean => {
      if (requests.has(id)) return true;
      const at = index.get(id);
      return at !== undefined && at < from && kept[at].compactionRequest;
    };
    let parentId: string | null = startAt > 0 ? flat[startAt - 1].id : null;
    let current: OpenCodeBranch["current"];
    let head: ReplayEntry | undefined;
    let unsettledFrom = -1;
    let changed = false;
    for (let j = 0; j < messages.length; j++) {
      const m = messages[j];
      const id = m.info.id;
      const at = from + j;
      const cached: CachedMessage = {
        id,
        created: createdOf(m.info),
        infoKey: infoKey(m.info),
        compactionRequest: isCompactionRequest(m),
        settled: false,
        start: flat.length,
        count: 0,
      };
      kept.push(cached);
      index.set(id, at);
      if (unsettledFrom >= 0) continue; // after the message in flight: converted when settled
      const c = this.converter.convertMessage(m, { directory, currentCallId, isCompactionUser });
      this.stats.converted++;
      if (c.kind === "current") {
        head = { ...c.head, parentId };
        current = { messageId: c.messageId, callIds: c.callIds };
        unsettledFrom = at;
        continue;
      }
      const entries = c.kind === "entries" ? c.entries : [];
      const was = oldById.get(id);
      const before = was === undefined || !was.settled
        ? undefined
        : oldTail.slice(was.start - startAt, was.start - startAt + was.count);
      const same = before !== undefined && sig(before) === sig(entries);
      if (same && (before.length === 0 || before[0].parentId === parentId)) {
        flat.push(...before); // the same objects: the knowledge may have replayed them
      } else {
        // converted differently though no event named it (a new link alone is no change)
        if (dirty !== undefined && before !== undefined && !same && !dirty.has(id)) changed = true;
        for (const e of entries) {
          e.parentId = parentId;
          parentId = e.id;
        }
        flat.push(...entries);
      }
      if (flat.length > cached.start) parentId = flat[flat.length - 1].id;
      cached.settled = true;
      cached.count = flat.length - cached.start;
      if (c.kind === "entries" && c.callIds !== undefined) {
        cached.callIds = c.callIds;
        for (const call of c.callIds) if (!callIndex.has(call)) callIndex.set(call, at);
      }
    }
    if (changed) {
      // events missed a change: the cache may be wrong anywhere, the caller fetches everything
      this.#invalidate();
      return false;
    }
    // the first position where the entries differ from the ones replaced
    let p = 0;
    while (p < oldTail.length && startAt + p < flat.length && oldTail[p] === flat[startAt + p]) p++;
    if (p < oldTail.length || startAt + p < flat.length) {
      this.#firstChanged = Math.min(this.#firstChanged, startAt + p);
    }
    this.#unsettledFrom = unsettledFrom >= 0 ? unsettledFrom : kept.length;
    this.#head = head;
    return current;
  }

  #invalidate(): void {
    this.#messages = [];
    this.#index = new Map();
    this.#flat = [];
    this.#callIndex.clear();
    this.#unsettledFrom = 0;
    this.#valid = false;
    this.#firstChanged = 0;
    this.#head = undefined;
  }

  /** Replays the knowledge to the branch: extended when what it replayed is unchanged. */
  #syncKnowledge(): BranchKnowledge {
    const flat = this.#flat;
    const head = this.#head;
    const synced = this.#synced;
    const at = (i: number): ReplayEntry | undefined =>
      i < flat.length ? flat[i] : i === flat.length ? head : undefined;
    let extend = synced !== undefined && this.#firstChanged >= synced.flatLen;
    if (extend && synced!.tail !== undefined) {
      const now = at(synced!.flatLen);
      extend = now !== undefined && now.id === synced!.tail.id &&
        now.parentId === synced!.tail.parentId && sig([now]) === synced!.tailSig;
    }
    const k = this.knowledge;
    k.clearOverlay();
    const leaf = head ?? flat[flat.length - 1];
    if (extend && leaf !== undefined) {
      const from = Math.max(0, synced!.flatLen - 1);
      const byId = new Map<string, ReplayEntry>();
      for (let i = from; i < flat.length; i++) byId.set(flat[i].id, flat[i]);
      if (head !== undefined) byId.set(head.id, head);
      k.syncTip(leaf.id, (id) => byId.get(id));
    } else {
      k.reset();
      this.stats.replays++;
      k.sync(head === undefined ? flat : [...flat, head]);
    }
    this.#synced = head === undefined
      ? { flatLen: flat.length }
      : { flatLen: flat.length, tail: head, tailSig: sig([head]) };
    this.#firstChanged = Infinity;
    return k;
  }
}

/**
 * A session's messages through OpenCode's SDK client: `all` is
 * `session.messages`, `page` the same with `query.limit` (and `before`, the
 * `X-Next-Cursor` of the previous page), `revert` the session's
 * `revert` from `session.get`. A page shorter than asked for holds the
 * session's first message; one longer than asked for comes from a host that
 * does not page (every message).
 *
 * @example
 * ```ts
 * import { openCodeSessionSource } from "@readcache/core/opencode";
 * const src = openCodeSessionSource({ session: {
 *   messages: () => Promise.resolve({ data: [] }),
 *   get: () => Promise.resolve({ data: { id: "ses_1" } }),
 * } }, "ses_1");
 * await src.page(8); // { messages: [], older: undefined, complete: true }
 * ```
 */
export function openCodeSessionSource(
  client: OpenCodeClientLike,
  sessionID: string,
  tips?: OpenCodeTipReader,
): OpenCodeSessionSource {
  const path = { id: sessionID };
  return {
    check: (limit = MIN_PAGE) => {
      const tip = tips?.tip(sessionID, limit);
      return tip &&
        { page: { messages: tip.messages, complete: tip.complete }, revert: tip.revert };
    },
    all: async () => asMessages((await client.session.messages({ path })).data),
    page: async (limit, before) => {
      const r = await client.session.messages({
        path,
        query: before === undefined ? { limit } : { limit, before },
      });
      const messages = asMessages(r.data);
      if (messages === undefined || r.error !== undefined) return undefined;
      const older = r.response?.headers?.get("X-Next-Cursor") || undefined;
      const complete = messages.length !== limit ||
        (r.response !== undefined && older === undefined);
      return { messages, older, complete };
    },
    revert: async () => revertOf((await client.session.get({ path })).data),
  };
}

/** The newest messages and the revert point, to check the events against. */
interface EventCheck {
  page: OpenCodeMessagePage;
  revert: OpenCodeRevertLike | undefined;
}

/** Fetches an {@linkcode EventCheck}; `undefined` when either fetch fails. */
function startCheck(source: OpenCodeSessionSource): Promise<EventCheck | undefined> {
  return Promise.all([source.page(MIN_PAGE), source.revert()]).then(
    ([page, revert]) => page === undefined ? undefined : { page, revert },
    () => undefined,
  );
}

/** Puts a part in its place among `parts` (by id), replacing the one with its id. */
function putPart(parts: OpenCodePartLike[], part: OpenCodePartLike): void {
  let i = parts.length;
  while (i > 0 && parts[i - 1].id > part.id) i--;
  if (i > 0 && parts[i - 1].id === part.id) parts[i - 1] = part;
  else parts.splice(i, 0, part);
}

function asMessages(v: unknown): OpenCodeMessageLike[] | undefined {
  return Array.isArray(v) ? v as OpenCodeMessageLike[] : undefined;
}

function revertOf(session: unknown): OpenCodeRevertLike | undefined {
  const r = record(session)?.revert;
  return typeof record(r)?.messageID === "string" ? r as OpenCodeRevertLike : undefined;
}
