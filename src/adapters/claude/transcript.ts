/**
 * Maps a Claude Code transcript (`~/.claude/projects/<cwd-slug>/<session>.jsonl`,
 * or a subagent's `<session>/subagents/agent-<id>.jsonl`) onto the replay
 * entry model, so that the core derives what the model holds exactly as it
 * does for pi and OpenCode (SPEC §5, §6, §11.9). Pure but for resolving paths
 * on disk (realpath).
 *
 * The branch is the chain of rows from the newest one (the assistant row that
 * holds the call being served) back along `parentUuid`; Claude Code (2.1.332)
 * builds the model's context from it like this, and the mapping follows it:
 *
 * - **Barrier** (SPEC §6.1): a `compact_boundary` system row (its `parentUuid`
 *   is `null`), a `microcompact_boundary` (old tool results cleared from the
 *   context) and a summary row (`isCompactSummary`, `replacesSpan`: it stands
 *   for everything before it) become a `compaction` entry; the chain ends
 *   there. A request that lets the server clear old tool results
 *   (`clear_tool_uses_...` in an `api-request` row) leaves the host serving
 *   plain reads ({@linkcode ClaudeTranscriptIndex.clearsToolResults}).
 * - **Assistant messages**: Claude Code writes one row per content block of a
 *   response, each a child of the one before, all with the response's
 *   `message.id` and Claude Code's own id of the request (`requestRef`): a
 *   row that is the child of an assistant row of the same request (of the
 *   same `message.id` where rows carry no `requestRef`) continues its
 *   message, any other starts one. The API's id alone proves nothing: a
 *   gateway or a scripted API may give several responses one id.
 *   They are one message (an `other` entry with the message's
 *   `changes`, `opaque` and `shows` calls, SPEC §5.8, §5.10), followed by the
 *   results of its calls in call order, which is the order the model sees them
 *   in. A result is a user row holding the `tool_result` block, a child of a
 *   row of that message; results of parallel calls are siblings, not on the
 *   chain, so they are found by call id.
 * - **Reads**: a successful `Read` is a `read` event with the metadata the
 *   host added to its result (`toolUseResult.file.readcache`, stored by Claude
 *   Code with the replacement); without it (a read served while the host was
 *   down, an image, a PDF) the file's lines count as unknown (SPEC §5.5).
 * - **Writes**: a successful `Write` whose content is well-formed Unicode
 *   without a BOM is proof of content (`wrote`, SPEC §5.8); a successful
 *   `Edit` is `changed` with the model's belief the host added to its result
 *   (`toolUseResult.readcache`, SPEC §5.9); `MultiEdit`, `NotebookEdit`, an
 *   `Edit` without a belief and a failed or other write leave the file
 *   unknown.
 * - **Other tools**: `Glob`, `TodoWrite` and `ToolSearch` show no file content
 *   and change nothing; `Grep` and a read-only `Bash` command show files;
 *   every other tool (`Bash`, `Agent`, tools the host does not know) may change
 *   any file (SPEC §5.10). Their results are `tool` events with the host's
 *   record, if any (`toolUseResult.readcache`); without one every file counts
 *   as changed.
 * - **Files shown outside tool calls**: an attachment that names a file (the
 *   files Claude Code re-injects after a compaction, a file it saw change)
 *   makes that file's lines unknown; a background agent's
 *   `<task-notification>` counts as a tool result without a record.
 * - **In flight**: the message holding the call being served ends the branch
 *   after its own `other` entry; the results of its calls are the in-flight
 *   overlay the host keeps itself (SPEC §6.3).
 *
 * Specified by SPEC.md §11.9.
 *
 * @module
 */
import { sha256Hex } from "../../core/hash.ts";
import { countLines } from "../../core/range.ts";
import { type HostCall, messageEntry, resultEntries } from "../../core/host_calls.ts";
import type { FileChange, ReadCall, ReplayEntry } from "../../core/replay.ts";
import { classifyShellCommand } from "../../core/shell_view.ts";

export type { FileChange, ReadCall, ReplayEntry };

/**
 * The fields of a transcript row the mapping reads.
 *
 * @example
 * ```ts
 * import type { ClaudeRowLike } from "@readcache/core/claude-code";
 * const row: ClaudeRowLike = { type: "user", uuid: "u1", parentUuid: null,
 *   message: { role: "user", content: "hello" } };
 * ```
 */
