/**
 * Maps an OpenCode session (the messages `client.session.messages` returns,
 * oldest first, each with its parts) onto the replay entry model, so that the
 * core derives what the model holds exactly as it does for pi (SPEC §5, §6).
 * Pure but for resolving paths on disk (realpath).
 *
 * The branch is the message list up to the session's revert point. OpenCode
 * (1.18.33) builds the model's context from it like this, and the mapping
 * follows it:
 *
 * - **Barrier** (SPEC §6.1): the latest finished compaction summary (an
 *   assistant message with `summary`, `finish` and no `error`, whose parent is
 *   a user message with a `compaction` part) becomes a `compaction` entry.
 *   OpenCode may keep a tail of older messages verbatim after the summary
 *   (`tail_start_id`); like pi's `firstKeptEntryId`, it earns no trust.
 * - **Dropped messages**: an assistant message with an `error` is left out of
 *   the model's context by OpenCode (unless it was aborted after producing
 *   something), so it is left out here too, tool results and all.
 * - **Turns** (SPEC §5.8): each user and assistant message starts one (an
 *   `other` entry; an assistant message lists its `write`, `edit` and
 *   `apply_patch` calls as `changes`); its tool parts follow in part order,
 *   which is the order the model sees their results in.
 * - **Reads**: a completed `read` part is a `read` event with
 *   `state.metadata.readcache` and the call resolved from `state.input`
 *   (`filePath`, `offset`, `limit`); a pruned one (`state.time.compacted`: the
 *   model now sees `[Old tool result content cleared]`) a read without
 *   metadata, so its file's lines count as unknown (SPEC §5.5). A failed read
 *   is another tool result. A file the user attached (a `file` part with a
 *   `file://` URL, whose text OpenCode puts in the user message) is a read
 *   without metadata too.
 * - **Writes** (SPEC §5.8): a completed `write` part whose content is proof
 *   (see `openCodeWriteProof`) is a `wrote` event; any other finished
 *   `write`, and every finished `edit` and `apply_patch` part (one event per
 *   file), is a `changed` event; a completed `edit` carries the model's
 *   belief in `state.metadata.readcache` (SPEC §5.9, worked out by the plugin
 *   before the edit ran), anything else leaves its file unknown until read
 *   again. A `patch`
 *   part (files OpenCode's snapshot saw change during the step, e.g. through
 *   `bash`) makes each file no call of that message targets unknown too.
 * - **Refresh**: a completed `readcache_refresh` part (the plugin's tool)
 *   with `state.metadata.readcache` is an invalidation (SPEC §5.3, §11.2).
 * - **In flight**: the message that holds the current call (`currentCallId`)
 *   ends the branch after its own `other` entry; the results of its calls are
 *   the in-flight overlay (SPEC §6.3), which the adapter keeps itself, so the
 *   order the calls finish in never moves an anchor. Parts of earlier messages
 *   still pending or running never got a result (SPEC §5.8).
 *
 * Specified by SPEC.md §5.5, §5.6, §5.8, §5.9, §6.1, §11.3 (for OpenCode:
 * docs/opencode-integration-notes.md).
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { type HostCall, messageEntry, resultEntries } from "../../core/host_calls.ts";
import type { FileChange, ReadCall, ReplayEntry } from "../../core/replay.ts";
import { pathKeyOnDisk } from "../../shell/read_service.ts";
import {
  OPENCODE_FILE_TOOLS,
  openCodeChangedFiles,
  openCodeReadCall,
  openCodeToolClass,
  openCodeWriteProof,
} from "./calls.ts";

export type { FileChange, ReadCall, ReplayEntry };

/**
 * The fields of an OpenCode message's `info` the mapping reads (the SDK's
 * `UserMessage` and `AssistantMessage` fit it).
 *
 * @example
 * ```ts
 * import type { OpenCodeMessageInfoLike } from "@readcache/core/opencode";
 * const info: OpenCodeMessageInfoLike = { id: "msg_1", role: "user" };
 * ```
 */
export interface OpenCodeMessageInfoLike {
  /** Message id (ascending in creation order). */
  id: string;
  /** `user` or `assistant`. */
  role: string;
  /** For an assistant message: the user message it answers. */
  parentID?: string;
  /** For an assistant message: `true` on a compaction summary. */
  summary?: unknown;
  /** For an assistant message: why it finished (absent while it runs). */
  finish?: string;
  /** For an assistant message: the error it ended with. */
  error?: { name?: string } | null;
}

