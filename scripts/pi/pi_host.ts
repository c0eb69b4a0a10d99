// A test host for the pi extension: implements the part of pi's ExtensionAPI
// the extension uses around a REAL pi SessionManager, and runs tool calls the
// way pi's agent loop does (assistant tool-call message, execute, tool result
// message with content/details/isError). Shared by `deno task port:pi`, the
// adapter parity test and the adapter unit tests.
import { SessionManager } from "@mariozechner/pi-coding-agent";
import type {
  PiCacheEvent,
  PiContextLike,
  PiExtensionHost,
  PiToolCallEvent,
  PiToolDefinition,
  PiToolResult,
  PiToolResultEvent,
  PiToolResultPatch,
} from "../../src/adapters/pi/extension.ts";

/** What a tool call produced, as the model would see it. */
export type ToolOutcome =
  | { ok: true; result: PiToolResult; text: string }
  | { ok: false; error: string };

interface Command {
  description?: string;
  handler(args: string, ctx: PiContextLike): Promise<void>;
}

type ToolCallHandler = (event: PiToolCallEvent, ctx: PiContextLike) => Promise<undefined>;
type ToolResultHandler = (
  event: PiToolResultEvent,
  ctx: PiContextLike,
) => PiToolResultPatch | undefined | Promise<PiToolResultPatch | undefined>;

/** Zero token usage, for assistant messages built by tests. */
export const ZERO_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

export class FakePiHost implements PiExtensionHost {
  readonly tools: Map<string, PiToolDefinition> = new Map();
  readonly commands: Map<string, Command> = new Map();
  readonly notifications: { message: string; type?: string }[] = [];
  readonly #handlers: [PiCacheEvent, () => void][] = [];
  // pi's tool hooks run around every tool call (they are part of running a tool, not events
  // the cache may miss: `--no-events` does not turn them off)
  readonly #toolCall: ToolCallHandler[] = [];
  readonly #toolResult: ToolResultHandler[] = [];
  #callCounter = 0;

  constructor(public session: SessionManager, public cwd: string) {}

  registerTool(tool: PiToolDefinition): void {
    this.tools.set(tool.name, tool);
  }

  registerCommand(name: string, options: Command): void {
    this.commands.set(name, options);
  }

  appendEntry(customType: string, data?: unknown): void {
    this.session.appendCustomEntry(customType, data);
  }

  on(event: PiCacheEvent, handler: () => void): void;
  on(
    event: "tool_call",
    handler: (event: PiToolCallEvent, ctx: PiContextLike) => Promise<undefined>,
  ): void;
  on(
    event: "tool_result",
    handler: (
      event: PiToolResultEvent,
      ctx: PiContextLike,
    ) => PiToolResultPatch | undefined | Promise<PiToolResultPatch | undefined>,
  ): void;
  on(event: string, handler: (...args: never[]) => unknown): void {
    if (event === "tool_call") this.#toolCall.push(handler as ToolCallHandler);
    else if (event === "tool_result") this.#toolResult.push(handler as ToolResultHandler);
    else this.#handlers.push([event as PiCacheEvent, handler as () => void]);
  }