export interface ClaudeRowLike {
  /** `user`, `assistant`, `system`, `attachment`, or bookkeeping rows without a uuid. */
  type?: string;
  /**
   * For a system row: `compact_boundary` marks a compaction, `microcompact_boundary` old tool
   * results cleared from the context.
   */
  subtype?: string;
  /** For a user row: the summary a compaction wrote. */
  isCompactSummary?: boolean;
  /** For a user row: a summary that replaces the messages before it. */
  replacesSpan?: boolean;
  /** For an `api-request` row: the request's parameters (`context_management`). */
  params?: unknown;
  /** Row id. */
  uuid?: string;
  /** Parent row id; `null` for a root (and for a compact boundary). */
  parentUuid?: string | null;
  /**
   * For an assistant row: the id Claude Code gave the request the response
   * answers (the `id` of its `api-request` row; 2.1.332 writes it).
   */
  requestRef?: string;
  /** The API message of a user or assistant row. */
  message?: { id?: string; role?: string; content?: unknown };
  /** The tool's structured result (a user row holding a `tool_result`). */
  toolUseResult?: unknown;
  /** For an attachment row: what was attached. */
  attachment?: unknown;
}

/**
 * Options of {@linkcode claudeBranchToReplay}.
 *
 * @example
 * ```ts
 * import type { ClaudeBranchOptions } from "@readcache/core/claude-code";
 * const o: ClaudeBranchOptions = { currentCallId: "toolu_1", pathKey: (p) => p };
 * ```
 */
export interface ClaudeBranchOptions {
  /** The tool call being served: its message ends the branch (its calls are in flight). */
  currentCallId?: string;
  /** A file's identity from its absolute path (the read service's `pathKeyOnDisk`). */
  pathKey: (path: string) => string;
  /**
   * The metadata the host served a read with, by call id, given the text the
   * model received for it: for transcripts that keep no `toolUseResult`
   * (a subagent's), where the host's own record is the only one.
   */
  servedMeta?: (callId: string, shownText: string) => unknown;
}

/**
 * A converted branch.
 *
 * @example
 * ```ts
 * import type { ClaudeBranch } from "@readcache/core/claude-code";
 * const b: ClaudeBranch = { entries: [] };
 * ```
 */
export interface ClaudeBranch {
  /** Replay entries, root to leaf (a linear chain). */
  entries: ReplayEntry[];
  /** The message holding `currentCallId`: its id and its tool calls in call order. */
  current?: { messageId: string; callIds: string[] };
}

function record(v: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null ? v as Record<string, unknown> : {};
}

/**
 * Tools of Claude Code that show no file content and change nothing: their
 * results are not checked (SPEC §5.10).
 */
const FOLLOWED: ReadonlySet<string> = new Set([
  "Glob",
  "TodoWrite",
  "ToolSearch",
  "EnterPlanMode",
  "ExitPlanMode",
]);

/** Tools of Claude Code that change the file they name (SPEC §5.8, §5.9). */
export const CLAUDE_FILE_TOOLS: ReadonlySet<string> = new Set([
  "Write",
  "Edit",
  "MultiEdit",
  "NotebookEdit",
]);

/**
 * How the cache treats a Claude Code tool (SPEC §5.10): `read`, a file tool
 * (`write`), one that neither shows nor changes files (`followed`), one that
 * shows files but changes none (`viewing`: `Grep`, a read-only `Bash`
 * command), or one that may change any file (`opaque`).
 *
 * @example
 * ```ts
 * import { claudeToolClass } from "@readcache/core/claude-code";
 * claudeToolClass("Bash", { command: "cat a.txt" }); // "viewing"
 * claudeToolClass("Bash", { command: "make" }); // "opaque"
 * ```
 */
export function claudeToolClass(
  name: string,
  input: unknown,
): "read" | "write" | "followed" | "viewing" | "opaque" {
  if (name === "Read") return "read";
  if (CLAUDE_FILE_TOOLS.has(name)) return "write";
  if (FOLLOWED.has(name)) return "followed";
  if (name === "Grep") return "viewing";
  const command = record(input).command;
  if (name === "Bash" && typeof command === "string" && classifyShellCommand(command).readOnly) {
    return "viewing";
  }
  return "opaque";
}

