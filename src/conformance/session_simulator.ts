/**
 * A session simulator for scenario vectors: a tree of entries with a leaf
 * pointer, modelling what pi does (reads append tool results, `/tree` moves
 * the leaf, compaction appends a barrier, forks copy the branch into a new
 * session, restarts drop in-memory state), driving the real read service over
 * real files in a temporary cwd and the on-disk object store.
 *
 * Specified by SPEC.md §10.
 *
 * @module
 */
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { spawnSync } from "node:child_process";
import { renderBaselineRead } from "../core/baseline.ts";
import { MemoryObjectStore } from "../core/object_store.ts";
import { basename, dirname, join, relative, resolve } from "node:path";
import { FsObjectStore } from "../store/fs_object_store.ts";
import type { DecisionConfig, ReadDecision } from "../core/decision.ts";
import { BranchKnowledge } from "../core/knowledge.ts";
import type { ReadRequest } from "../core/range.ts";
import { applyPiEdit, editCallArgs } from "../core/edit.ts";
import type { ReadCacheEditMetaV1 } from "../core/meta.ts";
import {
  locateRead,
  planEdit,
  resolveCall,
  resolveInvalidation,
  resolveWriteCall,
  resolveWriteTarget,
  serveRead,
} from "../shell/read_service.ts";
import { toolCallSnapshot, toolResultMeta } from "../shell/tool_result.ts";
import { classifyShellCommand } from "../core/shell_view.ts";
import { activeBranch, type FileChange, type ReadCall, type ReplayEntry } from "../core/replay.ts";
import type { ScenarioInput, ScenarioInputStep as ScenarioStep } from "./vector_schema.ts";

/** One result line of the port contract. */
export type StepResult =
  | { step: number; mode: string | null; text: string; scope?: string }
  | { step: number; error: string };

/** What a port prints for a scenario vector. */
export interface ScenarioOutput {
  /** Vector id. */
  id: string;
  /** One result per `read` step, in order. */
  results: StepResult[];
}

type EntryBody = ReplayEntry extends infer E
  ? E extends ReplayEntry ? Omit<E, "id" | "parentId"> : never
  : never;

/**
 * A session entry: a replay entry, plus the raw arguments of the call a read
 * result answers, or of the write call a tool result answers.
 */
type SimEntry = ReplayEntry & {
  args?: ReadRequest;
  writeArgs?: { path: string; content: string };
  /** An edit call's result: its arguments and, when it succeeded, its metadata. */
  edit?: { args: Record<string, unknown>; meta?: unknown };
};

interface Session {
  entries: SimEntry[];
  leaf: string | null;
  knowledge: BranchKnowledge;
  /**
   * Calls resolved so far, by entry id: like the pi adapter, a call is
   * resolved against the file system when replay first sees its result, and
   * again after a restart.
   */
  calls: Map<string, ReadCall | undefined>;
}

const FILE_OPS: ReadonlySet<string> = new Set(["write", "remove", "symlink", "storeFault"]);

/** A step that is a tool call of the model: a read, a write or edit, a shell command or a search. */
function isCall(
  s: ScenarioStep,
): s is ScenarioStep & { op: "read" | "writeTool" | "editTool" | "bash" | "grep" } {
  return s.op === "read" || s.op === "writeTool" || s.op === "editTool" || s.op === "bash" ||
    s.op === "grep";
}

/**
 * Runs a `bash` step's command as pi's bash tool does (`bash -c` in the cwd,
 * stdout and stderr together); returns the output. A command that fails or
 * times out still ran: its output is what the model sees.
 */
