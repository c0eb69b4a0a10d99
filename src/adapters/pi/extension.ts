/**
 * The pi extension: a drop-in `read` override for the pi coding agent
 * (`@mariozechner/pi-coding-agent`) backed by `@readcache/core`, plus the
 * `readcache_refresh` tool and the `/readcache-refresh` and
 * `/readcache-status` commands.
 *
 * Load it with `pi -e <this repository>` or `pi install git:<repository>`
 * (the repository's `package.json` names this file in `pi.extensions`), or
 * from your own extension:
 *
 * ```ts ignore
 * import { createReadcacheExtension } from "@readcache/core/pi";
 * export default createReadcacheExtension({ config: { maxDiffFileLines: 5000 } });
 * ```
 *
 * What the model has seen is derived from `ctx.sessionManager.getBranch()`
 * before every read (replay with the strict compaction barrier); the session
 * events only drop in-memory caches, correctness never depends on them.
 *
 * Specified by SPEC.md §11.
 *
 * @module
 */
import { homedir } from "node:os";
import { env } from "node:process";
import type { DecisionConfig } from "../../core/decision.ts";
import { ReadCacheError } from "../../core/errors.ts";
import { BranchKnowledge, type InFlightRead } from "../../core/knowledge.ts";
import {
  READCACHE_CUSTOM_TYPE,
  type ReadCacheEditMetaV1,
  type ReadCacheMetaV1,
  type ReadMode,
  withReadcacheMeta,
} from "../../core/meta.ts";
import type { ScopeKey } from "../../core/scope.ts";
import {
  MemoryObjectStore,
  type ObjectStore,
  type StoreProblem,
  type StoreStats,
} from "../../core/object_store.ts";
import type { ReadRequest } from "../../core/range.ts";
import {
  callResolvers,
  planEdit,
  resolveCall,
  resolveInvalidation,
  serveRead,
} from "../../shell/read_service.ts";
import { parseRefreshArgs } from "../../core/refresh.ts";
import { formatStatusReport, heldParts, type StatusReport, tallyReads } from "../../core/status.ts";
import type { TruncationResult } from "../../core/truncate.ts";
import { FsObjectStore } from "../../store/fs_object_store.ts";
import {
  loadSavedReplay,
  SAVE_REPLAY_EVERY,
  type SavedReplayOwner,
  type SavedReplayUse,
  saveReplay,
} from "./saved_replay.ts";
import { isCheckedTool, isOpaqueTool, PiBranchConverter, type PiEntryLike } from "./branch.ts";
import { toolCallSnapshot, type ToolOutput, toolResultMeta } from "../../shell/tool_result.ts";
import type { CallSnapshot } from "../../shell/call_snapshot.ts";

export type {
  DecisionConfig,
  ObjectStore,
  PiEntryLike,
  ReadCacheMetaV1,
  ReadMode,
  ScopeKey,
  StoreProblem,
  StoreStats,
  TruncationResult,
};

/**
 * The part of pi's `ExtensionContext` (and `ExtensionCommandContext`) the
 * extension uses. pi's context objects satisfy it.
 *
 * @example
 * ```ts
 * import type { PiContextLike } from "@readcache/core/pi";
 * const ctx: PiContextLike = {
 *   cwd: "/work",
 *   sessionManager: { getSessionId: () => "s1", getBranch: () => [] },
 *   ui: { notify: (message) => console.log(message) },
 * };
 * ```
 */
export interface PiContextLike {
  /** Working directory of the session. */
  cwd: string;
  /** The session, read-only. */
  sessionManager: {
    /** Id of the current session. */
    getSessionId(): string;
    /** Entries from the root to the current leaf. */
    getBranch(): readonly PiEntryLike[];
    /** Id of the current leaf (pi has it; used to avoid building the whole branch). */
    getLeafId?(): string | null;
    /** An entry by id (pi has it; used with `getLeafId`). */
    getEntry?(id: string): PiEntryLike | undefined;
    /** The session's file, `undefined` for a session kept in memory (saved replays, SPEC §6.5). */
    getSessionFile?(): string | undefined;
  };
  /** `false` in print (`-p`) and JSON mode, where `ui` shows nothing. */
  hasUI?: boolean;
  /** User interface. */
  ui: {
    /** Shows a message to the user. */
    notify(message: string, type?: "info" | "warning" | "error"): void;
  };
}

/**
 * A tool result as pi expects it from `execute`.
 *
 * @example
 * ```ts
 * import type { PiToolResult } from "@readcache/core/pi";
 * const r: PiToolResult = { content: [{ type: "text", text: "hello" }], details: undefined };
 * ```
 */
