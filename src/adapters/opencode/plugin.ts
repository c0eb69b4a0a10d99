/**
 * The OpenCode plugin: context-safe read caching for OpenCode's own `read`
 * tool, backed by `@readcache/core`. Tested with OpenCode 1.18.33.
 *
 * Load it through `load.ts` (`"plugin": ["file:///path/to/checkout/src/adapters/opencode/load.ts"]`
 * in `opencode.json`), which imports only `node:` modules and reports a
 * failed import of this file (no `npm install`) instead of OpenCode's silent
 * skip; or from a file in `.opencode/plugin/` that re-exports it:
 *
 * ```ts ignore
 * // .opencode/plugin/readcache.ts
 * export { default } from "/path/to/checkout/src/adapters/opencode/load.ts";
 * ```
 *
 * OpenCode's `read` runs as always (permissions, directories, images,
 * instruction files); the plugin's `tool.execute.after` hook then reads the
 * file once more, checks that its own rendering of OpenCode's output
 * (`renderOpenCodeRead`) is byte-identical to what OpenCode produced, derives
 * what the model holds by replaying the session's messages
 * (`client.session.messages`, SPEC §6, mapped by `OpenCodeBranchConverter`),
 * and asks the core for the decision (SPEC §7). A first read keeps OpenCode's
 * text; a repeated one becomes `[readcache: unchanged, N lines]`, a range
 * marker or a unified diff (SPEC §8). Either way `metadata.readcache` (SPEC
 * §5.1) is added to OpenCode's own metadata; OpenCode stores it with the part,
 * and replay reads it back. Anything unexpected (a rendering that differs, a
 * session that cannot be fetched, CRLF files, shortened lines) leaves
 * OpenCode's output as it is and records the read as unknown content: the
 * plugin fails open.
 *
 * Set `OPENCODE_READCACHE=off` to load nothing. Bases are stored under
 * `<project>/.opencode/readcache/` (SPEC §9, §13.4).
 *
 * Specified by SPEC.md §11 for pi; the OpenCode mapping is described in
 * docs/opencode-integration-notes.md.
 *
 * @module
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { env } from "node:process";
import { z } from "zod";
import {
  type DecisionConfig,
  type DecisionReason,
  DEFAULT_DECISION_CONFIG,
  planRead,
} from "../../core/decision.ts";
import type {
  BranchKnowledge,
  FileKnowledge,
  InFlightRead,
  PendingEdit,
} from "../../core/knowledge.ts";
import type {
  ModeCounts,
  ReplayBoundary,
  ReplaySnapshot,
  ReplayState,
  ReplayStateGroup,
  TurnChange,
} from "../../core/replay.ts";
import type { PathTrust, ScopeTrust, TrustState } from "../../core/trust.ts";
import type { LineView } from "../../core/view.ts";
import {
  type ReadCacheInvalidationV1,
  type ReadCacheMetaV1,
  type ReadMode,
  withReadcacheMeta,
} from "../../core/meta.ts";
import { invalidationRecord } from "../../core/refresh.ts";
import {
  MemoryObjectStore,
  type ObjectStore,
  type StoreProblem,
  type StoreStats,
} from "../../core/object_store.ts";
import type { ScopeKey } from "../../core/scope.ts";
import type { TruncationResult } from "../../core/truncate.ts";
import type { LineStretch, ReadCacheEditMetaV1 } from "../../core/meta.ts";
import {
  decideWithStores,
  isInsideProject,
  planEdit,
  readRegularFileSync,
  refreshScope,
  writeInFlight,
} from "../../shell/read_service.ts";
import { FsObjectStore } from "../../store/fs_object_store.ts";
import { cacheableView, coreRequest, openCodeAnswerText, scopeMatchesView } from "./answer.ts";
import { decodeOpenCodeText, renderOpenCodeRead } from "./baseline.ts";
import type { OpenCodeBranch } from "./branch.ts";
import {
  type OpenCodeEventLike,
  OpenCodeSessionCache,
  openCodeSessionSource,
} from "./session_cache.ts";
import { type OpenCodeTipReader, openCodeTipReader } from "./session_tip.ts";
import {
  openCodeFileTarget,
  openCodeReadCall,
  openCodeReadPath,
  openCodeToolClass,
} from "./calls.ts";
import { toolCallSnapshot, toolResultMeta } from "../../shell/tool_result.ts";
import type { CallSnapshot } from "../../shell/call_snapshot.ts";

export * from "./answer.ts";
export * from "./baseline.ts";
export * from "./branch.ts";
export * from "./calls.ts";
export * from "./session_cache.ts";
export * from "./session_tip.ts";
export type {
  BranchKnowledge,
  DecisionConfig,
  DecisionReason,
  FileKnowledge,
  InFlightRead,
  LineStretch,
  LineView,
  ModeCounts,
  ObjectStore,
  PathTrust,
  PendingEdit,
  ReadCacheEditMetaV1,
  ReadMode,
  ReplayBoundary,
  ReplaySnapshot,
  ReplayState,
  ReplayStateGroup,
  ScopeKey,
  ScopeTrust,
  StoreProblem,
  StoreStats,
  TruncationResult,
  TrustState,
  TurnChange,
};

/**
 * The part of OpenCode's SDK client (`PluginInput.client`) the plugin uses.
 *
 * @example
 * ```ts
 * import type { OpenCodeClientLike } from "@readcache/core/opencode";
 * const client: OpenCodeClientLike = { session: {
 *   messages: () => Promise.resolve({ data: [] }),
 *   get: () => Promise.resolve({ data: { id: "ses_1" } }),
 * } };
 * ```
 */
