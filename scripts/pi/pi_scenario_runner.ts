// Runs a scenario vector through the pi extension (src/adapters/pi/extension.ts) with
// pi's REAL SessionManager: reads are tool calls executed like pi's agent
// loop, `/tree` moves are `sessionManager.branch(id)`, compaction is
// `appendCompaction`, forks are `createBranchedSession` (a new session file),
// restarts reopen the session JSONL with `SessionManager.open` under a new
// extension instance, refreshes go through `/readcache-refresh` or the
// `readcache_refresh` tool. With `events: false` no pi event is delivered,
// which shows that correctness does not depend on them.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createBashToolDefinition,
  createEditToolDefinition,
  createGrepToolDefinition,
  createWriteToolDefinition,
  SessionManager,
} from "@mariozechner/pi-coding-agent";
import { FsObjectStore } from "../../src/store/fs_object_store.ts";
import {
  createReadcacheExtension,
  type PiCacheEvent,
  type PiToolDefinition,
} from "../../src/adapters/pi/extension.ts";
import { parseReadCacheMeta } from "../../src/core/meta.ts";
import { locateRead } from "../../src/shell/read_service.ts";
import {
  applyFileStep,
  editArgsOf,
  injectStoreFault,
  readRequestOf,
  type ScenarioOutput,
  startsTurn,
  type StepResult,
  turnCallSteps,
  writeVectorFile,
} from "../../src/conformance/session_simulator.ts";
import type {
  ScenarioInput as Scenario,
  ScenarioInputStep as ScenarioStep,
} from "../../src/conformance/vector_schema.ts";
import { FakePiHost } from "./pi_host.ts";

/** Options of {@linkcode runScenarioOnPi}. */
export interface PiRunOptions {
  /** Deliver pi's session events to the extension (default true). */
  events?: boolean;
  /**
   * The extension's `saveReplayEvery` (SPEC §6.5). Default 1: a file-backed
   * session's replay is saved at every quiet read, so every restart, `/tree`
   * and fork of a vector continues from a saved replay where one is on the
   * branch (the port exercises saved replays as much as it can: they are
   * not weighed against the walk, `weighSavedReplay: false`).
   */
  saveReplayEvery?: number;
}

type ReadStep = Extract<ScenarioStep, { op: "read" }>;
type CallStep = Extract<ScenarioStep, { op: "read" | "writeTool" | "editTool" | "bash" | "grep" }>;

/**
 * The tool call a call step makes: pi's `read` (our override), or pi's own
 * `write`, `edit`, `bash` or `grep`.
 */
function toolCallOf(s: CallStep): { name: string; args: Record<string, unknown> } {
  switch (s.op) {
    case "read":
      return { name: "read", args: readArgs(s) };
    case "writeTool":
      return { name: "write", args: { path: s.path, content: s.content } };
    case "editTool":
      return { name: "edit", args: editArgsOf(s) };
    case "bash":
      return { name: "bash", args: { command: s.command } };
    case "grep":
      return {
        name: "grep",
        args: s.path === undefined ? { pattern: s.pattern } : { pattern: s.pattern, path: s.path },
      };
  }
}

/** The `read` tool's arguments for a read step: the request plus `bypass_cache`. */
function readArgs(s: ReadStep): Record<string, unknown> {
  const args: Record<string, unknown> = { ...readRequestOf(s) };
  if (s.bypass !== undefined) args.bypass_cache = s.bypass;
  return args;
}

function needsFile(vector: Scenario): boolean {
  return vector.steps.some((s) => s.op === "fork" || s.op === "restart");
}

/**
 * Runs one scenario vector in `cwd` (an empty directory; `home` for `~`) and
 * returns the port output.
 */
export async function runScenarioOnPi(
  vector: Scenario,
  cwd: string,
  home: string,
  options: PiRunOptions = {},
): Promise<ScenarioOutput> {
  const events = options.events !== false;
  const sessionDir = needsFile(vector)
    ? mkdtempSync(join(tmpdir(), "readcache-pi-sessions-"))
    : undefined;
  try {
    return await run(vector, cwd, home, events, sessionDir, options.saveReplayEvery ?? 1);
  } finally {
    if (sessionDir !== undefined) rmSync(sessionDir, { recursive: true, force: true });
  }
}