export function runBashStep(command: string, cwd: string): string {
  const r = spawnSync("bash", ["-c", command], {
    cwd,
    encoding: "utf8",
    timeout: 10_000,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return `${r.stdout ?? ""}${r.stderr ?? ""}`;
}

/**
 * A `bash` step's output as pi's bash tool gives it to the model: the last
 * 2,000 lines or 50 KB with a notice when longer, `(no output)` when empty,
 * and the exit status when the command failed.
 */
export function piBashOutput(command: string, cwd: string): string {
  const r = spawnSync("bash", ["-c", command], {
    cwd,
    timeout: 10_000,
    stdio: ["ignore", "pipe", "pipe"],
  });
  // one streaming decoder over the output, as pi's: a byte order mark that starts it is dropped
  const decoder = new TextDecoder();
  let text = decoder.decode(r.stdout ?? new Uint8Array(), { stream: true }) +
    decoder.decode(r.stderr ?? new Uint8Array());
  const lines = text.split("\n");
  if (lines.length > 2000 || new TextEncoder().encode(text).length > 50 * 1024) {
    const kept = lines.slice(-2000);
    while (kept.length > 1 && new TextEncoder().encode(kept.join("\n")).length > 50 * 1024) {
      kept.shift();
    }
    const first = lines.length - kept.length + 1;
    text = `${kept.join("\n")}\n\n[Showing lines ${first}-${lines.length} of ${lines.length}.]`;
  }
  if (text === "") text = "(no output)";
  return r.status === 0 ? text : `${text}\n\nCommand exited with code ${r.status}`;
}

/**
 * Runs a `grep` step as pi's grep tool shows it: each matching line of the
 * files under `path` (the cwd by default; hidden files included; a symbolic
 * link met while walking a directory skipped, the path searched followed;
 * the cache's store `storeRoot` left out, as ripgrep leaves it out for the
 * store's `.ignore`) as `path:N: text`, the path relative to the
 * directory searched (the file's name when a file was searched), a byte
 * order mark that starts a file and carriage returns dropped, lines over 500
 * characters cut; at most 100 matches and
 * 50 KB of whole rows, with pi's notices; `No matches found` when none.
 */
export function runGrepStep(
  pattern: string,
  path: string | undefined,
  cwd: string,
  storeRoot: string,
): string {
  const at = resolve(cwd, path ?? ".");
  const re = new RegExp(pattern);
  const rows: string[] = [];
  let isFile = false;
  let cutLines = false;
  try {
    isFile = statSync(at).isFile();
  } catch {
    return `Path not found: ${at}`;
  }
  for (const p of searchedFiles(at, storeRoot)) {
    const shown = isFile ? basename(p) : relative(at, p);
    // ripgrep sniffs a UTF-8 byte order mark and drops it: the first row shows the line without
    const lines = readFileSync(p, "utf8").replace(/^\uFEFF/, "").replace(/\r\n/g, "\n")
      .split("\n");
    lines.forEach((l, i) => {
      if (rows.length >= GREP_MATCH_LIMIT || !re.test(l)) return;
      const text = l.replace(/\r/g, "");
      cutLines ||= text.length > 500;
      rows.push(
        `${shown}:${i + 1}: ${text.length > 500 ? text.slice(0, 500) + "... [truncated]" : text}`,
      );
    });
  }
  if (rows.length === 0) return "No matches found";
  const notices: string[] = [];
  if (rows.length >= GREP_MATCH_LIMIT) {
    notices.push(
      `${GREP_MATCH_LIMIT} matches limit reached. Use limit=${
        GREP_MATCH_LIMIT * 2
      } for more, or refine pattern`,
    );
  }
  // pi keeps the whole rows that fit in 50 KB
  const encoder = new TextEncoder();
  let kept = 0;
  let bytes = 0;
  for (const row of rows) {
    const b = encoder.encode(row).length + (kept > 0 ? 1 : 0);
    if (bytes + b > 50 * 1024) break;
    bytes += b;
    kept++;
  }
  if (kept < rows.length) notices.push("50.0KB limit reached");
  if (cutLines) {
    notices.push("Some lines truncated to 500 chars. Use read tool to see full lines");
  }
  const text = rows.slice(0, kept).join("\n");
  return notices.length === 0 ? text : `${text}\n\n[${notices.join(". ")}]`;
}

/** pi's grep stops at this many matches (its default `limit`). */
const GREP_MATCH_LIMIT = 100;

/**
 * The regular files a search of `at` reads, in walking order: `at` itself
 * followed when it is a link, a symbolic link met while walking skipped (no
 * `--follow`), directories in name order, `skip` (a directory) left out.
 */
export function searchedFiles(at: string, skip?: string): string[] {
  const out: string[] = [];
  const visit = (p: string, named: boolean) => {
    let st;
    try {
      st = named ? statSync(p) : lstatSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      if (p !== skip) { for (const n of readdirSync(p).sort()) visit(join(p, n), false); }
    } else if (st.isFile()) out.push(p);
  };
  visit(at, true);
  return out;
}

/** The arguments the model sends with an `editTool` step, in the shape the step gives them. */
export function editArgsOf(step: ScenarioStep & { op: "editTool" }): Record<string, unknown> {
  const args: Record<string, unknown> = { path: step.path };
  if (step.edits !== undefined) args.edits = step.edits;
  if (step.oldText !== undefined) args.oldText = step.oldText;
  if (step.newText !== undefined) args.newText = step.newText;
  return args;
}

/**
 * What pi's edit tool does to the file (SPEC §5.9): the path resolved like
 * pi's, the file read as UTF-8 and changed by pi's matching rules, or pi's
 * error (a missing file, a replacement not found or found twice).
 */
export function applyEditStep(
  args: Record<string, unknown>,
  deps: { cwd: string; home: string },
): { ok: true } | { ok: false; error: string } {
  const parsed = editCallArgs(args);
  if (parsed === undefined) return { ok: false, error: "Edit tool input is invalid." };
  const target = resolveWriteTarget({ path: parsed.path }, deps);
  if (target === undefined) return { ok: false, error: "Edit tool input is invalid." };
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(target.name);
  } catch (e) {
    const code = (e as { code?: string }).code ?? String(e);
    return { ok: false, error: `Could not edit file: ${parsed.path}. Error code: ${code}.` };
  }
  const r = applyPiEdit(
    new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes),
    parsed.edits,
    parsed.path,
  );
  if (!r.ok) return r;
  writeFileSync(target.name, r.text, "utf8");
  return { ok: true };
}