export interface PiToolResult {
  /** Text and image blocks shown to the model. */
  content: ({ type: "text"; text: string } | { type: "image"; data: string; mimeType: string })[];
  /** Structured details stored in the session (never sent to the model). */
  details: unknown;
}

/**
 * A tool definition in the shape pi's `registerTool` takes.
 *
 * @example
 * ```ts
 * import type { PiToolDefinition } from "@readcache/core/pi";
 * const t: PiToolDefinition = {
 *   name: "hello", label: "hello", description: "says hello", parameters: { type: "object" },
 *   execute: () => Promise.resolve({ content: [{ type: "text", text: "hello" }], details: undefined }),
 * };
 * ```
 */
export interface PiToolDefinition {
  /** Tool name the model calls. */
  name: string;
  /** Turns the arguments the model sent into the tool's shape before validation (pi's hook). */
  prepareArguments?: (args: unknown) => unknown;
  /** Label shown in the UI. */
  label: string;
  /** Description sent to the model. */
  description: string;
  /** One line for the system prompt's tool list. */
  promptSnippet?: string;
  /** Guideline bullets for the system prompt. */
  promptGuidelines?: string[];
  /** JSON Schema of the parameters. */
  parameters: object;
  /** Runs the tool. Throwing makes pi report an error result to the model. */
  execute(
    toolCallId: string,
    params: unknown,
    signal: AbortSignal | undefined,
    onUpdate: unknown,
    ctx: PiContextLike,
  ): Promise<PiToolResult>;
}

/**
 * The part of pi's `ExtensionAPI` the extension uses; pi's API satisfies it,
 * so `createReadcacheExtension()` is a pi `ExtensionFactory`. A test host can
 * implement it around a real `SessionManager`.
 *
 * @example
 * ```ts ignore
 * const host: PiExtensionHost = {
 *   registerTool: (tool) => tools.set(tool.name, tool),
 *   registerCommand: (name, command) => commands.set(name, command),
 *   appendEntry: (type, data) => session.appendCustomEntry(type, data),
 *   on: (event, handler) => handlers.push([event, handler]),
 * };
 * createReadcacheExtension()(host);
 * ```
 */
export interface PiExtensionHost {
  /** Registers (or overrides) a tool. */
  registerTool(tool: PiToolDefinition): void;
  /** Registers a slash command; `args` is the text after the command name. */
  registerCommand(
    name: string,
    options: { description?: string; handler(args: string, ctx: PiContextLike): Promise<void> },
  ): void;
  /** Appends a custom entry (not sent to the model) to the session at the current leaf. */
  appendEntry(customType: string, data?: unknown): void;
  /** Subscribes to a session event. */
  on(event: PiCacheEvent, handler: () => void): void;
  /** Subscribes to pi's `tool_call` (before a tool runs; the handler could block it). */
  on(
    event: "tool_call",
    handler: (event: PiToolCallEvent, ctx: PiContextLike) => Promise<undefined>,
  ): void;
  /** Subscribes to pi's `tool_result` (after a tool ran; the handler may patch the result). */
  on(
    event: "tool_result",
    handler: (
      event: PiToolResultEvent,
      ctx: PiContextLike,
    ) => PiToolResultPatch | undefined | Promise<PiToolResultPatch | undefined>,
  ): void;
}

/**
 * pi's `tool_call` event: a tool call about to run (the fields the extension reads).
 *
 * @example
 * ```ts
 * import type { PiToolCallEvent } from "@readcache/core/pi";
 * const e: PiToolCallEvent = { toolName: "edit", toolCallId: "call_1", input: { path: "a.ts" } };
 * ```
 */
export interface PiToolCallEvent {
  /** The tool's name. */
  toolName: string;
  /** The tool call id. */
  toolCallId: string;
  /** The call's arguments. */
  input: unknown;
}

/**
 * pi's `tool_result` event: a tool call that ran (the fields the extension reads).
 *
 * @example
 * ```ts
 * import type { PiToolResultEvent } from "@readcache/core/pi";
 * const e: PiToolResultEvent = { toolName: "edit", toolCallId: "call_1", input: {},
 *   content: [{ type: "text", text: "Successfully replaced 1 block(s) in a.ts." }],
 *   details: undefined, isError: false };
 * ```
 */
export interface PiToolResultEvent extends PiToolCallEvent {
  /** The result's content. */
  content: PiToolResult["content"];
  /** The result's details. */
  details: unknown;
  /** True when the tool failed. */
  isError: boolean;
}

/**
 * What a `tool_result` handler may return: fields of the result to replace.
 *
 * @example
 * ```ts
 * import type { PiToolResultPatch } from "@readcache/core/pi";
 * const p: PiToolResultPatch = { details: { diff: "", readcache: undefined } };
 * ```
 */