/**
 * The file a Claude Code tool call names (`file_path`, or `notebook_path` for
 * `NotebookEdit`), with the offset and limit of a `Read`: `undefined` when it
 * names none or not an absolute path (Claude Code rejects relative ones).
 * Offsets below 2 read from the first line, as Claude Code does.
 *
 * @example
 * ```ts
 * import { claudeFileCall } from "@readcache/core/claude-code";
 * claudeFileCall("Read", { file_path: "/w/a.ts", offset: 5, limit: 3 }, (p) => p);
 * // { name: "/w/a.ts", pathKey: "/w/a.ts", offset: 5, limit: 3 }
 * ```
 */
export function claudeFileCall(
  tool: string,
  input: unknown,
  pathKey: (path: string) => string,
): ReadCall | undefined {
  const a = record(input);
  const path = tool === "NotebookEdit" ? a.notebook_path : a.file_path;
  if (typeof path !== "string" || !path.startsWith("/")) return undefined;
  const call: ReadCall = { name: path, pathKey: pathKey(path) };
  if (tool !== "Read") return call;
  if (typeof a.offset === "number" && Number.isSafeInteger(a.offset) && a.offset > 1) {
    call.offset = a.offset;
  }
  if (typeof a.limit === "number" && Number.isSafeInteger(a.limit) && a.limit > 0) {
    call.limit = a.limit;
  }
  return call;
}

/**
 * Parses a transcript file's text: one JSON row per line; lines that are not
 * JSON objects (a row still being written) are skipped.
 *
 * @example
 * ```ts
 * import { parseClaudeTranscript } from "@readcache/core/claude-code";
 * parseClaudeTranscript('{"type":"user","uuid":"u1"}\n{"trunc').length; // 1
 * ```
 */
export function parseClaudeTranscript(text: string): ClaudeRowLike[] {
  const rows: ClaudeRowLike[] = [];
  for (const line of text.split("\n")) {
    if (line.length < 2) continue;
    try {
      const row = JSON.parse(line);
      if (typeof row === "object" && row !== null && !Array.isArray(row)) rows.push(row);
    } catch {
      // a partial last line: the next read of the file has it
    }
  }
  return rows;
}

/** A tool call of an assistant message, reduced to what the mapping reads. */
interface ToolUse {
  id: string;
  name: string;
  cls: ReturnType<typeof claudeToolClass>;
  /** A `Bash` call's command. */
  command?: unknown;
  /** `file_path`, `notebook_path`, `offset`, `limit` of the call. */
  input: Record<string, unknown>;
  /** For a `Write`: the proof its content gives, if any. */
  proof?: { hash: string; totalLines: number; bytes: number };
  /** The arguments a hook's answer is derived from, as the model gave them (see `CHECKED_INPUT`). */
  checked?: string;
}

/**
 * The arguments of a call the host derives its answer from, by tool: a hook
 * input whose call the transcript holds with other values gets nothing.
 */
const CHECKED_INPUT: Readonly<Record<string, readonly string[]>> = {
  Read: ["file_path", "offset", "limit"],
  Edit: ["file_path", "old_string", "new_string", "replace_all"],
  Bash: ["command"],
  Grep: [
    "pattern",
    "path",
    "glob",
    "type",
    "output_mode",
    "-n",
    "-i",
    "-A",
    "-B",
    "-C",
    "context",
    "multiline",
    "head_limit",
    "offset",
  ],
};

/** The checked arguments of a call of `tool` as one string (`""` for other tools). */
function checkedInput(tool: string, input: Record<string, unknown>): string {
  const keys = CHECKED_INPUT[tool];
  return keys === undefined ? "" : JSON.stringify(keys.map((k) => input[k] ?? null));
}

/** The result of a tool call, reduced to what the mapping reads. */
interface ToolResult {
  /** The row holding it. */
  uuid: string;
  parentUuid: string | null;
  isError: boolean;
  /** The host's record: `toolUseResult.file.readcache` (a Read) or `toolUseResult.readcache`. */
  meta?: unknown;
  /** `toolUseResult.type` (`text` for a text Read). */
  resultType?: unknown;
  /** The row keeps no `toolUseResult` (a subagent's transcript). */
  bare: boolean;
  /** For a bare Read result: the text the model received. */
  text?: string;
}

