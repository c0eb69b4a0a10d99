// End to end in a REAL pi process: `pi --mode rpc -e <this repository>` against a scripted mock
// OpenAI Chat Completions server on 127.0.0.1, driven through the steps of the scenario vector
// `vectors/scenario/pi-e2e-session.json`. The read results are taken from the session JSONL pi
// wrote and checked with `compareScenario`; the text of every read is also checked against what
// pi sent to the model (the `role:"tool"` messages the mock received). The model's `write` and
// `edit` calls run pi's own tools; an edit's result must carry the belief (`details.readcache`,
// SPEC §5.9) in the session, and the file must hold what our copy of pi's edit rules computes.
//
// Needs `deno install` (pi 0.73.1 in node_modules) and Node on PATH. Set READCACHE_E2E_KEEP=1 to
// keep the temporary directory (session JSONL, work dir) for inspection.
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeMockAgentConfig } from "./support/mock_agent.ts";
import { compareScenario } from "../../src/conformance/scenario_compare.ts";
import {
  editArgsOf,
  type ScenarioOutput,
  type StepResult,
} from "../../src/conformance/session_simulator.ts";
import { applyPiEdit, editCallArgs } from "../../src/core/edit.ts";
import {
  type Scenario,
  ScenarioSchema,
  type ScenarioStep,
} from "../../src/conformance/vector_schema.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
const PI_CLI = join(REPO, "pi-suite/node_modules/@mariozechner/pi-coding-agent/dist/cli.js");
const TREE_FIXTURE = join(REPO, "tests/pi/fixtures/pi_tree_command.ts");
const VECTOR_FILE = join(REPO, "vectors/scenario/pi-e2e-session.json");

const STEP_TIMEOUT_MS = 20_000;
const TEST_TIMEOUT_MS = 90_000;
const SUMMARIZER_PROMPT = "You are a context summarization assistant";
const READ_PROMPT = "MOCK_READ ";
const EXPECTED_MODES = [
  "full",
  "unchanged",
  "diff",
  "unchanged_range",
  "full", // after compaction
  "unchanged",
  "diff", // after /rc-goto back to the leaf before the edit
  "full", // after /readcache-refresh
  "unchanged", // a file the model wrote with pi's write tool (SPEC §5.8)
  "unchanged", // a file the model edited with pi's edit tool (SPEC §5.9)
  "diff", // the old content put back by another process: a diff against the belief
];

// ---------------------------------------------------------------------------------------------
// Scripted mock of the OpenAI Chat Completions API (streaming only)

interface ChatPart {
  type: string;
  text?: string;
}

interface ChatMessage {
  role: string;
  content?: string | ChatPart[] | null;
  tool_call_id?: string;
}

interface ChatRequest {
  model?: string;
  stream?: boolean;
  messages?: ChatMessage[];
  tools?: unknown[];
}

type MockAnswer =
  | { kind: "text"; text: string }
  | { kind: "tool"; id: string; name: string; args: string };

/** What a read step's prompt carries: the step index and the arguments of the `read` call. */
interface ReadScript {
  step: number;
  args: Record<string, unknown>;
  /** The tool the model calls: pi's `read` (our override) by default, or pi's own `write`/`edit`. */
  tool?: "read" | "write" | "edit";
}

function chatText(content: ChatMessage["content"]): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((p) => (p.type === "text" ? p.text ?? "" : "")).join("");
  }
  return "";
}

function callIdFor(step: number): string {
  return `call_step${step}`;
}

class MockLlm {
  /** Every request body received, in order. */
  readonly requests: ChatRequest[] = [];
  /** Anything the script did not expect; the test requires it to stay empty. */
  readonly problems: string[] = [];
  /** Texts of the `role:"tool"` messages received, by tool_call_id (deduplicated). */
  readonly toolMessages: Map<string, Set<string>> = new Map();
  summarizations = 0;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;

