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
import {
  isCompactionRequest,
  messagesBeforeRevert,
  type OpenCodeBranch,
  OpenCodeBranchConverter,
  type OpenCodeMessageLike,
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

  /** What the knowledge was last synced to: `flat[0, flatLen)`, then `tail` if set. */
  #synced: { flatLen: number; tail?: ReplayEntry; tailSig?: string } | undefined;
  /** First position of `#flat` changed since the last sync. */
  #firstChanged = Infinity;
  /** The branch's last entry when it is the head of the message in flight. */
  #head: ReplayEntry | undefined;

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
        return;
      }
      case "message.part.updated": {
        const part = record(p.part);
        if (typeof part?.messageID !== "string") return void (this.#stale = true);
        this.#dirty.add(part.messageID);
        if (part.type === "tool" && typeof part.callID === "string") {
          if (this.#liveCalls.size >= MAX_LIVE_CALLS) this.#liveCalls.clear();
          this.#liveCalls.add(part.callID);
        }
        return;
      }
      case "message.part.delta":
      case "message.part.removed":
        if (typeof p.messageID !== "string") return void (this.#stale = true);
        this.#dirty.add(p.messageID);
        return;
      case "message.removed":
        if (typeof p.messageID !== "string") return void (this.#stale = true);
        this.#removed.add(p.messageID);
        return;
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
      const revertP = source.revert();
      revertP.catch(() => undefined); // awaited below; a page failing first must not orphan it
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
      // every message when the newest cannot do, fetched with the revert point
      const allP = why === undefined ? undefined : source.all();
      allP?.catch(() => undefined);
      const tail = why === undefined ? await this.#fetchTail(source, dirty, removed) : undefined;
      if (why === undefined && tail === undefined) why = "pages do not fit";
      const revert = await revertP;
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
          return { current, knowledge: this.#syncKnowledge() };
        }
        why = "change without event";
        this.#untrusted = true; // a conversion changed that no event announced
      }
      const all = await (allP ?? source.all());
      if (all === undefined) return undefined;
      this.stats.full++;
      this.stats.fallbacks[why!] = (this.stats.fallbacks[why!] ?? 0) + 1;
      this.stats.fetched += all.length;
      const visible = messagesBeforeRevert(all, revert);
      const current = this.#apply(0, visible, options, undefined) || undefined;
      // the cache holds the session only without a revert point (the messages after it are
      // not converted); otherwise the next read fetches everything again
      this.#valid = !revert;
      return { current, knowledge: this.#syncKnowledge() };
    } finally {
      this.#fetching = false;
    }
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
): OpenCodeSessionSource {
  const path = { id: sessionID };
  return {
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

function asMessages(v: unknown): OpenCodeMessageLike[] | undefined {
  return Array.isArray(v) ? v as OpenCodeMessageLike[] : undefined;
}

function revertOf(session: unknown): OpenCodeRevertLike | undefined {
  const r = record(session)?.revert;
  return typeof record(r)?.messageID === "string" ? r as OpenCodeRevertLike : undefined;
}