async function run(
  vector: Scenario,
  cwd: string,
  home: string,
  events: boolean,
  sessionDir: string | undefined,
  saveReplayEvery: number,
): Promise<ScenarioOutput> {
  const write = (rel: string, c: string | { base64: string }) => writeVectorFile(cwd, rel, c);
  for (const [rel, c] of Object.entries(vector.files)) write(rel, c);

  const config = { ...vector.config };
  const store = FsObjectStore.forCwd(cwd);
  const start = (session: SessionManager): FakePiHost => {
    const host = new FakePiHost(session, cwd);
    // pi's own write and edit tools, as pi registers them next to the extension's read
    host.registerTool(createWriteToolDefinition(cwd) as unknown as PiToolDefinition);
    host.registerTool(createEditToolDefinition(cwd) as unknown as PiToolDefinition);
    host.registerTool(createBashToolDefinition(cwd) as unknown as PiToolDefinition);
    host.registerTool(createGrepToolDefinition(cwd) as unknown as PiToolDefinition);
    createReadcacheExtension({
      config,
      home: () => home,
      saveReplayEvery,
      weighSavedReplay: false,
    })(host);
    if (events) host.emit("session_start");
    return host;
  };
  const emit = (event: PiCacheEvent) => {
    if (events) host.emit(event);
  };

  let host = start(
    sessionDir === undefined
      ? SessionManager.inMemory(cwd)
      : SessionManager.create(cwd, sessionDir),
  );
  const labels = new Map<string, string>();
  const callIds = new Map<number, string>(); // call step index -> tool call id
  const startTurn = (index: number) => {
    // one assistant message carries every call of this turn
    const turn = turnCallSteps(vector.steps, index);
    const ids = host.assistantToolCalls(turn.map((i) => toolCallOf(vector.steps[i] as CallStep)));
    turn.forEach((i, k) => callIds.set(i, ids[k]));
  };
  const lastServed = new Map<string, string>(); // pathKey -> servedHash
  const results: StepResult[] = [];

  const leaf = (index: number): string => {
    const id = host.session.getLeafId();
    if (id === null) throw new Error(`step ${index}: the session is empty`);
    return id;
  };

  const step = async (s: ScenarioStep, index: number): Promise<void> => {
    // a step that is neither a call nor a file change ends the turn: deferred results never come
    if (
      !["read", "writeTool", "editTool", "bash", "grep", "write", "remove", "symlink", "storeFault"]
        .includes(s.op)
    ) {
      host.dropDeferred();
    }
    switch (s.op) {
      case "read": {
        if (startsTurn(vector.steps, index)) startTurn(index);
        const args = readArgs(s);
        const out = await host.runTool(callIds.get(index)!, "read", args, {
          persist: s.persist !== false,
        });
        if (!out.ok) {
          results.push({ step: index, error: out.error });
          return;
        }
        const details = out.result.details as { readcache?: unknown } | undefined;
        const meta = parseReadCacheMeta(details?.readcache);
        if (details?.readcache !== undefined && meta === undefined) {
          throw new Error(`step ${index}: the extension wrote invalid details.readcache`);
        }
        const r: StepResult = { step: index, mode: meta?.mode ?? null, text: out.text };
        if (meta) {
          r.scope = meta.scopeKey;
          lastServed.set(meta.pathKey, meta.servedHash);
        }
        results.push(r);
        return;
      }
      case "writeTool": {
        if (startsTurn(vector.steps, index)) startTurn(index);
        const { name, args } = toolCallOf(s);
        const out = await host.runTool(callIds.get(index)!, name, args, {
          persist: s.persist ?? true,
        });
        if (!out.ok) throw new Error(`step ${index}: pi's write failed: ${out.error}`);
        return;
      }
      case "editTool": {
        if (startsTurn(vector.steps, index)) startTurn(index);
        const { name, args } = toolCallOf(s);
        // pi's edit may refuse (its error is the tool result, as in pi)
        await host.runTool(callIds.get(index)!, name, args, { persist: s.persist ?? true });
        return;
      }
      case "bash":
      case "grep": {
        if (startsTurn(vector.steps, index)) startTurn(index);
        const { name, args } = toolCallOf(s);
        // pi's own tool; a command that fails is an error result, as in pi
        await host.runTool(callIds.get(index)!, name, args, {
          persist: s.persist ?? true,
          withoutResultHooks: s.record === false,
        });
        return;
      }
      case "write":
      case "remove":
      case "symlink":
        applyFileStep(cwd, s);
        return;
      case "message":
        host.userMessage(`message at step ${index}`);
        return;
      case "cutMessage":
        // pi runs none of its calls (and leaves the message out of the model's context)
        host.assistantToolCalls(
          s.calls.map((c) => ({
            name: c.tool,
            args: c.tool === "bash" ? { command: c.command ?? "true" } : {
              path: c.path ?? "a.txt",
              ...(c.tool === "write" ? { content: c.content ?? "" } : {}),
              ...(c.tool === "edit" ? { edits: [{ oldText: "x", newText: "y" }] } : {}),
            },
          })),
          s.stopReason,
        );
        return;
      case "label":
        labels.set(s.name, leaf(index));
        return;
      case "navigate": {
        const to = labels.get(s.to);
        if (to === undefined || host.session.getEntry(to) === undefined) {
          throw new Error(`step ${index}: no label '${s.to}' in this session`);
        }
        host.session.branch(to);
        emit("session_tree");
        return;
      }
      case "compact": {
        const kept = s.firstKept === undefined ? undefined : labels.get(s.firstKept);
        host.session.appendCompaction(
          `summary at step ${index}`,
          kept ?? host.session.getBranch()[0]?.id ?? leaf(index),
          1000,
        );
        emit("session_compact");
        return;
      }
      case "fork": {
        emit("session_before_fork");
        const file = host.session.createBranchedSession(leaf(index));
        if (file === undefined) throw new Error(`step ${index}: fork needs a file-backed session`);
        emit("session_start");
        return;
      }
      case "restart": {
        emit("session_shutdown");
        const file = host.session.getSessionFile();
        if (file === undefined) {
          throw new Error(`step ${index}: restart needs a file-backed session`);
        }
        host = start(SessionManager.open(file, sessionDir));
        return;
      }
      case "invalidate": {
        if (s.offset !== undefined || s.limit !== undefined) {
          const args: Record<string, unknown> = { path: s.path };
          if (s.offset !== undefined) args.offset = s.offset;
          if (s.limit !== undefined) args.limit = s.limit;
          // a failed refresh (e.g. a range of a missing file) is an error result; nothing else
          await host.callTool("readcache_refresh", args);
        } else {
          // a failed refresh is reported with ui.notify and appends nothing
          await host.command("readcache-refresh", s.path);
        }
        return;
      }
      case "storeFault": {
        const hash = lastServed.get(locateRead({ path: s.path }, { cwd, home }).pathKey);
        if (hash === undefined) throw new Error(`step ${index}: nothing served yet for ${s.path}`);
        injectStoreFault(store, hash, s.fault);
        return;
      }
    }
  };

  for (let i = 0; i < vector.steps.length; i++) await step(vector.steps[i], i);
  return { id: vector.id, results };
}
