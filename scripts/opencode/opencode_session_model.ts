/**
 * An in-memory model of OpenCode's (1.18.33) session store, for running the
 * OpenCode plugin (src/adapters/opencode/plugin.ts) without the binary: the
 * scenario port (`deno task port:opencode`) and the oracle drive it.
 *
 * The types below are written here from the SDK's types
 * (`@opencode-ai/sdk@1.18.33`, `dist/v2/gen/types.gen.d.ts`), keeping the
 * fields the plugin and the model use; the SDK is not a dependency. What the
 * model does, and where it comes from (docs/opencode-integration-notes.md):
 *
 * - a session (`Session`) holds messages (`{info, parts}`), ids ascending in
 *   creation order, and an optional revert point (`Session.revert`);
 * - a user message (`UserMessage`) holds a `text` part; an assistant message
 *   (`AssistantMessage`, `parentID` = the user message it answers) holds a
 *   `step-start` part and `tool` parts (`ToolPart`) whose state
 *   (`ToolState`) goes `pending` → `running` → `completed` (`input`,
 *   `output`, `title`, `metadata`, `time`) or `error`; it gets `finish` when
 *   its step ends;
 * - compaction (`/summarize`) is a user message with a `compaction` part
 *   (`CompactionPart`) followed by an assistant message with `summary: true`,
 *   mode `compaction` and `finish`, answering it;
 * - revert (`POST /session/{id}/revert`) sets `session.revert = {messageID}`;
 *   the next prompt deletes the messages from `messageID` on and clears it;
 *   unrevert clears it without deleting;
 * - fork (`POST /session/{id}/fork`) is a new session holding copies of the
 *   messages before `messageID` (new message and part ids, the same call ids
 *   and states, a summary's `parentID` remapped);
 * - pruning (`compaction.prune`) sets a completed tool part's
 *   `state.time.compacted`;
 * - a new assistant message ends the previous step: a tool part still
 *   `pending` or `running` there becomes `error` (`Tool execution aborted`),
 *   as OpenCode leaves a call that never returned.
 *
 * `client` answers `session.messages` and `session.get` like the SDK client
 * (`{data}`), with copies, as the plugin's `OpenCodeClientLike` expects.
 * `session.messages` pages like OpenCode 1.18.33's `GET /session/{id}/message`
 * (`MessageV2.page`): with `query.limit` it answers the newest `limit`
 * messages, oldest first, and, when older ones remain, an opaque cursor in the
 * response's `X-Next-Cursor` header that `query.before` takes for the next
 * older page; without `limit`, every message.
 *
 * Every change is also published, synchronously, to the listeners of
 * `subscribe` as OpenCode publishes it on its bus (and hands it to the
 * plugins' `event` hook): `message.updated` (`{sessionID, info}`),
 * `message.part.updated` (`{sessionID, part, time}`), `message.removed`
 * (`{sessionID, messageID}`), `message.part.removed` (`{sessionID,
 * messageID, partID}`), `session.created` / `session.updated` (`{sessionID,
 * info}`) and `session.compacted` (`{sessionID}`); like OpenCode, a new step
 * also republishes the user message it answers. The payloads are copies.
 *
 * @module
 */
import type { OpenCodeClientLike } from "../../src/adapters/opencode/plugin.ts";

/**
 * A tool part's state (the SDK's `ToolState`: `ToolStatePending`,
 * `ToolStateRunning`, `ToolStateCompleted`, `ToolStateError`).
 *
 * @example
 * ```ts
 * import type { ModelToolState } from "./opencode_session_model.ts";
 * const s: ModelToolState = { status: "running", input: { filePath: "/w/a" }, time: { start: 1 } };
 * ```
 */
export type ModelToolState =
  | { status: "pending"; input: Record<string, unknown>; raw: string }
  | {
    status: "running";
    input: Record<string, unknown>;
    title?: string;
    metadata?: Record<string, unknown>;
    time: { start: number };
  }
  | {
    status: "completed";
    input: Record<string, unknown>;
    output: string;
    title: string;
    metadata: Record<string, unknown>;
    time: { start: number; end: number; compacted?: number };
  }
  | {
    status: "error";
    input: Record<string, unknown>;
    error: string;
    metadata?: Record<string, unknown>;
    time: { start: number; end: number };
  };

/**
 * A message part (a subset of the SDK's `Part` union: `TextPart`,
 * `StepStartPart`, `ToolPart`, `CompactionPart`, `PatchPart`).
 *
 * @example
 * ```ts
 * import type { ModelPart } from "./opencode_session_model.ts";
 * const p: ModelPart = { id: "prt_1", sessionID: "ses_1", messageID: "msg_1", type: "text", text: "hi" };
 * ```
 */