export interface OpenCodeClientLike {
  /** Session endpoints. */
  session: {
    /**
     * The messages of a session with their parts, oldest first: every one, or
     * with `query.limit` the newest `limit` (before the cursor `query.before`),
     * the cursor for the next older page in the response's `X-Next-Cursor`
     * header (OpenCode 1.18.33's `GET /session/{id}/message`).
     */
    messages(options: {
      path: { id: string };
      query?: { limit?: number; before?: string };
    }): Promise<{ data?: unknown; error?: unknown; response?: OpenCodeResponseLike }>;
    /** The session itself (its `revert` point). */
    get(options: { path: { id: string } }): Promise<{ data?: unknown }>;
  };
}

/**
 * The part of the SDK's `Response` the plugin reads (the paging cursor).
 *
 * @example
 * ```ts
 * import type { OpenCodeResponseLike } from "@readcache/core/opencode";
 * const r: OpenCodeResponseLike = { headers: new Headers({ "X-Next-Cursor": "abc" }) };
 * ```
 */
export interface OpenCodeResponseLike {
  /** Response headers. */
  headers: { get(name: string): string | null };
}

/**
 * The part of OpenCode's `PluginInput` the plugin uses.
 *
 * @example
 * ```ts
 * import type { OpenCodePluginInputLike } from "@readcache/core/opencode";
 * const input: OpenCodePluginInputLike = { directory: "/w", client: { session: {
 *   messages: () => Promise.resolve({ data: [] }), get: () => Promise.resolve({ data: {} }),
 * } } };
 * ```
 */
export interface OpenCodePluginInputLike {
  /** The SDK client of the running OpenCode server. */
  client: OpenCodeClientLike;
  /** The instance directory (relative tool paths resolve against it). */
  directory: string;
}

/**
 * The input of OpenCode's `tool.execute.after` hook.
 *
 * @example
 * ```ts
 * import type { ToolAfterInput } from "@readcache/core/opencode";
 * const i: ToolAfterInput = { tool: "read", sessionID: "ses_1", callID: "call_1",
 *   args: { filePath: "/w/a.ts" } };
 * ```
 */
export interface ToolAfterInput {
  /** The tool's id. */
  tool: string;
  /** The session. */
  sessionID: string;
  /** The tool call id. */
  callID: string;
  /** The call's arguments, as the model sent them. */
  args: unknown;
}