export interface PiToolResultPatch {
  /** New details of the result. */
  details?: unknown;
}

/**
 * The pi events the extension listens to. They only drop in-memory caches.
 *
 * @example
 * ```ts
 * import { PI_CACHE_EVENTS } from "@readcache/core/pi";
 * PI_CACHE_EVENTS.includes("session_tree"); // true
 * ```
 */
export const PI_CACHE_EVENTS = [
  "session_start",
  "session_before_switch",
  "session_before_fork",
  "session_compact",
  "session_tree",
  "session_shutdown",
  "turn_start",
  "agent_end",
] as const;

/**
 * One of {@linkcode PI_CACHE_EVENTS}.
 *
 * @example
 * ```ts
 * import type { PiCacheEvent } from "@readcache/core/pi";
 * const e: PiCacheEvent = "session_compact";
 * ```
 */
export type PiCacheEvent = typeof PI_CACHE_EVENTS[number];

/**
 * Options of {@linkcode createReadcacheExtension}.
 *
 * @example
 * ```ts
 * import type { ReadcacheExtensionOptions } from "@readcache/core/pi";
 * const options: ReadcacheExtensionOptions = { config: { maxDiffFileBytes: 1024 * 1024 } };
 * ```
 */
export interface ReadcacheExtensionOptions {
  /** Decision tunables (diff limits, sensitive file patterns). */
  config?: Partial<DecisionConfig>;
  /** Object store for a working directory; default `<cwd>/.pi/readcache`. */
  storeFor?: (cwd: string) => ObjectStore;
  /** Home directory for `~`; default `os.homedir()`. */
  home?: () => string;
  /** Clock for invalidation timestamps; default `Date.now`. */
  now?: () => number;
  /**
   * Save a session's replay in the store for the next cold start (SPEC
   * §6.5) once this many entries were synced since the last save; default
   * 1,000. `0` never saves and never uses a saved replay.
   */
  saveReplayEvery?: number;
  /**
   * Save and use a session's replay only where loading it is cheaper than
   * the walk it replaces, and load it only when the branch reaches its entry
   * before a compaction (SPEC §6.5); default true. `false` saves at every
   * quiet point `saveReplayEvery` allows, even on a short session, and loads
   * whatever was saved, leaving it to the replay to find out that it does
   * not continue the branch (tests: every saved replay goes through it).
   */
  weighSavedReplay?: boolean;
  /**
   * After saving a replay, continue from it (what a cold start would load)
   * instead of the knowledge that synced every entry, so a long-lived
   * instance holds memory in proportion to the files, not the session
   * (default true; a move to before the save then replays as a cold start).
   */
  compactAfterSave?: boolean;
  /**
   * How long before a tool call starts a change of a held file leaves it
   * possibly changed again unseen (SPEC §5.10, printed while changing);
   * default 50 ms with sub-second file times, 3 s without. Only a replay of
   * a recorded session faster than it ran (a benchmark) should set it, to
   * what the recording's own times show.
   */
  racyWindowMs?: number;
}

/**
 * `details` of a `read` result served by the extension: pi's own
 * `truncation` when pi would set it, and the readcache metadata that replay
 * reads back from the session.
 *
 * @example
 * ```ts
 * import type { ReadcacheReadDetails } from "@readcache/core/pi";
 * const d: ReadcacheReadDetails = {};
 * ```
 */
export interface ReadcacheReadDetails {
  /** pi's truncation details, exactly as pi's read tool sets them. */
  truncation?: TruncationResult;
  /** Readcache metadata (absent for reads served without caching). */
  readcache?: ReadCacheMetaV1;
}

/** Parameter schema of the `read` override: pi's plus `bypass_cache`. */
const READ_PARAMETERS = {
  type: "object",
  properties: {
    path: { type: "string", description: "Path to the file to read (relative or absolute)" },
    offset: { type: "number", description: "Line number to start reading from (1-indexed)" },
    limit: { type: "number", description: "Maximum number of lines to read" },
    bypass_cache: {
      type: "boolean",
      description:
        "Return the full content even if it is unchanged since you last read it (use when you no longer have the earlier output).",
    },
  },
  required: ["path"],
} as const;

/** Parameter schema of `readcache_refresh`. */
const REFRESH_PARAMETERS = {
  type: "object",
  properties: {
    path: { type: "string", description: "Path of the file whose cached read state to drop" },
    offset: { type: "number", description: "First line of the range to refresh (1-indexed)" },
    limit: { type: "number", description: "Number of lines of the range to refresh" },
  },
  required: ["path"],
} as const;

