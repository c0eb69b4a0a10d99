/**
 * The Claude Code host: context-safe read caching for Claude Code's own `Read`
 * tool, behind its `PostToolUse` hook. Tested with Claude Code 2.1.332.
 *
 * Claude Code's `Read` runs as always (permissions, images, PDFs, notebooks,
 * its size caps); the hook then hands the result to {@linkcode ClaudeCodeHost.handle}.
 * The host reads the file once more and checks that the lines Claude Code
 * showed are byte for byte the lines of that read (a file changed since, a
 * CRLF file, a BOM, shortened lines: no answer, Claude Code's output stands),
 * derives what the model holds by replaying the session's transcript (SPEC §6,
 * mapped by {@linkcode ClaudeTranscriptIndex}, read as Claude Code appends to it) and asks the core for the
 * decision (SPEC §7). A first read keeps Claude Code's text; a repeated one
 * becomes `[readcache: unchanged, N lines]`, a range marker or a unified diff
 * (SPEC §8), rendered for Claude Code's line-numbered `Read` as SPEC §11.9
 * says: its lines are numbered up to 0, where no file line is. Either way
 * `readcache` metadata (SPEC §5.1) is added to the result's `file` object;
 * Claude Code stores the replaced result in the transcript, and replay reads
 * it back. Anything unexpected leaves Claude Code's output as it is: the host
 * fails open.
 *
 * A subagent's calls carry `agent_id`: its view is its own transcript
 * (`<session>/subagents/agent-<id>.jsonl`), never the main agent's.
 *
 * Bases are stored under `<project>/.claude/readcache/` (SPEC §9, §13.4).
 *
 * Specified by SPEC.md §11.9.
 *
 * @module
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { z } from "zod";
import { type DecisionConfig, DEFAULT_DECISION_CONFIG, planRead } from "../../core/decision.ts";
import { BranchKnowledge, type InFlightRead } from "../../core/knowledge.ts";
import type { LineStretch, ReadCacheMetaV1, ReadMode } from "../../core/meta.ts";
import {
  MemoryObjectStore,
  type ObjectStore,
  type StoreProblem,
  type StoreStats,
} from "../../core/object_store.ts";
import type { ScopeKey } from "../../core/scope.ts";
import {
  decideWithStores,
  isInsideProject,
  pathKeyOnDisk,
  planEdit,
  readRegularFile,
  type ReadServiceDeps,
  writeInFlight,
} from "../../shell/read_service.ts";
import { FsObjectStore } from "../../store/fs_object_store.ts";
import {
  claudeFileCall,
  claudeToolClass,
  ClaudeTranscriptIndex,
  parseClaudeTranscript,
} from "./transcript.ts";
import { type ToolOutput, toolResultMeta } from "../../shell/tool_result.ts";
import { type CallSnapshot, snapshotCall } from "../../shell/call_snapshot.ts";
import { sha256Hex } from "../../core/hash.ts";

export * from "./transcript.ts";
export type {
  DecisionConfig,
  LineStretch,
  ObjectStore,
  ReadCacheMetaV1,
  ReadMode,
  ScopeKey,
  StoreProblem,
  StoreStats,
};

/**
 * The fields of a `PostToolUse` hook input the host reads (Claude Code sends
 * more: `prompt_id`, `permission_mode`, `duration_ms`, ...).
 *
 * @example
 * ```ts
 * import type { ClaudeHookInputV1 } from "@readcache/core/claude-code";
 * const input: Partial<ClaudeHookInputV1> = { tool_name: "Read" };
 * ```
 */
export interface ClaudeHookInputV1 {
  /** The session. */
  session_id: string;
  /** The session's transcript (the main agent's, also for a subagent's call). */
  transcript_path: string;
  /** The session's working directory. */
  cwd: string;
  /** `PostToolUse`. */
  hook_event_name: string;
  /** `Read`, `Bash`, ... */
  tool_name: string;
  /** The call's arguments. */
  tool_input: Record<string, unknown>;
  /** The tool's structured result (`PostToolUse`). */
  tool_response?: unknown;
  /** The call's id (`toolu_...`). */
  tool_use_id: string;
  /** Set on a subagent's calls: its id. */
  agent_id?: string;
}