/**
 * The state of a tool part (the SDK's `ToolState`).
 *
 * @example
 * ```ts
 * import type { OpenCodeToolStateLike } from "@readcache/core/opencode";
 * const s: OpenCodeToolStateLike = { status: "running", input: { filePath: "/w/a.ts" } };
 * ```
 */
export interface OpenCodeToolStateLike {
  /** `pending`, `running`, `completed` or `error`. */
  status: string;
  /** The call's arguments. */
  input?: unknown;
  /** The result's text (completed). */
  output?: string;
  /** The result's metadata (completed; the adapter adds `readcache`). */
  metadata?: unknown;
  /** Timing; `compacted` is set when OpenCode pruned the output. */
  time?: { compacted?: number };
}

/**
 * The fields of an OpenCode message part the mapping reads (the SDK's `Part`
 * union fits it).
 *
 * @example
 * ```ts
 * import type { OpenCodePartLike } from "@readcache/core/opencode";
 * const p: OpenCodePartLike = { id: "prt_1", type: "tool", tool: "read", callID: "call_1",
 *   state: { status: "completed", input: { filePath: "/w/a.ts" }, output: "...", metadata: {} } };
 * ```
 */
export interface OpenCodePartLike {
  /** Part id (ascending in creation order). */
  id: string;
  /** `text`, `tool`, `file`, `patch`, `compaction`, `step-start`, ... */
  type: string;
  /** For a tool part: the tool's id. */
  tool?: string;
  /** For a tool part: the tool call id. */
  callID?: string;
  /** For a tool part: its state. */
  state?: OpenCodeToolStateLike;
  /** For a `patch` part: the files that changed during the step. */
  files?: unknown;
  /** For a `file` part: its URL (`file://...` for a file on disk). */
  url?: string;
}

/**
 * One message with its parts, as `client.session.messages` returns it.
 *
 * @example
 * ```ts
 * import type { OpenCodeMessageLike } from "@readcache/core/opencode";
 * const m: OpenCodeMessageLike = { info: { id: "msg_1", role: "user" }, parts: [] };
 * ```
 */
export interface OpenCodeMessageLike {
  /** The message. */
  info: OpenCodeMessageInfoLike;
  /** Its parts, in order. */
  parts: readonly OpenCodePartLike[];
}

/**
 * A session's revert point (`session.revert`): everything from this message
 * (from this part of it, when `partID` is set) on is gone from the branch.
 *
 * @example
 * ```ts
 * import type { OpenCodeRevertLike } from "@readcache/core/opencode";
 * const r: OpenCodeRevertLike = { messageID: "msg_7" };
 * ```
 */
export interface OpenCodeRevertLike {
  /** First message reverted (or the message whose later parts are). */
  messageID: string;
  /** First part reverted within that message. */
  partID?: string;
}

/**
 * Options of {@linkcode openCodeBranchToReplay}.
 *
 * @example
 * ```ts
 * import type { OpenCodeBranchOptions } from "@readcache/core/opencode";
 * const o: OpenCodeBranchOptions = { directory: "/w", currentCallId: "call_9" };
 * ```
 */
export interface OpenCodeBranchOptions {
  /** The instance directory OpenCode resolves relative paths against. */
  directory: string;
  /** The session's revert point, if any. */
  revert?: OpenCodeRevertLike | null;
  /** The tool call being served: its message ends the branch (its calls are in flight). */
  currentCallId?: string;
}

/**
 * A converted branch.
 *
 * @example
 * ```ts
 * import type { OpenCodeBranch } from "@readcache/core/opencode";
 * const b: OpenCodeBranch = { entries: [] };
 * ```
 */
export interface OpenCodeBranch {
  /** Replay entries, root to leaf (a linear chain). */
  entries: ReplayEntry[];
  /** The message holding `currentCallId`, when found: its id and its tool calls in part order. */
  current?: { messageId: string; callIds: string[] };
}

function record(v: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null ? v as Record<string, unknown> : {};
}

/**
 * The messages on the branch: those before the revert point, and the parts of
 * the revert message before `partID` (what OpenCode keeps when it cleans the
 * revert up).
 *
 * @example
 * ```ts
 * import { messagesBeforeRevert } from "@readcache/core/opencode";
 * const ms = [{ info: { id: "a", role: "user" }, parts: [] }, { info: { id: "b", role: "user" }, parts: [] }];
 * messagesBeforeRevert(ms, { messageID: "b" }).length; // 1
 * ```
 */
