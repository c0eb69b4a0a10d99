/**
 * Runs a scenario vector through the OpenCode plugin
 * (src/adapters/opencode/plugin.ts) on the in-memory model of OpenCode's
 * session store (opencode_session_model.ts), with OpenCode's own tools
 * (opencode_tools.ts) on real files in `cwd`.
 *
 * How each scenario step (SPEC §10) becomes OpenCode:
 *
 * - a call step that starts a turn appends one assistant message holding a
 *   `pending` tool part for every call of the turn (`read`, `write`, `edit`),
 *   in call order; a prompt (user message) is made first when the session has
 *   none or a revert is pending, as OpenCode continues only from a prompt;
 * - every call runs as OpenCode runs a tool: the part becomes `running`, the
 *   plugin's `tool.execute.before` sees the arguments, the tool runs, and
 *   only when it succeeded `tool.execute.after` sees (and may change) its
 *   output and metadata before the part is stored;
 * - `read`: the part runs, OpenCode's `read` produces its output (or its
 *   error: the part fails and the result is `{step, error}`), the plugin's
 *   `tool.execute.after` hook may replace it and adds `metadata.readcache`,
 *   and the part is stored `completed`; with `persist: false` it stays
 *   `running` (in flight) until the next message ends the step (then
 *   `error`). The result is the (possibly replaced) output and the metadata's
 *   mode and scope;
 * - `writeTool` / `editTool`: OpenCode's `write` (verbatim) / `edit` (one
 *   exact replacement: `oldString`, `newString`), stored `completed` or
 *   `error`, or left `running` with `persist: false`;
 * - `write`, `remove`, `symlink`: another process changes the files;
 * - `message`: a user message; `compact`: `/summarize` (a `compaction` user
 *   message and a finished summary; `firstKept` names what OpenCode may keep
 *   after it, which earns no trust either way);
 * - `label` / `navigate`: a label is a point of the session's message list; a
 *   move to a label on the current list is a revert to that point (or an
 *   unrevert when it is the end of the list); anything else does not apply;
 * - `fork`: `session.fork` at the revert point (the messages the model sees);
 * - `restart`: a new plugin instance over the same session store and project
 *   directory (its in-memory state is gone, the stored bases stay);
 * - `storeFault`: deletes or corrupts the plugin's stored object
 *   (`<cwd>/.opencode/readcache`) of the content last served for the path;
 * - `invalidate` (refresh): the plugin's `readcache_refresh` tool, in an assistant message of its
 *   own.
 *
 * The store's events reach the plugin's `event` hook as OpenCode's bus hands
 * them to plugins (so reads fetch only the newest messages; see
 * src/adapters/opencode/session_cache.ts); `events: false` runs without them
 * (every read fetches the whole session).
 *
 * Steps that do not apply throw {@linkcode NotApplicableStep}; the port runs
 * only vectors its applicability rule accepts (opencode_expectations.ts), so
 * that error means the rule and the runner disagree.
 *
 * @module
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  createReadcachePlugin,
  openCodeReadCall,
  type ReadcacheHooks,
  type ToolAfterOutput,
} from "../../src/adapters/opencode/plugin.ts";
import { parseReadCacheMeta } from "../../src/core/meta.ts";
import { FsObjectStore } from "../../src/store/fs_object_store.ts";
import {
  applyFileStep,
  injectStoreFault,
  runBashStep,
  type ScenarioOutput,
  startsTurn,
  type StepResult,
  turnCallSteps,
  writeVectorFile,
} from "../../src/conformance/session_simulator.ts";
import type {
  ScenarioInput,
  ScenarioInputStep as ScenarioStep,
} from "../../src/conformance/vector_schema.ts";
import { type ModelToolPart, OpenCodeSessionStore } from "./opencode_session_model.ts";
import {
  openCodeEditTool,
  openCodeReadTool,
  type OpenCodeToolOutcome,
  openCodeWriteTool,
  startsWithBom,
} from "./opencode_tools.ts";

/**
 * A step the OpenCode port cannot run (see the module documentation).
 *
 * @example
 * ```ts
 * import { NotApplicableStep } from "./opencode_scenario_runner.ts";
 * new NotApplicableStep(3, "refresh").message; // "step 3 does not apply to OpenCode: refresh"
 * ```
 */
export class NotApplicableStep extends Error {
  /** `index`: the step; `why`: the reason. */
  constructor(readonly index: number, readonly why: string) {
    super(`step ${index} does not apply to OpenCode: ${why}`);
  }
}

