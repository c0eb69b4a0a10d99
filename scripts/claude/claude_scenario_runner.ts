/**
 * Runs a scenario vector through the Claude Code host
 * (src/adapters/claude/host.ts) on a model of Claude Code: its transcript
 * (rows written as Claude Code 2.1.332 writes them, SPEC §11.9), its `Read`,
 * `Write` and `Bash` on real files in `cwd`, and its `PostToolUse` hook.
 *
 * How each scenario step (SPEC §10) becomes Claude Code:
 *
 * - a call step that starts a turn writes one assistant message: a row per
 *   call of the turn (`Read`, `Write`, `Bash`), each the child of the one
 *   before, all with the message's id; a prompt row comes first when the
 *   chain has none;
 * - every call runs as Claude Code runs a tool: the `PreToolUse` hook gets its
 *   input, the tool runs on the files, then (when it succeeded) the
 *   `PostToolUse` hook gets its input and result and may
 *   replace the result, which is written as the call's result row (a child
 *   of the row holding the call; `toolUseResult` is the result as replaced).
 *   A failed call's result row is an error and the hook is not called. With
 *   `persist: false` no result row is written (the call never returned);
 * - `read`: Claude Code's `Read` of `<cwd>/<path>` (every path the model types
 *   is absolute), `offset`/`limit` as given (2,000 lines by default); the
 *   step's result is the `content` the model got (the hook's answer, or
 *   Claude Code's own lines) with the project directory written as the vector
 *   names files (relative), and the metadata's mode and scope;
 * - `writeTool`: Claude Code's `Write` (the content as given); `editTool`: its
 *   `Edit` of one replacement (`old_string` found exactly once); `bash`: the
 *   command, run in `cwd` (its standard output and error as Claude Code
 *   joins them); `grep`: its `Grep` in `content` mode with line numbers
 *   (ripgrep's rows, {@linkcode claudeGrep});
 * - `write`, `remove`, `symlink`: another process changes the files;
 * - `message`: a prompt row; `compact`: `/compact` (a `compact_boundary` row
 *   with no parent, then the summary row);
 * - `label` / `navigate`: a label is the chain's newest row; a move writes
 *   the next row as its child (Claude Code's rewind);
 * - `fork`: `--fork-session`: a new transcript holding the chain's rows;
 * - `restart`: a new host over the same transcript and store;
 * - `storeFault`: deletes or corrupts the host's stored object
 *   (`<cwd>/.claude/readcache`) of the content last served for the path.
 *
 * Steps that do not apply (claude_expectations.ts) throw
 * {@linkcode NotApplicableStep}.
 *
 * @module
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import {
  ClaudeCodeHost,
  type ClaudeHookOutput,
  claudeReadText,
} from "../../src/adapters/claude/host.ts";
import { parseReadCacheMeta } from "../../src/core/meta.ts";
import { FsObjectStore } from "../../src/store/fs_object_store.ts";
import {
  applyFileStep,
  injectStoreFault,
  runBashStep,
  type ScenarioOutput,
  searchedFiles,
  startsTurn,
  type StepResult,
  turnCallSteps,
  writeVectorFile,
} from "../../src/conformance/session_simulator.ts";
import { singleReplacement } from "../opencode/opencode_scenario_runner.ts";
import type {
  ScenarioInput,
  ScenarioInputStep as ScenarioStep,
} from "../../src/conformance/vector_schema.ts";

/** A step the Claude Code port cannot run (see claude_expectations.ts). */
export class NotApplicableStep extends Error {
  /** `index`: the step; `why`: the reason. */
  constructor(readonly index: number, readonly why: string) {
    super(`step ${index} does not apply to Claude Code: ${why}`);
  }
}

/** What the runner calls for each hook: a host, or a test's variant of one. */
export interface HookHandler {
  handle(input: unknown): Promise<ClaudeHookOutput>;
}

/** Options of {@linkcode runScenarioOnClaude}. */
export interface ClaudeRunOptions {
  /**
   * Makes the host (default: a `ClaudeCodeHost` with the vector's configuration and the store in
   * `<cwd>/.claude/readcache`); a test passes a variant with a planted bug.
   */
  host?: (make: () => ClaudeCodeHost) => HookHandler;
  /** Called after `Read` ran for the read step `step`, with the bytes of the file. */
  onRead?: (step: number, bytes: Uint8Array | undefined) => void;
  /**
   * `repeated`: every response has the same API id (`message.id`), as behind a gateway or a
   * scripted API that restarts its ids; the host must answer as with unique ids.
   */
  messageIds?: "unique" | "repeated";
  /**
   * `false`: rows carry no `requestRef` (Claude Code leaves it out where it did not log the
   * request, or a hook changed it): the host cannot prove which rows are one response.
   */
  requestRefs?: boolean;
}