const READ_DESCRIPTION =
  "Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete. " +
  "If you already read the file in this conversation, the result may be a short '[readcache: unchanged ...]' note (your earlier output is still current) or a unified diff against what you saw; pass bypass_cache: true to get the full content again.";

/** The part of pi's module the adapter uses: its own read tool, for what the cache does not take. */
interface PiModule {
  createReadToolDefinition(cwd: string): {
    execute(
      toolCallId: string,
      params: { path: string; offset?: number; limit?: number },
      signal: AbortSignal | undefined,
      onUpdate: undefined,
      ctx: never,
    ): Promise<PiToolResult>;
  };
}

let piModule: Promise<PiModule> | undefined;
/** pi itself, loaded on first use (only when the host's own read must serve a call). */
function loadPi(): Promise<PiModule> {
  piModule ??= import("@mariozechner/pi-coding-agent") as Promise<PiModule>;
  return piModule;
}

function optionalNumber(v: unknown, name: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number") {
    throw new ReadCacheError(
      "INVALID_ARGUMENT",
      `Invalid ${name} ${JSON.stringify(v)}: ${name} must be a number, or omitted.`,
    );
  }
  return v;
}

function parseRequest(params: unknown): ReadRequest & { bypass_cache: boolean } {
  const p = typeof params === "object" && params !== null ? params as Record<string, unknown> : {};
  if (typeof p.path !== "string" || p.path === "") {
    throw new ReadCacheError("INVALID_ARGUMENT", "path must be a non-empty string.");
  }
  const req: ReadRequest & { bypass_cache: boolean } = {
    path: p.path,
    bypass_cache: p.bypass_cache === true,
  };
  const offset = optionalNumber(p.offset, "offset");
  const limit = optionalNumber(p.limit, "limit");
  if (offset !== undefined) req.offset = offset;
  if (limit !== undefined) req.limit = limit;
  return req;
}

function aborted(): Error {
  return new Error("Operation aborted");
}

/** Most parent links followed looking for a saved replay's entry (a corrupt session's cycle ends). */
const MAX_PARENT_WALK = 50_000_000;

/**
 * Per-process state of the extension: one branch knowledge per session, and
 * a queue that runs reads one at a time in call order, so a read served
 * earlier in the same assistant message is in the in-flight overlay of the
 * next one.
 */
class ReadcacheRuntime {
  readonly #sessions = new Map<
    string,
    {
      knowledge: BranchKnowledge;
      convert: PiBranchConverter;
      /** Size of the synced branch when its replay was last saved or restored (SPEC §6.5). */
      savedSize: number;
      /** A read was answered with this knowledge already: the next may save (a cold one never). */
      warm: boolean;
      /**
       * A replay was saved since this knowledge was made: the next read continues from it
       * instead ({@linkcode ReadcacheRuntime.compact}).
       */
      compactDue: boolean;
    }
  >();
  #queue: Promise<unknown> = Promise.resolve();
  /** Bases of files outside the project: this process only (SPEC §13.2). */
  readonly volatileStore: MemoryObjectStore = new MemoryObjectStore();

  constructor(
    readonly home: () => string,
    readonly saveEvery: number,
    readonly compactAfterSave: boolean,
    readonly weigh: boolean,
  ) {}