/**
 * The tool-call steps (`read`, `writeTool`) of the turn that the call step at
 * `index` starts (SPEC §10): it and the following call steps up to the next
 * one that starts a turn, skipping file changes; stops at any other step.
 */
export function turnCallSteps(steps: readonly ScenarioStep[], index: number): number[] {
  const turn: number[] = [];
  for (let i = index; i < steps.length; i++) {
    const s = steps[i];
    if (isCall(s)) {
      if (i !== index && startsTurn(steps, i)) break;
      turn.push(i);
    } else if (!FILE_OPS.has(s.op)) break;
  }
  return turn;
}

/** The arguments of a read step as a read request (path, offset, limit). */
export function readRequestOf(step: ScenarioStep & { op: "read" }): ReadRequest {
  const req: ReadRequest = { path: step.path };
  if (step.offset !== undefined) req.offset = step.offset;
  if (step.limit !== undefined) req.limit = step.limit;
  return req;
}

/**
 * Applies a step that only changes files (`write`, `remove`, `symlink`) in
 * `cwd`; false for any other step. Both ports apply them this way.
 */
export function applyFileStep(cwd: string, step: ScenarioStep): boolean {
  switch (step.op) {
    case "write":
      writeVectorFile(cwd, step.path, step.content);
      return true;
    case "remove":
      rmSync(join(cwd, step.path), { force: true });
      return true;
    case "symlink":
      writeVectorSymlink(cwd, step.path, step.target);
      return true;
    default:
      return false;
  }
}

/**
 * True when a call step's result reaches the session at its own step: not
 * `persist: false` (never, so far) nor `"deferred"` (with a later call's).
 */
export function returnsAtOnce(s: ScenarioStep): boolean {
  return !("persist" in s) || (s.persist !== false && s.persist !== "deferred");
}

/**
 * True when the call step at `index` starts a new turn (a new assistant
 * message): it does unless the previous call step, with only file changes in
 * between, was still in flight (`persist: false`) — the calls of one turn are
 * the calls of one assistant message.
 */
export function startsTurn(steps: readonly ScenarioStep[], index: number): boolean {
  for (let i = index - 1; i >= 0; i--) {
    const s = steps[i];
    if (isCall(s)) return returnsAtOnce(s);
    if (!FILE_OPS.has(s.op)) return true;
  }
  return true;
}

/**
 * Writes a vector's file content (text, or `{base64}` for bytes) to
 * `<cwd>/<rel>`, creating directories.
 */
export function writeVectorFile(cwd: string, rel: string, c: string | { base64: string }): void {
  const p = join(cwd, rel);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(
    p,
    typeof c === "string"
      ? new TextEncoder().encode(c)
      : Uint8Array.from(atob(c.base64), (ch) => ch.charCodeAt(0)),
  );
}

/**
 * Creates or replaces `<cwd>/<rel>` as a symbolic link to `target` (the
 * `symlink` step), creating directories.
 */
