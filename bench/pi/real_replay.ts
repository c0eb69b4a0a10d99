// Replays one recorded pi session for `deno task bench:real` (bench/pi/real.ts) through the pi
// extension on pi's real SessionManager, with the test host that runs tools like pi's agent loop
// (scripts/pi/pi_host.ts). Before each read the file on disk is set to the truth for that moment
// (the rebuild, corrected by what the session's read showed), then pi's plain read, the
// extension's answer and the ideal answer (cli/savings_model.ts) are measured on it.
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import {
  createEditToolDefinition,
  createReadToolDefinition,
  createWriteToolDefinition,
  SessionManager,
} from "@mariozechner/pi-coding-agent";
import {
  createReadcacheExtension,
  type PiContextLike,
  type PiToolDefinition,
  type PiToolResult,
  type ReadcacheExtensionOptions,
} from "../../src/adapters/pi/extension.ts";
import { FakePiHost, ZERO_USAGE } from "../../scripts/pi/pi_host.ts";
import { FOLLOWED_TOOLS } from "../../src/adapters/pi/branch.ts";
import { COARSE_RACY_WINDOW_MS } from "../../src/shell/call_snapshot.ts";
import { applyFileOps, bashShown, fileOpsOf, grepShown, viewKind } from "../../cli/savings_bash.ts";
import { classifyShellCommand } from "../../src/core/shell_view.ts";
import {
  applyOldEdit,
  type Generation,
  loadSessionDir,
  parseShownRead,
  renderOldRead,
  replacementsOf,
  resyncFromShown,
  SessionInputError,
  textOf,
} from "./real_log.ts";
import {
  checkCachedAnswer,
  type Holding,
  idealAnswer,
  ModelContext,
} from "../../cli/savings_model.ts";

/** Where the gap between served and ideal bytes of a read comes from (bench/README.md). */
export const GAP_KINDS = [
  "cached answer longer than ideal",
  "held across an edit without a result",
  "held across a failed edit",
  "held across several edits in one message",
  "held across an edit the cache did not follow",
  "held across the model's own edit",
  "held from the model's own write",
  "held but changed",
  "range partly held",
  "held throughout, answered plain",
] as const;

/** One of {@linkcode GAP_KINDS}. */
export type GapKind = typeof GAP_KINDS[number];

/** How the truth of a read was chosen. */
export type Truth = "exact" | "resynced" | "unresolved";

/** One measured read. */
export interface ReadRecord {
  /** Index of the read's result in the log (the header is 0). */
  entryIndex: number;
  path: string;
  offset?: number;
  limit?: number;
  truth: Truth;
  /** The extension's mode (`null`: served without metadata). */
  mode: string | null;
  plain: number;
  served: number;
  ideal: number;
  /** UTF-8 bytes the session's own read showed (what pi sent then). */
  shown: number;
  holding: Holding;
  /** Set when served > ideal. */
  gap?: GapKind;
  /**
   * Bytes the ideal's pieces were above a checked cached answer, which then is the ideal (a
   * shorter truthful answer exists: served never goes below the ideal).
   */
  idealLowered?: number;
  /** What the cached answer told the model that is false. */
  violation?: string;
  /**
   * Set when the read's truth is not the rebuild's and a bash command the replay could not
   * apply (a formatter, `git checkout`, `sed -i`) ran since the file's last read: what the
   * extension held then is not known to be the session's (reported on their own, no savings).
   */
  unapplied?: true;
}