/**
 * Options of {@linkcode runScenarioOnOpenCode}.
 *
 * @example
 * ```ts
 * import type { OpenCodeRunOptions } from "./opencode_scenario_runner.ts";
 * const o: OpenCodeRunOptions = {};
 * ```
 */
export interface OpenCodeRunOptions {
  /**
   * The plugin factory (default `createReadcachePlugin`); a test passes a
   * variant with a planted bug to show the comparison catches it.
   */
  plugin?: typeof createReadcachePlugin;
  /**
   * Called after OpenCode's `read` ran for the read step `step`, with the
   * bytes of the file it read (`undefined` when there is none): the oracle
   * takes from it what OpenCode's text does not state (see its parse.ts).
   */
  onRead?: (step: number, bytes: Uint8Array | undefined) => void;
  /** Deliver the store's events to the plugin's `event` hook (default true). */
  events?: boolean;
}

type CallStep = Extract<ScenarioStep, { op: "read" | "writeTool" | "editTool" | "bash" | "grep" }>;

/** OpenCode's `bash` as far as the plugin sees it: the command's output (SPEC §5.10). */
function openCodeBash(args: Record<string, unknown>, cwd: string): OpenCodeToolOutcome {
  const output = runBashStep(String(args.command), cwd);
  return { ok: true, title: String(args.description ?? ""), output, metadata: {} };
}

/**
 * OpenCode's `grep` as far as the plugin sees it: matching lines of the files
 * under `path` (the cwd by default), `path:N: text`; the plugin reads only
 * that it ran.
 */
function openCodeGrep(args: Record<string, unknown>, cwd: string): OpenCodeToolOutcome {
  const at = resolve(cwd, typeof args.path === "string" ? args.path : ".");
  const re = new RegExp(String(args.pattern));
  const lines: string[] = [];
  const visit = (p: string) => {
    let st;
    try {
      st = statSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      if (p.endsWith("/.opencode")) return;
      for (const n of readdirSync(p).sort()) visit(join(p, n));
    } else if (st.isFile()) {
      readFileSync(p, "utf8").split("\n").forEach((l, i) => {
        if (re.test(l)) lines.push(`${p}:${i + 1}: ${l}`);
      });
    }
  };
  visit(at);
  const output = lines.length === 0 ? "No files found" : lines.join("\n");
  return { ok: true, title: String(args.pattern), output, metadata: { matches: lines.length } };
}

/**
 * The one replacement of an `editTool` step (`edits` as a list or JSON
 * string, or the legacy `oldText`/`newText`), or `undefined` when it has
 * none or several (OpenCode's `edit` makes one per call).
 *
 * @example
 * ```ts
 * import { singleReplacement } from "./opencode_scenario_runner.ts";
 * singleReplacement({ op: "editTool", path: "a", edits: [{ oldText: "x", newText: "y" }] });
 * // { oldText: "x", newText: "y" }
 * ```
 */
export function singleReplacement(
  step: Extract<ScenarioStep, { op: "editTool" }>,
): { oldText: string; newText: string } | undefined {
  let edits: unknown = step.edits;
  if (typeof edits === "string") {
    try {
      edits = JSON.parse(edits);
    } catch {
      return undefined;
    }
  }
  const list: unknown[] = Array.isArray(edits) ? [...edits] : [];
  if (step.oldText !== undefined || step.newText !== undefined) {
    list.push({ oldText: step.oldText, newText: step.newText });
  }
  if (list.length !== 1) return undefined;
  const e = list[0] as { oldText?: unknown; newText?: unknown };
  return typeof e.oldText === "string" && typeof e.newText === "string"
    ? { oldText: e.oldText, newText: e.newText }
    : undefined;
}

/** The OpenCode tool call a call step makes: its tool id and arguments. */
function toolCallOf(s: CallStep, index: number): { tool: string; args: Record<string, unknown> } {
  if (s.op === "read") {
    const args: Record<string, unknown> = { filePath: s.path };
    if (s.offset !== undefined) args.offset = s.offset;
    if (s.limit !== undefined) args.limit = s.limit;
    if (s.bypass !== undefined) args.bypass_cache = s.bypass;
    return { tool: "read", args };
  }
  if (s.op === "writeTool") {
    return { tool: "write", args: { filePath: s.path, content: s.content } };
  }
  if (s.op === "bash") {
    return { tool: "bash", args: { command: s.command, description: "scenario command" } };
  }
  if (s.op === "grep") {
    return {
      tool: "grep",
      args: s.path === undefined ? { pattern: s.pattern } : { pattern: s.pattern, path: s.path },
    };
  }
  const r = singleReplacement(s);
  if (r === undefined) throw new NotApplicableStep(index, "an edit of other than one replacement");
  return { tool: "edit", args: { filePath: s.path, oldString: r.oldText, newString: r.newText } };
}