/** A transcript row, reduced to what the mapping reads. */
interface SlimRow {
  uuid: string;
  parentUuid: string | null;
  kind: "user" | "result" | "notification" | "assistant" | "boundary" | "file" | "skip";
  /** For an assistant row: its message (the uuid of the message's first row). */
  mid?: string;
  /** For an assistant row: the API response's id (`message.id`). */
  apiId?: string;
  /** For an assistant row: Claude Code's id of the request it answers (`requestRef`). */
  ref?: string;
  /** For an attachment that names a file: its path. */
  file?: string;
  /** For the first row of a message: the request it answers did not extend the one before. */
  cutBefore?: boolean;
}

/** What Claude Code puts in place of a tool result it cut from the context. */
const CUT_STAND_IN = "[Old tool result content cleared]";

/** True when a request's message holds a tool result Claude Code cut (or moved to a file). */
function holdsCutResult(message: unknown): boolean {
  const content = record(message).content;
  if (!Array.isArray(content)) return false;
  return content.some((b) => {
    const block = record(b);
    if (block.type !== "tool_result") return false;
    const text = claudeResultText(block.content).trim();
    return text.startsWith(CUT_STAND_IN) || text.startsWith("<persisted-output>");
  });
}

/**
 * The text of a message's content as the model got it: a string, or its text
 * blocks joined by line breaks.
 *
 * @example
 * ```ts
 * import { claudeResultText } from "@readcache/core/claude-code";
 * claudeResultText([{ type: "text", text: "a" }, { type: "image" }, { type: "text", text: "b" }]);
 * // "a\n\nb"
 * ```
 */
export function claudeResultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b) => record(b).type === "text" ? String(record(b).text ?? "") : "").join(
    "\n",
  );
}

/** The file an attachment row names (`filename`, or the path of its Read-shaped content). */
function attachedFile(row: ClaudeRowLike): string | undefined {
  const a = record(row.attachment);
  if (typeof a.filename === "string") return a.filename;
  const path = record(record(a.content).file).filePath;
  return typeof path === "string" ? path : undefined;
}

/** The proof a successful `Write` gives (SPEC §5.8), as for pi's and OpenCode's write. */
function writeProof(
  input: Record<string, unknown>,
): { hash: string; totalLines: number; bytes: number } | undefined {
  const content = input.content;
  if (typeof content !== "string" || !content.isWellFormed() || content.startsWith("\uFEFF")) {
    return undefined;
  }
  const bytes = new TextEncoder().encode(content).length;
  return { hash: sha256Hex(content), totalLines: countLines(content), bytes };
}

const KEPT_INPUT = ["file_path", "notebook_path", "offset", "limit"];

/**
 * A transcript as the mapping needs it, built row by row as Claude Code
 * appends them (SPEC §6.4: a long session is not read again at every call):
 * each row reduced to its links, its kind, its calls and results, and their
 * records. {@linkcode ClaudeTranscriptIndex.branch} converts the chain that
 * ends at a call.
 *
 * @example
 * ```ts
 * import { ClaudeTranscriptIndex } from "@readcache/core/claude-code";
 * const index = new ClaudeTranscriptIndex();
 * index.add({ type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "go" } });
 * index.branch({ pathKey: (p) => p })?.entries.length; // 1
 * ```
 */
export class ClaudeTranscriptIndex {
  readonly #rows = new Map<string, SlimRow>();
  readonly #messageRows = new Map<string, string[]>();
  readonly #uses = new Map<string, ToolUse[]>();
  /** Messages joined by the API's id alone after they held calls (see `unproven`). */
  readonly #unproven = new Set<string>();
  readonly #results = new Map<string, ToolResult>();
  readonly #callRow = new Map<string, string>();
  /** Files resolved, by entry id and path. */
  readonly #keys = new Map<string, string>();
  #last?: string;
  #clearsToolResults = false;
  /** Messages each logged request sent (`keep` + its `tail`), by request id. */
  readonly #requests = new Map<string, number>();
  /** A request that rewrote the context was seen; the next response starts a new window. */
  #cutPending = false;

  /** Rows added (with a uuid). */
  get size(): number {
    return this.#rows.size;
  }

  /**
   * True once the transcript shows a request that lets the server clear old
   * tool results from the model's context (`context_management` edits of type
   * `clear_tool_uses_...`): which results the model still holds is then not in
   * the transcript, so a host serves plain reads only.
   */
  get clearsToolResults(): boolean {
    return this.#clearsToolResults;
  }