  constructor() {
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (req) => this.#handle(req),
    );
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.#server.addr.port}/v1`;
  }

  close(): Promise<void> {
    return this.#server.shutdown();
  }

  async #handle(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname;
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      this.problems.push(`unexpected request ${req.method} ${path}`);
      return Response.json({ error: { message: `mock: no route ${path}` } }, { status: 404 });
    }
    let body: ChatRequest;
    try {
      body = await req.json() as ChatRequest;
    } catch (e) {
      this.problems.push(`request body is not JSON: ${e}`);
      return Response.json({ error: { message: "mock: bad JSON" } }, { status: 400 });
    }
    this.requests.push(body);
    if (body.stream !== true) {
      this.problems.push("non-streaming request");
      return Response.json({ error: { message: "mock: stream only" } }, { status: 400 });
    }
    for (const m of body.messages ?? []) {
      if (m.role !== "tool" || m.tool_call_id === undefined) continue;
      const seen = this.toolMessages.get(m.tool_call_id) ?? new Set<string>();
      seen.add(chatText(m.content));
      this.toolMessages.set(m.tool_call_id, seen);
    }
    const answer = this.#decide(body);
    return new Response(sse(body.model ?? "mock-model", answer, this.requests.length), {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  }

  #decide(body: ChatRequest): MockAnswer {
    const msgs = body.messages ?? [];
    // Summarization first: its serialized conversation contains the earlier prompts.
    const system = msgs.filter((m) => m.role === "system" || m.role === "developer")
      .map((m) => chatText(m.content)).join("\n");
    if ((body.tools ?? []).length === 0 && system.startsWith(SUMMARIZER_PROMPT)) {
      this.summarizations++;
      return { kind: "text", text: "summary" };
    }
    const lastUser = msgs.findLastIndex((m) => m.role === "user");
    const prompt = lastUser === -1 ? "" : chatText(msgs[lastUser].content);
    if (!prompt.startsWith(READ_PROMPT)) {
      this.problems.push(`unscripted request, last user message ${JSON.stringify(prompt)}`);
      return { kind: "text", text: "unscripted" };
    }
    if (msgs.slice(lastUser + 1).some((m) => m.role === "tool")) {
      return { kind: "text", text: "done" };
    }
    const script = JSON.parse(prompt.slice(READ_PROMPT.length)) as ReadScript;
    return {
      kind: "tool",
      id: callIdFor(script.step),
      name: script.tool ?? "read",
      args: JSON.stringify(script.args),
    };
  }
}