  /**
   * How a session's saved replay is used: only where the branch reaches its
   * entry before a compaction (a walk up pi's parent links, which stops
   * there) and weighed against the walk, unless told not to (`weighSavedReplay`).
   */
  #use(ctx: PiContextLike): SavedReplayUse {
    const sm = ctx.sessionManager;
    const getEntry = sm.getEntry?.bind(sm);
    const leaf = sm.getLeafId?.();
    // unweighed (tests): every saved replay is loaded, and the replay finds out whether the
    // branch reaches it, as it must anyway
    if (!this.weigh || getEntry === undefined || leaf === undefined) return { weigh: this.weigh };
    const reaches = (saved: string): boolean => {
      let id: string | null = leaf;
      for (let steps = 0; id !== null && steps < MAX_PARENT_WALK; steps++) {
        if (id === saved) return true;
        const e = getEntry(id);
        if (e === undefined || e.type === "compaction") return false;
        id = e.parentId;
      }
      return false;
    };
    return { weigh: this.weigh, reaches };
  }

  /** Whose replay the session's saved replay is, if it may have one (a file-backed session). */
  #owner(ctx: PiContextLike): SavedReplayOwner | undefined {
    const file = this.saveEvery > 0 ? ctx.sessionManager.getSessionFile?.() : undefined;
    return typeof file === "string" && file !== ""
      ? { session: ctx.sessionManager.getSessionId(), file, home: this.home() }
      : undefined;
  }

  /**
   * A cold start (no knowledge of the session in this process) continues
   * from the session's saved replay when there is a usable one (SPEC §6.5).
   * Call before {@linkcode ReadcacheRuntime.knowledgeFor}.
   */
  restore(ctx: PiContextLike, store: ObjectStore): Promise<void> | undefined {
    // (nothing to wait for on a warm read: no promise at all)
    if (this.saveEvery <= 0 || this.#sessions.has(ctx.sessionManager.getSessionId())) {
      return undefined;
    }
    const owner = this.#owner(ctx);
    return owner === undefined ? undefined : this.#restore(ctx, store, owner);
  }

  async #restore(ctx: PiContextLike, store: ObjectStore, owner: SavedReplayOwner): Promise<void> {
    const knowledge = await loadSavedReplay(store, owner, this.#use(ctx));
    if (knowledge === undefined || this.#sessions.has(owner.session)) return;
    const deps = { cwd: ctx.cwd, home: this.home() };
    this.#sessions.set(owner.session, {
      knowledge,
      convert: new PiBranchConverter(callResolvers(deps)),
      savedSize: knowledge.size,
      warm: false,
      compactDue: false,
    });
  }

  /**
   * A long-lived instance holds only what a cold start would (SPEC §6.5):
   * once a replay was saved, the next read that has no read of its own in
   * flight continues from the saved replay instead of the knowledge that
   * synced every entry, so the memory an instance keeps grows with the
   * files the model holds, not with the session. A move of the leaf to
   * before the save then replays from the latest compaction, as a cold start
   * does. Call before {@linkcode ReadcacheRuntime.knowledgeFor}.
   */
  compact(ctx: PiContextLike, store: ObjectStore): Promise<void> | undefined {
    const s = this.#sessions.get(ctx.sessionManager.getSessionId());
    if (s === undefined || !s.compactDue) return undefined;
    const owner = this.#owner(ctx);
    // the reads answered before are on the branch by now: the overlay must be empty
    if (owner === undefined || this.knowledgeFor(ctx).inFlight.length > 0) return undefined;
    s.compactDue = false;
    const live = s.knowledge;
    return loadSavedReplay(store, owner, this.#use(ctx)).then((saved) => {
      if (saved === undefined || s.knowledge !== live || live.inFlight.length > 0) return;
      s.knowledge = saved;
      s.savedSize = saved.size;
    });
  }

  /**
   * Saves the session's replay when enough entries were synced since the
   * last save (SPEC §6.5); call after answering a read. The first read of an
   * instance (a cold start, a read after `/tree`) never saves: what it
   * walked is saved by the next one, so a cold read costs no more than the
   * walk.
   */
  save(ctx: PiContextLike, store: ObjectStore): Promise<void> | undefined {
    const s = this.#sessions.get(ctx.sessionManager.getSessionId());
    if (s === undefined || this.saveEvery <= 0) return undefined;
    if (!s.warm) {
      s.warm = true;
      return undefined;
    }
    const size = s.knowledge.size;
    if (size >= s.savedSize && size - s.savedSize < this.saveEvery) return undefined;
    const owner = this.#owner(ctx);
    if (owner === undefined) return undefined;
    return saveReplay(store, owner, s.knowledge, { weigh: this.weigh }).then((saved) => {
      if (saved) {
        s.savedSize = size;
        s.compactDue = this.compactAfterSave;
      }
    });
  }

  knowledgeFor(ctx: PiContextLike): BranchKnowledge {
    const id = ctx.sessionManager.getSessionId();
    let s = this.#sessions.get(id);
    if (s === undefined) {
      const deps = { cwd: ctx.cwd, home: this.home() };
      s = {
        knowledge: new BranchKnowledge(),
        convert: new PiBranchConverter(callResolvers(deps)),
        savedSize: 0,
        warm: false,
        compactDue: false,
      };
      this.#sessions.set(id, s);
    }
    const sm = ctx.sessionManager;
    if (sm.getLeafId !== undefined && sm.getEntry !== undefined) {
      // never the whole branch: walk up from the leaf to what is already replayed
      s.knowledge.syncTip(sm.getLeafId(), s.convert.lookup((id) => sm.getEntry!(id)));
    } else {
      s.knowledge.sync(s.convert.branch(sm.getBranch()));
    }
    return s.knowledge;
  }

  inFlight(ctx: PiContextLike): readonly InFlightRead[] {
    return this.#sessions.get(ctx.sessionManager.getSessionId())?.knowledge.inFlight ?? [];
  }

  clearOverlays(): void {
    for (const s of this.#sessions.values()) s.knowledge.clearOverlay();
  }

  clearAll(): void {
    this.#sessions.clear();
  }

  serialized<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}