export function writeVectorSymlink(cwd: string, rel: string, target: string): void {
  const p = join(cwd, rel);
  mkdirSync(dirname(p), { recursive: true });
  rmSync(p, { force: true });
  symlinkSync(target, p);
}

/** Deletes or corrupts the stored object of `hash` (the `storeFault` step). */
export function injectStoreFault(
  store: FsObjectStore,
  hash: string,
  fault: "delete" | "corrupt",
): void {
  const p = store.objectPath(hash);
  if (fault === "delete") rmSync(p, { force: true });
  else writeFileSync(p, "corrupted by storeFault\n");
}

/** What the host's own read shows for a file the cache does not take (too large): plain text. */
function hostRead(
  path: string,
  target: { displayPath: string; offset?: number; limit?: number },
): Pick<ReadDecision, "mode" | "text" | "details"> {
  const b = renderBaselineRead({
    text: new TextDecoder().decode(readFileSync(path)),
    displayPath: target.displayPath,
    offset: target.offset,
    limit: target.limit,
  });
  return {
    mode: null,
    text: b.text,
    details: b.truncation ? { truncation: b.truncation } : {},
  };
}

/**
 * Runs one scenario vector in `cwd` (an empty directory) and returns the port
 * output. `home` is used for `~`.
 */
export async function runScenario(
  vector: ScenarioInput,
  cwd: string,
  home: string,
): Promise<ScenarioOutput> {
  const store = FsObjectStore.forCwd(cwd);
  let volatile = new MemoryObjectStore(); // bases of files outside cwd: this "process" only
  const config: Partial<DecisionConfig> = { ...vector.config };
  const write = (rel: string, c: string | { base64: string }) => writeVectorFile(cwd, rel, c);
  for (const [rel, c] of Object.entries(vector.files)) write(rel, c);

  let counter = 0;
  const nextId = () => `e${++counter}`;
  let session: Session = {
    entries: [],
    leaf: null,
    knowledge: new BranchKnowledge(),
    calls: new Map(),
  };
  const labels = new Map<string, string>();
  const lastServed = new Map<string, string>();
  const results: StepResult[] = [];

  const append = (e: EntryBody & Pick<SimEntry, "args" | "writeArgs" | "edit">): string => {
    const id = nextId();
    session.entries.push({ ...e, id, parentId: session.leaf } as SimEntry);
    session.leaf = id;
    return id;
  };
  const writes = new Map<string, { call: ReadCall; hash: string } | undefined>();
  /** The file a change result targets, resolved when replay first sees it (like writes). */
  const changeTargets = new Map<string, ReadCall | undefined>();
  const targets = (id: string, args: unknown): ReadCall | undefined => {
    if (!changeTargets.has(id)) changeTargets.set(id, resolveWriteTarget(args, { cwd, home }));
    return changeTargets.get(id);
  };
  const toReplay = (e: SimEntry): ReplayEntry => {
    if (e.writeArgs !== undefined && e.kind === "other") {
      // like the pi adapter: a write result is resolved when replay first sees it
      if (!writes.has(e.id)) writes.set(e.id, resolveWriteCall(e.writeArgs, { cwd, home }));
      const w = writes.get(e.id);
      const { id, parentId } = e;
      if (w !== undefined) {
        return { id, parentId, kind: "wrote", call: w.call, hash: w.hash, callId: e.callId };
      }
      // a write that is not proof of content still changed the file (SPEC §5.9)
      const call = targets(e.id, e.writeArgs);
      return call === undefined
        ? { id, parentId, kind: "other", toolResult: true, callId: e.callId }
        : { id, parentId, kind: "changed", call, callId: e.callId };
    }
    if (e.edit !== undefined && e.kind === "other") {
      const call = targets(e.id, e.edit.args);
      const { id, parentId } = e;
      if (call === undefined) {
        return { id, parentId, kind: "other", toolResult: true, callId: e.callId };
      }
      return e.edit.meta === undefined
        ? { id, parentId, kind: "changed", call, callId: e.callId }
        : { id, parentId, kind: "changed", call, callId: e.callId, meta: e.edit.meta };
    }
    if (e.kind !== "read" || e.args === undefined) return e;
    const { args, ...rest } = e;
    if (!session.calls.has(e.id)) session.calls.set(e.id, resolveCall(args, { cwd, home }));
    const call = session.calls.get(e.id);
    return call === undefined ? rest : { ...rest, call };
  };
  const branch = () => (activeBranch(session.entries, session.leaf) as SimEntry[]).map(toReplay);
  /** The assistant message of the turn the call step at `index` starts, with its file changes. */
  const startTurn = (index: number) => {
    const changes: FileChange[] = [];
    const opaque: string[] = [];
    const shows: string[] = [];
    for (const i of turnCallSteps(vector.steps, index)) {
      const s = vector.steps[i];
      // a command that only reads files changes none, but may show some (SPEC §5.10)
      const shell = s.op === "bash" ? classifyShellCommand(s.command) : undefined;
      if (shell !== undefined && !shell.readOnly) opaque.push(`call-${i}`);
      else if (shell?.showsContent === true || s.op === "grep") shows.push(`call-${i}`);
      if (s.op === "bash" || s.op === "grep") continue;
      const call = resolveWriteTarget(s, { cwd, home });
      if ((s.op === "writeTool" || s.op === "editTool") && call) {
        changes.push({ callId: `call-${i}`, call, tool: s.op === "editTool" ? "edit" : "write" });
      }
    }
    append({
      kind: "other",
      ...(changes.length > 0 ? { changes } : {}),
      ...(opaque.length > 0 ? { opaque } : {}),
      ...(shows.length > 0 ? { shows } : {}),
    });
  };

  /** Beliefs planned for edit calls, by call id (SPEC §5.9 rule 4). */
  const planned = new Map<string, ReadCacheEditMetaV1>();
  /** Results of `"deferred"` calls of the current turn, in call order (SPEC §10). */
  let deferred: (EntryBody & Pick<SimEntry, "args" | "writeArgs" | "edit">)[] = [];
  /** A call's result: appended now, kept for the next call that returns at once, or dropped. */
  const result = (
    persist: boolean | "deferred" | undefined,
    e: EntryBody & Pick<SimEntry, "args" | "writeArgs" | "edit">,
  ) => {
    if (persist === "deferred") deferred.push(e);
    else if (persist !== false) {
      for (const d of deferred) append(d);
      deferred = [];
      append(e);
    }
  };

  const run = async (step: ScenarioStep, index: number): Promise<void> => {
    // a new turn, or any step that is not part of one, leaves deferred results unanswered
    if (
      (isCall(step) && startsTurn(vector.steps, index)) || (!isCall(step) && !FILE_OPS.has(step.op))
    ) {
      deferred = [];
    }
    switch (step.op) {
      case "read": {
        // the assistant message that carries this call (and the next in-flight ones)
        if (startsTurn(vector.steps, index)) startTurn(index);
        const args = readRequestOf(step);
        const callId = `call-${index}`;
        try {
          session.knowledge.sync(branch());
          const served = await serveRead(
            { ...args, bypass_cache: step.bypass },
            session.knowledge,
            { cwd, home, store, volatileStore: volatile, config },
          );
          if (served.delegate === "not_a_regular_file") {
            throw new Error(`not a regular file: ${served.target.resolvedPath}`);
          }
          const d = served.delegate === "too_large"
            ? hostRead(served.target.resolvedPath, served.target)
            : served.decision;
          const meta = d.details.readcache;
          if (meta) lastServed.set(meta.pathKey, meta.servedHash);
          if (step.persist === false) {
            session.knowledge.recordServed(
              meta ? { meta, call: served.call, callId } : { call: served.call, callId },
            );
          } else {
            result(step.persist, { kind: "read", meta, callId, args });
          }
          const r: StepResult = { step: index, mode: d.mode, text: d.text };
          if (meta) r.scope = meta.scopeKey;
          results.push(r);
        } catch (e) {
          result(step.persist, { kind: "other", toolResult: true, callId });
          results.push({ step: index, error: e instanceof Error ? e.message : String(e) });
        }
        return;
      }
      case "writeTool": {
        if (startsTurn(vector.steps, index)) startTurn(index);
        // what pi's write tool does: create the directories, write the content as UTF-8
        const target = resolveWriteTarget(step, { cwd, home });
        if (target === undefined) throw new Error(`step ${index}: no path to write`);
        mkdirSync(dirname(target.name), { recursive: true });
        writeFileSync(target.name, step.content, "utf8");
        result(step.persist, {
          kind: "other",
          toolResult: true,
          callId: `call-${index}`,
          writeArgs: { path: step.path, content: step.content },
        });
        return;
      }
      case "editTool": {
        if (startsTurn(vector.steps, index)) startTurn(index);
        const args = editArgsOf(step);
        // before the edit runs (pi's tool_call): what the model will believe it wrote
        session.knowledge.sync(branch());
        const callId = `call-${index}`;
        const meta = await planEdit(args, session.knowledge, {
          cwd,
          home,
          store,
          volatileStore: volatile,
          config,
        }, { callId, planned: (id) => planned.get(id) });
        if (meta !== undefined) planned.set(callId, meta);
        const outcome = applyEditStep(args, { cwd, home });
        result(step.persist, {
          kind: "other",
          toolResult: true,
          callId: `call-${index}`,
          edit: outcome.ok && meta !== undefined ? { args, meta } : { args },
        });
        return;
      }
      case "bash":
      case "grep": {
        if (startsTurn(vector.steps, index)) startTurn(index);
        // when the call starts (pi's tool_call): the statuses of the files the model holds
        session.knowledge.sync(branch());
        const snapshot = await toolCallSnapshot(session.knowledge, { cwd });
        const output = step.op === "bash"
          ? {
            kind: "shell" as const,
            command: step.command,
            output: piBashOutput(step.command, cwd),
          }
          : {
            kind: "grep" as const,
            path: step.path,
            output: runGrepStep(step.pattern, step.path, cwd, store.root),
          };
        // when the result comes back (pi's tool_result): what differs from the model's view,
        // and what the output showed (the branch is as the call found it: synced above)
        const callId = `call-${index}`;
        const meta = await toolResultMeta(
          session.knowledge,
          {
            cwd,
            home,
            store,
            volatileStore: volatile,
            config,
          },
          output,
          { callId, snapshot },
        );
        result(
          step.persist,
          step.record === false
            ? { kind: "tool", tool: step.op, callId }
            : { kind: "tool", tool: step.op, callId, meta },
        );
        return;
      }
      case "write":
      case "remove":
      case "symlink":
        applyFileStep(cwd, step);
        return;
      case "message":
        append({ kind: "other" });
        return;
      case "cutMessage":
        // a message the host runs no call of and leaves out of the context: it changes nothing,
        // and ends the turn before it (SPEC §11.3)
        append({ kind: "other" });
        return;
      case "label":
        if (session.leaf === null) throw new Error(`step ${index}: nothing to label yet`);
        labels.set(step.name, session.leaf);
        return;
      case "navigate": {
        const to = labels.get(step.to);
        if (to === undefined || !session.entries.some((e) => e.id === to)) {
          throw new Error(`step ${index}: no label '${step.to}' in this session`);
        }
        // No overlay drop here: the knowledge itself ends in-flight reads whose turn is over
        // (SPEC §6.3); the pi port also runs with and without pi's session_tree event.
        session.leaf = to;
        return;
      }
      case "compact": {
        const kept = step.firstKept === undefined ? undefined : labels.get(step.firstKept);
        append(
          kept === undefined
            ? { kind: "compaction" }
            : { kind: "compaction", firstKeptEntryId: kept },
        );
        return;
      }
      case "fork":
        session = {
          entries: (activeBranch(session.entries, session.leaf) as SimEntry[]).map((e) => ({
            ...e,
          })),
          leaf: session.leaf,
          knowledge: new BranchKnowledge(),
          calls: new Map(),
        };
        writes.clear();
        changeTargets.clear();
        return;
      case "restart":
        volatile = new MemoryObjectStore();
        session.knowledge = new BranchKnowledge();
        session.calls = new Map();
        writes.clear();
        changeTargets.clear();
        return;
      case "invalidate": {
        session.knowledge.sync(branch());
        let data;
        try {
          data = resolveInvalidation(
            { path: step.path, offset: step.offset, limit: step.limit },
            { cwd, home },
            1_700_000_000_000 + index,
            session.knowledge,
          );
        } catch {
          return; // a refresh that fails (e.g. a range of a missing file) appends nothing
        }
        append({ kind: "invalidate", data });
        session.knowledge.clearOverlay();
        return;
      }
      case "storeFault": {
        const hash = lastServed.get(locateRead({ path: step.path }, { cwd, home }).pathKey);
        if (hash === undefined) {
          throw new Error(`step ${index}: nothing served yet for ${step.path}`);
        }
        injectStoreFault(store, hash, step.fault);
        return;
      }
    }
  };

  for (let i = 0; i < vector.steps.length; i++) await run(vector.steps[i], i);
  return { id: vector.id, results };
}