export function messagesBeforeRevert(
  messages: readonly OpenCodeMessageLike[],
  revert: OpenCodeRevertLike | null | undefined,
): readonly OpenCodeMessageLike[] {
  if (!revert) return messages;
  const at = messages.findIndex((m) => m.info.id === revert.messageID);
  if (at < 0) return messages;
  if (revert.partID === undefined) return messages.slice(0, at);
  const m = messages[at];
  const cut = m.parts.findIndex((p) => p.id === revert.partID);
  return [...messages.slice(0, at), cut < 0 ? m : { info: m.info, parts: m.parts.slice(0, cut) }];
}

/**
 * True when OpenCode leaves an assistant message out of the model's context:
 * it ended with an error, unless it was aborted after producing something
 * other than a step start or reasoning.
 *
 * @example
 * ```ts
 * import { droppedFromContext } from "@readcache/core/opencode";
 * droppedFromContext({ info: { id: "m", role: "assistant", error: { name: "APIError" } }, parts: [] }); // true
 * ```
 */
export function droppedFromContext(message: OpenCodeMessageLike): boolean {
  const error = message.info.error;
  if (message.info.role !== "assistant" || !error) return false;
  return !(error.name === "MessageAbortedError" &&
    message.parts.some((p) => p.type !== "step-start" && p.type !== "reasoning"));
}

/**
 * True for a finished compaction summary: an assistant message with
 * `summary`, `finish` and no `error` answering a user message on the branch
 * that carries a `compaction` part.
 */
function isCompactionSummary(
  message: OpenCodeMessageLike,
  isCompactionUser: (id: string) => boolean,
): boolean {
  const i = message.info;
  return i.role === "assistant" && i.summary === true && !!i.finish && !i.error &&
    i.parentID !== undefined && isCompactionUser(i.parentID);
}

function fileUrlPath(url: string | undefined): string | undefined {
  if (url === undefined || !url.startsWith("file://")) return undefined;
  try {
    const u = new URL(url);
    u.search = "";
    u.hash = "";
    return fileURLToPath(u);
  } catch {
    return undefined;
  }
}

/**
 * What one message contributes to the branch (see
 * {@linkcode OpenCodeBranchConverter.convertMessage}): nothing (a message
 * OpenCode leaves out of the model's context), its entries (unlinked:
 * `parentId` is `null` until the branch links them), or, for the message
 * holding the call being served, its first entry only (the branch ends
 * there).
 *
 * @example
 * ```ts
 * import type { OpenCodeMessageConversion } from "@readcache/core/opencode";
 * const c: OpenCodeMessageConversion = { kind: "entries",
 *   entries: [{ id: "m:msg_1", parentId: null, kind: "other" }] };
 * ```
 */
export type OpenCodeMessageConversion =
  | { kind: "none" }
  | {
    kind: "entries";
    entries: ReplayEntry[];
    /** For an assistant message the branch can end in: its tool call ids, in part order. */
    callIds?: string[];
  }
  | { kind: "current"; head: ReplayEntry; messageId: string; callIds: string[] };

/**
 * Options of {@linkcode OpenCodeBranchConverter.convertMessage}.
 *
 * @example
 * ```ts
 * import type { OpenCodeMessageOptions } from "@readcache/core/opencode";
 * const o: OpenCodeMessageOptions = { directory: "/w", isCompactionUser: () => false };
 * ```
 */
export interface OpenCodeMessageOptions {
  /** The instance directory OpenCode resolves relative paths against. */
  directory: string;
  /** The tool call being served: its message ends the branch. */
  currentCallId?: string;
  /** True when the message with this id is on the branch before this one, a user message with a `compaction` part. */
  isCompactionUser(messageId: string): boolean;
}

/**
 * True when a user message holds a `compaction` part (the request a
 * compaction summary answers).
 *
 * @example
 * ```ts
 * import { isCompactionRequest } from "@readcache/core/opencode";
 * isCompactionRequest({ info: { id: "u", role: "user" }, parts: [{ id: "p", type: "compaction" }] }); // true
 * ```
 */
export function isCompactionRequest(message: OpenCodeMessageLike): boolean {
  return message.info.role === "user" && message.parts.some((p) => p.type === "compaction");
}

/**
 * Converts OpenCode sessions into replay entries, caching the resolution of
 * each tool part's files by part id and status (SPEC §5.6: a call is resolved
 * once per process, when its result is first seen). Keep one per session.
 *
 * @example
 * ```ts
 * import { OpenCodeBranchConverter } from "@readcache/core/opencode";
 * const convert = new OpenCodeBranchConverter();
 * convert.convert([{ info: { id: "msg_1", role: "user" }, parts: [] }], { directory: "/w" }).entries;
 * // [{ id: "m:msg_1", parentId: null, kind: "other" }]
 * ```
 */