/**
 * Shows a command's answer: pi's notification, or, where pi has no UI (print
 * and JSON mode, `ctx.hasUI === false`), stdout (an error: stderr).
 */
function tell(ctx: PiContextLike, text: string, type: "info" | "error"): void {
  if (ctx.hasUI === false) {
    if (type === "error") console.error(text);
    else console.log(text);
    return;
  }
  ctx.ui.notify(text, type);
}

/**
 * Creates the extension factory pi calls with its `ExtensionAPI`.
 *
 * @example
 * ```ts ignore
 * // my-extension.ts, loaded with `pi -e ./my-extension.ts`
 * import { createReadcacheExtension } from "@readcache/core/pi";
 * export default createReadcacheExtension({ config: { sensitivePatterns: [".env*", "*.pem"] } });
 * ```
 */
export function createReadcacheExtension(
  options: ReadcacheExtensionOptions = {},
): (pi: PiExtensionHost) => void {
  // one store per working directory, so its checks and its one problem report are made once
  const stores = new Map<string, ObjectStore>();
  const storeFor = (cwd: string): ObjectStore => {
    let s = stores.get(cwd);
    if (s === undefined) {
      s = options.storeFor?.(cwd) ?? FsObjectStore.forCwd(cwd);
      stores.set(cwd, s);
    }
    return s;
  };
  const home = options.home ?? homedir;
  const now = options.now ?? Date.now;

  return (pi: PiExtensionHost): void => {
    const rt = new ReadcacheRuntime(
      home,
      options.saveReplayEvery ?? SAVE_REPLAY_EVERY,
      options.compactAfterSave ?? true,
      options.weighSavedReplay ?? true,
    );

    const builtinRead = (
      toolCallId: string,
      req: ReadRequest,
      signal: AbortSignal | undefined,
      ctx: PiContextLike,
    ): Promise<PiToolResult> =>
      loadPi().then((pi) =>
        pi.createReadToolDefinition(ctx.cwd).execute(
          toolCallId,
          { path: req.path, offset: req.offset, limit: req.limit },
          signal,
          undefined,
          // pi passes its full ExtensionContext here; the built-in only reads `ctx.model`
          ctx as unknown as never,
        )
      );

    pi.registerTool({
      name: "read",
      label: "read",
      description: READ_DESCRIPTION,
      promptSnippet: "Read file contents",
      promptGuidelines: [
        "Use read to examine files instead of cat or sed.",
        "A read result '[readcache: unchanged ...]' means your earlier read of those lines is still current; a result starting '[readcache: N lines changed ...]' is a unified diff against what you read before (for 'in lines S-E', a diff of those lines, numbered as in the file).",
      ],
      parameters: READ_PARAMETERS,
      execute(
        toolCallId: string,
        params: unknown,
        signal: AbortSignal | undefined,
        _onUpdate: unknown,
        ctx: PiContextLike,
      ): Promise<PiToolResult> {
        return rt.serialized(async () => {
          if (signal?.aborted) throw aborted();
          const req = parseRequest(params);
          const store = storeFor(ctx.cwd);
          const restoring = rt.restore(ctx, store) ?? rt.compact(ctx, store);
          if (restoring !== undefined) await restoring;
          const knowledge = rt.knowledgeFor(ctx);
          let served;
          try {
            served = await serveRead(
              req,
              knowledge,
              {
                cwd: ctx.cwd,
                home: home(),
                store,
                volatileStore: rt.volatileStore,
                config: options.config,
              },
              signal,
            );
          } catch (e) {
            if (signal?.aborted) throw aborted();
            // Our own argument and range errors stand. Anything else (missing, unreadable or
            // not a file, a failing store, a bug) fails open: pi's own read serves the call,
            // with pi's output or pi's error, and no trust is recorded.
            if (e instanceof ReadCacheError) throw e;
            const result = await builtinRead(toolCallId, req, signal, ctx);
            // pi showed something we did not vouch for: its lines count as unknown
            const call = resolveCall(req, { cwd: ctx.cwd, home: home() });
            if (call !== undefined) knowledge.recordServed({ call, callId: toolCallId });
            return result;
          }
          if (served.delegate !== undefined) {
            // images, FIFOs, devices, files over the size cap: pi's own read, nothing cached
            const result = await builtinRead(
              toolCallId,
              served.delegate === "image" ? { path: served.target.resolvedPath } : req,
              signal,
              ctx,
            );
            knowledge.recordServed({ call: served.call, callId: toolCallId });
            return result;
          }
          if (signal?.aborted) throw aborted();
          const { decision } = served;
          const meta = decision.details.readcache;
          knowledge.recordServed(
            meta
              ? { meta, call: served.call, callId: toolCallId }
              : { call: served.call, callId: toolCallId },
          );
          const details: ReadcacheReadDetails = { ...decision.details };
          // the answer is made; what a later cold start continues from (SPEC §6.5)
          const saving = rt.save(ctx, store);
          if (saving !== undefined) await saving;
          return {
            content: [{ type: "text", text: decision.text }],
            details: details.truncation === undefined && details.readcache === undefined
              ? undefined
              : details,
          };
        });
      },
    });

    const refresh = (req: ReadRequest, ctx: PiContextLike): string => {
      const inv = resolveInvalidation(
        req,
        { cwd: ctx.cwd, home: home() },
        now(),
        rt.knowledgeFor(ctx),
      );
      pi.appendEntry(READCACHE_CUSTOM_TYPE, inv);
      rt.clearOverlays();
      if (inv.scopeKey === "full") {
        return `[readcache: refreshed ${req.path}; the next read of it returns the full content]`;
      }
      const [, start, end] = inv.scopeKey.split(":");
      return `[readcache: refreshed lines ${start}-${end} of ${req.path}; the next read that shows them returns the full content]`;
    };

    pi.registerTool({
      name: "readcache_refresh",
      label: "readcache refresh",
      description:
        "Forget what the read cache knows about a file (or a line range of it), so that the next read returns the full content instead of an 'unchanged' note or a diff.",
      promptSnippet: "Make the next read of a file return its full content",
      parameters: REFRESH_PARAMETERS,
      execute(
        _toolCallId: string,
        params: unknown,
        _signal: AbortSignal | undefined,
        _onUpdate: unknown,
        ctx: PiContextLike,
      ): Promise<PiToolResult> {
        return rt.serialized(() => {
          const { bypass_cache: _bypass, ...req } = parseRequest(params);
          const text = refresh(req, ctx);
          return Promise.resolve({ content: [{ type: "text", text }], details: undefined });
        });
      },
    });

    pi.registerCommand("readcache-refresh", {
      description:
        "Make the next read of a file (or line range) return its full content: /readcache-refresh <path> [start-end]",
      handler: async (args: string, ctx: PiContextLike): Promise<void> => {
        try {
          const text = await rt.serialized(() =>
            Promise.resolve(refresh(parseRefreshArgs(args), ctx))
          );
          tell(ctx, text, "info");
        } catch (e) {
          tell(ctx, e instanceof Error ? e.message : String(e), "error");
        }
      },
    });

    pi.registerCommand("readcache-status", {
      description:
        "Show what the read cache holds for the active branch (read-only: writes nothing)",
      handler: async (_args: string, ctx: PiContextLike): Promise<void> => {
        // the same plain words as `readcache status` (cli/status.ts), without the next reads
        const deps = { cwd: ctx.cwd, home: home() };
        const branch = new PiBranchConverter(callResolvers(deps))
          .branch(ctx.sessionManager.getBranch());
        const s = storeFor(ctx.cwd);
        const path = s instanceof FsObjectStore ? s.root : "(the store passed in the options)";
        let store: StatusReport["store"];
        try {
          store = { path, ...(await s.stats()) };
        } catch (e) {
          store = { path, error: `unavailable (${e instanceof Error ? e.message : String(e)})` };
        }
        const report: StatusReport = {
          cwd: ctx.cwd,
          branchEntries: branch.length,
          compactions: branch.filter((e) => e.kind === "compaction").length,
          held: heldParts(branch),
          inFlight: rt.inFlight(ctx).length,
          branch: tallyReads(branch),
          store,
        };
        tell(ctx, formatStatusReport(report), "info");
      },
    });

    // The model's own edits (SPEC §5.9): before pi's edit runs, work out what the model will
    // believe it wrote; a successful result carries it as `details.readcache`. pi's edit tool
    // itself (matching, rendering) is untouched. Any failure here only loses the belief.
    // Beliefs by tool call id, kept until the turn is over: a later edit of the same file in the
    // same message builds on an earlier one's (SPEC §5.9 rule 4; pi runs every `tool_call` of a
    // message before any result reaches the session).
    const beliefs = new Map<string, ReadCacheEditMetaV1>();
    pi.on("tool_call", async (event, ctx) => {
      if (event.toolName !== "edit") return undefined;
      try {
        const store = storeFor(ctx.cwd);
        const meta = await rt.serialized(async () => {
          await rt.restore(ctx, store);
          return planEdit(event.input, rt.knowledgeFor(ctx), {
            cwd: ctx.cwd,
            home: home(),
            store,
            volatileStore: rt.volatileStore,
            config: options.config,
          }, { callId: event.toolCallId, planned: (id) => beliefs.get(id) });
        });
        if (beliefs.size >= 1000) beliefs.clear(); // a host that sends no turn events
        if (meta !== undefined) beliefs.set(event.toolCallId, meta);
      } catch {
        // no belief: the file counts as unknown after the edit
      }
      return undefined;
    });
    // The statuses of the files the model holds when another tool's call starts (SPEC §5.10,
    // printed while changing): at its result, a file it may have printed counts as touched unless
    // they are all the same. Kept by call id until the result; none when anything goes wrong.
    const snapshots = new Map<string, CallSnapshot>();
    pi.on("tool_call", async (event, ctx) => {
      if (!isCheckedTool(event.toolName)) return undefined;
      try {
        const store = storeFor(ctx.cwd);
        const snapshot = await rt.serialized(async () => {
          await rt.restore(ctx, store);
          return toolCallSnapshot(rt.knowledgeFor(ctx), { cwd: ctx.cwd }, options.racyWindowMs);
        });
        if (snapshots.size >= 1000) snapshots.clear(); // results that never came back
        snapshots.set(event.toolCallId, snapshot);
      } catch {
        // no snapshot: every file the call may have printed while changing counts as touched
      }
      return undefined;
    });
    // What any other tool showed or changed (SPEC §5.10): when its result comes back, the files
    // that differ from the model's newest view are recorded in the result, so replay and a
    // restart see them. A failure here leaves no record: replay then counts every file changed.
    pi.on("tool_result", async (event, ctx) => {
      if (!isCheckedTool(event.toolName)) return undefined;
      const snapshot = snapshots.get(event.toolCallId);
      snapshots.delete(event.toolCallId);
      try {
        const store = storeFor(ctx.cwd);
        const meta = await rt.serialized(async () => {
          await rt.restore(ctx, store);
          return toolResultMeta(
            rt.knowledgeFor(ctx),
            {
              cwd: ctx.cwd,
              home: home(),
              store,
              volatileStore: rt.volatileStore,
              config: options.config,
            },
            toolOutputOf(event),
            { callId: event.toolCallId, snapshot },
          );
        });
        return { details: withReadcacheMeta(event.details, meta) };
      } catch {
        return undefined;
      }
    });
    pi.on("tool_result", (event) => {
      if (event.toolName !== "edit") return undefined;
      const meta = beliefs.get(event.toolCallId);
      if (meta === undefined || event.isError) return undefined;
      return { details: withReadcacheMeta(event.details, meta) };
    });

    // In-memory caches only; the next read re-derives everything from the branch.
    pi.on("session_compact", () => rt.clearAll());
    pi.on("session_tree", () => rt.clearAll());
    pi.on("session_start", () => rt.clearAll()); // pi 0.73: also fork, switch (resume/new), reload
    pi.on("session_before_switch", () => rt.clearAll());
    pi.on("session_before_fork", () => rt.clearAll());
    pi.on("session_shutdown", () => rt.clearAll());
    // Every tool result of the previous turn is in the session by now.
    pi.on("turn_start", () => {
      rt.clearOverlays();
      beliefs.clear();
    });
    pi.on("agent_end", () => {
      rt.clearOverlays();
      beliefs.clear();
    });
  };
}

/** What a `bash` or `grep` result printed, for the lines it showed (SPEC §5.10). */
function toolOutputOf(event: PiToolResultEvent): ToolOutput | undefined {
  const input = event.input as { command?: unknown; path?: unknown } | undefined;
  const output = event.content.map((c) => c.type === "text" ? c.text : "").join("");
  if (event.toolName === "bash" && typeof input?.command === "string") {
    return { kind: "shell", command: input.command, output };
  }
  if (event.toolName === "grep") {
    return typeof input?.path === "string"
      ? { kind: "grep", path: input.path, output }
      : { kind: "grep", output };
  }
  // a tool the cache cannot see into may print a file and change it back before it returns
  return isOpaqueTool(event.toolName) ? { kind: "opaque", output } : undefined;
}

/**
 * The extension with default options, as pi loads it from this package. Set
 * the environment variable `PI_READCACHE=off` to load nothing (pi's own `read`
 * stays in place).
 *
 * @example
 * ```ts ignore
 * // pi calls it with its ExtensionAPI when it loads the package
 * readcacheExtension(pi);
 * ```
 */
export default function readcacheExtension(pi: PiExtensionHost): void {
  if (env.PI_READCACHE === "off") return;
  createReadcacheExtension()(pi);
}