const ClaudeHookInput: z.ZodType<ClaudeHookInputV1, unknown> = z.looseObject({
  session_id: z.string(),
  transcript_path: z.string(),
  cwd: z.string(),
  hook_event_name: z.string(),
  tool_name: z.string(),
  tool_input: z.record(z.string(), z.unknown()),
  tool_response: z.unknown().optional(),
  tool_use_id: z.string(),
  agent_id: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/).optional(),
});

/**
 * A hook input checked (see {@linkcode ClaudeHookInputV1}), or `undefined`
 * when it lacks a field the host reads.
 *
 * @example
 * ```ts
 * import { parseClaudeHookInput } from "@readcache/core/claude-code";
 * parseClaudeHookInput({ hook_event_name: "Stop" }); // undefined
 * ```
 */
export function parseClaudeHookInput(input: unknown): ClaudeHookInputV1 | undefined {
  const parsed = ClaudeHookInput.safeParse(input);
  return parsed.success ? parsed.data : undefined;
}

/** Claude Code's `Read` result for a text file. */
const ReadTextResult = z.looseObject({
  type: z.literal("text"),
  file: z.looseObject({
    filePath: z.string(),
    content: z.string(),
    numLines: z.number().int().nonnegative(),
    startLine: z.number().int().positive(),
    totalLines: z.number().int().nonnegative(),
  }),
});

/**
 * What the hook answers: `{}` (Claude Code's own output stands) or the
 * replacement of the tool's result (`updatedToolOutput`, in the tool's own
 * shape).
 *
 * @example
 * ```ts
 * import type { ClaudeHookOutput } from "@readcache/core/claude-code";
 * const keep: ClaudeHookOutput = {};
 * ```
 */
export type ClaudeHookOutput = {
  hookSpecificOutput?: { hookEventName: "PostToolUse"; updatedToolOutput: unknown };
};

/**
 * Options of {@linkcode ClaudeCodeHost}.
 *
 * @example
 * ```ts
 * import type { ClaudeCodeHostOptions } from "@readcache/core/claude-code";
 * const o: ClaudeCodeHostOptions = { config: { maxDiffFileLines: 5000 } };
 * ```
 */
export interface ClaudeCodeHostOptions {
  /** Decision tunables. */
  config?: Partial<DecisionConfig>;
  /** The object store of a project (default: `<cwd>/.claude/readcache`). */
  storeFor?: (cwd: string) => ObjectStore;
  /**
   * Where Claude Code keeps its transcripts (`<config>/projects`): a hook
   * input naming a transcript elsewhere gets `{}` (default: any path).
   */
  transcriptRoot?: string;
}

/** The largest transcript the host reads (bytes); a larger one is not replayed. */
const MAX_TRANSCRIPT_BYTES = 512 * 1024 * 1024;

/** Sessions (transcripts) whose in-flight reads are kept. */
const MAX_SESSIONS = 64;

/** Served reads whose metadata the host keeps for transcripts that do not (subagents'). */
const MAX_SERVED = 20_000;

/** Bytes of bases of files outside projects the service keeps in memory at most. */
const MAX_VOLATILE_BYTES = 256 * 1024 * 1024;

/** File identities a session's snapshots cover at most (past it they start again). */
const MAX_SEEN = 10_000;

/** `store` with one more object, held for one call (the file as an `Edit` found it). */
function withObject(store: ObjectStore, hash: string, bytes: Uint8Array): ObjectStore {
  return {
    put: (h, b) => store.put(h, b),
    get: (h) => h === hash ? Promise.resolve(bytes.slice()) : store.get(h),
    has: (h) =>
      h === hash
        ? Promise.resolve(true)
        : store.has?.(h) ?? store.get(h).then((b) => b !== undefined),
    stats: () => store.stats(),
  };
}

/**
 * The text Claude Code shows the model for a `Read` result's `file`: each line
 * of `content` prefixed with its number from `startLine` and a tab.
 *
 * @example
 * ```ts
 * import { claudeReadText } from "@readcache/core/claude-code";
 * claudeReadText({ content: "a\nb", startLine: 1 }); // "1\ta\n2\tb"
 * ```
 */
export function claudeReadText(file: { content: string; startLine: number }): string {
  return file.content.split("\n").map((l, i) => `${file.startLine + i}\t${l}`).join("\n");
}

