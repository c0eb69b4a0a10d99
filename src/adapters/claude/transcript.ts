/**
 * Maps a Claude Code transcript (`~/.claude/projects/<cwd-slug>/<session>.jsonl`,
 * or a subagent's `<session>/subagents/agent-<id>.jsonl`) onto the replay
 * entry model, so that the core derives what the model holds exactly as it
 * does for pi and OpenCode (SPEC §5, §6, §11.5). Pure but for resolving paths
 * on disk (realpath).
 *
 * The branch is the chain of rows from the newest one (the assistant row that
 * holds the call being served) back along `parentUuid`; Claude Code (2.1.332)
 * builds the model's context from it like this, and the mapping follows it:
 *
 * - **Barrier** (SPEC §6.1): a `compact_boundary` system row ends the chain
 *   (its `parentUuid` is `null`) and becomes the `compaction` entry.
 * - **Assistant messages**: Claude Code writes one row per content block of a
 *   response, each a child of the one before, all with the response's
 *   `message.id`. They are one message (an `other` entry with the message's
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
 *   without a BOM is proof of content (`wrote`, SPEC §5.8); `Edit`,
 *   `MultiEdit`, `NotebookEdit` and a failed or other write leave the file
 *   unknown (`changed`).
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
 * Specified by SPEC.md §11.5.
 *
 * @module
 */
import { sha256Hex } from "../../core/hash.ts";
import { countLines } from "../../core/range.ts";
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
  /** For a system row: `compact_boundary` marks a compaction. */
  subtype?: string;
  /** Row id. */
  uuid?: string;
  /** Parent row id; `null` for a root (and for a compact boundary). */
  parentUuid?: string | null;
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

/** A tool call of an assistant message. */
interface ToolUse {
  id: string;
  name: string;
  input: Record<string, unknown>;
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

/** True when a read-only command cannot print file content (`ls`, `pwd`, ...). */
function showsNothing(name: string, input: unknown): boolean {
  const command = record(input).command;
  return name === "Bash" && typeof command === "string" &&
    classifyShellCommand(command).showsContent === false;
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

function toolUsesOf(row: ClaudeRowLike): ToolUse[] {
  const content = row.message?.content;
  if (row.type !== "assistant" || !Array.isArray(content)) return [];
  const out: ToolUse[] = [];
  for (const block of content) {
    const b = record(block);
    if (b.type === "tool_use" && typeof b.id === "string" && typeof b.name === "string") {
      out.push({ id: b.id, name: b.name, input: record(b.input) });
    }
  }
  return out;
}

interface ToolResult {
  id: string;
  isError: boolean;
  /** The text the model received. */
  text: string;
}

function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b) => record(b).type === "text" ? String(record(b).text ?? "") : "").join(
    "\n",
  );
}

function toolResultsOf(row: ClaudeRowLike): ToolResult[] {
  const content = row.message?.content;
  if (row.type !== "user" || !Array.isArray(content)) return [];
  const out: ToolResult[] = [];
  for (const block of content) {
    const b = record(block);
    if (b.type === "tool_result" && typeof b.tool_use_id === "string") {
      out.push({ id: b.tool_use_id, isError: b.is_error === true, text: resultText(b.content) });
    }
  }
  return out;
}

function userText(row: ClaudeRowLike): string {
  return resultText(row.message?.content);
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
  call: ReadCall,
  input: Record<string, unknown>,
): { call: ReadCall; hash: string; totalLines: number; bytes: number } | undefined {
  const content = input.content;
  if (typeof content !== "string" || !content.isWellFormed() || content.startsWith("\uFEFF")) {
    return undefined;
  }
  const bytes = new TextEncoder().encode(content).length;
  return { call, hash: sha256Hex(content), totalLines: countLines(content), bytes };
}