/**
 * Runs one scenario vector in `cwd` (an empty directory, a real path) and
 * returns the port output: OpenCode's texts as the model got them. `home`
 * is unused (OpenCode has no `~` in paths); it keeps the pi runner's shape.
 *
 * @example
 * ```ts ignore
 * const out = await runScenarioOnOpenCode(input, "/tmp/project", "/home/me");
 * out.results[0]; // { step: 0, mode: "full", text: "<path>/tmp/project/a.txt</path>...", scope: "full" }
 * ```
 */
export async function runScenarioOnOpenCode(
  vector: ScenarioInput,
  cwd: string,
  _home: string,
  options: OpenCodeRunOptions = {},
): Promise<ScenarioOutput> {
  for (const [rel, c] of Object.entries(vector.files)) writeVectorFile(cwd, rel, c);
  const makePlugin = options.plugin ?? createReadcachePlugin;
  const store = new OpenCodeSessionStore(cwd);
  const objects = new FsObjectStore(join(cwd, ".opencode", "readcache"), { projectRoot: cwd });
  let unsubscribe = () => {};
  const start = async (): Promise<ReadcacheHooks> => {
    unsubscribe();
    const h = await makePlugin({
      config: { ...vector.config },
      database: false, // the model's sessions are not in OpenCode's database
    })({
      client: store.client,
      directory: cwd,
    });
    const event = h.event;
    if (options.events !== false && event !== undefined) {
      unsubscribe = store.subscribe((e) => void event({ event: e }));
    }
    return h;
  };
  let hooks = await start();
  let session = store.createSession();
  /** A label: its session, how many messages the model saw there, and the last one's id. */
  const labels = new Map<string, { session: string; count: number; last?: string }>();
  const parts = new Map<number, ModelToolPart>(); // call step index -> its tool part
  const lastServed = new Map<string, string>(); // pathKey -> servedHash
  const results: StepResult[] = [];

  /** Messages the model sees now: those before a pending revert. */
  const visibleCount = (): number => {
    const r = session.revert;
    const at = r === undefined ? -1 : session.messages.findIndex((m) => m.info.id === r.messageID);
    return at < 0 ? session.messages.length : at;
  };
  const startTurn = (index: number): void => {
    const message = store.assistantMessage(session.id);
    for (const i of turnCallSteps(vector.steps, index)) {
      const { tool, args } = toolCallOf(vector.steps[i] as CallStep, i);
      parts.set(i, store.toolPart(message.info.id, tool, args));
    }
  };
  /** Runs OpenCode's tool for a call step, then the plugin's hook, then stores the part. */
  const call = async (
    index: number,
    s: CallStep,
    run: (args: Record<string, unknown>) => OpenCodeToolOutcome,
  ): Promise<OpenCodeToolOutcome> => {
    if (startsTurn(vector.steps, index)) startTurn(index);
    const part = parts.get(index)!;
    const { tool, args } = toolCallOf(s, index);
    store.run(part);
    // OpenCode calls the plugins' `tool.execute.before` with the call's arguments before every
    // tool runs, and `tool.execute.after` only when it succeeded
    const before = { args: structuredClone(args) };
    await hooks["tool.execute.before"]?.(
      { tool, sessionID: session.id, callID: part.callID },
      before,
    );
    const outcome = run(before.args);
    if (!outcome.ok) {
      if (s.persist !== false) store.fail(part, outcome.error);
      return outcome;
    }
    const out: ToolAfterOutput = {
      title: outcome.title,
      output: outcome.output,
      metadata: outcome.metadata,
    };
    // a `record: false` step: the result as OpenCode stores it without the plugin
    const hooked = !("record" in s && s.record === false);
    if (hooked) {
      await hooks["tool.execute.after"]?.(
        { tool, sessionID: session.id, callID: part.callID, args: structuredClone(before.args) },
        out,
      );
    }
    if (s.persist !== false) store.complete(part, out.output, out.metadata, out.title);
    return { ok: true, title: out.title, output: out.output, metadata: out.metadata as never };
  };

  const step = async (s: ScenarioStep, index: number): Promise<void> => {
    switch (s.op) {
      case "read": {
        const out = await call(index, s, (args) => {
          const r = openCodeReadTool(args, cwd);
          if (options.onRead !== undefined) {
            let bytes: Uint8Array | undefined;
            try {
              bytes = readFileSync(resolve(cwd, s.path));
            } catch {
              bytes = undefined;
            }
            options.onRead(index, bytes);
          }
          return r;
        });
        if (!out.ok) return void results.push({ step: index, error: out.error });
        const raw = (out.metadata as { readcache?: unknown }).readcache;
        const meta = parseReadCacheMeta(raw);
        if (raw !== undefined && meta === undefined) {
          throw new Error(`step ${index}: the plugin wrote invalid metadata.readcache`);
        }
        const r: StepResult = { step: index, mode: meta?.mode ?? null, text: out.output };
        if (meta) {
          r.scope = meta.scopeKey;
          lastServed.set(meta.pathKey, meta.servedHash);
        }
        results.push(r);
        return;
      }
      case "writeTool":
        await call(index, s, (args) => openCodeWriteTool(args, cwd));
        return;
      case "editTool":
        await call(index, s, (args) => openCodeEditTool(args, cwd));
        return;
      case "bash":
        await call(index, s, (args) => openCodeBash(args, cwd));
        return;
      case "grep":
        await call(index, s, (args) => openCodeGrep(args, cwd));
        return;
      case "write":
      case "remove":
      case "symlink":
        applyFileStep(cwd, s);
        return;
      case "message":
        store.userMessage(session.id, `message at step ${index}`);
        return;
      case "cutMessage":
        throw new NotApplicableStep(index, "OpenCode keeps an aborted message's output");
      case "label": {
        const count = visibleCount();
        labels.set(s.name, {
          session: session.id,
          count,
          last: session.messages[count - 1]?.info.id,
        });
        return;
      }
      case "navigate": {
        const to = labels.get(s.to);
        if (
          to === undefined || to.session !== session.id || to.count > session.messages.length ||
          session.messages[to.count - 1]?.info.id !== to.last
        ) {
          throw new NotApplicableStep(index, `label '${s.to}' is not on the session's messages`);
        }
        if (to.count < session.messages.length) {
          store.revert(session.id, session.messages[to.count].info.id);
        } else store.unrevert(session.id);
        return;
      }
      case "compact":
        store.compact(session.id);
        return;
      case "fork":
        session = store.fork(session.id, session.revert?.messageID);
        return;
      case "restart":
        hooks = await start();
        return;
      case "invalidate": {
        // the plugin's readcache_refresh, called by the model in an assistant message of its own
        const args: Record<string, unknown> = { filePath: s.path };
        if (s.offset !== undefined) args.offset = s.offset;
        if (s.limit !== undefined) args.limit = s.limit;
        const message = store.assistantMessage(session.id);
        const part = store.toolPart(message.info.id, "readcache_refresh", args);
        store.run(part);
        const tool = hooks.tool?.readcache_refresh;
        if (tool === undefined) {
          throw new Error(`step ${index}: the plugin has no readcache_refresh`);
        }
        await hooks["tool.execute.before"]?.(
          { tool: "readcache_refresh", sessionID: session.id, callID: part.callID },
          { args },
        );
        let r: Awaited<ReturnType<typeof tool.execute>>;
        try {
          r = await tool.execute(args, {
            sessionID: session.id,
            messageID: message.info.id,
            callID: part.callID,
          });
        } catch (e) {
          // a failed refresh (a range of a missing file) is an error result; nothing else
          store.fail(part, e instanceof Error ? e.message : String(e));
          return;
        }
        const out: ToolAfterOutput = typeof r === "string"
          ? { title: "", output: r, metadata: {} }
          : { title: r.title ?? "", output: r.output, metadata: r.metadata ?? {} };
        await hooks["tool.execute.after"]?.(
          { tool: "readcache_refresh", sessionID: session.id, callID: part.callID, args },
          out,
        );
        store.complete(part, out.output, out.metadata, out.title);
        return;
      }
      case "storeFault": {
        const key = openCodeReadCall({ filePath: s.path }, cwd)?.pathKey;
        const hash = key === undefined ? undefined : lastServed.get(key);
        if (hash === undefined) {
          // the plugin never caches a file with a BOM or CR line ends (OpenCode's line model):
          // it stored nothing for it, so there is nothing to fault
          let bytes: Uint8Array | undefined;
          try {
            bytes = readFileSync(resolve(cwd, s.path));
          } catch {
            bytes = undefined;
          }
          const uncached = bytes !== undefined &&
            (startsWithBom(bytes) || bytes.includes(13));
          if (uncached) return;
          throw new Error(`step ${index}: nothing served yet for ${s.path}`);
        }
        injectStoreFault(objects, hash, s.fault);
        return;
      }
    }
  };

  try {
    for (let i = 0; i < vector.steps.length; i++) await step(vector.steps[i], i);
  } finally {
    unsubscribe();
  }
  return { id: vector.id, results };
}