interface SessionState {
  /** The transcript's rows so far, and where in the file the next row starts. */
  index: ClaudeTranscriptIndex;
  offset: number;
  /** The file's inode: another file at the path is indexed again. */
  ino: number | null;
  knowledge: BranchKnowledge;
  /** The message whose calls are in flight, and the reads served for it, in serve order. */
  messageId?: string;
  served: { callId: string; read: InFlightRead }[];
  /** Every file identity the model held at some call of the session (for call snapshots). */
  seen: Set<string>;
}

/**
 * The transcript a call's view comes from: the session's, or for a
 * subagent's call (`agent_id`) the subagent's own.
 *
 * @example
 * ```ts
 * import { claudeTranscriptOf } from "@readcache/core/claude-code";
 * claudeTranscriptOf("/h/.claude/projects/-w/s1.jsonl", "a7");
 * // "/h/.claude/projects/-w/s1/subagents/agent-a7.jsonl"
 * ```
 */
export function claudeTranscriptOf(transcriptPath: string, agentId?: string): string {
  if (agentId === undefined) return transcriptPath;
  return join(
    dirname(transcriptPath),
    basename(transcriptPath, ".jsonl"),
    "subagents",
    `agent-${agentId}.jsonl`,
  );
}

/**
 * Renders a cached answer (marker, range marker, diff, partial answer) as the
 * `file` of a Claude Code `Read` result (SPEC §11.9): Claude Code numbers each
 * line of `content` from `startLine`, so the answer's lines are numbered up to
 * 0, where no line of a file is; its first line says what it is.
 *
 * @example
 * ```ts
 * import { claudeAnswerFile } from "@readcache/core/claude-code";
 * claudeAnswerFile("[readcache: unchanged, 4 lines]", 4);
 * // { content: "[readcache: unchanged, 4 lines]", numLines: 1, startLine: 0, totalLines: 4 }
 * ```
 */
export function claudeAnswerFile(
  text: string,
  totalLines: number,
): { content: string; numLines: number; startLine: number; totalLines: number } {
  const numLines = text.split("\n").length;
  return { content: text, numLines, startLine: 1 - numLines, totalLines };
}

/**
 * The lines Claude Code showed, checked against one read of the file: the
 * core's request for them (`offset`, `limit`) when they are exactly lines
 * `startLine`.. of the bytes as the core splits them (`\n`, no `\r`, no BOM,
 * valid UTF-8), else `undefined`.
 *
 * @example
 * ```ts
 * import { claudeShownLines } from "@readcache/core/claude-code";
 * const bytes = new TextEncoder().encode("a\nb\nc\n");
 * claudeShownLines({ content: "b", numLines: 1, startLine: 2, totalLines: 4 }, bytes);
 * // { offset: 2, limit: 1, end: 2 }
 * ```
 */
export function claudeShownLines(
  file: { content: string; numLines: number; startLine: number; totalLines: number },
  bytes: Uint8Array,
): { offset?: number; limit?: number; end: number } | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return undefined;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
  if (text.includes("\r")) return undefined;
  const lines = text.split("\n");
  const { startLine, numLines } = file;
  if (file.totalLines !== lines.length || numLines < 1) return undefined;
  const end = startLine + numLines - 1;
  if (end > lines.length) return undefined;
  if (lines.slice(startLine - 1, end).join("\n") !== file.content) return undefined;
  return {
    ...(startLine > 1 ? { offset: startLine } : {}),
    ...(end < lines.length ? { limit: numLines } : {}),
    end,
  };
}

/**
 * How long the host waits for Claude Code to write the call being served to
 * its transcript: Claude Code 2.1.332 writes rows in batches up to 100 ms
 * after they are made, and does not write them before a tool's hooks run.
 */
const TRANSCRIPT_WAIT_MS = 1000;

/** How often the host looks at the transcript while it waits (ms). */
const TRANSCRIPT_POLL_MS = 2;

/**
 * Brings a session's transcript index up to the end of its file, reading only
 * the bytes appended since the last call (whole lines; a line still being
 * written waits for the next call). A file that shrank or was replaced is
 * indexed again from its start. `missing` when there is no file (yet),
 * `unusable` when it cannot be read as a regular file (then nothing is known
 * of the session).
 */