/**
 * Converts a Claude Code transcript's rows (file order) into the branch that
 * ends at the call being served (`currentCallId`), or, without one, at the
 * newest row; see the module documentation for the mapping. `undefined` when
 * the call is not in the transcript (yet).
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
  const byUuid = new Map<string, ClaudeRowLike>();
  const messageRows = new Map<string, ClaudeRowLike[]>();
  const resultRow = new Map<string, { row: ClaudeRowLike; result: ToolResult }>();
  let leaf: ClaudeRowLike | undefined;
  for (const row of rows) {
    if (typeof row.uuid !== "string") continue;
    byUuid.set(row.uuid, row);
    const mid = row.type === "assistant" ? row.message?.id : undefined;
    if (typeof mid === "string") {
      const list = messageRows.get(mid) ?? [];
      list.push(row);
      messageRows.set(mid, list);
    }
    for (const r of toolResultsOf(row)) resultRow.set(r.id, { row, result: r });
    if (options.currentCallId === undefined) {
      if (row.type === "user" || row.type === "assistant" || row.type === "system") leaf = row;
    } else if (toolUsesOf(row).some((t) => t.id === options.currentCallId)) {
      leaf = row;
    }
  }
  if (leaf === undefined) return options.currentCallId === undefined ? { entries: [] } : undefined;

  // the chain, leaf back to the root or the compact boundary
  const chain: ClaudeRowLike[] = [];
  const seen = new Set<string>();
  for (let row: ClaudeRowLike | undefined = leaf; row !== undefined;) {
    if (seen.has(row.uuid!)) break;
    seen.add(row.uuid!);
    chain.push(row);
    if (row.type === "system" && row.subtype === "compact_boundary") break;
    const parent: string | null | undefined = row.parentUuid;
    row = typeof parent === "string" ? byUuid.get(parent) : undefined;
  }
  chain.reverse();

  const entries: ReplayEntry[] = [];
  let parentId: string | null = null;
  const push = (e: ReplayEntry): void => {
    e.parentId = parentId;
    parentId = e.id;
    entries.push(e);
  };
  const done = new Set<string>();
  for (const row of chain) {
    const id = row.uuid!;
    if (row.type === "system") {
      if (row.subtype === "compact_boundary") push({ id, parentId: null, kind: "compaction" });
      continue;
    }
    if (row.type === "attachment") {
      const path = attachedFile(row);
      if (path !== undefined && path.startsWith("/")) {
        // the model saw text of the file the cache did not serve: its lines are unknown
        const call = { name: path, pathKey: options.pathKey(path) };
        push({ id, parentId: null, kind: "read", meta: undefined, call });
      }
      continue;
    }
    if (row.type === "user") {
      if (toolResultsOf(row).length > 0) continue; // placed after its message
      if (/^\s*<task-notification>/.test(userText(row))) {
        // a background agent's report: it may quote files as they were at some point
        push({ id, parentId: null, kind: "tool", tool: "task-notification" });
        continue;
      }
      push({ id, parentId: null, kind: "other" });
      continue;
    }
    if (row.type !== "assistant") continue;
    const mid = typeof row.message?.id === "string" ? row.message.id : id;
    if (done.has(mid)) continue;
    done.add(mid);
    const siblings = messageRows.get(mid) ?? [row];
    const mine = new Set(siblings.map((r) => r.uuid!));
    const uses: ToolUse[] = [];
    for (const r of siblings) {
      for (const t of toolUsesOf(r)) if (!uses.some((u) => u.id === t.id)) uses.push(t);
    }
    const head = messageHead(id, uses, options);
    if (options.currentCallId !== undefined && uses.some((u) => u.id === options.currentCallId)) {
      push(head);
      return { entries, current: { messageId: mid, callIds: uses.map((u) => u.id) } };
    }
    push(head);
    for (const use of uses) {
      const result = resultRow.get(use.id);
      // a call that never got a result: the core leaves its file unknown from its turn's start
      if (result === undefined || !mine.has(String(result.row.parentUuid))) continue;
      push(resultEntry(use, result.row, result.result, options));
    }
  }
  return { entries };
}

/** The `other` entry of an assistant message (SPEC §5.8, §5.10). */
function messageHead(
  id: string,
  uses: readonly ToolUse[],
  options: ClaudeBranchOptions,
): ReplayEntry {
  const changes: FileChange[] = [];
  const opaque: string[] = [];
  const shows: string[] = [];
  for (const u of uses) {
    const cls = claudeToolClass(u.name, u.input);
    if (cls === "write") {
      const call = claudeFileCall(u.name, u.input, options.pathKey);
      if (call !== undefined) {
        changes.push({ callId: u.id, call, tool: u.name === "Write" ? "write" : "edit" });
      } else opaque.push(u.id); // a file tool naming no file the cache can follow
    } else if (cls === "opaque") opaque.push(u.id);
    else if (cls === "viewing" && !showsNothing(u.name, u.input)) shows.push(u.id);
  }
  return {
    id,
    parentId: null,
    kind: "other",
    ...(changes.length > 0 ? { changes } : {}),
    ...(opaque.length > 0 ? { opaque } : {}),
    ...(shows.length > 0 ? { shows } : {}),
  };
}

/** The entry of one finished tool call. */
function resultEntry(
  use: ToolUse,
  row: ClaudeRowLike,
  shown: ToolResult,
  options: ClaudeBranchOptions,
): ReplayEntry {
  const isError = shown.isError;
  const id = `${row.uuid}:${use.id}`;
  const callId = use.id;
  const result = record(row.toolUseResult);
  const cls = claudeToolClass(use.name, use.input);
  if (cls === "read" && !isError) {
    const call = claudeFileCall(use.name, use.input, options.pathKey);
    const meta = result.type === "text"
      ? record(result.file).readcache
      : row.toolUseResult === undefined
      ? options.servedMeta?.(callId, shown.text)
      : undefined;
    if (call !== undefined) return { id, parentId: null, kind: "read", meta, callId, call };
  }
  if (cls === "write") {
    const call = claudeFileCall(use.name, use.input, options.pathKey);
    if (call !== undefined) {
      const proof = use.name === "Write" && !isError ? writeProof(call, use.input) : undefined;
      if (proof !== undefined) {
        return {
          id,
          parentId: null,
          kind: "wrote",
          call: proof.call,
          hash: proof.hash,
          callId,
          totalLines: proof.totalLines,
          bytes: proof.bytes,
        };
      }
      return { id, parentId: null, kind: "changed", call, callId };
    }
  }
  if (cls === "viewing" || cls === "opaque") {
    // what the tool showed or changed (SPEC §5.10): the host's record, if it made one
    const meta = isError ? undefined : result.readcache;
    return meta === undefined
      ? { id, parentId: null, kind: "tool", tool: use.name, callId }
      : { id, parentId: null, kind: "tool", tool: use.name, callId, meta };
  }
  return { id, parentId: null, kind: "other", toolResult: true, callId };
}