  /** Fires a pi event at the extension. */
  emit(event: PiCacheEvent): void {
    for (const [e, h] of this.#handlers) if (e === event) h();
  }

  /** The context pi passes to tools and commands. */
  context(): PiContextLike {
    return {
      cwd: this.cwd,
      sessionManager: this.session,
      ui: { notify: (message, type) => void this.notifications.push({ message, type }) },
    };
  }

  /** Forgets the deferred results of the last message: those calls never return. */
  dropDeferred(): void {
    this.#deferred = [];
  }

  /** Appends a user message, as a prompt does. */
  userMessage(text: string): string {
    this.#deferred = [];
    return this.session.appendMessage({
      role: "user",
      content: [{ type: "text", text }],
      timestamp: Date.now(),
    });
  }

  /**
   * Runs one tool call like pi's agent loop: the assistant message with the
   * call, then `execute`, then (when `persist`) the tool result message.
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    opts: { persist?: boolean; signal?: AbortSignal } = {},
  ): Promise<ToolOutcome> {
    const [id] = this.assistantToolCalls([{ name, args }]);
    return await this.runTool(id, name, args, opts);
  }

  /**
   * Appends one assistant message carrying several tool calls (as a model
   * turn does) and returns their tool call ids, in order. A message that
   * ended `aborted` or in an `error` is one pi runs none of the calls of.
   */
  assistantToolCalls(
    calls: { name: string; args: Record<string, unknown> }[],
    stopReason: "toolUse" | "aborted" | "error" = "toolUse",
  ): string[] {
    const ids = calls.map(() => `call_${++this.#callCounter}`);
    this.#deferred = []; // a new message: deferred results of the last one never came
    this.session.appendMessage({
      role: "assistant",
      content: calls.map((c, i) => ({
        type: "toolCall" as const,
        id: ids[i],
        name: c.name,
        arguments: c.args,
      })),
      api: "openai-completions",
      provider: "mock",
      model: "mock-model",
      usage: ZERO_USAGE,
      stopReason,
      timestamp: Date.now(),
    });
    return ids;
  }

  /** Results of `"deferred"` calls of the last assistant message, in call order. */
  #deferred: Parameters<SessionManager["appendMessage"]>[0][] = [];

  /**
   * Executes a tool call of the last assistant message and appends its
   * result: now (`persist` true, the default; after the results of earlier
   * deferred calls, as pi appends a message's results in call order), with
   * the next call that returns now (`"deferred"`), or never (`false`: the
   * call has not returned).
   */
  async runTool(
    toolCallId: string,
    name: string,
    args: Record<string, unknown>,
    opts: {
      persist?: boolean | "deferred";
      signal?: AbortSignal;
      /** Run no `tool_result` handler: the result a host without the cache records. */
      withoutResultHooks?: boolean;
    } = {},
  ): Promise<ToolOutcome> {
    const tool = this.tools.get(name);
    if (!tool) throw new Error(`no tool ${name} registered`);
    let outcome: ToolOutcome;
    // like pi's agent loop: the tool's own argument preparation, then `tool_call`, then execute
    const input = tool.prepareArguments === undefined ? args : tool.prepareArguments(args);
    const call = { toolName: name, toolCallId, input };
    for (const h of this.#toolCall) await h(call, this.context());
    try {
      const result = await tool.execute(toolCallId, input, opts.signal, undefined, this.context());
      const text = result.content.map((c) => c.type === "text" ? c.text : "").join("");
      outcome = { ok: true, result, text };
    } catch (e) {
      outcome = { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
    const content = outcome.ok
      ? outcome.result.content
      : [{ type: "text" as const, text: outcome.error }];
    // like pi's agent loop: a failed call's result has empty details, which a handler may patch
    const details = opts.withoutResultHooks === true
      ? (outcome.ok ? outcome.result.details : {})
      : await this.#resultHooks(
        call,
        content,
        outcome.ok ? outcome.result.details : {},
        !outcome.ok,
      );
    if (outcome.ok) outcome = { ...outcome, result: { ...outcome.result, details } };
    const message = {
      role: "toolResult" as const,
      toolCallId,
      toolName: name,
      content,
      details,
      isError: !outcome.ok,
      timestamp: Date.now(),
    };
    if (opts.persist === "deferred") this.#deferred.push(message);
    else if (opts.persist !== false) {
      for (const m of this.#deferred) this.session.appendMessage(m);
      this.#deferred = [];
      this.session.appendMessage(message);
    }
    return outcome;
  }

  /**
   * Runs pi's `tool_call` handlers for a call of the last assistant message
   * that runs elsewhere (a recorded session's `bash`, say), as pi's agent
   * loop does before it executes the call; its result comes with
   * {@linkcode appendToolResult}.
   */
  async startToolCall(
    toolCallId: string,
    name: string,
    input: Record<string, unknown>,
  ): Promise<void> {
    const call = { toolName: name, toolCallId, input };
    for (const h of this.#toolCall) await h(call, this.context());
  }

  /**
   * Appends the result of a tool call of the last assistant message that
   * ran elsewhere (a recorded session's `bash`, say), after pi's
   * `tool_result` handlers saw it, as pi's agent loop does.
   */
  async appendToolResult(
    toolCallId: string,
    name: string,
    input: Record<string, unknown>,
    content: PiToolResult["content"],
    isError: boolean,
  ): Promise<void> {
    const call = { toolName: name, toolCallId, input };
    const details = await this.#resultHooks(call, content, isError ? {} : undefined, isError);
    this.session.appendMessage({
      role: "toolResult",
      toolCallId,
      toolName: name,
      content,
      details,
      isError,
      timestamp: Date.now(),
    });
  }

  /** Runs pi's `tool_result` handlers in order; the result's details after their patches. */
  async #resultHooks(
    call: PiToolCallEvent,
    content: PiToolResult["content"],
    details: unknown,
    isError: boolean,
  ): Promise<unknown> {
    for (const h of this.#toolResult) {
      const patch = await h({ ...call, content, details, isError }, this.context());
      if (patch?.details !== undefined) details = patch.details;
    }
    return details;
  }

  /** Runs a slash command (`args` is the text after the name). */
  async command(name: string, args: string): Promise<void> {
    const c = this.commands.get(name);
    if (!c) throw new Error(`no command /${name} registered`);
    await c.handler(args, this.context());
  }
}

/** A pi session manager: in memory, or file-backed under `sessionDir`. */
export function newSession(cwd: string, sessionDir?: string): SessionManager {
  return sessionDir === undefined
    ? SessionManager.inMemory(cwd)
    : SessionManager.create(cwd, sessionDir);
}