function sse(model: string, answer: MockAnswer, n: number): string {
  const id = `chatcmpl-mock-${n}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): unknown => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices,
    ...extra,
  });
  const delta = (d: Record<string, unknown>, finish: string | null = null): unknown =>
    chunk([{ index: 0, delta: d, finish_reason: finish }]);
  const events: unknown[] = [delta({ role: "assistant", content: "" })];
  if (answer.kind === "tool") {
    events.push(
      delta({
        tool_calls: [{
          index: 0,
          id: answer.id,
          type: "function",
          function: { name: answer.name, arguments: "" },
        }],
      }),
      delta({ tool_calls: [{ index: 0, function: { arguments: answer.args } }] }),
      delta({}, "tool_calls"),
    );
  } else {
    events.push(delta({ content: answer.text }), delta({}, "stop"));
  }
  events.push(chunk([], { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
  return events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") + "data: [DONE]\n\n";
}

// ---------------------------------------------------------------------------------------------
// A pi process in RPC mode: JSON lines on stdin, JSON lines on stdout

interface RpcMessage {
  type: string;
  id?: string;
  command?: string;
  success?: boolean;
  error?: string;
  data?: unknown;
  method?: string;
  message?: unknown;
  notifyType?: string;
}

interface Waiter {
  what: string;
  pred: (m: RpcMessage) => boolean;
  resolve: (m: RpcMessage) => void;
  reject: (e: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

class PiRpc {
  readonly stdoutLines: string[] = [];
  readonly stderrLines: string[] = [];
  readonly extensionErrors: RpcMessage[] = [];
  readonly status: Promise<Deno.CommandStatus>;
  readonly #child: Deno.ChildProcess;
  readonly #stdin: WritableStreamDefaultWriter<Uint8Array>;
  readonly #pumps: Promise<void>[];
  readonly #deadline: number;
  #waiters: Waiter[] = [];
  #fatal: Error | undefined;
  #exited: Deno.CommandStatus | undefined;
  #stdinClosed = false;
  #seq = 0;

  constructor(args: string[], cwd: string, env: Record<string, string>, deadline: number) {
    this.#deadline = deadline;
    this.#child = new Deno.Command("node", {
      args,
      cwd,
      env,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#stdin = this.#child.stdin.getWriter();
    this.#pumps = [
      pumpLines(this.#child.stdout, (line) => this.#onStdout(line)),
      pumpLines(this.#child.stderr, (line) => void this.stderrLines.push(line)),
    ];
    this.status = this.#child.status.then((s) => {
      this.#exited = s;
      this.#fail(new Error(`pi exited (code ${s.code}, signal ${s.signal})`));
      return s;
    });
  }

  /** The last 20 stdout and stderr lines, for failure messages. */
  diagnostics(): string {
    const tail = (lines: string[]): string =>
      lines.slice(-20).map((l) => `    ${l.length > 400 ? `${l.slice(0, 400)}...` : l}`)
        .join("\n") || "    (none)";
    return `  pi stdout (last 20 lines):\n${tail(this.stdoutLines)}\n` +
      `  pi stderr (last 20 lines):\n${tail(this.stderrLines)}`;
  }

  /** Waits for the next message matching `pred`; register it BEFORE triggering the message. */
  waitFor(pred: (m: RpcMessage) => boolean, what: string): Promise<RpcMessage> {
    const p = new Promise<RpcMessage>((resolve, reject) => {
      if (this.#fatal) return reject(this.#fatal);
      const ms = Math.max(0, Math.min(STEP_TIMEOUT_MS, this.#deadline - Date.now()));
      const w: Waiter = {
        what,
        pred,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters = this.#waiters.filter((x) => x !== w);
          reject(new Error(`timeout after ${ms} ms waiting for ${what}`));
        }, ms),
      };
      this.#waiters.push(w);
    });
    p.catch(() => {}); // rejections are observed by whoever awaits it
    return p;
  }

  async request(cmd: Record<string, unknown>, what: string): Promise<RpcMessage> {
    const id = `r${++this.#seq}`;
    const res = this.waitFor((m) => m.type === "response" && m.id === id, `response to ${what}`);
    await this.#write({ id, ...cmd });
    return await res;
  }

  /** Sends a prompt the agent answers; resolves with `agent_end`. */
  async prompt(message: string, what: string): Promise<RpcMessage> {
    const end = this.waitFor((m) => m.type === "agent_end", `agent_end of ${what}`);
    const res = await this.request({ type: "prompt", message }, what);
    assert.equal(res.success, true, `prompt rejected: ${res.error}`);
    return await end;
  }

  /** Runs an extension slash command (sent as a prompt); resolves with its notify. */
  async command(message: string, what: string): Promise<RpcMessage> {
    const note = this.waitFor(
      (m) =>
        (m.type === "extension_ui_request" && m.method === "notify") || m.type === "agent_start",
      `notify of ${what}`,
    );
    const res = await this.request({ type: "prompt", message }, what);
    assert.equal(res.success, true, `command rejected: ${res.error}`);
    const m = await note;
    if (m.type === "agent_start") throw new Error(`${message} is no command: it went to the model`);
    return m;
  }

  async closeStdin(): Promise<void> {
    if (this.#stdinClosed) return;
    this.#stdinClosed = true;
    await this.#stdin.close().catch(() => {});
  }

  /** Resolves with the exit status, or `undefined` when pi is still running after `ms`. */
  async waitExit(ms: number): Promise<Deno.CommandStatus | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<undefined>((r) => timer = setTimeout(() => r(undefined), ms));
    try {
      return await Promise.race([this.status, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops pi if it still runs (stdin closed, then SIGTERM, then SIGKILL) and drains its output. */
  async dispose(): Promise<void> {
    await this.closeStdin();
    if (this.#exited === undefined && await this.waitExit(3_000) === undefined) {
      this.#kill("SIGTERM");
      if (await this.waitExit(3_000) === undefined) this.#kill("SIGKILL");
    }
    await this.status;
    await Promise.allSettled(this.#pumps);
    this.#fail(new Error("pi was stopped"));
  }

  #kill(signal: Deno.Signal): void {
    try {
      this.#child.kill(signal);
    } catch {
      // already exited
    }
  }

  async #write(obj: Record<string, unknown>): Promise<void> {
    if (this.#fatal) throw this.#fatal;
    await this.#stdin.write(new TextEncoder().encode(JSON.stringify(obj) + "\n"));
  }

  #fail(e: Error): void {
    this.#fatal ??= e;
    for (const w of this.#waiters) {
      clearTimeout(w.timer);
      w.reject(new Error(`${e.message} while waiting for ${w.what}`));
    }
    this.#waiters = [];
  }

  #onStdout(line: string): void {
    this.stdoutLines.push(line);
    let msg: RpcMessage;
    try {
      msg = JSON.parse(line) as RpcMessage;
    } catch {
      return; // kept in stdoutLines for the diagnostics
    }
    if (msg.type === "extension_error") {
      this.extensionErrors.push(msg);
      this.#fail(new Error(`pi reported an extension error: ${line}`));
      return;
    }
    for (const w of this.#waiters) {
      if (!w.pred(msg)) continue;
      clearTimeout(w.timer);
      this.#waiters = this.#waiters.filter((x) => x !== w);
      w.resolve(msg);
      break;
    }
  }
}

async function pumpLines(
  stream: ReadableStream<Uint8Array>,
  onLine: (line: string) => void,
): Promise<void> {
  let buf = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buf += chunk;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i).replace(/\r$/, "");
      buf = buf.slice(i + 1);
      if (line.trim() !== "") onLine(line);
    }
  }
  if (buf.trim() !== "") onLine(buf);
}