type CallStep = Extract<ScenarioStep, { op: "read" | "writeTool" | "editTool" | "bash" | "grep" }>;

/** Claude Code's default number of lines a `Read` shows. */
const READ_LINES = 2000;

type Outcome = { ok: true; response: Record<string, unknown>; text: string } | {
  ok: false;
  error: string;
};

/** Claude Code's `Read` of a text file, as far as the host sees it. */
function claudeRead(path: string, offset: number | undefined, limit: number | undefined): Outcome {
  let st;
  try {
    st = statSync(path);
  } catch {
    return { ok: false, error: "File does not exist." };
  }
  if (st.isDirectory()) return { ok: false, error: "EISDIR: illegal operation on a directory" };
  const lines = readFileSync(path, "utf8").split("\n");
  const start = offset === undefined || offset < 1 ? 1 : offset;
  const shown = lines.slice(start - 1, start - 1 + (limit ?? READ_LINES));
  const file = {
    filePath: path,
    content: shown.join("\n"),
    numLines: shown.length,
    startLine: start,
    totalLines: lines.length,
  };
  return { ok: true, response: { type: "text", file }, text: file.content };
}

/**
 * Claude Code's `Edit`, as far as the host sees it: `old_string` must occur
 * exactly once (else the edit fails and nothing changes); it is replaced.
 */
function claudeEdit(path: string, oldText: string, newText: string): Outcome {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return { ok: false, error: "File does not exist." };
  }
  const at = text.indexOf(oldText);
  if (at < 0) return { ok: false, error: "String to replace not found in file." };
  if (text.indexOf(oldText, at + 1) >= 0) {
    return {
      ok: false,
      error: "Found 2 matches of the string to replace, but replace_all is false.",
    };
  }
  Deno.writeTextFileSync(path, text.slice(0, at) + newText + text.slice(at + oldText.length));
  return {
    ok: true,
    response: {
      filePath: path,
      oldString: oldText,
      newString: newText,
      originalFile: text,
      structuredPatch: [],
      userModified: false,
      replaceAll: false,
    },
    text: `The file ${path} has been updated successfully.`,
  };
}

/**
 * Claude Code's `Grep` in `content` mode with line numbers, as far as the
 * host sees it: ripgrep's rows of the lines matching `pattern` in the files
 * under `path` (the cwd by default; hidden files included, a symbolic link
 * met while walking skipped, files holding a NUL byte and this port's store
 * left out), `N:text` for a search of one file, `path:N:text` (relative to
 * the cwd) otherwise; every match, no cut. A path that does not exist fails
 * the call.
 */
export function claudeGrep(
  pattern: string,
  path: string | undefined,
  cwd: string,
  storeRoot: string,
): Outcome {
  const at = resolve(cwd, path ?? ".");
  let one: boolean;
  try {
    one = statSync(at).isFile();
  } catch {
    return { ok: false, error: `Path does not exist: ${at}` };
  }
  const re = new RegExp(pattern);
  const rows: string[] = [];
  const filenames: string[] = [];
  // this port's store is left out
  for (const p of searchedFiles(at, storeRoot)) {
    const bytes = readFileSync(p);
    if (bytes.includes(0)) continue;
    const lines = new TextDecoder().decode(bytes).split("\n");
    if (lines.at(-1) === "") lines.pop();
    const before = rows.length;
    lines.forEach((l, i) => {
      if (re.test(l)) rows.push(one ? `${i + 1}:${l}` : `${relative(cwd, p)}:${i + 1}:${l}`);
    });
    if (rows.length > before) filenames.push(p);
  }
  const content = rows.join("\n");
  return {
    ok: true,
    response: {
      mode: "content",
      numFiles: filenames.length,
      filenames,
      content,
      numLines: rows.length,
    },
    text: content,
  };
}

/** The text Claude Code shows for a tool result (a `Read`'s lines numbered). */
function shownText(tool: string, response: Record<string, unknown>): string {
  if (tool !== "Read") return String(response.stdout ?? response.content ?? "");
  return claudeReadText(response.file as { content: string; startLine: number });
}

/**
 * Runs one scenario vector in `cwd` (an empty directory, a real path) and
 * returns the port output: the texts the model got (paths under `cwd`
 * written relative, as the vector names them).
 */