/** Counts of the replay besides the reads. */
export interface ReplayCounts {
  /** Reads that failed in the session (not measured). */
  readErrors: number;
  /** Reads that succeeded in the session but failed in the replay (not measured). */
  replayFailures: number;
  /** Successful edits of the session. */
  edits: number;
  /**
   * ... whose old text the rebuild did not hold exactly once and pi's current edit tool failed
   * (the file is left as it was).
   */
  editsNotApplied: number;
  /** ... where pi's current edit tool failed on the rebuild (the session's result is returned). */
  editsPiFailed: number;
  /**
   * ... where pi's current edit tool wrote other text than the session's pi would have (2025-11
   * `$` patterns; the file gets the old pi's text), or applied an edit the old pi could not.
   */
  editsUnlikePi: number;
  /** Successful edits the extension recorded a belief for (`details.readcache` on the result). */
  editsFollowed: number;
  /** Edits that failed in the session (run as errors). */
  editsFailed: number;
  /** Successful writes of the session. */
  writes: number;
  /** Edit and write calls without a result in the session (not run). */
  unanswered: number;
  compactions: number;
  /** Resynced reads whose adopted text still renders other than what the session showed. */
  resyncNotExact: number;
  /** Plain answers of the extension that differ from pi's own read (should be 0). */
  plainDiffers: number;
  /** Bash calls whose plain `cp`/`mv`/`rm` were applied to the rebuild (cli/savings_bash.ts). */
  bashFileCommands: number;
  /** Outputs of bash commands whose printed lines the rebuild took as the truth. */
  bashResyncs: number;
  /**
   * Lines of files that bash outputs showed, and of them those the model already held with the
   * same text (what answering bash views from the cache could save; measured, not served).
   */
  bashShownLines: { lines: number; bytes: number; reshown: number; reshownBytes: number };
  /** Stretches of files bash commands showed exactly as the rebuild holds them. */
  bashViews: number;
  /** Lines pi's grep showed exactly as the rebuild holds them. */
  grepViews: number;
  /** Bash calls that print lines of files the model can place (cli/savings_bash.ts viewKind). */
  positionedViews: number;
  /** ... whose form the cache recognises (`classifyShellCommand` gives a view). */
  positionedRecognised: number;
  /** Bash calls that print lines of files the model cannot place (`grep` without `-n`). */
  unpositionedViews: number;
  /** Messages with checked calls that started less than 3 s after a change (racy window kept). */
  racyCalls: number;
  /** ... that started later (no file racy: the replay uses no window, {@linkcode changeGaps}). */
  settledCalls: number;
}

/** The replay of one session. */
export interface SessionReplay {
  name: string;
  generation: Generation;
  reads: ReadRecord[];
  counts: ReplayCounts;
  /** The manifest's own rebuild figures, to compare. */
  manifest: { reads?: number; exact?: number; exactWithResync?: number };
}

const CACHED_MODES = new Set(["unchanged", "unchanged_range", "diff", "partial"]);
const utf8 = new TextEncoder();
const bytes = (s: string) => utf8.encode(s).length;

function readText(path: string): string | undefined {
  return existsSync(path) && statSync(path).isFile() ? readFileSync(path, "utf8") : undefined;
}

/**
 * A file of which nothing was shown but the read `shown` (from `offset`): as many lines as pi's
 * notice says, each a placeholder no real line or edit text equals.
 */
function unseenFile(
  shown: string,
  offset: number | undefined,
  gen: Generation,
): string | undefined {
  const s = parseShownRead(shown, gen);
  const start = offset ? Math.max(1, offset) : 1;
  const total = s.total ?? start - 1 + s.lines.length;
  return Array.from({ length: total }, (_, i) => `\u27e8line ${i + 1}, never shown\u27e9`).join(
    "\n",
  );
}

/**
 * Puts lines a bash output printed into the rebuild of `file`: from line `start` on, replacing as
 * many lines, or every line to the end (`toEnd`). Whether anything changed.
 */
function adoptLines(file: string, start: number, printed: string[], toEnd: boolean): boolean {
  const before = readText(file);
  // a file the replay has none of: the whole of it, when that is what was printed
  if (before === undefined && start === 1 && toEnd) {
    writeText(file, printed.join("\n") + "\n");
    return true;
  }
  if (before === undefined) return false;
  const eol = before.endsWith("\n");
  const lines = (eol ? before.slice(0, -1) : before).split("\n");
  if (!toEnd && start - 1 + printed.length > lines.length) return false;
  const next = toEnd
    ? [...lines.slice(0, start - 1), ...printed]
    : [...lines.slice(0, start - 1), ...printed, ...lines.slice(start - 1 + printed.length)];
  const after = next.join("\n") + (eol ? "\n" : "");
  if (after === before) return false;
  writeText(file, after);
  return true;
}