// ---------------------------------------------------------------------------------------------
// Session JSONL and file system helpers

interface SessionMessage {
  role: string;
  toolName?: string;
  toolCallId?: string;
  isError?: boolean;
  content?: ChatPart[] | string;
  details?: { readcache?: { mode?: string; scopeKey?: string; kind?: string; pathKey?: string } };
}

interface SessionEntry {
  type: string;
  id?: string;
  parentId?: string | null;
  customType?: string;
  data?: { kind?: unknown; pathKey?: unknown; scopeKey?: unknown };
  firstKeptEntryId?: string;
  message?: SessionMessage;
}

async function readSession(file: string): Promise<SessionEntry[]> {
  return (await Deno.readTextFile(file)).split("\n").filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as SessionEntry);
}

function messageText(m: SessionMessage): string {
  return typeof m.content === "string" ? m.content : (m.content ?? [])
    .filter((p) => p.type === "text").map((p) => p.text ?? "").join("");
}

/** Every file and directory under `root`, with file sizes, sorted. */
async function listTree(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    for await (const e of Deno.readDir(dir)) {
      const abs = join(dir, e.name);
      const name = rel === "" ? e.name : `${rel}/${e.name}`;
      const st = await Deno.lstat(abs);
      if (st.isDirectory) {
        out.push(`${name}/`);
        await walk(abs, name);
      } else out.push(`${name} ${st.size}`);
    }
  };
  await walk(root, "");
  return out.sort();
}

function fileBytes(c: string | { base64: string }): Uint8Array {
  if (typeof c === "string") return new TextEncoder().encode(c);
  return Uint8Array.from(atob(c.base64), (ch) => ch.charCodeAt(0));
}

async function writeWorkFile(
  work: string,
  rel: string,
  c: string | { base64: string },
): Promise<void> {
  const abs = join(work, rel);
  await Deno.mkdir(dirname(abs), { recursive: true });
  await Deno.writeFile(abs, fileBytes(c));
}