/**
 * The output of OpenCode's `tool.execute.after` hook: the tool's result,
 * which the hook may change before OpenCode stores it and sends it on.
 *
 * @example
 * ```ts
 * import type { ToolAfterOutput } from "@readcache/core/opencode";
 * const o: ToolAfterOutput = { title: "a.ts", output: "...", metadata: { truncated: false } };
 * ```
 */
export interface ToolAfterOutput {
  /** Title shown in the UI. */
  title: string;
  /** The text the model gets. */
  output: string;
  /** Stored with the part; never sent to the model. */
  metadata: unknown;
}

/**
 * A tool a plugin adds (OpenCode's `ToolDefinition`: zod `args`, an `execute`
 * that returns the text for the model, or it with a title and metadata that
 * OpenCode stores with the part).
 *
 * @example
 * ```ts
 * import type { OpenCodeToolLike } from "@readcache/core/opencode";
 * const t: OpenCodeToolLike = { description: "d", args: {}, execute: () => Promise.resolve("ok") };
 * ```
 */
export interface OpenCodeToolLike {
  /** What the model is told the tool does. */
  description: string;
  /** Its parameters, as zod schemas by name. */
  args: Record<string, unknown>;
  /** Runs it; `context` is OpenCode's `ToolContext` (its `sessionID` and `messageID` are used). */
  execute(
    args: Record<string, unknown>,
    context: { sessionID: string; messageID: string; callID?: string },
  ): Promise<string | { title?: string; output: string; metadata?: Record<string, unknown> }>;
}

/**
 * What `readcache_refresh` tells the model it does.
 *
 * @example
 * ```ts
 * import { REFRESH_DESCRIPTION } from "@readcache/core/opencode";
 * REFRESH_DESCRIPTION.includes("read"); // true
 * ```
 */
export const REFRESH_DESCRIPTION: string =
  "Forget what the read cache knows you were shown of a file (or of a line range of it, as a " +
  "read with that offset and limit showed it): the next read of those lines returns their full " +
  "content instead of an '[readcache: unchanged ...]' note or a diff. Use it when you no longer " +
  "trust your earlier view of the file.";

/**
 * The hooks the plugin returns (a subset of OpenCode's `Hooks`).
 *
 * @example
 * ```ts
 * import type { ReadcacheHooks } from "@readcache/core/opencode";
 * const hooks: ReadcacheHooks = {};
 * ```
 */
export interface ReadcacheHooks {
  /** Before a tool runs: works out the model's belief of an `edit` (SPEC §5.9). */
  "tool.execute.before"?: (
    input: { tool: string; sessionID: string; callID: string },
    output: { args: unknown },
  ) => Promise<void>;
  /** After a tool ran: caches `read` results, records the belief of an `edit`. */
  "tool.execute.after"?: (input: ToolAfterInput, output: ToolAfterOutput) => Promise<void>;
  /** Tools the plugin adds: `readcache_refresh` (SPEC §11.2, §11.8). */
  tool?: Record<string, OpenCodeToolLike>;
  /**
   * Every event of OpenCode's bus, as it happens: the messages and parts that
   * changed, so that a read fetches only those (see `OpenCodeSessionCache`).
   */
  event?: (input: { event: OpenCodeEventLike }) => Promise<void>;
  /** Before tools are sent to the model: explains the markers in `read`'s description. */
  "tool.definition"?: (
    input: { toolID: string },
    output: { description: string; parameters: unknown },
  ) => Promise<void>;
}

/**
 * Options of {@linkcode createReadcachePlugin}.
 *
 * @example
 * ```ts
 * import type { ReadcachePluginOptions } from "@readcache/core/opencode";
 * const o: ReadcachePluginOptions = { config: { maxDiffFileLines: 5000 } };
 * ```
 */