export class OpenCodeBranchConverter {
  readonly #calls = new Map<string, ReadCall[]>();

  /** Converts the messages of one session (oldest first) into its branch. */
  convert(
    messages: readonly OpenCodeMessageLike[],
    options: OpenCodeBranchOptions,
  ): OpenCodeBranch {
    const { directory, currentCallId } = options;
    const visible = messagesBeforeRevert(messages, options.revert);
    const compactionUsers = new Set(visible.filter(isCompactionRequest).map((m) => m.info.id));
    const isCompactionUser = (id: string) => compactionUsers.has(id);
    const entries: ReplayEntry[] = [];
    let parentId: string | null = null;
    const push = (e: ReplayEntry): void => {
      e.parentId = parentId;
      parentId = e.id;
      entries.push(e);
    };
    for (const message of visible) {
      const c = this.convertMessage(message, { directory, currentCallId, isCompactionUser });
      if (c.kind === "current") {
        push(c.head);
        return { entries, current: { messageId: c.messageId, callIds: c.callIds } };
      }
      if (c.kind === "entries") { for (const e of c.entries) push(e); }
    }
    return { entries };
  }

  /**
   * What one message of the branch contributes (the mapping of the module
   * documentation), its entries unlinked (`parentId: null`). A message is
   * converted the same way whatever comes after it, so a branch can be built
   * from messages converted at different times; the resolution of its files
   * is cached like in {@linkcode OpenCodeBranchConverter.convert}.
   */
  convertMessage(
    message: OpenCodeMessageLike,
    options: OpenCodeMessageOptions,
  ): OpenCodeMessageConversion {
    const { directory } = options;
    const { info, parts } = message;
    const mid = `m:${info.id}`;
    const cached = (key: string, make: () => ReadCall[]): ReadCall[] => {
      let calls = this.#calls.get(key);
      if (calls === undefined) this.#calls.set(key, calls = make());
      return calls;
    };
    if (info.role === "user") {
      const entries: ReplayEntry[] = [{ id: mid, parentId: null, kind: "other" }];
      for (const p of parts) {
        const path = p.type === "file" ? fileUrlPath(p.url) : undefined;
        if (path === undefined) continue;
        // the user attached the file: the model saw some text of it we did not serve
        const [call] = cached(`${p.id}|file`, () => [{ name: path, pathKey: pathKeyOnDisk(path) }]);
        entries.push({ id: `p:${p.id}`, parentId: null, kind: "read", meta: undefined, call });
      }
      return { kind: "entries", entries };
    }
    if (info.role !== "assistant") return { kind: "none" };
    if (isCompactionSummary(message, options.isCompactionUser)) {
      return { kind: "entries", entries: [{ id: mid, parentId: null, kind: "compaction" }] };
    }
    if (droppedFromContext(message)) return { kind: "none" };

    const tools = parts.filter((p) => p.type === "tool" && typeof p.callID === "string");
    const targetsOf = (p: OpenCodePartLike): ReadCall[] =>
      cached(
        `${p.id}|${p.state?.status}`,
        () =>
          openCodeChangedFiles(
            p.tool ?? "",
            p.state?.input,
            directory,
            p.state?.status === "completed" ? p.state.metadata : undefined,
          ),
      );
    const targeted = new Set<string>();
    const head = messageEntry(
      mid,
      null,
      tools.map((p) => {
        const call = hostCallOf(p, targetsOf);
        for (const t of call.targets ?? []) targeted.add(t.name).add(t.pathKey);
        return call;
      }),
    );
    const callIds = tools.map((p) => p.callID!);
    if (
      options.currentCallId !== undefined &&
      tools.some((p) => p.callID === options.currentCallId)
    ) {
      return { kind: "current", head, messageId: info.id, callIds };
    }

    const entries: ReplayEntry[] = [head];
    const push = (e: ReplayEntry): void => void entries.push(e);
    for (const p of tools) this.#toolResult(p, directory, push, targetsOf, cached);
    // files the step's snapshot saw change that no call of this message targets (e.g. bash)
    for (const p of parts) {
      if (p.type !== "patch" || !Array.isArray(p.files)) continue;
      p.files.forEach((file, k) => {
        if (typeof file !== "string" || file === "") return;
        const [call] = cached(`${p.id}#${k}`, () => {
          const name = fileUrlPath(file) ??
            (file.startsWith("/") ? file : `${directory}/${file}`);
          return [{ name, pathKey: pathKeyOnDisk(name) }];
        });
        if (targeted.has(call.name) || targeted.has(call.pathKey)) return;
        push({ id: `p:${p.id}#${k}`, parentId: null, kind: "changed", call });
      });
    }
    return { kind: "entries", entries, callIds };
  }