async function syncTranscript(
  st: SessionState,
  path: string,
): Promise<"ok" | "missing" | "unusable"> {
  let fh;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    // a subagent's transcript may be created only after its first call's hook runs
    return (e as { code?: string }).code === "ENOENT" ? "missing" : "unusable";
  }
  try {
    const stat = await fh.stat();
    if (!stat.isFile()) return "unusable";
    if (stat.size < st.offset || stat.ino !== st.ino) {
      st.index = new ClaudeTranscriptIndex();
      st.offset = 0;
      st.ino = stat.ino;
      st.knowledge.reset();
    }
    if (stat.size > MAX_TRANSCRIPT_BYTES) return "unusable";
    const decoder = new TextDecoder();
    const chunk = new Uint8Array(1 << 20);
    let carry = new Uint8Array(0);
    for (;;) {
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, st.offset + carry.length);
      if (bytesRead === 0) break;
      const bytes = new Uint8Array(carry.length + bytesRead);
      bytes.set(carry);
      bytes.set(chunk.subarray(0, bytesRead), carry.length);
      const end = bytes.lastIndexOf(0x0a);
      if (end < 0) {
        carry = bytes;
        continue;
      }
      for (const row of parseClaudeTranscript(decoder.decode(bytes.subarray(0, end)))) {
        st.index.add(row);
      }
      st.offset += end + 1;
      carry = bytes.slice(end + 1);
    }
    return "ok";
  } finally {
    await fh.close().catch(() => {});
  }
}