export interface ReadcachePluginOptions {
  /** Decision tunables (diff limits, sensitive file patterns, size cap). */
  config?: Partial<DecisionConfig>;
  /** Object store for a project directory; default `<directory>/.opencode/readcache`. */
  storeFor?: (directory: string) => ObjectStore;
  /**
   * The cache kept for a session between reads (default a new
   * `OpenCodeSessionCache`; a test passes its own to watch its `stats`).
   */
  sessionCache?: (sessionID: string) => OpenCodeSessionCache;
  /**
   * OpenCode's database, which the plugin reads (never writes) to check the
   * events it followed against the session's newest messages at each read
   * (default: the one OpenCode uses, `openCodeDatabaseFile()`); `false`: check
   * through OpenCode's HTTP API only.
   */
  database?: string | false;
}

/**
 * What the model is told about cached answers (appended to `read`'s
 * description by the `tool.definition` hook).
 *
 * @example
 * ```ts
 * import { READ_DESCRIPTION_NOTE } from "@readcache/core/opencode";
 * READ_DESCRIPTION_NOTE.includes("bypass_cache"); // true
 * ```
 */
export const READ_DESCRIPTION_NOTE: string =
  "If you already read the file in this conversation, the result may be a short " +
  "'[readcache: unchanged ...]' note (your earlier output of those lines is still current) or, " +
  "after '[readcache: N lines changed ...]', a unified diff against what you read before (hunks " +
  "numbered as in the file). Pass bypass_cache: true to get the full content again.";

/** Sessions whose state (call cache, reads in flight) a plugin instance keeps. */
const MAX_SESSIONS = 64;

/** One read served in the assistant message whose calls are running. */
interface Served {
  callId: string;
  read: InFlightRead;
}

interface SessionState {
  /** The session's messages as converted at the last read, and the knowledge replayed to them. */
  cache: OpenCodeSessionCache;
  /** Beliefs of `edit` calls worked out before they ran, by call id (SPEC §5.9). */
  edits: Map<string, ReadCacheEditMetaV1>;
  /** Statuses of the held files when a checked call started, by call id (SPEC §5.10). */
  snapshots: Map<string, CallSnapshot>;
  /** Files refreshed by a call of the message in flight: their reads in it are served in full. */
  refreshed: Set<string>;
  /** The message whose tool calls are in flight, and the reads served for it, in serve order. */
  messageId?: string;
  served: Served[];
}

/**
 * Creates the plugin: the function OpenCode calls with its `PluginInput`
 * (a `Plugin` in `@opencode-ai/plugin` terms).
 *
 * @example
 * ```ts ignore
 * // .opencode/plugin/readcache.ts: the plugin with a smaller diff limit
 * import { createReadcachePlugin } from "/path/to/checkout/src/adapters/opencode/plugin.ts";
 * export default { id: "readcache", server: createReadcachePlugin({ config: { maxDiffFileLines: 5000 } }) };
 * ```
 */
export function createReadcachePlugin(
  options: ReadcachePluginOptions = {},
): (input: OpenCodePluginInputLike) => Promise<ReadcacheHooks> {
  return async (input) =>
    readcacheHooks(
      input,
      options,
      options.database === false ? undefined : await openCodeTipReader(options.database),
    );
}