  /** Adds one row (file order). */
  add(row: ClaudeRowLike): void {
    if (row.type === "api-request") {
      // the model's context is edited on the server: old tool results may be gone from it
      if (/"clear_tool_uses/.test(JSON.stringify(row.params ?? null))) {
        this.#clearsToolResults = true;
      }
      // a request that keeps fewer messages of the request it builds on rewrote the context
      // (results cut, a rewind): the next response starts a new window
      const r = record(row);
      const tail = Array.isArray(r.tail) ? r.tail.length : 0;
      const keep = typeof r.keep === "number" ? r.keep : 0;
      const base = typeof r.base === "string" ? this.#requests.get(r.base) : undefined;
      if (base !== undefined && keep < base) this.#cutPending = true;
      if (typeof r.id === "string") {
        this.#requests.set(r.id, keep + tail);
        if (this.#requests.size > 10_000) {
          this.#requests.delete(this.#requests.keys().next().value!);
        }
      }
    } else if (row.type === "api-request-blob" && holdsCutResult(record(row).message)) {
      // a message sent with a result cut from it
      this.#cutPending = true;
    }
    const uuid = row.uuid;
    if (typeof uuid !== "string") return;
    const parentUuid = typeof row.parentUuid === "string" ? row.parentUuid : null;
    const slim: SlimRow = { uuid, parentUuid, kind: "skip" };
    const content = row.message?.content;
    if (row.type === "system") {
      // a compaction, or Claude Code clearing old tool results from the context
      if (row.subtype === "compact_boundary" || row.subtype === "microcompact_boundary") {
        slim.kind = "boundary";
      }
    } else if (row.type === "attachment") {
      const type = record(row.attachment).type;
      const file = attachedFile(row);
      if (type === "tool_results_cut" || type === "whole_texts_withdrawn") {
        // Claude Code cut tool results or texts from the context: nothing before counts
        slim.kind = "boundary";
      } else if (file !== undefined && file.startsWith("/")) {
        slim.kind = "file";
        slim.file = file;
      }
    } else if (row.type === "assistant") {
      slim.kind = "assistant";
      // a response's rows are one message: each block's row is a child of the one before, with the
      // response's id; the id alone is no proof (a gateway or a scripted API may repeat it)
      const apiId = typeof row.message?.id === "string" ? row.message.id : undefined;
      const ref = typeof row.requestRef === "string" ? row.requestRef : undefined;
      const parent = parentUuid === null ? undefined : this.#rows.get(parentUuid);
      slim.apiId = apiId;
      slim.ref = ref;
      // Claude Code's own id of the request a response answers decides where it has one
      const byRef = ref !== undefined || parent?.ref !== undefined;
      const same = parent?.kind !== "assistant"
        ? false
        : byRef
        ? ref === parent.ref
        : apiId !== undefined && parent.apiId === apiId;
      slim.mid = same ? parent!.mid! : uuid;
      // without a request id, a row the API's id joins to a message that already holds calls may
      // be another response chained to calls that never got results (ids can repeat): no call of
      // that message is answered from what the message is thought to hold
      if (same && !byRef && (this.#uses.get(slim.mid)?.length ?? 0) > 0) {
        this.#unproven.add(slim.mid);
      }
      if (this.#cutPending && !this.#messageRows.has(slim.mid)) {
        slim.cutBefore = true;
        this.#cutPending = false;
      }
      const list = this.#messageRows.get(slim.mid) ?? [];
      list.push(uuid);
      this.#messageRows.set(slim.mid, list);
      const uses = this.#uses.get(slim.mid) ?? [];
      for (const block of Array.isArray(content) ? content : []) {
        const b = record(block);
        if (b.type !== "tool_use" || typeof b.id !== "string" || typeof b.name !== "string") {
          continue;
        }
        this.#callRow.set(b.id, uuid);
        if (uses.some((u) => u.id === b.id)) continue;
        const input = record(b.input);
        const kept: Record<string, unknown> = {};
        for (const k of KEPT_INPUT) if (k in input) kept[k] = input[k];
        const cls = claudeToolClass(b.name, input);
        uses.push({
          id: b.id,
          name: b.name,
          cls,
          ...(b.name === "Bash" ? { command: input.command } : {}),
          input: kept,
          ...(b.name === "Write" ? { proof: writeProof(input) } : {}),
          checked: checkedInput(b.name, input),
        });
      }
      this.#uses.set(slim.mid, uses);
    } else if (row.type === "user") {
      const blocks = Array.isArray(content)
        ? content.map(record).filter((b) =>
          b.type === "tool_result" && typeof b.tool_use_id === "string"
        )
        : [];
      if (blocks.length > 0) {
        slim.kind = "result";
        const tur = record(row.toolUseResult);
        const bare = row.toolUseResult === undefined;
        for (const b of blocks) {
          this.#results.set(b.tool_use_id as string, {
            uuid,
            parentUuid,
            isError: b.is_error === true,
            meta: tur.type === "text" ? record(tur.file).readcache : tur.readcache,
            resultType: tur.type,
            bare,
            ...(bare ? { text: claudeResultText(b.content) } : {}),
          });
        }
      } else if (row.isCompactSummary === true || row.replacesSpan === true) {
        // a summary stands for everything before it (a compaction, or a span replaced by one)
        slim.kind = "boundary";
      } else {
        slim.kind = /^\s*<task-notification>/.test(claudeResultText(content))
          ? "notification"
          : "user";
      }
    }
    this.#rows.set(uuid, slim);
    if (row.type === "user" || row.type === "assistant" || row.type === "system") this.#last = uuid;
  }

  /** The first row (file order) of each message. */
  #first(mid: string): string | undefined {
    return this.#messageRows.get(mid)?.[0];
  }

  /** The id of a message's head entry: its first row, and how many calls it holds now. */
  #headId(mid: string): string {
    return `${this.#first(mid)}#${this.#uses.get(mid)?.length ?? 0}`;
  }

  /** The results of a message's calls that are on its branch, in call order. */
  #resultsOf(mid: string): { use: ToolUse; result: ToolResult }[] {
    const mine = new Set(this.#messageRows.get(mid) ?? []);
    const out: { use: ToolUse; result: ToolResult }[] = [];
    for (const use of this.#uses.get(mid) ?? []) {
      const result = this.#results.get(use.id);
      // a call that never got a result: the core leaves its file unknown from its turn's start
      if (result !== undefined && result.parentUuid !== null && mine.has(result.parentUuid)) {
        out.push({ use, result });
      }
    }
    return out;
  }

  /** The last entry of a message: its last result on the branch, else its head. */
  #lastOf(mid: string): string {
    const results = this.#resultsOf(mid);
    const last = results.at(-1);
    return last === undefined ? this.#headId(mid) : `${last.result.uuid}:${last.use.id}`;
  }

  /** The message an assistant row or a result row belongs to. */
  #messageOf(row: SlimRow): string | undefined {
    if (row.kind === "assistant") return row.mid;
    if (row.kind !== "result" || row.parentUuid === null) return undefined;
    const parent = this.#rows.get(row.parentUuid);
    return parent?.kind === "assistant" ? parent.mid : undefined;
  }

  /** The id of the last entry at or above row `uuid` (`null` at the root). */
  #entryAt(uuid: string | null): string | null {
    const seen = new Set<string>();
    for (let id = uuid; id !== null;) {
      const row = this.#rows.get(id);
      if (row === undefined || seen.has(id)) return null;
      seen.add(id);
      switch (row.kind) {
        case "user":
        case "notification":
        case "file":
        case "boundary":
          return row.uuid;
        case "assistant":
        case "result": {
          const mid = this.#messageOf(row);
          if (mid !== undefined) return this.#lastOf(mid);
          break;
        }
      }
      id = row.parentUuid;
    }
    return null;
  }

  /**
   * The id of the entry the branch ends at: the head of the message holding
   * `currentCallId` (`undefined` when that call is not in the transcript yet),
   * or, without one, the last entry at the newest row (`null`: no entry).
   */
  leafOf(currentCallId?: string): string | null | undefined {
    if (currentCallId === undefined) {
      return this.#last === undefined ? null : this.#entryAt(this.#last);
    }
    const row = this.#callRow.get(currentCallId);
    const mid = row === undefined ? undefined : this.#rows.get(row)?.mid;
    return mid === undefined ? undefined : this.#headId(mid);
  }

  /**
   * True when the transcript holds call `callId` as a call of `tool` with
   * the same arguments the answer is derived from (`file_path`, `offset` and
   * `limit` of a `Read`, the `command` of a `Bash`, ...): a hook input that
   * names a call the session did not make, or made otherwise, gets nothing.
   */
  callMatches(callId: string, tool: string, input: Record<string, unknown>): boolean {
    const row = this.#callRow.get(callId);
    const mid = row === undefined ? undefined : this.#rows.get(row)?.mid;
    const use = mid === undefined ? undefined : this.#uses.get(mid)?.find((u) => u.id === callId);
    return use !== undefined && use.name === tool && use.checked === checkedInput(tool, input);
  }

  /**
   * True when the message holding a call was put together by the API's message id alone after it
   * held calls (rows without Claude Code's request id): whether it is one response is not proven,
   * so the host answers none of its calls (SPEC §11.9).
   */
  unproven(callId: string): boolean {
    const row = this.#callRow.get(callId);
    const mid = row === undefined ? undefined : this.#rows.get(row)?.mid;
    return mid !== undefined && this.#unproven.has(mid);
  }

  /**
   * The message holding a call: its id and its calls in call order.
   */
  currentOf(callId: string): { messageId: string; callIds: string[] } | undefined {
    const row = this.#callRow.get(callId);
    const mid = row === undefined ? undefined : this.#rows.get(row)?.mid;
    if (mid === undefined) return undefined;
    return { messageId: mid, callIds: (this.#uses.get(mid) ?? []).map((u) => u.id) };
  }

  /**
   * The entry with this id, its `parentId` the entry before it on the branch
   * (for `BranchKnowledge.syncTip`: a long-lived host replays only the
   * entries appended since its last call); `undefined` for an unknown id.
   */
  entry(id: string, given: ClaudeBranchOptions): ReplayEntry | undefined {
    // a file is resolved once, when its entry is first converted (SPEC §5.6)
    const options: ClaudeBranchOptions = {
      ...given,
      pathKey: (path) => {
        const k = `${id}\n${path}`;
        let key = this.#keys.get(k);
        if (key === undefined) this.#keys.set(k, key = given.pathKey(path));
        return key;
      },
    };
    if (id.endsWith("~cut")) {
      // the window a rewritten context starts (SPEC §11.9)
      const first = this.#rows.get(id.slice(0, -"~cut".length));
      return first?.cutBefore === true ? { id, parentId: null, kind: "compaction" } : undefined;
    }
    const hash = id.lastIndexOf("#");
    if (hash > 0 && !id.includes(":")) {
      // a message's head: its calls that change, may change or show files
      const first = this.#rows.get(id.slice(0, hash));
      if (first?.kind !== "assistant") return undefined;
      const head = messageHead(id, this.#uses.get(first.mid!) ?? [], options);
      head.parentId = first.cutBefore === true
        ? `${first.uuid}~cut`
        : this.#entryAt(first.parentUuid);
      return head;
    }
    const colon = id.indexOf(":");
    if (colon > 0) {
      const callId = id.slice(colon + 1);
      const row = this.#callRow.get(callId);
      const mid = row === undefined ? undefined : this.#rows.get(row)?.mid;
      if (mid === undefined) return undefined;
      const results = this.#resultsOf(mid);
      const at = results.findIndex((r) => r.use.id === callId);
      if (at < 0 || `${results[at].result.uuid}:${callId}` !== id) return undefined;
      const e = resultEntry(results[at].use, results[at].result, options);
      e.parentId = at === 0
        ? this.#headId(mid)
        : `${results[at - 1].result.uuid}:${results[at - 1].use.id}`;
      return e;
    }
    const row = this.#rows.get(id);
    if (row === undefined) return undefined;
    const parentId = row.kind === "boundary" ? null : this.#entryAt(row.parentUuid);
    switch (row.kind) {
      case "boundary":
        return { id, parentId, kind: "compaction" };
      case "file": {
        // the model saw text of the file the cache did not serve: its lines are unknown
        const call = { name: row.file!, pathKey: options.pathKey(row.file!) };
        return { id, parentId, kind: "read", meta: undefined, call };
      }
      case "notification":
        // a background agent's report: it may quote files as they were at some point
        return { id, parentId, kind: "tool", tool: "task-notification" };
      case "user":
        return { id, parentId, kind: "other" };
    }
    return undefined;
  }

  /**
   * The branch that ends at the call being served (`currentCallId`), or,
   * without one, at the newest row, root (or compaction) to leaf; see the
   * module documentation for the mapping. `undefined` when the call is not in
   * the transcript (yet).
   */
  branch(options: ClaudeBranchOptions): ClaudeBranch | undefined {
    const leaf = this.leafOf(options.currentCallId);
    if (leaf === undefined) return undefined;
    const entries: ReplayEntry[] = [];
    const seen = new Set<string>();
    for (let id = leaf; id !== null && !seen.has(id);) {
      seen.add(id);
      const e = this.entry(id, options);
      if (e === undefined) break;
      entries.push(e);
      if (e.kind === "compaction") break;
      id = e.parentId;
    }
    entries.reverse();
    if (entries.length > 0) entries[0].parentId = null;
    const current = options.currentCallId === undefined
      ? undefined
      : this.currentOf(options.currentCallId);
    return current === undefined ? { entries } : { entries, current };
  }
}

/**
 * Converts a Claude Code transcript's rows (file order) into the branch that
 * ends at the call being served (`currentCallId`), or, without one, at the
 * newest row; see the module documentation for the mapping. `undefined` when
 * the call is not in the transcript (yet). A host that serves many calls of
 * one session keeps a {@linkcode ClaudeTranscriptIndex} instead.
 *
 * @example
 * ```ts
 * import { claudeBranchToReplay } from "@readcache/core/claude-code";
 * const rows = [
 *   { type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "go" } },
 *   { type: "assistant", uuid: "a1", parentUuid: "u1", message: { id: "m1", role: "assistant",
 *     content: [{ type: "tool_use", id: "t1", name: "Read", input: { file_path: "/w/a.ts" } }] } },
 * ];
 * claudeBranchToReplay(rows, { currentCallId: "t1", pathKey: (p) => p })?.entries.length; // 2
 * ```
 */
export function claudeBranchToReplay(
  rows: readonly ClaudeRowLike[],
  options: ClaudeBranchOptions,
): ClaudeBranch | undefined {
  const index = new ClaudeTranscriptIndex();
  for (const row of rows) index.add(row);
  return index.branch(options);
}

/** A Claude Code tool call as a call of its message (SPEC §5.10, §11.9). */
function hostCallOf(use: ToolUse, options: ClaudeBranchOptions): HostCall {
  const { id } = use;
  switch (use.cls) {
    case "read":
      return { id, role: "read" };
    case "write": {
      const call = claudeFileCall(use.name, use.input, options.pathKey);
      // a file tool naming no file the cache can follow may change any file
      if (call === undefined) return { id, role: "opaque" };
      return { id, role: "change", targets: [call], edit: use.name !== "Write" };
    }
    case "followed":
      return { id, role: "followed" };
    default:
      if (use.name === "Grep") return { id, role: "search" };
      return use.name === "Bash"
        ? { id, role: "shell", command: use.command }
        : { id, role: "opaque" };
  }
}

/** The `other` entry of an assistant message (SPEC §5.8, §5.10). */
function messageHead(
  id: string,
  uses: readonly ToolUse[],
  options: ClaudeBranchOptions,
): ReplayEntry {
  return messageEntry(id, null, uses.map((u) => hostCallOf(u, options)));
}

/** The entry of one finished tool call. */
function resultEntry(use: ToolUse, result: ToolResult, options: ClaudeBranchOptions): ReplayEntry {
  const ok = !result.isError;
  const call = hostCallOf(use, options);
  const r = {
    id: `${result.uuid}:${use.id}`,
    parentId: null,
    callId: use.id,
    tool: use.name,
    call,
    ok,
  };
  switch (call.role) {
    case "read": {
      const meta = result.resultType === "text"
        ? result.meta
        : result.bare
        ? options.servedMeta?.(use.id, result.text ?? "")
        : undefined;
      return resultEntries({
        ...r,
        read: claudeFileCall(use.name, use.input, options.pathKey),
        meta,
      })[0];
    }
    case "change": {
      const proof = use.proof === undefined ? undefined : { call: call.targets![0], ...use.proof };
      // a successful Edit carries the model's belief (SPEC §5.9: replay checks it)
      const belief = use.name === "Edit" ? result.meta : undefined;
      return resultEntries({ ...r, proof, meta: belief })[0];
    }
    default:
      // what the tool showed or changed (SPEC §5.10): the host's record, if it made one
      return resultEntries({ ...r, meta: ok ? result.meta : undefined })[0];
  }
}