  /** The entries of one finished tool part of a message that is no longer in flight. */
  #toolResult(
    p: OpenCodePartLike,
    directory: string,
    push: (e: ReplayEntry) => void,
    targetsOf: (p: OpenCodePartLike) => ReadCall[],
    cached: (key: string, make: () => ReadCall[]) => ReadCall[],
  ): void {
    const state = p.state;
    const status = state?.status;
    // a call that never got a result: the core leaves its file unknown from its turn's start
    if (status !== "completed" && status !== "error") return;
    const ok = status === "completed";
    const callId = p.callID!;
    const id = `p:${p.id}`;
    const pruned = ok && state?.time?.compacted !== undefined;
    const tool = p.tool ?? "";
    const meta = ok ? record(state?.metadata).readcache : undefined;
    const call = hostCallOf(p, targetsOf);
    const result = { id, parentId: null, callId, tool, call, ok };
    if (call.role === "read") {
      const [read] = ok
        ? cached(`${p.id}|read`, () => {
          const c = openCodeReadCall(state?.input, directory);
          return c === undefined ? [] : [c];
        })
        : [];
      // a pruned read is no longer in context: unknown lines, never trust (SPEC §5.5)
      const m = pruned ? undefined : meta;
      const rid = pruned && (read !== undefined || m !== undefined) ? `${id}~pruned` : id;
      for (const e of resultEntries({ ...result, id: rid, read, meta: m })) push(e);
      return;
    }
    if (tool === "readcache_refresh" && meta !== undefined) {
      // the plugin's refresh (SPEC §11.2): its invalidation, even when OpenCode pruned the output
      push({ id: `${id}~refresh`, parentId: null, kind: "invalidate", data: meta });
    }
    if (call.role === "change") {
      // a completed write of well-formed content is proof (SPEC §5.8); a completed edit carries
      // the model's belief (SPEC §5.9: replay checks it); any other finished change (a failed or
      // pruned edit, a pruned or failed write, a patch) leaves its files unknown
      const proof = tool === "write" && !pruned
        ? openCodeWriteProof(state?.input, directory)
        : undefined;
      const belief = tool === "edit" && !pruned ? meta : undefined;
      for (const e of resultEntries({ ...result, proof, meta: belief })) push(e);
      return;
    }
    // what a checked tool showed or changed (SPEC §5.10): the record the plugin added when it
    // returned (a failed call has none: every file then counts as changed)
    for (const e of resultEntries({ ...result, meta })) push(e);
  }
}

/** An OpenCode tool part as a call of its message (SPEC §5.10, §11.8). */
function hostCallOf(
  p: OpenCodePartLike,
  targetsOf: (p: OpenCodePartLike) => ReadCall[],
): HostCall {
  const id = p.callID!;
  const tool = p.tool ?? "";
  if (tool === "read") return { id, role: "read" };
  // OpenCode's edits are each a belief of their own (no chain of edits, SPEC §5.9 rule 4)
  if (OPENCODE_FILE_TOOLS.has(tool)) return { id, role: "change", targets: targetsOf(p) };
  const cls = openCodeToolClass(tool);
  if (cls === "followed") return { id, role: "followed" };
  if (cls === "viewing") return { id, role: "search" };
  return tool === "bash"
    ? { id, role: "shell", command: (p.state?.input as { command?: unknown } | undefined)?.command }
    : { id, role: "opaque" };
}

/**
 * Converts an OpenCode session's messages (oldest first) into replay entries
 * (see the module documentation for the mapping), without a cache.
 *
 * @example
 * ```ts
 * import { openCodeBranchToReplay } from "@readcache/core/opencode";
 * const b = openCodeBranchToReplay([
 *   { info: { id: "u1", role: "user" }, parts: [{ id: "p0", type: "compaction" }] },
 *   { info: { id: "a1", role: "assistant", parentID: "u1", summary: true, finish: "stop" }, parts: [] },
 * ], { directory: "/w" });
 * b.entries.map((e) => e.kind); // ["other", "compaction"]
 * ```
 */
export function openCodeBranchToReplay(
  messages: readonly OpenCodeMessageLike[],
  options: OpenCodeBranchOptions,
): OpenCodeBranch {
  return new OpenCodeBranchConverter().convert(messages, options);
}