function readcacheHooks(
  input: OpenCodePluginInputLike,
  options: ReadcachePluginOptions,
  tips: OpenCodeTipReader | undefined,
): ReadcacheHooks {
  const { client, directory } = input;
  const cfg: DecisionConfig = { ...DEFAULT_DECISION_CONFIG, ...options.config };
  const store = options.storeFor?.(directory) ??
    new FsObjectStore(join(directory, ".opencode", "readcache"), { projectRoot: directory });
  /** Bases of files outside the project: this process only (SPEC §13.2). */
  const volatileStore = new MemoryObjectStore();
  const storesFor = (pathKey: string): ObjectStore[] =>
    cfg.persistOutsideProject || isInsideProject(pathKey, directory)
      ? [store, volatileStore]
      : [volatileStore];
  const sessions = new Map<string, SessionState>();
  let queue: Promise<unknown> = Promise.resolve();
  const serializedResult = <T>(task: () => Promise<T>): Promise<T> => {
    const run = queue.then(task, task);
    queue = run.catch(() => undefined);
    return run;
  };
  const serialized = (task: () => Promise<void>): Promise<void> => serializedResult(task);

  const sessionState = (sessionID: string): SessionState => {
    let state = sessions.get(sessionID);
    if (state === undefined) {
      state = {
        cache: options.sessionCache?.(sessionID) ?? new OpenCodeSessionCache(),
        served: [],
        edits: new Map(),
        snapshots: new Map(),
        refreshed: new Set(),
      };
      sessions.set(sessionID, state);
      // the least recently started sessions go first; only a session with calls running
      // right now needs its state (the reads served for its current message)
      if (sessions.size > MAX_SESSIONS) sessions.delete(sessions.keys().next().value!);
    }
    return state;
  };

  /**
   * The branch up to the message of `callID` (what the model holds, replayed; the reads served
   * for that message come on top, see `knowledgeOf`); a new message starts a new overlay.
   */
  const currentBranch = async (
    sessionID: string,
    st: SessionState,
    callID: string,
  ): Promise<
    { current?: OpenCodeBranch["current"]; knowledge: BranchKnowledge } | undefined
  > => {
    const branch = await st.cache.sync(openCodeSessionSource(client, sessionID, tips), {
      directory,
      currentCallId: callID,
    });
    if (branch?.current !== undefined && st.messageId !== branch.current.messageId) {
      st.messageId = branch.current.messageId;
      st.served = [];
      st.edits.clear();
      st.refreshed.clear();
    }
    return branch;
  };

  /** What the model holds: the branch, then the reads served for the message in flight. */
  const knowledgeOf = (
    branch: { knowledge: BranchKnowledge },
    st: SessionState,
  ): BranchKnowledge => {
    const knowledge = branch.knowledge;
    knowledge.clearOverlay();
    for (const s of st.served) knowledge.recordServed(s.read);
    return knowledge;
  };

  /**
   * The belief of an `edit` about to run (SPEC §5.9), worked out like pi's: OpenCode 1.18.33
   * replaces `oldString` where it occurs once exactly (its first replacer) in the file with
   * its line endings and BOM kept; the plugin caches only LF files without a BOM, so the
   * model's view of a file it can edit with a belief is such a file. `replaceAll`, an empty
   * `oldString` (a new file) and anything else undetermined get none: the file becomes unknown.
   */
  const planOpenCodeEdit = async (
    call: { sessionID: string; callID: string },
    args: unknown,
  ): Promise<void> => {
    const a = (typeof args === "object" && args !== null ? args : {}) as Record<string, unknown>;
    if (
      typeof a.oldString !== "string" || typeof a.newString !== "string" || a.oldString === "" ||
      a.replaceAll === true
    ) return;
    const target = openCodeFileTarget(a, directory);
    if (target === undefined) return;
    const st = sessionState(call.sessionID);
    const branch = await currentBranch(call.sessionID, st, call.callID);
    if (branch?.current === undefined) return;
    const meta = await planEdit(
      { path: target.name, edits: [{ oldText: a.oldString, newText: a.newString }] },
      knowledgeOf(branch, st),
      { cwd: directory, home: homedir(), store, volatileStore, config: options.config },
    );
    if (meta !== undefined && meta.pathKey === target.pathKey) st.edits.set(call.callID, meta);
  };

  /**
   * `readcache_refresh` (SPEC §11.2 as for pi): the invalidation of the file, or of the lines a
   * read with that offset and limit showed on this branch (else the lines such a read would show
   * now); stored as the part's `metadata.readcache`, where replay finds it.
   */
  const refresh = async (
    args: Record<string, unknown>,
    context: { sessionID: string; messageID: string; callID?: string },
  ): Promise<
    { title: string; output: string; metadata: { readcache: ReadCacheInvalidationV1 } }
  > => {
    const call = openCodeReadCall(args, directory);
    if (call === undefined) throw new Error("readcache_refresh needs a filePath");
    const st = sessionState(context.sessionID);
    const branch = await currentBranch(context.sessionID, st, context.callID ?? "");
    const knowledge = branch === undefined ? undefined : knowledgeOf(branch, st);
    const ranged = call.offset !== undefined || call.limit !== undefined;
    const shown = ranged ? knowledge?.shownScope(call.pathKey, call.offset, call.limit) : undefined;
    const scope = refreshScope(
      call.name,
      String(args.filePath),
      ranged ? call.offset ?? 1 : undefined,
      call.limit,
      shown,
    );
    const inv = invalidationRecord(call.pathKey, scope, Date.now());
    st.refreshed.add(call.pathKey);
    const output = scope === "full"
      ? `Refreshed ${args.filePath}: the next read returns its full content.`
      : `Refreshed lines ${scope.slice(2).replace(":", "-")} of ${args.filePath}: the next read ` +
        "of them returns their full content.";
    return {
      title: `refresh ${args.filePath}`,
      output,
      metadata: { readcache: inv },
    };
  };

  /** The statuses of the files the model holds as a checked call starts (SPEC §5.10). */
  const snapshotToolCall = async (call: { sessionID: string; callID: string }) => {
    const st = sessionState(call.sessionID);
    const branch = await currentBranch(call.sessionID, st, call.callID);
    if (branch?.current === undefined) return;
    if (st.snapshots.size >= 1000) st.snapshots.clear(); // results that never came back
    st.snapshots.set(
      call.callID,
      await toolCallSnapshot(knowledgeOf(branch, st), { cwd: directory }),
    );
  };

  /**
   * The record of another tool's result (SPEC §5.10): the files that differ from the model's
   * newest view when it returned, as the part's `metadata.readcache`, where replay finds it.
   */
  const recordToolResult = async (call: ToolAfterInput, output: ToolAfterOutput) => {
    const st = sessionState(call.sessionID);
    const branch = await currentBranch(call.sessionID, st, call.callID);
    if (branch?.current === undefined) return;
    // what a shell command printed of a file, checked against the file (SPEC §5.10)
    const args = call.args as { command?: unknown; workdir?: unknown } | undefined;
    const shell = call.tool === "bash" && typeof args?.command === "string" &&
        typeof output.output === "string"
      ? {
        kind: "shell" as const,
        command: args.command,
        cwd: typeof args.workdir === "string" ? resolve(directory, args.workdir) : directory,
        output: output.output,
      }
      // a tool the cache cannot see into may print a file and change it back before it returns
      : openCodeToolClass(call.tool) === "opaque" && typeof output.output === "string"
      ? { kind: "opaque" as const, output: output.output }
      : undefined;
    const snapshot = st.snapshots.get(call.callID);
    st.snapshots.delete(call.callID);
    const meta = await toolResultMeta(
      knowledgeOf(branch, st),
      {
        cwd: directory,
        home: homedir(),
        store,
        volatileStore,
        config: options.config,
      },
      shell,
      { callId: call.callID, snapshot },
    );
    output.metadata = withReadcacheMeta(output.metadata, meta);
  };

  const serve = async (call: ToolAfterInput, output: ToolAfterOutput): Promise<void> => {
    const args = (typeof call.args === "object" && call.args !== null ? call.args : {}) as Record<
      string,
      unknown
    >;
    const readCall = openCodeReadCall(args, directory);
    if (readCall === undefined || typeof args.filePath !== "string") return;
    const st = sessionState(call.sessionID);
    const unknown = (): void =>
      void st.served.push({ callId: call.callID, read: { call: readCall, callId: call.callID } });

    const branch = await currentBranch(call.sessionID, st, call.callID);
    if (branch?.current === undefined) return; // not in its session: no metadata, unknown on replay
    const path = openCodeReadPath(args.filePath, directory);
    if (!output.output.startsWith(`<path>${path}</path>\n<type>file</type>\n`)) {
      return unknown(); // a directory, an image or a PDF: shown by OpenCode, not cached
    }
    // read without yielding: inside OpenCode's process a wait lets its other work go first
    let read: ReturnType<typeof readRegularFileSync> | undefined;
    try {
      read = readRegularFileSync(path, cfg.maxFileBytes);
    } catch {
      read = undefined;
    }
    if (read?.kind !== "ok") return unknown();
    const text = decodeOpenCodeText(read.bytes);
    const offset = typeof args.offset === "number" ? args.offset : undefined;
    const limit = typeof args.limit === "number" ? args.limit : undefined;
    const view = renderOpenCodeRead({ path, text, offset, limit });
    // the file must be what OpenCode just showed (it may have changed since), rendered alike
    if (
      view === undefined || !cacheableView(view, read.bytes, text) ||
      !(output.output === view.text ||
        output.output.startsWith(`${view.text}\n\n<system-reminder>`))
    ) {
      return unknown();
    }
    const suffix = output.output.slice(view.text.length); // OpenCode's <system-reminder>, if any

    const knowledge = knowledgeOf(branch, st);
    // a call later in the message that reads this file was served first: its answer already
    // stands after this one in the model's context, so this one re-anchors instead
    const order = branch.current.callIds;
    const mine = order.indexOf(call.callID);
    const servedLater = st.served.some((s) =>
      order.indexOf(s.callId) > mine && s.read.call !== undefined &&
      (s.read.call.pathKey === readCall.pathKey || s.read.call.name === readCall.name)
    );
    const input = {
      displayPath: args.filePath,
      pathKey: readCall.pathKey,
      ...coreRequest(view, limit),
      bytes: read.bytes,
      knowledge: knowledge.file(readCall.pathKey, readCall.name),
      bypass: args.bypass_cache === true || servedLater || st.refreshed.has(readCall.pathKey) ||
        knowledge.opaqueInFlight() || writeInFlight(readCall, knowledge.pendingChanges()),
      config: options.config,
    };
    const stores = storesFor(readCall.pathKey);
    let decision = await decideWithStores(planRead(input), stores);
    const file = { lines: text.split("\n"), maxBytesRatio: options.config?.maxDiffBytesRatio };
    let derived = openCodeAnswerText(decision, view, file);
    if (decision.mode === "partial" && derived === undefined) {
      // OpenCode's partial answer is not much smaller than its own: its own output stands, as the
      // plain answer the core gives without partial answers (its metadata: what the model holds)
      decision = await decideWithStores(
        planRead({ ...input, config: { ...options.config, partialAnswers: false } }),
        stores,
      );
      derived = openCodeAnswerText(decision, view, file);
    }
    if (decision.store !== undefined) {
      await stores[0].put(decision.store.hash, decision.store.bytes).catch(() => undefined);
    }
    const meta = decision.details.readcache;
    if (meta === undefined || !scopeMatchesView(meta, view)) return unknown();
    if (decision.mode !== "full" && decision.mode !== "baseline_fallback") {
      if (derived === undefined) return unknown();
      output.output = derived + suffix;
    }
    const served: ReadCacheMetaV1 = {
      ...meta,
      bytes: new TextEncoder().encode(output.output).length,
    };
    output.metadata = withReadcacheMeta(output.metadata, served);
    st.served.push({
      callId: call.callID,
      read: { meta: served, call: readCall, callId: call.callID },
    });
  };

  return {
    event: ({ event }) => {
      // recorded for the session it names; a message event naming none may concern any
      const p =
        (typeof event.properties === "object" && event.properties !== null
          ? event.properties
          : {}) as {
            sessionID?: unknown;
            info?: { sessionID?: unknown };
            part?: { sessionID?: unknown };
          };
      const id = p.sessionID ?? p.part?.sessionID ?? p.info?.sessionID;
      // a session whose tools run gets its state now: the calls running before its first read
      // are then known to have had their events
      if (typeof id === "string") {
        (sessions.get(id) ?? (event.type === "message.part.updated" ? sessionState(id) : undefined))
          ?.cache.onEvent(event);
      } else if (event.type.startsWith("message.")) {
        for (const st of sessions.values()) st.cache.onEvent(event);
      }
      return Promise.resolve();
    },
    tool: {
      readcache_refresh: {
        description: REFRESH_DESCRIPTION,
        args: {
          filePath: z.string().describe("The path of the file, as for read"),
          offset: z.number().int().min(1).optional().describe(
            "First line of the range to refresh, as for read",
          ),
          limit: z.number().int().min(1).optional().describe(
            "Number of lines of the range, as for read",
          ),
        },
        execute: (args, context) => serializedResult(() => refresh(args, context)),
      },
    },
    "tool.execute.before": (call, output) => {
      if (openCodeToolClass(call.tool) !== "followed") {
        // the statuses of the held files when the call starts (SPEC §5.10, printed while
        // changing); none when anything goes wrong
        return serialized(() => snapshotToolCall(call).catch(() => undefined));
      }
      if (call.tool === "read" && tips === undefined) {
        // the newest messages as the call starts, fetched while OpenCode reads the file
        sessions.get(call.sessionID)?.cache.prefetch(
          openCodeSessionSource(client, call.sessionID),
          call.callID,
        );
      }
      if (call.tool !== "edit") return Promise.resolve();
      // no belief when anything goes wrong: the edit's file becomes unknown (SPEC §5.9)
      return serialized(() => planOpenCodeEdit(call, output.args).catch(() => undefined));
    },
    "tool.execute.after": (call, output) => {
      if (call.tool === "edit") {
        // the edit succeeded (OpenCode calls this hook only then): its result carries the belief
        const meta = sessions.get(call.sessionID)?.edits.get(call.callID);
        if (meta !== undefined) {
          output.metadata = withReadcacheMeta(output.metadata, meta);
        }
        return Promise.resolve();
      }
      if (openCodeToolClass(call.tool) !== "followed") {
        // what the tool showed or changed (SPEC §5.10); no record when anything goes wrong
        return serialized(() => recordToolResult(call, output).catch(() => undefined));
      }
      if (call.tool !== "read") return Promise.resolve();
      const before = { output: output.output, metadata: output.metadata };
      return serialized(() =>
        serve(call, output).catch(() => {
          // fail open: OpenCode's own output, no metadata (unknown content on replay)
          output.output = before.output;
          output.metadata = before.metadata;
          const readCall = openCodeReadCall(call.args, directory);
          const state = sessions.get(call.sessionID);
          if (readCall !== undefined && state !== undefined) {
            state.served.push({
              callId: call.callID,
              read: { call: readCall, callId: call.callID },
            });
          }
        })
      );
    },
    "tool.definition": (call, output) => {
      if (call.toolID === "read" && !output.description.includes("[readcache:")) {
        output.description = `${output.description.trimEnd()}\n\n${READ_DESCRIPTION_NOTE}`;
      }
      return Promise.resolve();
    },
  };
}

/**
 * The plugin with default options.
 *
 * @example
 * ```ts ignore
 * // OpenCode calls it with its PluginInput when it loads the plugin
 * const hooks = await readcachePlugin(input);
 * ```
 */
export function readcachePlugin(input: OpenCodePluginInputLike): Promise<ReadcacheHooks> {
  return env.OPENCODE_READCACHE === "off" ? Promise.resolve({}) : createReadcachePlugin()(input);
}

/**
 * The module OpenCode loads: `{ id, server }` (a path plugin must name
 * itself). Other exports of this file are ignored by OpenCode's loader.
 *
 * @example
 * ```ts
 * import plugin from "@readcache/core/opencode";
 * plugin.id; // "readcache"
 * ```
 */
const readcacheModule: {
  id: string;
  server: (input: OpenCodePluginInputLike) => Promise<ReadcacheHooks>;
} = { id: "readcache", server: readcachePlugin };
export default readcacheModule;