function writeText(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

interface Call {
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** The file it names, on the replay's disk. */
  file?: string;
  /** Another call of the same message also changes the file. */
  batch?: boolean;
}

/** Options of {@linkcode replaySession}. */
export interface ReplayOptions {
  /**
   * Apply the plain `cp`/`mv`/`rm` of the session's bash calls to the rebuild (default true).
   * Without them the reads rebuilt exactly are the manifest's `readsRebuiltExactlyWithResync`.
   */
  bashFiles?: boolean;
}

/**
 * How long before each assistant message's calls started the last change the session recorded
 * (SPEC §5.10, printed while changing): by log index, for messages with a call the cache checks
 * (bash, grep, ...); the change is the result of any call that could change a file, and the
 * times are when pi appended the two entries (an assistant message once it ended, before its
 * calls ran). The replay runs in moments what took hours: it keeps the racy window for a call
 * only where the recording's own gap was shorter than the widest window
 * ({@linkcode COARSE_RACY_WINDOW_MS}).
 */
export function changeGaps(
  entries: readonly { index: number; value: unknown }[],
): Map<number, number> {
  let lastChange: number | undefined;
  const gaps = new Map<number, number>();
  for (const e of entries) {
    const v = e.value as { type?: string; timestamp?: unknown; message?: unknown } | undefined;
    if (v?.type !== "message" || typeof v.message !== "object" || v.message === null) continue;
    const m = v.message as { role?: string; toolName?: string; content?: unknown };
    const t = typeof v.timestamp === "string" ? Date.parse(v.timestamp) : NaN;
    const changing = m.toolName === "edit" || m.toolName === "write" ||
      !FOLLOWED_TOOLS.has(m.toolName ?? "");
    if (m.role === "toolResult" && changing) {
      if (!Number.isNaN(t)) lastChange = t;
    } else if (m.role === "assistant" && Array.isArray(m.content)) {
      const checked = m.content.some((b: { type?: string; name?: string }) =>
        b?.type === "toolCall" && typeof b.name === "string" && !FOLLOWED_TOOLS.has(b.name)
      );
      if (checked && lastChange !== undefined) {
        gaps.set(e.index, Number.isNaN(t) ? 0 : t - lastChange);
      }
    }
  }
  return gaps;
}

/** Replays the session in `dir` (the layout of ../shared/realworld/README.md). */
export async function replaySession(
  dir: string,
  name: string,
  options: ReplayOptions = {},
): Promise<SessionReplay> {
  const s = loadSessionDir(dir);
  const gen = s.manifest.piToolGeneration;
  // version 3 logs are trees: the replay follows one line of entries
  let previous: string | undefined;
  for (const e of s.entries.slice(1)) {
    const v = e.value as { id?: unknown; parentId?: unknown };
    if (typeof v.id !== "string") continue;
    if (previous !== undefined && v.parentId !== previous) {
      throw new SessionInputError(
        `${dir}: line ${e.line} continues another branch (/tree, a fork): the replay follows ` +
          "one line of entries; export that branch alone to measure it",
      );
    }
    previous = v.id;
  }
  const origCwd = s.manifest.cwd;
  const origHome = s.manifest.home ?? origCwd.split("/").slice(0, 3).join("/");
  const root = realpathSync(mkdtempSync(join(tmpdir(), "readcache-bench-real-")));
  try {
    // the recording machine's paths under one temp root: cwd, home and anything else
    const cwd = join(root, origCwd);
    const home = join(root, origHome);
    mkdirSync(cwd, { recursive: true });
    mkdirSync(home, { recursive: true });
    // the session's cwd is a git repository: `git diff` names files from it
    mkdirSync(join(cwd, ".git"), { recursive: true });
    if (!dir.endsWith(".jsonl") && existsSync(join(dir, "files"))) {
      cpSync(join(dir, "files"), cwd, { recursive: true });
      // the snapshot may be read-only; the session's tools write to their copy
      for (const e of readdirSync(cwd, { withFileTypes: true, recursive: true })) {
        chmodSync(join(e.parentPath, e.name), e.isDirectory() ? 0o755 : 0o644);
      }
    }
    return await replay(s, name, gen, { root, origCwd, origHome, cwd, home }, options);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

interface Paths {
  /** Holds the recording machine's absolute paths: `/p` is `root/p`. */
  root: string;
  origCwd: string;
  origHome: string;
  cwd: string;
  home: string;
}

/** Text of the recording (a shell command, its output) with the recording's home as the replay's. */
function onThisMachine(text: string, x: Paths): string {
  return text.replaceAll(x.origHome + "/", x.home + "/");
}

/**
 * A recorded path as the model's call in the replay spells it: relative to the cwd, `~/...` for
 * the home, else relative with `..` (so that every output is the same on any machine).
 */
function rewritePath(p: string, x: Paths): string {
  const at = p.startsWith("@") ? "@" : "";
  const body = at ? p.slice(1) : p;
  if (!isAbsolute(body)) return p;
  const under = (dirPath: string) => body === dirPath || body.startsWith(dirPath + "/");
  if (under(x.origCwd)) return at + (relative(x.origCwd, body) || ".");
  if (under(x.origHome)) return `${at}~/${relative(x.origHome, body)}`;
  return at + relative(x.origCwd, body);
}

/** Where a replayed path is on disk. */
function diskPath(p: string, x: Paths): string {
  const body = p.startsWith("@") ? p.slice(1) : p;
  if (body === "~") return x.home;
  if (body.startsWith("~/")) return join(x.home, body.slice(2));
  return resolve(x.cwd, body);
}

/** The path to hand pi's own tools (they expand `~` with the real home: never that). */
function piPath(p: string, x: Paths): string {
  const body = p.startsWith("@") ? p.slice(1) : p;
  return body === "~" || body.startsWith("~/") ? diskPath(p, x) : p;
}

async function replay(
  s: ReturnType<typeof loadSessionDir>,
  name: string,
  gen: Generation,
  x: Paths,
  options: ReplayOptions,
): Promise<SessionReplay> {
  const counts: ReplayCounts = {
    readErrors: 0,
    replayFailures: 0,
    edits: 0,
    editsNotApplied: 0,
    editsPiFailed: 0,
    editsUnlikePi: 0,
    editsFailed: 0,
    editsFollowed: 0,
    writes: 0,
    unanswered: 0,
    compactions: 0,
    resyncNotExact: 0,
    plainDiffers: 0,
    bashFileCommands: 0,
    bashResyncs: 0,
    bashShownLines: { lines: 0, bytes: 0, reshown: 0, reshownBytes: 0 },
    bashViews: 0,
    grepViews: 0,
    racyCalls: 0,
    positionedViews: 0,
    positionedRecognised: 0,
    unpositionedViews: 0,
    settledCalls: 0,
  };
  const reads: ReadRecord[] = [];
  const model = new ModelContext();
  const readKinds = new Map<number, string>();
  for (
    const r of (s.manifest as { readLog?: { entryIndex: number; kind: string }[] }).readLog ?? []
  ) {
    readKinds.set(r.entryIndex, r.kind);
  }

  // which recorded calls have a result
  const answered = new Set<string>();
  for (const e of s.entries) {
    const m = e.value?.message;
    if (e.value?.type === "message" && m?.role === "toolResult") answered.add(m.toolCallId);
  }

  const session = SessionManager.inMemory(x.cwd);
  const host = new FakePiHost(session, x.cwd);
  const piEdit = createEditToolDefinition(x.cwd) as unknown as PiToolDefinition;
  const piWrite = createWriteToolDefinition(x.cwd) as unknown as PiToolDefinition;
  const piRead = createReadToolDefinition(x.cwd);
  // the recorded result of the call being run (the wrappers return its error, as in the session)
  const recorded = new Map<string, { isError: boolean; content: PiToolResult["content"] }>();

  // pi's own edit, applied as the session's pi did (README: Rebuilding, step 3 and 4)
  host.registerTool({
    ...piEdit,
    async execute(id, input, signal, onUpdate, ctx: PiContextLike) {
      const rec = recorded.get(id)!;
      if (rec.isError) throw new Error(textOf(rec.content));
      const args = input as Record<string, unknown>;
      const path = String(args.path);
      const file = diskPath(path, x);
      const before = readText(file);
      const edits = replacementsOf(args);
      const intent = before !== undefined && edits ? applyOldEdit(before, edits, gen) : undefined;
      let result: PiToolResult;
      let piFailed = false;
      try {
        result = await piEdit.execute(
          id,
          { ...args, path: piPath(path, x) },
          signal,
          onUpdate,
          ctx,
        );
      } catch {
        piFailed = true;
        counts.editsPiFailed++;
        result = { content: rec.content, details: undefined };
      }
      if (intent === undefined) {
        // the rebuild drifted: the file stays as it is, unless pi's tool still applied it
        if (piFailed) counts.editsNotApplied++;
        else counts.editsUnlikePi++;
      } else if (readText(file) !== intent) {
        if (!piFailed) counts.editsUnlikePi++;
        writeText(file, intent);
      }
      return result;
    },
  });
  host.registerTool({
    ...piWrite,
    execute(id, input, signal, onUpdate, ctx: PiContextLike) {
      const rec = recorded.get(id)!;
      if (rec.isError) return Promise.reject(new Error(textOf(rec.content)));
      const args = input as Record<string, unknown>;
      return piWrite.execute(
        id,
        { ...args, path: piPath(String(args.path), x) },
        signal,
        onUpdate,
        ctx,
      );
    },
  });
  // the replay runs in moments what took hours: a file the rebuild changed just now changed
  // seconds before the recorded call started, so the racy window is the recording's (none, when
  // every checked call started at least that long after the change before it)
  const gaps = changeGaps(s.entries);
  const extension: ReadcacheExtensionOptions = { home: () => x.home };
  createReadcacheExtension(extension)(host);
  host.emit("session_start");

  const calls = new Map<string, Call>(); // recorded call id -> the replay's call
  // the log index of the last bash call that may have changed files the replay cannot follow,
  // and of each file's last read
  let unappliedSince = -1;
  const lastRead = new Map<string, number>();
  const entryIds = new Map<number, string>(); // log index -> the replay's entry id
  const recordIds = new Map<string, string>(); // version 3: recorded entry id -> the replay's
  const appendResult = (call: Call, content: PiToolResult["content"], isError: boolean) =>
    host.session.appendMessage({
      role: "toolResult",
      toolCallId: call.id,
      toolName: call.name,
      content,
      details: undefined,
      isError,
      timestamp: Date.now(),
    });
  const contentOf = (c: unknown): PiToolResult["content"] =>
    Array.isArray(c)
      ? c.filter((b) => b?.type === "text" || b?.type === "image")
      : [{ type: "text", text: textOf(c) }];

  for (const entry of s.entries) {
    const v = entry.value;
    if (v?.type === "compaction") {
      // v1/v2 name the first kept entry by its index, version 3 by its id
      let kept: string | undefined = typeof v.firstKeptEntryId === "string"
        ? recordIds.get(v.firstKeptEntryId)
        : undefined;
      for (const [index, id] of entryIds) {
        if (kept !== undefined || typeof v.firstKeptEntryIndex !== "number") break;
        if (index >= v.firstKeptEntryIndex) kept = id;
      }
      const leaf = host.session.getLeafId();
      if (leaf === null) continue;
      host.session.appendCompaction(String(v.summary ?? ""), kept ?? leaf, v.tokensBefore ?? 0);
      host.emit("session_compact");
      model.compact();
      counts.compactions++;
      continue;
    }
    if (v?.type !== "message") continue;
    const m = v.message;
    if (m.role === "user") {
      host.emit("agent_end");
      host.userMessage(textOf(m.content));
    } else if (m.role === "assistant") {
      host.emit("turn_start");
      const blocks = Array.isArray(m.content) ? m.content : [];
      const recordedCalls = blocks.filter((b: { type?: string }) => b?.type === "toolCall");
      if (recordedCalls.length === 0) {
        host.session.appendMessage({
          role: "assistant",
          content: [{ type: "text", text: textOf(m.content) }],
          api: "openai-completions",
          provider: "mock",
          model: "mock-model",
          usage: ZERO_USAGE,
          stopReason: "stop",
          timestamp: Date.now(),
        });
      } else {
        const replayed = recordedCalls.map((c: { name: string; arguments: unknown }) => {
          const args = { ...(c.arguments ?? {}) } as Record<string, unknown>;
          const fileTool = c.name === "read" || c.name === "edit" || c.name === "write";
          if (fileTool && typeof args.path === "string") args.path = rewritePath(args.path, x);
          // a shell command names the recording machine's paths: the replay's, as for reads
          if (c.name === "bash" && typeof args.command === "string") {
            args.command = onThisMachine(args.command, x);
          }
          return { name: c.name, args };
        });
        // pi runs no call of a message cut by an abort or an error; keep how it ended
        const cut = m.stopReason === "aborted" || m.stopReason === "error";
        const ids: string[] = cut
          ? replayed.map((_: unknown, i: number) => `cut_${entry.index}_${i}`)
          : host.assistantToolCalls(replayed);
        if (cut) {
          host.session.appendMessage({
            role: "assistant",
            content: replayed.map((
              c: { name: string; args: Record<string, unknown> },
              i: number,
            ) => ({
              type: "toolCall" as const,
              id: ids[i],
              name: c.name,
              arguments: c.args,
            })),
            api: "openai-completions",
            provider: "mock",
            model: "mock-model",
            usage: ZERO_USAGE,
            stopReason: m.stopReason,
            timestamp: Date.now(),
          });
        }
        const changing = new Map<string, number>(); // file -> edit/write calls of this message
        recordedCalls.forEach((c: { id: string; name: string }, i: number) => {
          const call: Call = { id: ids[i], name: c.name, args: replayed[i].args };
          if (typeof call.args.path === "string") call.file = diskPath(call.args.path, x);
          calls.set(c.id, call);
          if ((c.name === "edit" || c.name === "write") && call.file) {
            changing.set(call.file, (changing.get(call.file) ?? 0) + 1);
          }
        });
        // pi runs each call's `tool_call` handlers before any of the message's calls returns:
        // the extension notes the held files' statuses as the checked calls start (SPEC §5.10)
        if (!cut) {
          const gap = gaps.get(entry.index);
          extension.racyWindowMs = gap === undefined || gap >= COARSE_RACY_WINDOW_MS
            ? 0
            : undefined;
          if (gaps.has(entry.index)) {
            if (extension.racyWindowMs === undefined) counts.racyCalls++;
            else counts.settledCalls++;
          }
          for (const [i, c] of recordedCalls.entries()) {
            if (!FOLLOWED_TOOLS.has(c.name)) {
              await host.startToolCall(ids[i], c.name, replayed[i].args);
            }
          }
        }
        recordedCalls.forEach((c: { id: string; name: string }) => {
          const call = calls.get(c.id)!;
          if (call.file && (changing.get(call.file) ?? 0) > 1) call.batch = true;
          if ((c.name === "edit" || c.name === "write") && !answered.has(c.id)) {
            counts.unanswered++;
            if (call.file) model.notChanged(call.file, "unanswered");
          }
        });
      }
    } else if (m.role === "toolResult") {
      const call = calls.get(m.toolCallId);
      if (call === undefined) continue;
      const content = contentOf(m.content);
      const isError = m.isError === true;
      if (call.name === "read") {
        const rec = await replayRead(entry.index, call, textOf(m.content), isError);
        if (rec) reads.push(rec);
      } else if (call.name === "edit" || call.name === "write") {
        recorded.set(call.id, { isError, content });
        const file = call.file;
        const before = file === undefined ? undefined : readText(file);
        const out = await host.runTool(call.id, call.name, call.args);
        recorded.delete(call.id);
        if (file !== undefined) {
          if (isError) {
            if (call.name === "edit") counts.editsFailed++;
            model.notChanged(file, "failed");
          } else if (call.name === "write") {
            counts.writes++;
            if (out.ok && typeof call.args.content === "string") {
              model.wrote(file, call.args.content);
            } else model.notChanged(file, "failed");
          } else {
            counts.edits++;
            const edits = replacementsOf(call.args) ?? [];
            const at = before !== undefined && edits.length > 0
              ? before.indexOf(edits[0].oldText)
              : -1;
            const truthLine = at >= 0 ? before!.slice(0, at).split("\n").length : undefined;
            // the extension's belief (details.readcache), only to say where a gap comes from
            const followed = out.ok &&
              (out.result.details as { readcache?: unknown } | undefined)?.readcache !== undefined;
            if (followed) counts.editsFollowed++;
            const label = call.batch ? "edit-batch" : followed ? "edit" : "edit-lost";
            if (out.ok) model.edited(file, edits, truthLine, label);
            else model.notChanged(file, "failed");
          }
        }
      } else {
        const ops = options.bashFiles !== false && call.name === "bash" && !isError &&
            typeof call.args.command === "string"
          ? fileOpsOf(call.args.command)
          : undefined;
        if (ops !== undefined && applyFileOps(ops, x)) counts.bashFileCommands++;
        // a command that may change files in ways the replay cannot apply: reads of a file after
        // it are truths only the session's own outputs can give
        if (
          call.name === "bash" && ops === undefined && typeof call.args.command === "string" &&
          !classifyShellCommand(call.args.command).readOnly
        ) {
          unappliedSince = entry.index;
        }
        const output = onThisMachine(textOf(m.content), x);
        // the session's output is the truth for the lines it printed: the rebuild takes them
        // before the result reaches the extension, as reads resync (never staler than the session)
        if (call.name === "bash" && typeof call.args.command === "string" && !isError) {
          bashShown(
            call.args.command,
            output,
            x.cwd,
            readText,
            x.cwd,
            (file, start, lines, toEnd) => {
              if (adoptLines(file, start, lines, toEnd)) counts.bashResyncs++;
            },
          );
        }
        // what the output showed of a file, exactly as the rebuild holds it, is in the model's
        // context (read by the bench on its own, cli/savings_bash.ts)
        const shown = call.name === "bash" && typeof call.args.command === "string"
          ? bashShown(call.args.command, output, x.cwd, readText, x.cwd)
          : call.name === "grep" && !isError
          ? grepShown(
            diskPath(typeof call.args.path === "string" ? call.args.path : ".", x),
            output,
            readText,
          )
          : [];
        for (const s of shown) {
          const total = readText(s.file)!.split("\n").length;
          if (call.name === "bash") {
            // before the model takes them: the lines it already held with this very text
            const held = model.view(s.file);
            s.lines.forEach((line, i) => {
              const b = new TextEncoder().encode(line).length + 1;
              counts.bashShownLines.lines++;
              counts.bashShownLines.bytes += b;
              if (
                held?.lines[s.start - 1 + i] === line && held.via[s.start - 1 + i] === undefined
              ) {
                counts.bashShownLines.reshown++;
                counts.bashShownLines.reshownBytes += b;
              }
            });
          }
          model.shown(s.file, s.start, s.lines, s.toEnd ? total : undefined);
        }
        if (call.name === "bash") counts.bashViews += shown.length;
        if (call.name === "bash" && typeof call.args.command === "string") {
          const kind = viewKind(call.args.command);
          if (kind === "unpositioned") counts.unpositionedViews++;
          if (kind === "positioned") {
            counts.positionedViews++;
            const form = classifyShellCommand(call.args.command);
            if (form.view !== undefined || form.multi !== undefined) counts.positionedRecognised++;
          }
        }
        if (call.name === "grep") counts.grepViews += shown.length;
        // the extension checks what the tool showed or changed when its result comes back
        // (SPEC §5.10), as in pi
        const replayedContent = content.map((b) =>
          b.type === "text" ? { ...b, text: onThisMachine(b.text, x) } : b
        );
        await host.appendToolResult(call.id, call.name, call.args, replayedContent, isError);
      }
    } else continue;
    const leaf = host.session.getLeafId();
    if (leaf !== null) entryIds.set(entry.index, leaf);
    if (leaf !== null && typeof v.id === "string") recordIds.set(v.id, leaf);
  }

  return {
    name,
    generation: gen,
    reads,
    counts,
    manifest: {
      reads: s.manifest.reads,
      exact: s.manifest.readsRebuiltExactly,
      exactWithResync: s.manifest.readsRebuiltExactlyWithResync,
    },
  };

  async function replayRead(
    entryIndex: number,
    call: Call,
    shown: string,
    isError: boolean,
  ): Promise<ReadRecord | undefined> {
    const offset = typeof call.args.offset === "number" ? call.args.offset : undefined;
    const limit = typeof call.args.limit === "number" ? call.args.limit : undefined;
    if (isError || readKinds.get(entryIndex) === "error" || call.file === undefined) {
      counts.readErrors++;
      appendResult(call, [{ type: "text", text: shown }], true);
      return undefined;
    }
    const file = call.file;
    // the truth for this moment: the rebuild, or what the session's read showed
    const rebuilt = readText(file);
    const rendered = rebuilt === undefined ? undefined : renderOldRead(rebuilt, offset, limit, gen);
    let truth: Truth;
    if (rendered !== undefined && "text" in rendered && rendered.text === shown) truth = "exact";
    else {
      // without snapshots a file is what the session's outputs showed: lines never shown are
      // placeholders no edit text matches
      const base = rebuilt ?? (s.manifest.fromOutputs ? unseenFile(shown, offset, gen) : undefined);
      const adopted = resyncFromShown(base, shown, offset, gen);
      if (adopted === undefined) truth = "unresolved";
      else {
        truth = "resynced";
        writeText(file, adopted);
        const again = renderOldRead(adopted, offset, limit, gen);
        if (!("text" in again) || again.text !== shown) counts.resyncNotExact++;
      }
    }
    const path = String(call.args.path);
    let plain: PiToolResult;
    try {
      plain = await piRead.execute(
        "plain",
        { path: piPath(path, x), offset, limit },
        undefined,
        undefined,
        undefined as never,
      ) as PiToolResult;
    } catch {
      counts.replayFailures++;
      await host.runTool(call.id, "read", call.args);
      return undefined;
    }
    const out = await host.runTool(call.id, "read", call.args);
    if (!out.ok) {
      counts.replayFailures++;
      return undefined;
    }
    const plainText = textOf(plain.content);
    const meta = (out.result.details as { readcache?: { mode?: string } } | undefined)?.readcache;
    const mode = meta?.mode ?? null;

    // pi's effective window: what its plain read shows
    const lines = readText(file)!.split("\n");
    const start = offset ? Math.max(1, offset) : 1;
    const trunc = (plain.details as { truncation?: { truncated: boolean; outputLines: number } })
      ?.truncation;
    const end = trunc?.truncated
      ? start + trunc.outputLines - 1
      : limit !== undefined
      ? Math.min(start + limit - 1, lines.length)
      : lines.length;
    const body = end >= start ? lines.slice(start - 1, end).join("\n") : "";
    if (!plainText.startsWith(body)) throw new Error(`${name} entry ${entryIndex}: window`);
    const notice = plainText.slice(body.length);

    const view = model.view(file);
    const ideal = idealAnswer(view, lines, start, end, notice);
    const rec: ReadRecord = {
      entryIndex,
      path,
      truth,
      mode,
      plain: bytes(plainText),
      served: bytes(out.text),
      ideal: ideal.bytes,
      shown: bytes(shown),
      holding: { held: ideal.held, stale: ideal.stale, unknown: ideal.unknown },
    };
    // after a change the replay could not apply (a formatter, `sed -i`, a script), what the
    // session's cache held is not known: where the read shows other text than the rebuild (the
    // truth came from the read itself) and the model held some of those lines, or where the
    // replay's cache answered from what it held and that answer fails the check (the command
    // may have changed the file in the session, where the session's cache then sent it in full;
    // the replay's cache saw nothing change): not judged, for or against the cache
    const answeredFromHeld = mode !== null && CACHED_MODES.has(mode);
    const problem = answeredFromHeld
      ? checkCachedAnswer(out.text, view, lines, { start, end })
      : undefined;
    if (
      unappliedSince > (lastRead.get(file) ?? -1) &&
      (truth !== "exact" && ideal.held + ideal.stale > 0 || problem !== undefined)
    ) {
      rec.unapplied = true;
    }
    // an unjudged read leaves the file as unknown to the replay as it was
    if (!rec.unapplied) lastRead.set(file, entryIndex);
    if (offset !== undefined) rec.offset = offset;
    if (limit !== undefined) rec.limit = limit;
    if (answeredFromHeld) {
      if (problem !== undefined) rec.violation = problem;
      else if (rec.served < rec.ideal) {
        // a checked answer shorter than the ideal's pieces proves a shorter truthful answer:
        // the ideal is that one (no read claims more than all of what was achievable)
        rec.idealLowered = rec.ideal - rec.served;
        rec.ideal = rec.served;
      }
    } else if (out.text !== plainText) counts.plainDiffers++;
    if (rec.served > rec.ideal) {
      const lineCount = end - start + 1;
      rec.gap = mode !== null && CACHED_MODES.has(mode)
        ? "cached answer longer than ideal"
        : ideal.via === "unanswered"
        ? "held across an edit without a result"
        : ideal.via === "failed"
        ? "held across a failed edit"
        : ideal.via === "edit-batch"
        ? "held across several edits in one message"
        : ideal.via === "edit-lost"
        ? "held across an edit the cache did not follow"
        : ideal.via === "edit"
        ? "held across the model's own edit"
        : ideal.via === "write"
        ? "held from the model's own write"
        : ideal.stale > 0
        ? "held but changed"
        : ideal.held < lineCount
        ? "range partly held"
        : "held throughout, answered plain";
    }
    if (end >= start) model.read(file, start, lines.slice(start - 1, end), lines.length);
    return rec;
  }
}