export async function runScenarioOnClaude(
  vector: ScenarioInput,
  cwd: string,
  _home: string,
  options: ClaudeRunOptions = {},
): Promise<ScenarioOutput> {
  for (const [rel, c] of Object.entries(vector.files)) writeVectorFile(cwd, rel, c);
  const root = await Deno.makeTempDir({ prefix: "readcache-claude-port-" });
  const objects = new FsObjectStore(join(cwd, ".claude", "readcache"), { projectRoot: cwd });
  const make = () => new ClaudeCodeHost({ config: { ...vector.config }, storeFor: () => objects });
  const start = (): HookHandler => options.host?.(make) ?? make();
  let host = start();
  let session = 1;
  let transcript = join(root, `session-${session}.jsonl`);
  let rowsOf = new Map<string, Record<string, unknown>>(); // uuid -> row (this transcript)
  let tip: string | null = null;
  let n = 0;
  let messageId = "";
  const results: StepResult[] = [];
  const labels = new Map<string, string | null>();
  const callRow = new Map<number, { id: string; row: string; tool: string }>();
  const lastServed = new Map<string, string>();

  const write = async (row: Record<string, unknown>): Promise<string> => {
    const uuid = `row-${++n}`;
    const full = { ...row, uuid, sessionId: `s${session}`, cwd };
    rowsOf.set(uuid, full);
    await Deno.writeTextFile(transcript, JSON.stringify(full) + "\n", { append: true });
    return uuid;
  };
  const chainRow = async (row: Record<string, unknown>): Promise<string> => {
    const uuid = await write({ parentUuid: tip, ...row });
    tip = uuid;
    return uuid;
  };

  const toolCallOf = (s: CallStep, index: number) => {
    const path = "path" in s && s.path !== undefined ? join(cwd, s.path) : cwd;
    switch (s.op) {
      case "read": {
        const input: Record<string, unknown> = { file_path: path };
        if (s.offset !== undefined) input.offset = s.offset;
        if (s.limit !== undefined) input.limit = s.limit;
        return { tool: "Read", input };
      }
      case "writeTool":
        return { tool: "Write", input: { file_path: path, content: s.content } };
      case "bash":
        return { tool: "Bash", input: { command: s.command } };
      case "grep": {
        const input: Record<string, unknown> = { pattern: s.pattern };
        if (s.path !== undefined) input.path = path;
        return { tool: "Grep", input: { ...input, output_mode: "content", "-n": true } };
      }
      case "editTool": {
        const r = singleReplacement(s);
        if (r === undefined) {
          throw new NotApplicableStep(index, "an edit of other than one replacement");
        }
        return {
          tool: "Edit",
          input: {
            file_path: path,
            old_string: r.oldText,
            new_string: r.newText,
            replace_all: false,
          },
        };
      }
    }
  };

  const startTurn = async (index: number): Promise<void> => {
    if (tip === null || rowsOf.get(tip)?.type === "system") {
      await chainRow({ type: "user", message: { role: "user", content: "go" } });
    }
    messageId = options.messageIds === "repeated" ? "msg_same" : `msg_${index}`;
    // Claude Code's own id of the request (2.1.332 writes it on each row of the response)
    const requestRef = `req_${session}_${index}`;
    for (const i of turnCallSteps(vector.steps, index)) {
      const { tool, input } = toolCallOf(vector.steps[i] as CallStep, i);
      const id = `toolu_${i}`;
      const row = await chainRow({
        type: "assistant",
        ...(options.requestRefs === false ? {} : { requestRef }),
        message: {
          id: messageId,
          role: "assistant",
          content: [{ type: "tool_use", id, name: tool, input }],
        },
      });
      callRow.set(i, { id, row, tool });
    }
  };

  /** Runs a call step's tool, the hook, and writes its result row. */
  const call = async (index: number, s: CallStep, run: () => Outcome): Promise<Outcome> => {
    if (startsTurn(vector.steps, index)) await startTurn(index);
    const c = callRow.get(index)!;
    const { input } = toolCallOf(s, index);
    const hooked = !("record" in s && s.record === false);
    const hookInput = {
      session_id: `s${session}`,
      transcript_path: transcript,
      cwd,
      tool_name: c.tool,
      tool_input: input,
      tool_use_id: c.id,
    };
    // Claude Code calls PreToolUse hooks before the tool runs, PostToolUse ones when it succeeded
    if (hooked) await host.handle({ ...hookInput, hook_event_name: "PreToolUse" });
    const outcome = run();
    const persist = !("persist" in s) || s.persist !== false;
    /** The call's result row: a child of the row holding the call; the chain goes on from it. */
    const writeResult = async (block: Record<string, unknown>, toolUseResult?: unknown) => {
      tip = await write({
        parentUuid: c.row,
        type: "user",
        message: { role: "user", content: [{ type: "tool_result", tool_use_id: c.id, ...block }] },
        ...(toolUseResult === undefined ? {} : { toolUseResult }),
      });
    };
    if (!outcome.ok) {
      if (persist) await writeResult({ content: outcome.error, is_error: true });
      return outcome;
    }
    let out: ClaudeHookOutput = {};
    if (hooked) {
      out = await host.handle({
        ...hookInput,
        hook_event_name: "PostToolUse",
        tool_response: outcome.response,
      });
    }
    const response = (out.hookSpecificOutput?.updatedToolOutput ?? outcome.response) as Record<
      string,
      unknown
    >;
    if (persist) await writeResult({ content: shownText(c.tool, response) }, response);
    return {
      ok: true,
      response,
      text: c.tool === "Read" ? (response.file as { content: string }).content : outcome.text,
    };
  };

  const step = async (s: ScenarioStep, index: number): Promise<void> => {
    switch (s.op) {
      case "read": {
        if (s.bypass !== undefined) throw new NotApplicableStep(index, "bypass");
        const path = join(cwd, s.path);
        const out = await call(index, s, () => {
          const r = claudeRead(path, s.offset, s.limit);
          if (options.onRead !== undefined) {
            options.onRead(index, existsSync(path) ? readFileSync(path) : undefined);
          }
          return r;
        });
        if (!out.ok) return void results.push({ step: index, error: out.error });
        const file = out.response.file as { readcache?: unknown };
        const meta = file.readcache === undefined ? undefined : parseReadCacheMeta(file.readcache);
        if (file.readcache !== undefined && meta === undefined) {
          throw new Error(`step ${index}: the host wrote invalid readcache metadata`);
        }
        const text = out.text.replaceAll(`${cwd}/`, "");
        const r: StepResult = { step: index, mode: meta?.mode ?? null, text };
        if (meta) {
          r.scope = meta.scopeKey;
          lastServed.set(meta.pathKey, meta.servedHash);
        }
        results.push(r);
        return;
      }
      case "writeTool":
        await call(index, s, () => {
          writeVectorFile(cwd, s.path, s.content);
          const p = join(cwd, s.path);
          return {
            ok: true,
            response: { type: "create", filePath: p, content: s.content },
            text: "",
          };
        });
        return;
      case "bash":
        await call(index, s, () => {
          const stdout = runBashStep(s.command, cwd);
          return {
            ok: true,
            response: { stdout, stderr: "", interrupted: false, isImage: false },
            text: stdout,
          };
        });
        return;
      case "editTool":
        await call(index, s, () => {
          const { input } = toolCallOf(s, index);
          return claudeEdit(
            String(input.file_path),
            String(input.old_string),
            String(input.new_string),
          );
        });
        return;
      case "grep":
        await call(index, s, () => claudeGrep(s.pattern, s.path, cwd, objects.root));
        return;
      case "cutMessage":
      case "invalidate":
        throw new NotApplicableStep(index, s.op);
      case "write":
      case "remove":
      case "symlink":
        applyFileStep(cwd, s);
        return;
      case "message":
        await chainRow({ type: "user", message: { role: "user", content: `message ${index}` } });
        return;
      case "label":
        labels.set(s.name, tip);
        return;
      case "navigate": {
        if (!labels.has(s.to)) throw new Error(`step ${index}: no label '${s.to}'`);
        const to = labels.get(s.to)!;
        if (to !== null && !rowsOf.has(to)) {
          throw new NotApplicableStep(index, `label '${s.to}' is in another session`);
        }
        tip = to;
        return;
      }
      case "compact": {
        const logical = tip;
        tip = null;
        await chainRow({ type: "system", subtype: "compact_boundary", logicalParentUuid: logical });
        await chainRow({
          type: "user",
          isCompactSummary: true,
          message: { role: "user", content: "This session is being continued ..." },
        });
        return;
      }
      case "fork": {
        // --fork-session: a new transcript with the rows of the chain, same ids
        const chain: Record<string, unknown>[] = [];
        for (let id = tip; id !== null;) {
          const row = rowsOf.get(id);
          if (row === undefined) break;
          chain.push(row);
          if (row.type === "system" && row.subtype === "compact_boundary") break;
          id = row.parentUuid as string | null;
        }
        // results of the chain's messages that are not on it (parallel calls) go along
        const onChain = new Set(chain.map((r) => r.uuid as string));
        const siblings = [...rowsOf.values()].filter((r) =>
          !onChain.has(r.uuid as string) && onChain.has(r.parentUuid as string) &&
          r.toolUseResult !== undefined
        );
        session++;
        transcript = join(root, `session-${session}.jsonl`);
        rowsOf = new Map();
        const rows = [...chain.reverse(), ...siblings];
        for (const r of rows) rowsOf.set(r.uuid as string, r);
        await Deno.writeTextFile(transcript, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
        return;
      }
      case "restart":
        host = start();
        return;
      case "storeFault": {
        const key = Deno.realPathSync(join(cwd, s.path));
        const hash = lastServed.get(key);
        if (hash === undefined) throw new Error(`step ${index}: nothing served yet for ${s.path}`);
        injectStoreFault(objects, hash, s.fault);
        return;
      }
    }
  };

  try {
    for (let i = 0; i < vector.steps.length; i++) await step(vector.steps[i], i);
  } finally {
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
  return { id: vector.id, results };
}