export type ModelPart =
  | { id: string; sessionID: string; messageID: string; type: "text"; text: string }
  | { id: string; sessionID: string; messageID: string; type: "step-start" }
  | {
    id: string;
    sessionID: string;
    messageID: string;
    type: "tool";
    callID: string;
    tool: string;
    state: ModelToolState;
  }
  | { id: string; sessionID: string; messageID: string; type: "compaction"; auto: boolean }
  | {
    id: string;
    sessionID: string;
    messageID: string;
    type: "patch";
    hash: string;
    files: string[];
  };

/** A tool part of the model. */
export type ModelToolPart = Extract<ModelPart, { type: "tool" }>;

/**
 * A message's `info` (the fields of the SDK's `UserMessage` and
 * `AssistantMessage` the model keeps).
 *
 * @example
 * ```ts
 * import type { ModelMessageInfo } from "./opencode_session_model.ts";
 * const i: ModelMessageInfo = { id: "msg_1", sessionID: "ses_1", role: "user", time: { created: 1 } };
 * ```
 */
export interface ModelMessageInfo {
  /** Message id, ascending in creation order. */
  id: string;
  /** Its session. */
  sessionID: string;
  /** `user` or `assistant`. */
  role: "user" | "assistant";
  /** Creation (and, for an assistant message, completion) time. */
  time: { created: number; completed?: number };
  /** Assistant: the user message it answers. */
  parentID?: string;
  /** Assistant: `build`, or `compaction` for a summary. */
  mode?: string;
  /** Assistant: `true` on a compaction summary. */
  summary?: boolean;
  /** Assistant: why its step ended. */
  finish?: string;
  /** Assistant: the error it ended with. */
  error?: { name: string; data: { message: string } };
}

/**
 * A message with its parts, as `GET /session/{id}/message` returns it.
 *
 * @example
 * ```ts
 * import type { ModelMessage } from "./opencode_session_model.ts";
 * const m: ModelMessage = { info: { id: "msg_1", sessionID: "s", role: "user", time: { created: 1 } }, parts: [] };
 * ```
 */
export interface ModelMessage {
  /** The message. */
  info: ModelMessageInfo;
  /** Its parts, in order. */
  parts: ModelPart[];
}

/**
 * A session (the fields of the SDK's `Session` the model keeps).
 *
 * @example
 * ```ts
 * import type { ModelSession } from "./opencode_session_model.ts";
 * const s: ModelSession = { id: "ses_1", directory: "/w", messages: [] };
 * ```
 */
export interface ModelSession {
  /** Session id. */
  id: string;
  /** The project directory. */
  directory: string;
  /** The session it was forked from. */
  parentID?: string;
  /** The revert point: messages from `messageID` on are gone at the next prompt. */
  revert?: { messageID: string; partID?: string };
  /** Messages, oldest first. */
  messages: ModelMessage[];
}

/**
 * OpenCode's session store, in memory: sessions, messages, parts and the
 * session operations the scenarios use (see the module documentation).
 *
 * @example
 * ```ts
 * import { OpenCodeSessionStore } from "./opencode_session_model.ts";
 * const store = new OpenCodeSessionStore("/w");
 * const s = store.createSession();
 * store.userMessage(s.id, "hello");
 * const a = store.assistantMessage(s.id);
 * const p = store.toolPart(a.info.id, "read", { filePath: "/w/a.txt" });
 * store.complete(p, "<path>/w/a.txt</path>...", { truncated: false });
 * ```
 */
export class OpenCodeSessionStore {
  readonly #sessions = new Map<string, ModelSession>();
  readonly #listeners = new Set<(event: ModelEvent) => void>();
  readonly #wire: "clone" | "json";
  #counter = 0;
  #clock = 1_700_000_000_000;

  /**
   * `directory`: the project directory sessions belong to. `options.wire`:
   * how `client` copies what it answers: `clone` (default, `structuredClone`)
   * or `json` (serialised and parsed, as the SDK gets it over HTTP).
   */
  constructor(readonly directory: string, options: { wire?: "clone" | "json" } = {}) {
    this.#wire = options.wire ?? "clone";
  }