/** A string as one shell word (single quotes). */
function shellWord(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * What Claude Code's `Grep` showed, as the shell command that prints the same
 * lines (SPEC §5.10 recognises `rg -n`): in `content` mode with line numbers
 * (Claude Code's default there) and no context lines, its output is
 * ripgrep's: `N:text` for a search of one file, `path:N:text` with paths
 * relative to the session's directory otherwise. Any other mode shows no
 * lines of a file (`undefined`: the record says only what changed).
 */
async function grepOutput(
  input: ClaudeHookInputV1,
  response: Record<string, unknown>,
): Promise<ToolOutput | undefined> {
  const a = input.tool_input;
  if (response.mode !== "content" || typeof response.content !== "string") return undefined;
  if (a["-n"] === false || a.multiline === true || typeof a.pattern !== "string") return undefined;
  if (["-A", "-B", "-C", "context"].some((k) => a[k] !== undefined && a[k] !== 0)) {
    return undefined;
  }
  let file: string | undefined;
  if (typeof a.path === "string") {
    try {
      const path = resolve(input.cwd, a.path);
      if ((await Deno.stat(path)).isFile) file = path;
    } catch {
      return undefined;
    }
  }
  const command = `rg -n ${shellWord(a.pattern)}${file === undefined ? "" : ` ${shellWord(file)}`}`;
  return { kind: "shell", command, cwd: input.cwd, output: response.content };
}

/**
 * The read cache behind Claude Code's hooks: one per service, for any number
 * of sessions and projects. {@linkcode ClaudeCodeHost.handle} takes a hook's
 * input and gives its output; calls are served one at a time (parallel
 * `Read`s run their hooks concurrently).
 *
 * @example
 * ```ts ignore
 * const host = new ClaudeCodeHost();
 * const out = await host.handle(await request.json());
 * ```
 */
export class ClaudeCodeHost {
  readonly #cfg: DecisionConfig;
  readonly #options: ClaudeCodeHostOptions;
  readonly #stores = new Map<string, ObjectStore>();
  /** Bases of files outside the project: this process only (SPEC §13.2). */
  readonly #volatile = new MemoryObjectStore(new Map(), { maxBytes: MAX_VOLATILE_BYTES });
  readonly #sessions = new Map<string, SessionState>();
  /** Statuses of the held files as a call started (`PreToolUse`), by call id. */
  readonly #snapshots = new Map<string, CallSnapshot>();
  /** Metadata of served reads by call id, with the text the model was to receive. */
  readonly #servedMeta = new Map<string, { meta: ReadCacheMetaV1; text: string }>();
  #queue: Promise<unknown> = Promise.resolve();

  /** A host with these options (one per service). */
  constructor(options: ClaudeCodeHostOptions = {}) {
    this.#options = options;
    this.#cfg = { ...DEFAULT_DECISION_CONFIG, ...options.config };
  }

  /**
   * Answers one hook call: `{}` unless a `Read`'s result is replaced. Never
   * throws: anything unexpected answers `{}` (Claude Code's own output).
   */
  handle(input: unknown): Promise<ClaudeHookOutput> {
    const run = this.#queue.then(() => this.#handle(input)).catch(() => ({}));
    this.#queue = run;
    return run;
  }

  async #handle(raw: unknown): Promise<ClaudeHookOutput> {
    const input = parseClaudeHookInput(raw);
    if (input === undefined || !this.#ownTranscript(input.transcript_path)) return {};
    if (input.hook_event_name === "PreToolUse") {
      await this.#snapshot(input);
      return {};
    }
    if (input.hook_event_name !== "PostToolUse") return {};
    if (input.tool_name === "Edit") return await this.#recordEdit(input) ?? {};
    if (input.tool_name !== "Read") return await this.#recordTool(input) ?? {};
    const result = ReadTextResult.safeParse(input.tool_response);
    if (!result.success) return {};
    return await this.#serveRead(input, result.data) ?? {};
  }

  /** True when `path` is a transcript Claude Code keeps (under `transcriptRoot`, when set). */
  #ownTranscript(path: string): boolean {
    const root = this.#options.transcriptRoot;
    if (root === undefined) return true;
    const at = resolve(path);
    return at.startsWith(resolve(root) + "/") && !at.split("/").includes("..") &&
      at.endsWith(".jsonl");
  }

  #store(cwd: string): ObjectStore {
    let store = this.#stores.get(cwd);
    if (store === undefined) {
      store = this.#options.storeFor?.(cwd) ??
        new FsObjectStore(join(cwd, ".claude", "readcache"), { projectRoot: cwd });
      this.#stores.set(cwd, store);
    }
    return store;
  }

  #session(transcript: string): SessionState {
    let st = this.#sessions.get(transcript);
    if (st === undefined) {
      st = {
        index: new ClaudeTranscriptIndex(),
        offset: 0,
        ino: null,
        knowledge: new BranchKnowledge(),
        served: [],
        seen: new Set(),
      };
      this.#sessions.set(transcript, st);
      if (this.#sessions.size > MAX_SESSIONS) {
        this.#sessions.delete(this.#sessions.keys().next().value!);
      }
    }
    return st;
  }

  /**
   * What the model holds as the call `input` names runs: the session's state,
   * its knowledge replayed to the head of the call's message (only what was
   * appended since the last call, SPEC §6.4) with the reads served for that
   * message on top, and the message. `undefined` when the transcript cannot
   * be read, does not hold the call (after waiting for it) or holds another
   * call under its id: nothing is derived from a call the session did not
   * make.
   */
  async #at(input: ClaudeHookInputV1): Promise<
    | {
      st: SessionState;
      knowledge: BranchKnowledge;
      current: { messageId: string; callIds: string[] };
    }
    | undefined
  > {
    const transcript = claudeTranscriptOf(input.transcript_path, input.agent_id);
    const st = this.#session(transcript);
    const options = {
      currentCallId: input.tool_use_id,
      pathKey: pathKeyOnDisk,
      servedMeta: (callId: string, shown: string) => {
        const served = this.#servedMeta.get(callId);
        // only where the model received exactly what the host answered
        return served !== undefined && served.text === shown ? served.meta : undefined;
      },
    };
    // Claude Code appends rows in order but not at once: the row holding the call reaches the
    // file after its hooks are called; once it is there, every row before it is too
    const deadline = Date.now() + TRANSCRIPT_WAIT_MS;
    let leaf;
    for (;;) {
      // a transcript not there yet is waited for like a call not written yet
      const synced = await syncTranscript(st, transcript);
      if (synced === "unusable") return undefined;
      leaf = st.index.leafOf(input.tool_use_id);
      if (leaf !== undefined || Date.now() >= deadline) break;
      await new Promise((r) => setTimeout(r, TRANSCRIPT_POLL_MS));
    }
    const current = st.index.currentOf(input.tool_use_id);
    if (leaf === undefined || current === undefined) return undefined; // not in its transcript
    if (!st.index.callMatches(input.tool_use_id, input.tool_name, input.tool_input)) {
      return undefined;
    }
    // a message joined by the API's id alone after it held calls: not proven one response
    if (st.index.unproven(input.tool_use_id)) return undefined;
    // the server may have cleared old results from the model's context: nothing is known
    if (st.index.clearsToolResults) return undefined;
    if (st.messageId !== current.messageId) {
      st.messageId = current.messageId;
      st.served = [];
    }
    const knowledge = st.knowledge;
    knowledge.clearOverlay();
    knowledge.syncTip(leaf, (id) => st.index.entry(id, options));
    for (const s of st.served) knowledge.recordServed(s.read);
    const { keys, names } = knowledge.heldIdentities();
    if (st.seen.size > MAX_SEEN) st.seen.clear();
    for (const id of keys) st.seen.add(id);
    for (const id of names) st.seen.add(id);
    return { st, knowledge, current };
  }

  #deps(cwd: string): ReadServiceDeps {
    return {
      cwd,
      home: homedir(),
      store: this.#store(cwd),
      volatileStore: this.#volatile,
      config: this.#options.config,
    };
  }

  /**
   * The belief of a successful `Edit` (SPEC §5.9), worked out as it returns,
   * as pi's is: `old_string`/`new_string` are one replacement, applied where
   * it occurs exactly once in the model's newest view of the file (Claude
   * Code's own first match); `replace_all`, an empty `old_string` and
   * anything undetermined get none (the file becomes unknown). The content
   * the model's view stands for may be the file as the edit found it
   * (`originalFile` in Claude Code's result). A subagent's edits get none
   * (its transcript keeps no results). The belief is added to the result as
   * `readcache` (Claude Code stores it in the transcript, where replay checks
   * it).
   */
  async #recordEdit(input: ClaudeHookInputV1): Promise<ClaudeHookOutput | undefined> {
    if (input.agent_id !== undefined) return undefined;
    const a = input.tool_input;
    const r = input.tool_response;
    if (
      typeof a.file_path !== "string" || typeof a.old_string !== "string" ||
      typeof a.new_string !== "string" || a.old_string === "" || a.replace_all === true ||
      typeof r !== "object" || r === null || Array.isArray(r)
    ) return undefined;
    const at = await this.#at(input);
    if (at === undefined) return undefined;
    const deps = this.#deps(input.cwd);
    const original = (r as Record<string, unknown>).originalFile;
    if (typeof original === "string" && deps.volatileStore !== undefined) {
      const bytes = new TextEncoder().encode(original);
      deps.volatileStore = withObject(deps.volatileStore, sha256Hex(bytes), bytes);
    }
    const meta = await planEdit(
      { path: a.file_path, edits: [{ oldText: a.old_string, newText: a.new_string }] },
      at.knowledge,
      deps,
    ).catch(() => undefined);
    if (meta === undefined || meta.pathKey !== pathKeyOnDisk(a.file_path)) return undefined;
    return {
      hookSpecificOutput: {
        hookEventName: "PostToolUse",
        updatedToolOutput: { ...r as Record<string, unknown>, readcache: meta },
      },
    };
  }

  /**
   * A `PreToolUse` call of a tool the cache cannot see into (SPEC §5.10): the
   * statuses of the files the model may hold as it starts, so that its
   * record can tell a file it printed but never touched from one it may have
   * changed back (a file left out counts as touched). It does not wait for
   * Claude Code to write the call: it takes every file the model held at an
   * earlier call of the session, a superset of what it holds now but for
   * files it first saw since (those count as touched).
   */
  async #snapshot(input: ClaudeHookInputV1): Promise<void> {
    if (input.agent_id !== undefined) return;
    const cls = claudeToolClass(input.tool_name, input.tool_input);
    if (cls !== "viewing" && cls !== "opaque") return;
    const transcript = claudeTranscriptOf(input.transcript_path, input.agent_id);
    const st = this.#sessions.get(transcript);
    if (this.#snapshots.size >= 1000) this.#snapshots.clear(); // calls that never returned
    this.#snapshots.set(input.tool_use_id, await snapshotCall(st?.seen ?? [], input.cwd));
  }

  /**
   * The record of a tool's result (SPEC §5.10): the files that differ from
   * the model's newest view as it returns, and what a shell command showed
   * of them, added to Claude Code's own result as `readcache` (Claude Code
   * stores it in the transcript, where replay finds it). A subagent's
   * transcript keeps no results: its calls get none (every file it held
   * counts as changed).
   */
  async #recordTool(input: ClaudeHookInputV1): Promise<ClaudeHookOutput | undefined> {
    if (input.agent_id !== undefined) return undefined;
    const cls = claudeToolClass(input.tool_name, input.tool_input);
    if (cls !== "viewing" && cls !== "opaque") return undefined;
    const response = input.tool_response;
    if (typeof response !== "object" || response === null || Array.isArray(response)) {
      return undefined;
    }
    const at = await this.#at(input);
    if (at === undefined) return undefined;
    const r = response as Record<string, unknown>;
    const command = input.tool_input.command;
    let output: ToolOutput | undefined;
    if (input.tool_name === "Bash" && typeof command === "string" && typeof r.stdout === "string") {
      // what the model received: stdout, then stderr when there is any
      const stderr = typeof r.stderr === "string" && r.stderr !== "" ? `\n${r.stderr}` : "";
      output = { kind: "shell", command, cwd: input.cwd, output: r.stdout + stderr };
    } else if (input.tool_name === "Grep") {
      output = await grepOutput(input, r);
    } else if (cls === "opaque") {
      output = { kind: "opaque", output: JSON.stringify(response) };
    }
    const snapshot = this.#snapshots.get(input.tool_use_id);
    this.#snapshots.delete(input.tool_use_id);
    const meta = await toolResultMeta(at.knowledge, this.#deps(input.cwd), output, {
      callId: input.tool_use_id,
      snapshot,
    });
    return {
      hookSpecificOutput: {
        hookEventName: "PostToolUse",
        updatedToolOutput: { ...r, readcache: meta },
      },
    };
  }

  async #serveRead(
    input: ClaudeHookInputV1,
    result: z.infer<typeof ReadTextResult>,
  ): Promise<ClaudeHookOutput | undefined> {
    const call = claudeFileCall("Read", input.tool_input, pathKeyOnDisk);
    if (call === undefined || result.file.filePath !== call.name) return undefined;
    const at = await this.#at(input);
    if (at === undefined) return undefined;
    const { st, knowledge } = at;
    const branch = { current: at.current };
    const unknown = (): undefined => {
      st.served.push({ callId: input.tool_use_id, read: { call, callId: input.tool_use_id } });
      return undefined;
    };

    const read = await readRegularFile(call.name, this.#cfg.maxFileBytes).catch(() => undefined);
    if (read?.kind !== "ok") return unknown();
    const shown = claudeShownLines(result.file, read.bytes);
    // the lines shown must be the lines of this read, starting where the call asked
    if (shown === undefined || result.file.startLine !== (call.offset ?? 1)) return unknown();

    // a call later in the message that reads this file was served first: its answer already
    // stands after this one in the model's context, so this one re-anchors instead
    const order = branch.current.callIds;
    const mine = order.indexOf(input.tool_use_id);
    const servedLater = st.served.some((s) =>
      order.indexOf(s.callId) > mine && s.read.call !== undefined &&
      (s.read.call.pathKey === call.pathKey || s.read.call.name === call.name)
    );
    const plan = planRead({
      displayPath: call.name,
      pathKey: call.pathKey,
      offset: shown.offset,
      limit: shown.limit,
      bytes: read.bytes,
      knowledge: knowledge.file(call.pathKey, call.name),
      bypass: servedLater || knowledge.opaqueInFlight() ||
        writeInFlight(call, knowledge.pendingChanges()),
      config: this.#options.config,
    });
    const inside = this.#cfg.persistOutsideProject || isInsideProject(call.pathKey, input.cwd);
    const stores = inside ? [this.#store(input.cwd), this.#volatile] : [this.#volatile];
    const decision = await decideWithStores(plan, stores);
    if (decision.store !== undefined) {
      await stores[0].put(decision.store.hash, decision.store.bytes).catch(() => undefined);
    }
    const meta = decision.details.readcache;
    if (
      meta === undefined || meta.rangeStart !== result.file.startLine || meta.rangeEnd !== shown.end
    ) {
      return unknown();
    }
    const plain = decision.mode === "full" || decision.mode === "baseline_fallback";
    const file = plain
      ? { ...result.file }
      : { ...result.file, ...claudeAnswerFile(decision.text, result.file.totalLines) };
    const served: ReadCacheMetaV1 = {
      ...meta,
      bytes: new TextEncoder().encode(file.content).length,
    };
    st.served.push({
      callId: input.tool_use_id,
      read: { meta: served, call, callId: input.tool_use_id },
    });
    this.#servedMeta.set(input.tool_use_id, { meta: served, text: claudeReadText(file) });
    if (this.#servedMeta.size > MAX_SERVED) {
      this.#servedMeta.delete(this.#servedMeta.keys().next().value!);
    }
    return {
      hookSpecificOutput: {
        hookEventName: "PostToolUse",
        updatedToolOutput: { ...result, file: { ...file, readcache: served } },
      },
    };
  }
}