function describe(step: ScenarioStep): string {
  switch (step.op) {
    case "read":
      return `read ${step.path}${step.offset === undefined ? "" : ` offset=${step.offset}`}${
        step.limit === undefined ? "" : ` limit=${step.limit}`
      }`;
    case "label":
      return `label ${step.name}`;
    case "navigate":
      return `navigate to ${step.to}`;
    case "write":
    case "writeTool":
    case "editTool":
    case "invalidate":
      return `${step.op} ${step.path}`;
    default:
      return step.op;
  }
}

// ---------------------------------------------------------------------------------------------

Deno.test("pi rpc e2e: pi-e2e-session vector in a real pi process", async (): Promise<void> => {
  const vector: Scenario = ScenarioSchema.parse(JSON.parse(await Deno.readTextFile(VECTOR_FILE)));
  await Deno.stat(PI_CLI).catch(() => {
    throw new Error(`pi is not installed at ${PI_CLI}: run \`deno install\` first`);
  });
  const deadline = Date.now() + TEST_TIMEOUT_MS;
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "readcache-pi-e2e-" }));
  const agent = join(root, "agent");
  const work = join(root, "work");
  const sessions = join(root, "sessions");
  const mock = new MockLlm();
  let pi: PiRpc | undefined;
  let at = "startup";
  try {
    for (const d of [agent, work, sessions]) await Deno.mkdir(d);
    for (const [rel, c] of Object.entries(vector.files)) await writeWorkFile(work, rel, c);
    await writeMockAgentConfig(agent, mock.baseUrl);

    pi = new PiRpc(
      [
        PI_CLI,
        ...["--mode", "rpc", "--provider", "mock", "--model", "mock-model"],
        ...["--session-dir", sessions],
        "--no-extensions",
        "--no-skills",
        "--no-prompt-templates",
        "--no-context-files",
        "--no-themes",
        ...["-e", REPO, "-e", TREE_FIXTURE],
      ],
      work,
      // the extension's zod and diff: a checkout holds them after `npm install`; here, the pi
      // suite's own node_modules (pi-suite/, kept apart so npm and Deno share the checkout)
      {
        PI_CODING_AGENT_DIR: agent,
        PI_OFFLINE: "1",
        PI_TELEMETRY: "0",
        NODE_PATH: join(REPO, "pi-suite", "node_modules"),
      },
      deadline,
    );

    const state = await pi.request({ type: "get_state" }, "get_state");
    const stateData = state.data as {
      sessionFile?: string;
      model?: { provider?: string; id?: string };
    };
    assert.equal(state.success, true);
    assert.equal(stateData.model?.provider, "mock");
    assert.equal(stateData.model?.id, "mock-model");
    const sessionFile = stateData.sessionFile;
    assert.ok(sessionFile?.startsWith(`${sessions}/`), `session file ${sessionFile}`);

    // ---- the vector's steps ----
    const labels = new Map<string, string>();
    const navigations: { step: number; target: string }[] = [];
    const edits: { step: number; path: string }[] = [];
    let compactResult: { summary?: string; firstKeptEntryId?: string } | undefined;
    for (const [i, step] of vector.steps.entries()) {
      at = `step ${i} (${describe(step)})`;
      switch (step.op) {
        case "read": {
          if (step.persist === false) throw new Error("persist:false is not supported end to end");
          const args: Record<string, unknown> = { path: step.path };
          if (step.offset !== undefined) args.offset = step.offset;
          if (step.limit !== undefined) args.limit = step.limit;
          if (step.bypass === true) args.bypass_cache = true;
          const script: ReadScript = { step: i, args };
          await pi.prompt(`${READ_PROMPT}${JSON.stringify(script)}`, at);
          break;
        }
        case "writeTool": {
          if (step.persist === false) throw new Error("persist:false is not supported end to end");
          const script: ReadScript = {
            step: i,
            args: { path: step.path, content: step.content },
            tool: "write",
          };
          await pi.prompt(`${READ_PROMPT}${JSON.stringify(script)}`, at);
          break;
        }
        case "editTool": {
          if (step.persist === false) throw new Error("persist:false is not supported end to end");
          const args = editArgsOf(step);
          // what pi's edit must leave in the file, by our copy of its rules (SPEC §5.9)
          const before = await Deno.readTextFile(join(work, step.path));
          const expected = applyPiEdit(before, editCallArgs(args)!.edits, step.path);
          assert.ok(expected.ok, `the edit does not apply: ${!expected.ok && expected.error}`);
          const script: ReadScript = { step: i, args, tool: "edit" };
          await pi.prompt(`${READ_PROMPT}${JSON.stringify(script)}`, at);
          assert.equal(await Deno.readTextFile(join(work, step.path)), expected.text);
          edits.push({ step: i, path: step.path });
          break;
        }
        case "write":
          await writeWorkFile(work, step.path, step.content);
          break;
        case "label": {
          const last = (await readSession(sessionFile!)).at(-1);
          assert.equal(last?.type, "message", "the leaf is the last entry in the file");
          assert.equal(last?.message?.role, "assistant");
          labels.set(step.name, last!.id!);
          break;
        }
        case "compact": {
          if (step.firstKept !== undefined) {
            throw new Error("firstKept is not supported end to end");
          }
          const res = await pi.request({ type: "compact" }, at);
          assert.equal(res.success, true, `compact failed: ${res.error}`);
          compactResult = res.data as typeof compactResult;
          assert.equal(compactResult?.summary?.includes("summary"), true);
          break;
        }
        case "navigate": {
          const target = labels.get(step.to);
          assert.ok(target !== undefined, `unknown label ${step.to}`);
          const note = await pi.command(`/rc-goto ${target}`, at);
          assert.equal(note.message, `rc-goto leaf=${target} cancelled=false`);
          navigations.push({ step: i, target });
          break;
        }
        case "invalidate": {
          if (step.offset !== undefined || step.limit !== undefined) {
            throw new Error("range invalidation is not supported end to end");
          }
          const note = await pi.command(`/readcache-refresh ${step.path}`, at);
          assert.equal(note.notifyType, "info", `refresh failed: ${note.message}`);
          const refreshNote = String(note.message);
          assert.ok(refreshNote.startsWith(`[readcache: refreshed ${step.path};`), refreshNote);
          break;
        }
        default:
          throw new Error(`step op ${step.op} is not supported end to end`);
      }
    }

    // ---- /readcache-status: reports the tracked file and writes nothing ----
    at = "/readcache-status";
    const sessionBefore = await Deno.readFile(sessionFile!);
    const workBefore = await listTree(work);
    const sessionsBefore = await listTree(sessions);
    const status = await pi.command("/readcache-status", at);
    assert.equal(status.notifyType, "info");
    const statusText = String(status.message);
    assert.ok(statusText.includes("the whole of a.txt ("), `status:\n${statusText}`);
    assert.deepEqual(
      await Deno.readFile(sessionFile!),
      sessionBefore,
      "status wrote to the session",
    );
    assert.deepEqual(await listTree(work), workBefore, "status wrote to the work dir");
    assert.deepEqual(await listTree(sessions), sessionsBefore, "status wrote a session file");

    // ---- clean shutdown: closing stdin makes pi exit 0 ----
    at = "shutdown";
    await pi.closeStdin();
    const exit = await pi.waitExit(STEP_TIMEOUT_MS);
    assert.ok(exit !== undefined, `pi did not exit within ${STEP_TIMEOUT_MS} ms of closing stdin`);
    assert.equal(exit.code, 0, `pi exit code ${exit.code}`);
    assert.deepEqual(pi.extensionErrors, []);

    // ---- results from the session JSONL pi wrote ----
    at = "checking results";
    assert.deepEqual(mock.problems, [], "the mock got requests it was not scripted for");
    const entries = await readSession(sessionFile!);
    const byId = new Map(entries.filter((e) => e.id !== undefined).map((e) => [e.id!, e]));
    const results: StepResult[] = [];
    const modes: (string | undefined)[] = [];
    for (const [i, step] of vector.steps.entries()) {
      if (step.op !== "read") continue;
      const found = entries.filter((e) =>
        e.type === "message" && e.message?.role === "toolResult" &&
        e.message.toolCallId === callIdFor(i)
      );
      assert.equal(found.length, 1, `step ${i}: tool results in the session`);
      const msg = found[0].message!;
      assert.equal(msg.toolName, "read");
      const text = messageText(msg);
      const meta = msg.details?.readcache;
      modes.push(meta?.mode);
      results.push(
        msg.isError === true
          ? { step: i, error: text }
          : { step: i, mode: meta?.mode ?? null, text, scope: meta?.scopeKey },
      );
      // the model really received that text
      const sent = mock.toolMessages.get(callIdFor(i));
      assert.deepEqual(sent && [...sent], [text], `step ${i}: text pi sent to the model`);
    }
    const output: ScenarioOutput = { id: vector.id, results };
    const verdict = compareScenario(vector, output);
    assert.deepEqual(verdict.problems, []);
    assert.deepEqual(verdict.alternativeDiffs, []);
    assert.deepEqual(modes, EXPECTED_MODES);

    // each edit's result carries the model's belief (SPEC §5.9), and the model got its text
    assert.equal(edits.length, vector.steps.filter((s) => s.op === "editTool").length);
    for (const edit of edits) {
      const found = entries.filter((e) =>
        e.type === "message" && e.message?.role === "toolResult" &&
        e.message.toolCallId === callIdFor(edit.step)
      );
      assert.equal(found.length, 1, `step ${edit.step}: edit results in the session`);
      const msg = found[0].message!;
      assert.equal(msg.toolName, "edit");
      assert.notEqual(msg.isError, true, `step ${edit.step}: the edit failed`);
      assert.equal(msg.details?.readcache?.kind, "edit", `step ${edit.step}: details.readcache`);
      assert.equal(msg.details?.readcache?.pathKey, `${work}/${edit.path}`);
      const sent = mock.toolMessages.get(callIdFor(edit.step));
      assert.deepEqual(sent && [...sent], [messageText(msg)], `step ${edit.step}: text sent`);
    }

    // the read after each navigation ran on the branch below the navigation target
    for (const nav of navigations) {
      const nextRead = vector.steps.findIndex((s, j) => j > nav.step && s.op === "read");
      const result = entries.find((e) => e.message?.toolCallId === callIdFor(nextRead));
      const call = byId.get(result?.parentId ?? "");
      const prompt = byId.get(call?.parentId ?? "");
      assert.equal(prompt?.message?.role, "user");
      assert.equal(prompt?.parentId, nav.target, `step ${nextRead} continues from the target`);
    }

    const invalidations = entries.filter((e) =>
      e.type === "custom" && e.customType === "pi-readcache" && e.data?.kind === "invalidate"
    );
    assert.equal(invalidations.length, 1, "one pi-readcache invalidate entry");
    assert.equal(invalidations[0].data?.pathKey, `${work}/a.txt`);
    const compactions = entries.filter((e) => e.type === "compaction");
    assert.equal(compactions.length, 1, "one compaction entry");
    assert.equal(compactions[0].firstKeptEntryId, compactResult?.firstKeptEntryId);
    assert.ok(mock.summarizations >= 1, "the compaction asked the mock for a summary");
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    const diag = pi === undefined ? "" : `\n${pi.diagnostics()}`;
    throw new Error(`pi rpc e2e failed at ${at}: ${detail}${diag}`, { cause: e });
  } finally {
    await pi?.dispose();
    await mock.close();
    if (Deno.env.get("READCACHE_E2E_KEEP") === "1") {
      const lines = mock.requests.map((r) => JSON.stringify(r) + "\n").join("");
      await Deno.writeTextFile(join(root, "mock-requests.jsonl"), lines);
      console.log(`kept ${root}`);
    } else await Deno.remove(root, { recursive: true });
  }
});