  #id(prefix: string): string {
    return `${prefix}_${String(++this.#counter).padStart(8, "0")}`;
  }

  /** A fresh id (`msg`, `prt`, `call`), ascending like the store's own. */
  newId(prefix: string): string {
    return this.#id(prefix);
  }

  /**
   * Calls `listener` with every change from now on, synchronously, as
   * OpenCode hands its bus events to a plugin's `event` hook; returns the
   * function that stops it.
   */
  subscribe(listener: (event: ModelEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  #publish(type: string, properties: Record<string, unknown>): void {
    if (this.#listeners.size === 0) return;
    const event: ModelEvent = { type, properties: structuredClone(properties) };
    for (const listener of [...this.#listeners]) listener(event);
  }

  #messageUpdated(m: ModelMessage): void {
    this.#publish("message.updated", { sessionID: m.info.sessionID, info: m.info });
  }

  #partUpdated(p: ModelPart): void {
    this.#publish("message.part.updated", { sessionID: p.sessionID, part: p, time: this.#clock });
  }

  #sessionUpdated(s: ModelSession): void {
    const info: Record<string, unknown> = { id: s.id, directory: s.directory };
    if (s.parentID !== undefined) info.parentID = s.parentID;
    if (s.revert !== undefined) info.revert = { ...s.revert };
    this.#publish("session.updated", { sessionID: s.id, info });
  }

  #copy<T>(value: T): T {
    return this.#wire === "json" ? JSON.parse(JSON.stringify(value)) : structuredClone(value);
  }

  #now(): number {
    return ++this.#clock;
  }

  /** A session by id; throws when there is none. */
  session(id: string): ModelSession {
    const s = this.#sessions.get(id);
    if (s === undefined) throw new Error(`no session ${id}`);
    return s;
  }

  /** A message by id, in any session; throws when there is none. */
  message(id: string): ModelMessage {
    for (const s of this.#sessions.values()) {
      const m = s.messages.find((x) => x.info.id === id);
      if (m !== undefined) return m;
    }
    throw new Error(`no message ${id}`);
  }

  /** A new, empty session. */
  createSession(): ModelSession {
    const s: ModelSession = { id: this.#id("ses"), directory: this.directory, messages: [] };
    this.#sessions.set(s.id, s);
    this.#publish("session.created", {
      sessionID: s.id,
      info: { id: s.id, directory: s.directory },
    });
    return s;
  }

  /**
   * What OpenCode does before a prompt runs: a pending revert deletes the
   * messages from its point on (with `partID`, that message's parts from it
   * on) and is cleared.
   */
  #cleanupRevert(s: ModelSession): void {
    const r = s.revert;
    if (r === undefined) return;
    const at = s.messages.findIndex((m) => m.info.id === r.messageID);
    if (at >= 0) {
      let removed: ModelMessage[];
      if (r.partID === undefined) removed = s.messages.splice(at);
      else {
        const m = s.messages[at];
        const cut = m.parts.findIndex((p) => p.id === r.partID);
        if (cut >= 0) {
          for (const p of m.parts.splice(cut)) {
            this.#publish("message.part.removed", {
              sessionID: s.id,
              messageID: m.info.id,
              partID: p.id,
            });
          }
        }
        removed = s.messages.splice(at + 1);
      }
      for (const m of removed) {
        this.#publish("message.removed", { sessionID: s.id, messageID: m.info.id });
      }
    }
    s.revert = undefined;
    this.#sessionUpdated(s);
  }

  /** Ends the previous step: calls that never returned become errors. */
  #endSteps(s: ModelSession): void {
    for (const m of s.messages) {
      if (m.info.role !== "assistant") continue;
      for (const p of m.parts) {
        if (p.type !== "tool") continue;
        if (p.state.status === "pending" || p.state.status === "running") {
          const start = p.state.status === "running" ? p.state.time.start : this.#now();
          p.state = {
            status: "error",
            input: p.state.input,
            error: "Tool execution aborted",
            time: { start, end: this.#now() },
          };
          this.#partUpdated(p);
        }
      }
      if (m.info.finish === undefined || m.info.time.completed === undefined) {
        m.info.finish ??= "tool-calls";
        m.info.time.completed ??= this.#now();
        this.#messageUpdated(m);
      }
    }
  }

  /** A user prompt: cleans a pending revert up, ends the previous step, appends the message. */
  userMessage(sessionID: string, text: string): ModelMessage {
    const s = this.session(sessionID);
    this.#cleanupRevert(s);
    this.#endSteps(s);
    const id = this.#id("msg");
    const m: ModelMessage = {
      info: { id, sessionID, role: "user", time: { created: this.#now() } },
      parts: [{ id: this.#id("prt"), sessionID, messageID: id, type: "text", text }],
    };
    s.messages.push(m);
    this.#messageUpdated(m);
    this.#partUpdated(m.parts[0]);
    return m;
  }

  /** The latest user message of the session (the one an assistant message answers). */
  #lastUser(s: ModelSession): ModelMessage | undefined {
    return s.messages.findLast((m) => m.info.role === "user");
  }

  /**
   * A new assistant message (one step of the agent loop) answering the
   * latest user message; a prompt is made first when there is none or a
   * revert is pending (OpenCode continues only from a prompt).
   */
  assistantMessage(sessionID: string): ModelMessage {
    const s = this.session(sessionID);
    if (s.revert !== undefined || this.#lastUser(s) === undefined) {
      this.userMessage(sessionID, "continue");
    }
    this.#endSteps(s);
    const id = this.#id("msg");
    const m: ModelMessage = {
      info: {
        id,
        sessionID,
        role: "assistant",
        time: { created: this.#now() },
        parentID: this.#lastUser(s)!.info.id,
        mode: "build",
      },
      parts: [{ id: this.#id("prt"), sessionID, messageID: id, type: "step-start" }],
    };
    s.messages.push(m);
    this.#messageUpdated(m);
    // OpenCode republishes the user message a step answers (its summary) at every step
    this.#messageUpdated(this.message(m.info.parentID!));
    this.#partUpdated(m.parts[0]);
    return m;
  }

  /** A tool call of an assistant message: a `pending` tool part (a fresh call id). */
  toolPart(messageID: string, tool: string, input: Record<string, unknown>): ModelToolPart {
    const m = this.message(messageID);
    const p: ModelToolPart = {
      id: this.#id("prt"),
      sessionID: m.info.sessionID,
      messageID,
      type: "tool",
      callID: this.#id("call"),
      tool,
      state: { status: "pending", input, raw: JSON.stringify(input) },
    };
    m.parts.push(p);
    this.#partUpdated(p);
    return p;
  }

  /** The tool starts running. */
  run(part: ModelToolPart): void {
    part.state = { status: "running", input: part.state.input, time: { start: this.#now() } };
    this.#partUpdated(part);
  }

  /** The tool returned: the part is `completed` with its output and metadata. */
  complete(part: ModelToolPart, output: string, metadata: unknown, title = ""): void {
    const start = part.state.status === "running" ? part.state.time.start : this.#now();
    part.state = {
      status: "completed",
      input: part.state.input,
      output,
      title,
      metadata: typeof metadata === "object" && metadata !== null
        ? structuredClone(metadata) as Record<string, unknown>
        : {},
      time: { start, end: this.#now() },
    };
    this.#partUpdated(part);
  }

  /** The tool failed: the part is `error` with its message. */
  fail(part: ModelToolPart, error: string): void {
    const start = part.state.status === "running" ? part.state.time.start : this.#now();
    part.state = {
      status: "error",
      input: part.state.input,
      error,
      time: { start, end: this.#now() },
    };
    this.#partUpdated(part);
  }

  /**
   * `/summarize`: a user message with a `compaction` part, then a finished
   * assistant summary (`summary: true`, mode `compaction`) answering it.
   */
  compact(sessionID: string): void {
    const user = this.userMessage(sessionID, "");
    for (const p of user.parts) {
      this.#publish("message.part.removed", { sessionID, messageID: user.info.id, partID: p.id });
    }
    user.parts = [{
      id: this.#id("prt"),
      sessionID,
      messageID: user.info.id,
      type: "compaction",
      auto: false,
    }];
    this.#partUpdated(user.parts[0]);
    const id = this.#id("msg");
    const now = this.#now();
    const summary: ModelMessage = {
      info: {
        id,
        sessionID,
        role: "assistant",
        time: { created: now, completed: this.#now() },
        parentID: user.info.id,
        mode: "compaction",
        summary: true,
        finish: "stop",
      },
      parts: [{ id: this.#id("prt"), sessionID, messageID: id, type: "text", text: "summary" }],
    };
    this.session(sessionID).messages.push(summary);
    this.#messageUpdated(summary);
    this.#partUpdated(summary.parts[0]);
    this.#publish("session.compacted", { sessionID });
  }

  /**
   * `session.revert`: everything from `messageID` on (with `partID`, the
   * later messages and that message's parts from `partID` on) leaves the
   * model's context.
   */
  revert(sessionID: string, messageID: string, partID?: string): void {
    const s = this.session(sessionID);
    s.revert = partID === undefined ? { messageID } : { messageID, partID };
    this.#sessionUpdated(s);
  }

  /**
   * An assistant message ends with an error (`MessageAbortedError` when the
   * user stopped it, `APIError`, ...): OpenCode leaves it out of the model's
   * context unless it was aborted after producing something.
   */
  failMessage(messageID: string, name: string): void {
    const m = this.message(messageID);
    m.info.error = { name, data: { message: name } };
    m.info.time.completed ??= this.#now();
    this.#messageUpdated(m);
  }

  /** `session.unrevert`: the pending revert is dropped, nothing deleted. */
  unrevert(sessionID: string): void {
    const s = this.session(sessionID);
    s.revert = undefined;
    this.#sessionUpdated(s);
  }

  /**
   * `session.fork`: a new session with copies of the messages before
   * `messageID` (all when absent): new ids, the same call ids and states.
   */
  fork(sessionID: string, messageID?: string): ModelSession {
    const from = this.session(sessionID);
    const at = messageID === undefined
      ? from.messages.length
      : from.messages.findIndex((m) => m.info.id === messageID);
    const to = this.createSession();
    to.parentID = from.id;
    const ids = new Map<string, string>();
    for (const m of from.messages.slice(0, at < 0 ? from.messages.length : at)) {
      const id = this.#id("msg");
      ids.set(m.info.id, id);
      const info: ModelMessageInfo = { ...structuredClone(m.info), id, sessionID: to.id };
      if (info.parentID !== undefined) info.parentID = ids.get(info.parentID) ?? info.parentID;
      const copy: ModelMessage = {
        info,
        parts: m.parts.map((p) => ({
          ...structuredClone(p),
          id: this.#id("prt"),
          sessionID: to.id,
          messageID: id,
        })),
      };
      to.messages.push(copy);
      this.#messageUpdated(copy);
      for (const p of copy.parts) this.#partUpdated(p);
    }
    return to;
  }

  /** `compaction.prune`: the output of a completed tool part is cleared for the model. */
  prune(part: ModelToolPart): void {
    if (part.state.status === "completed") {
      part.state.time.compacted = this.#now();
      this.#partUpdated(part);
    }
  }

  /**
   * The SDK client the plugin calls (`session.messages`, `session.get`),
   * answering copies; `session.messages` pages as described above.
   */
  readonly client: OpenCodeClientLike = {
    session: {
      messages: ({ path, query }) => {
        const all = this.session(path.id).messages;
        if (query?.limit === undefined || query.limit === 0) {
          return Promise.resolve({ data: this.#copy(all) });
        }
        // newest first from the cursor's message (exclusive), `limit` of them, answered oldest
        // first; the cursor names the oldest message answered (OpenCode: its id and time)
        let end = all.length;
        if (query.before !== undefined) {
          const id = decodeCursor(query.before);
          if (id === undefined) return Promise.resolve({ error: { name: "BadRequest" } });
          end = all.findIndex((m) => m.info.id === id);
          if (end < 0) end = all.findIndex((m) => m.info.id > id);
          if (end < 0) end = all.length;
        }
        const start = Math.max(0, end - query.limit);
        const page = all.slice(start, end);
        const headers = new Headers();
        if (start > 0 && page.length > 0) {
          headers.set("X-Next-Cursor", encodeCursor(page[0].info.id));
        }
        return Promise.resolve({ data: this.#copy(page), response: { headers } });
      },
      get: ({ path }) => {
        const s = this.session(path.id);
        const data: Record<string, unknown> = { id: s.id, directory: s.directory };
        if (s.parentID !== undefined) data.parentID = s.parentID;
        if (s.revert !== undefined) data.revert = { ...s.revert };
        return Promise.resolve({ data });
      },
    },
  };
}

/**
 * An event the store publishes (OpenCode's bus event as a plugin's `event`
 * hook gets it: `{type, properties}`).
 *
 * @example
 * ```ts
 * import type { ModelEvent } from "./opencode_session_model.ts";
 * const e: ModelEvent = { type: "message.removed", properties: { sessionID: "s", messageID: "m" } };
 * ```
 */
export interface ModelEvent {
  /** `message.updated`, `message.part.updated`, ... */
  type: string;
  /** Its payload. */
  properties: Record<string, unknown>;
}

function encodeCursor(id: string): string {
  return btoa(JSON.stringify({ id }));
}

function decodeCursor(cursor: string): string | undefined {
  try {
    const v = JSON.parse(atob(cursor)) as { id?: unknown };
    return typeof v.id === "string" ? v.id : undefined;
  } catch {
    return undefined;
  }
}
