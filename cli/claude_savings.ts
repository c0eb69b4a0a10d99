/**
 * `readcache savings` for a Claude Code transcript: the figures of
 * `analyseSession` (cli/pi_savings.ts), counted the same way from the
 * transcript's rows (SPEC §11.9).
 *
 * - Every successful `Read` result counts once, in file order (every branch,
 *   rewound ones included: they were sent); what was sent is the text the
 *   model got (the `tool_result`, with Claude Code's line numbers).
 * - A transcript WITH the read cache (a read carries
 *   `toolUseResult.file.readcache`): what Claude Code's own `Read` would have
 *   sent is estimated as for pi (`PlainReadEstimate`: the lines an answer
 *   covers times the bytes per line the latest full read of the file sent;
 *   a file the model wrote counts like a full read of what it wrote); reads
 *   without metadata count as sent in full on both sides.
 * - A transcript WITHOUT it is replayed through the Claude Code host
 *   ({@linkcode replayClaudeSession}): what it would have sent is measured on
 *   that replay.
 *
 * @module
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { classifyShellCommand } from "../src/core/shell_view.ts";
import { sha256Hex } from "../src/core/hash.ts";
import { pathKeyOnDisk } from "../src/shell/read_service.ts";
import { ClaudeCodeHost, claudeReadText } from "../src/adapters/claude/host.ts";
import {
  claudeFileCall,
  claudeResultText,
  type ClaudeRowLike,
} from "../src/adapters/claude/transcript.ts";
import { MemoryObjectStore } from "../src/core/object_store.ts";
import { isAnchorMode, parseReadCacheMeta, type ReadCacheMetaV1 } from "../src/core/meta.ts";
import { countLines } from "../src/core/range.ts";
import { PlainReadEstimate } from "../src/core/status.ts";
import {
  addFileSavings,
  emptySessionSavings,
  readCounter,
  type SessionSavings,
} from "./savings_figures.ts";
import type { ClaudeSessionFile } from "./support/sessions.ts";
import { checkCachedAnswer, ModelContext } from "./savings_model.ts";
import { bashShown } from "./savings_bash.ts";

const encoder = new TextEncoder();

function record(v: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null ? v as Record<string, unknown> : {};
}

/**
 * Works out the figures of one Claude Code transcript (see the module
 * documentation). Reads nothing but the transcript.
 *
 * @example
 * ```ts
 * import { analyseClaudeSession } from "./claude_savings.ts";
 * analyseClaudeSession({ path: "s.jsonl", mtimeMs: 0, bytes: 0, rows: [] }).reads; // 0
 * ```
 */
export function analyseClaudeSession(
  file: ClaudeSessionFile,
  subagents: readonly ClaudeSessionFile[] = [],
): SessionSavings {
  const events: (
    | {
      kind: "read";
      key: string;
      bytes: number;
      meta: ReturnType<typeof parseReadCacheMeta>;
      /** A subagent's read without metadata: its answer as its text shows it, if any. */
      bare?: ReadCacheMetaV1;
    }
    | { kind: "wrote"; key: string; bytes: number; lines: number }
  )[] = [];
  let first: ClaudeRowLike | undefined;
  // the session's own transcript, then its subagents' (each starts knowing nothing)
  for (const transcript of [file, ...subagents]) {
    const uses = new Map<string, { name: string; input: unknown }>();
    for (const row of transcript.rows) {
      const r = record(row);
      if (
        transcript === file && first === undefined && typeof r.sessionId === "string" &&
        typeof r.uuid === "string"
      ) first = row;
      const content = row.message?.content;
      if (!Array.isArray(content)) continue;
      for (const block of content) {
        const b = record(block);
        if (row.type === "assistant" && b.type === "tool_use" && typeof b.id === "string") {
          uses.set(b.id, { name: String(b.name), input: b.input });
          continue;
        }
        if (row.type !== "user" || b.type !== "tool_result" || b.is_error === true) continue;
        const use = uses.get(String(b.tool_use_id));
        if (use === undefined) continue;
        const call = claudeFileCall(use.name, use.input, (p) => p);
        if (use.name === "Read") {
          const result = record(row.toolUseResult);
          const meta = result.type === "text"
            ? parseReadCacheMeta(record(result.file).readcache)
            : undefined;
          const text = claudeResultText(b.content);
          const key = meta?.pathKey ?? call?.pathKey ?? "(unknown)";
          const bytes = encoder.encode(text).length;
          // a subagent's transcript keeps no `toolUseResult`: what the model got is the text
          const bare = row.toolUseResult === undefined && call !== undefined
            ? bareAnswer(text, key, call, bytes)
            : undefined;
          events.push({ kind: "read", key, bytes, meta, bare });
        } else if (use.name === "Write" && call !== undefined) {
          const written = record(use.input).content;
          if (typeof written === "string") {
            // Claude Code would show it numbered: a tab and the number on each line
            const lines = countLines(written);
            const bytes = encoder.encode(written).length + lines * (String(lines).length + 1);
            events.push({ kind: "wrote", key: call.pathKey, bytes, lines });
          }
        }
      }
    }
  }
  const reads = events.filter((e) => e.kind === "read");
  const withReadcache = reads.some((e) =>
    e.meta !== undefined || (e.bare !== undefined && !isAnchorMode(e.bare.mode))
  );
  const f = record(first);
  const out = emptySessionSavings({
    file: file.path,
    host: "claude",
    id: typeof f.sessionId === "string" ? f.sessionId : null,
    cwd: typeof f.cwd === "string" ? f.cwd : null,
    started: typeof f.timestamp === "string" ? f.timestamp : null,
    withReadcache,
    notReplayed: !withReadcache,
    reads: reads.length,
  });
  const counter = readCounter(out);
  const estimate = new PlainReadEstimate();
  for (const e of events) {
    if (e.kind === "wrote") {
      if (withReadcache) estimate.wrote(e.key, e.bytes, e.lines);
      continue;
    }
    // the estimate works in the bytes the model got (Claude Code's numbered lines)
    const meta = e.meta ?? (withReadcache ? e.bare : undefined);
    const own = meta === undefined ? e.bytes : estimate.add({ ...meta, bytes: e.bytes });
    if (meta === undefined || (e.meta === undefined && isAnchorMode(meta.mode))) {
      out.byMode.plain++;
    } else out.byMode[meta.mode]++;
    counter.count(e.key, own, e.bytes);
  }
  counter.done();
  return out;
}

const MARKER =
  /^\[readcache: (?:unchanged, (\d+) lines?\]|unchanged in lines (\d+)-(\d+)(?: of (\d+)\]|;)|(\d+) lines? changed of (\d+)\])/;

/**
 * What a read's text shows of how it was answered, where no metadata says it (a subagent's
 * transcript): the host's answer (its lines numbered up to 0, SPEC §11.9: a marker, a range
 * marker, a diff) with the lines it stands for, or Claude Code's own numbered lines (a plain read:
 * `full`, what later answers are estimated from). `undefined` for any other text.
 */
function bareAnswer(
  text: string,
  pathKey: string,
  call: { offset?: number; limit?: number },
  bytes: number,
): ReadCacheMetaV1 | undefined {
  const lines = text.split("\n");
  const first = /^(-?\d+)\t(.*)$/.exec(lines[0]);
  if (first === null) return undefined;
  const base = { v: 1 as const, pathKey, scopeKey: "full" as const, servedHash: "", bytes };
  const number = Number(first[1]);
  if (number >= 1) {
    // Claude Code's own lines, numbered from where the call asked
    return {
      ...base,
      mode: "full",
      totalLines: number + lines.length - 1,
      rangeStart: number,
      rangeEnd: number + lines.length - 1,
    };
  }
  const m = MARKER.exec(first[2]);
  if (m === null) return undefined;
  const total = Number(m[1] ?? m[4] ?? m[6] ?? 0);
  const start = call.offset ?? 1;
  const end = call.limit === undefined ? total : Math.min(total, start + call.limit - 1);
  if (m[2] !== undefined) {
    return {
      ...base,
      mode: "unchanged_range",
      totalLines: total,
      rangeStart: Number(m[2]),
      rangeEnd: Number(m[3]),
    };
  }
  if (total < start) return undefined;
  return {
    ...base,
    mode: m[1] !== undefined ? "unchanged" : "diff",
    totalLines: total,
    rangeStart: start,
    rangeEnd: end,
  };
}

/**
 * Adds the figures of `from` (a subagent's transcript, replayed on its own) to `into` (its
 * session's).
 */
function addSavings(into: SessionSavings, from: SessionSavings): void {
  into.reads += from.reads;
  into.images += from.images;
  into.piBytes += from.piBytes;
  into.readcacheBytes += from.readcacheBytes;
  for (const [k, n] of Object.entries(from.byMode)) {
    into.byMode[k as keyof typeof into.byMode] += n;
  }
  into.unknown.reads += from.unknown.reads;
  into.unknown.bytes += from.unknown.bytes;
  into.checked.reads += from.checked.reads;
  into.checked.matched += from.checked.matched;
  for (const [k, n] of Object.entries(from.notJudged ?? {})) {
    const reason = k as keyof NonNullable<SessionSavings["notJudged"]>;
    into.notJudged ??= {};
    const to = into.notJudged[reason] ??= { reads: 0, bytes: 0 };
    to.reads += n.reads;
    to.bytes += n.bytes;
  }
  const files = new Map(into.files.map((f) => [f.path, f]));
  for (const f of from.files) {
    const to = files.get(f.path);
    if (to === undefined) {
      files.set(f.path, { ...f });
      continue;
    }
    addFileSavings(to, f);
    // the subagent's first read of a file the session read too is a repeat in the session
    to.repeats += 1;
  }
  into.files = [...files.values()];
}

/**
 * The figures of a Claude Code session with its subagents' transcripts counted in it (SPEC
 * §11.9): with the read cache, every transcript's reads as sent (a subagent's answers told by
 * their text); without it, the session replayed through the host, and each subagent's reads not
 * judged (its transcript keeps no results to rebuild the files from), counted with that reason.
 *
 * @example
 * ```ts ignore
 * const s = await claudeSessionSavings(parent, [subagent], true);
 * ```
 */
export async function claudeSessionSavings(
  file: ClaudeSessionFile,
  subagents: readonly ClaudeSessionFile[],
  replay: boolean,
): Promise<SessionSavings> {
  const whole = analyseClaudeSession(file, subagents);
  if (whole.withReadcache || subagents.length === 0) {
    return whole.withReadcache || !replay ? whole : await replayClaudeSession(file);
  }
  if (!replay) return whole;
  const out = await replayClaudeSession(file);
  for (const sub of subagents) {
    const s = analyseClaudeSession(sub);
    s.notJudged = { subagent: { reads: s.reads, bytes: s.piBytes } };
    for (const f of s.files) f.notJudgedReads = f.reads;
    // not judged: the same bytes on both sides
    s.readcacheBytes = s.piBytes;
    addSavings(out, s);
  }
  return out;
}

/**
 * What a row that is not a tool's result does to what the model was shown (the check's record):
 * a compaction, a summary or a cut of old results leaves nothing before it; a file attached to
 * the conversation shows text of it the check cannot place line by line.
 */
function modelSees(model: ModelContext, row: Record<string, unknown>): void {
  const attachment = record(row.attachment);
  if (
    (row.type === "system" &&
      (row.subtype === "compact_boundary" || row.subtype === "microcompact_boundary")) ||
    (row.type === "user" && (row.isCompactSummary === true || row.replacesSpan === true)) ||
    (row.type === "attachment" &&
      (attachment.type === "tool_results_cut" || attachment.type === "whole_texts_withdrawn"))
  ) {
    model.compact();
    return;
  }
  if (row.type !== "attachment") return;
  for (const p of [attachment.filename, record(record(attachment.content).file).filePath]) {
    if (typeof p === "string") model.forget(p);
  }
}

/**
 * What Claude Code's `Grep` showed, read as ripgrep's output (`rg -n P [FILE]`: `N:text` for
 * one file, `path:N:text` otherwise) in `content` mode with line numbers and no context lines;
 * nothing in any other mode.
 */
function grepShownByClaude(
  input: Record<string, unknown>,
  response: Record<string, unknown>,
  cwd: string,
  text: (path: string) => string | undefined,
): ReturnType<typeof bashShown> {
  if (response.mode !== "content" || typeof response.content !== "string") return [];
  if (input["-n"] === false || input.multiline === true || typeof input.pattern !== "string") {
    return [];
  }
  if (["-A", "-B", "-C", "context"].some((k) => input[k] !== undefined && input[k] !== 0)) {
    return [];
  }
  const quote = (w: string) => `'${w.replaceAll("'", `'\\''`)}'`;
  const at = typeof input.path === "string" ? resolve(cwd, input.path) : undefined;
  const file = at !== undefined && text(at) !== undefined ? ` ${quote(at)}` : "";
  return bashShown(`rg -n ${quote(input.pattern)}${file}`, response.content, cwd, text);
}

/** Prefixes the absolute path fields of a transcript row with `root` (a deep copy). */
function moved(row: Record<string, unknown>, root: string): Record<string, unknown> {
  const at = (p: unknown) => typeof p === "string" && p.startsWith("/") ? join(root, p) : p;
  const copy = structuredClone(row);
  if (typeof copy.cwd === "string") copy.cwd = at(copy.cwd);
  const content = record(copy.message).content;
  for (const b of Array.isArray(content) ? content : []) {
    const input = record(record(b).input);
    for (const k of ["file_path", "notebook_path", "path"]) if (k in input) input[k] = at(input[k]);
  }
  const result = record(copy.toolUseResult);
  if ("filePath" in result) result.filePath = at(result.filePath);
  const file = record(result.file);
  if ("filePath" in file) file.filePath = at(file.filePath);
  const a = record(copy.attachment);
  if ("filename" in a) a.filename = at(a.filename);
  const af = record(record(a.content).file);
  if ("filePath" in af) af.filePath = at(af.filePath);
  return copy;
}

function writeFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/**
 * What the read cache would have sent in a transcript recorded without it
 * (SPEC §11.9): the transcript is written again, row by row, to a file of its
 * own, and every tool call goes through a fresh Claude Code host as Claude
 * Code would have sent it (`PreToolUse`, then `PostToolUse` with the call's
 * result), on files rebuilt in a temporary directory from what the session
 * showed: a whole-file `Read` shows the file, a `Write` what it wrote, an
 * `Edit` its replacement applied to the file it reports. The host reads
 * those files, so its answers are decided on the content each read really
 * showed; a `Read` of part of a file whose whole content nothing showed
 * before cannot be rebuilt and is not judged (counted apart, left out of
 * both sides). Every short answer is checked against what the transcript
 * showed the model (`safety`): the newest text of each line from the
 * session's own reads, writes, edits and views (`cat`, `grep -n`, `Grep`),
 * kept apart from the host's code (cli/savings_model.ts, as bench:real
 * checks pi's answers); nothing before a compaction counts. Writes only in
 * the temporary directory.
 */
export async function replayClaudeSession(
  file: ClaudeSessionFile,
  options: { host?: Pick<ClaudeCodeHost, "handle"> } = {},
): Promise<SessionSavings> {
  const out = analyseClaudeSession(file);
  if (out.withReadcache || out.reads === 0) return out;
  const root = await Deno.makeTempDir({ prefix: "readcache-savings-claude-" });
  try {
    const fsRoot = join(root, "fs");
    const transcript = join(root, "transcript.jsonl");
    writeFileSync(transcript, "");
    const store = new MemoryObjectStore();
    const host = options.host ?? new ClaudeCodeHost({ storeFor: () => store });
    const uses = new Map<string, { name: string; input: Record<string, unknown> }>();
    const shownNow = new Map<string, string>(); // rebuilt file -> its text
    const session = {
      sessionId: "",
      cwd: "",
    };
    const counted = emptySessionSavings({
      file: out.file,
      host: "claude",
      id: out.id,
      cwd: out.cwd,
      started: out.started,
      withReadcache: false,
      reads: out.reads,
    });
    counted.estimate = "transcript";
    const counter = readCounter(counted);
    const notJudged = { unseen: { reads: 0, bytes: 0 }, unapplied: { reads: 0, bytes: 0 } };
    // what the transcript showed the model, line by line (the check's own record)
    const model = new ModelContext();
    const safety = { checked: 0, violations: 0, notChecked: 0 };
    // the check's record follows the rows one after another: once a row continues from another
    // than the one before it (a rewind, `--resume-session-at`), what the model was shown on its
    // branch is not that line any more, and the short answers after it are not checked
    let lastUuid: string | undefined;
    let rewound = false;
    counted.safety = safety;
    /** The rebuilt text of a file, only inside the rebuilt tree. */
    const rebuilt = (p: string): string | undefined => {
      if (!p.startsWith(fsRoot + "/")) return undefined;
      try {
        return Deno.readTextFileSync(p);
      } catch {
        return undefined;
      }
    };
    const took = (shown: ReturnType<typeof bashShown>) => {
      for (const v of shown) {
        const total = rebuilt(v.file)?.split("\n").length;
        model.shown(v.file, v.start, v.lines, v.toEnd ? total : undefined);
      }
    };
    /** Rebuilt files a command the replay cannot apply may have changed since. */
    const dirty = new Set<string>();
    const hook = (event: string, id: string, extra: Record<string, unknown>) => {
      const use = uses.get(id)!;
      return host.handle({
        session_id: session.sessionId,
        transcript_path: transcript,
        cwd: session.cwd,
        hook_event_name: event,
        tool_name: use.name,
        tool_input: use.input,
        tool_use_id: id,
        ...extra,
      });
    };
    for (const original of file.rows) {
      const row = moved(original as Record<string, unknown>, fsRoot);
      if (typeof row.sessionId === "string" && session.sessionId === "") {
        session.sessionId = row.sessionId;
      }
      if (typeof row.cwd === "string" && session.cwd === "") session.cwd = row.cwd;
      const content = record(row.message).content;
      const blocks = Array.isArray(content) ? content.map(record) : [];
      if (typeof row.uuid === "string") {
        if (
          lastUuid !== undefined && typeof row.parentUuid === "string" &&
          row.parentUuid !== lastUuid
        ) rewound = true;
        lastUuid = row.uuid;
      }
      if (row.type === "assistant") {
        await Deno.writeTextFile(transcript, JSON.stringify(row) + "\n", { append: true });
        for (const b of blocks) {
          if (b.type !== "tool_use" || typeof b.id !== "string") continue;
          uses.set(b.id, { name: String(b.name), input: record(b.input) });
          await hook("PreToolUse", b.id, {});
        }
        continue;
      }
      const results = blocks.filter((b) =>
        b.type === "tool_result" && typeof b.tool_use_id === "string" &&
        uses.has(b.tool_use_id as string)
      );
      if (row.type !== "user" || results.length !== 1 || results[0].is_error === true) {
        modelSees(model, row);
        await Deno.writeTextFile(transcript, JSON.stringify(row) + "\n", { append: true });
        continue;
      }
      const id = results[0].tool_use_id as string;
      const use = uses.get(id)!;
      const response = record(row.toolUseResult);
      const path = typeof use.input.file_path === "string" ? use.input.file_path : undefined;
      let readBytes: number | undefined;
      if (use.name === "Read" && response.type === "text" && path !== undefined) {
        readBytes = encoder.encode(claudeResultText(results[0].content)).length;
        const f = record(response.file);
        const body = String(f.content ?? "");
        const whole = f.startLine === 1 && f.numLines === f.totalLines;
        const known = shownNow.get(path);
        const window = known?.split("\n").slice(Number(f.startLine) - 1).slice(
          0,
          Number(f.numLines),
        )
          .join("\n");
        // a command the replay cannot apply ran since the file was rebuilt, and the read shows
        // other text: the command may have changed it (then the host would have sent the file
        // in full) or another process did (then a diff): not known, so not judged
        const unapplied = dirty.has(path) &&
          (whole ? known !== undefined && known !== body : window !== body);
        dirty.delete(path);
        if (unapplied) {
          notJudged.unapplied.reads++;
          notJudged.unapplied.bytes += readBytes;
          counter.count(path.slice(fsRoot.length), readBytes, readBytes);
          if (!whole) {
            model.read(path, Number(f.startLine), body.split("\n"), Number(f.totalLines));
            shownNow.delete(path);
            await Deno.writeTextFile(transcript, JSON.stringify(row) + "\n", { append: true });
            continue;
          }
          // whatever the host answered then (the file in full, or a diff), the model held the
          // whole file after it: the replay goes on from that, as after a plain read
          writeFile(path, body);
          shownNow.set(path, body);
          model.read(path, 1, body.split("\n"), Number(f.totalLines));
          const bytes = encoder.encode(body);
          const hash = sha256Hex(bytes);
          await store.put(hash, bytes);
          const totalLines = body.split("\n").length;
          const meta = {
            v: 1,
            pathKey: pathKeyOnDisk(path),
            scopeKey: "full",
            servedHash: hash,
            mode: "full",
            totalLines,
            rangeStart: 1,
            rangeEnd: totalLines,
            bytes: readBytes,
          };
          const rewritten = structuredClone(row);
          rewritten.toolUseResult = { ...response, file: { ...f, readcache: meta } };
          await Deno.writeTextFile(transcript, JSON.stringify(rewritten) + "\n", { append: true });
          continue;
        }
        if (whole) {
          writeFile(path, body);
          shownNow.set(path, body);
        } else if (
          known === undefined || window !== body || known.split("\n").length !== f.totalLines
        ) {
          // a part of a file whose whole content nothing showed: it cannot be rebuilt
          notJudged.unseen.reads++;
          notJudged.unseen.bytes += readBytes;
          counter.count(path.slice(fsRoot.length), readBytes, readBytes);
          model.read(path, Number(f.startLine), body.split("\n"), Number(f.totalLines));
          await Deno.writeTextFile(transcript, JSON.stringify(row) + "\n", { append: true });
          continue;
        }
      } else if (use.name === "Write" && path !== undefined) {
        const written = String(use.input.content ?? "");
        writeFile(path, written);
        shownNow.set(path, written);
        model.wrote(path, written);
      } else if (use.name === "Bash") {
        const command = classifyShellCommand(String(use.input.command ?? ""));
        // a command the replay does not run may have changed any file rebuilt so far
        if (!command.readOnly) { for (const p of shownNow.keys()) dirty.add(p); }
        // what `cat F` printed is the whole file as it was then: the file is rebuilt from it
        const view = command.view;
        const stdout = response.stdout;
        if (
          command.readOnly && view?.lines.kind === "whole" && typeof stdout === "string" &&
          stdout !== "" && response.stderr === "" && session.cwd !== ""
        ) {
          const at = resolve(session.cwd, view.path);
          // only inside the rebuilt tree: a command's absolute path names this machine's files
          if (at.startsWith(fsRoot + "/")) {
            const text = stdout.endsWith("\n") ? stdout : `${stdout}\n`;
            writeFile(at, text);
            shownNow.set(at, text);
            dirty.delete(at);
          }
        }
        // what the model received: stdout, then stderr when there is any
        if (typeof stdout === "string" && session.cwd !== "") {
          const stderr = typeof response.stderr === "string" && response.stderr !== ""
            ? `\n${response.stderr}`
            : "";
          took(bashShown(String(use.input.command ?? ""), stdout + stderr, session.cwd, rebuilt));
        }
      } else if (use.name === "Grep") {
        took(grepShownByClaude(use.input, response, session.cwd, rebuilt));
      } else if (use.name === "Edit" && path !== undefined) {
        const before = response.originalFile;
        const oldText = String(use.input.old_string ?? "");
        if (typeof before === "string" && oldText !== "" && before.includes(oldText)) {
          const after = use.input.replace_all === true
            ? before.replaceAll(oldText, String(use.input.new_string ?? ""))
            : before.replace(oldText, () => String(use.input.new_string ?? ""));
          writeFile(path, after);
          shownNow.set(path, after);
          if (use.input.replace_all === true) model.forget(path);
          else {
            const line = before.slice(0, before.indexOf(oldText)).split("\n").length;
            const newText = String(use.input.new_string ?? "");
            model.edited(path, [{ oldText, newText }], line);
          }
        } else {
          shownNow.delete(path);
          model.forget(path);
        }
      } else if (path !== undefined && use.name !== "Read") {
        // another tool that changes a file (MultiEdit, NotebookEdit, ...): the check knows nothing
        model.forget(path);
      }
      const answer = await hook("PostToolUse", id, { tool_response: response });
      const replaced = record(answer.hookSpecificOutput?.updatedToolOutput ?? response);
      if (readBytes !== undefined) {
        const f = record(replaced.file);
        const shown = claudeReadText({
          content: String(f.content ?? ""),
          startLine: Number(f.startLine),
        });
        const meta = parseReadCacheMeta(f.readcache);
        if (meta === undefined || meta.mode === "full" || meta.mode === "baseline_fallback") {
          counted.byMode[meta?.mode ?? "plain"]++;
        } else counted.byMode[meta.mode]++;
        counter.count(path!.slice(fsRoot.length), readBytes, encoder.encode(shown).length);
        // the check: a short answer must hold for what the transcript showed the model
        const asked = record(response.file);
        const lines = (rebuilt(path!) ?? "").split("\n");
        const start = Number(asked.startLine);
        const end = start + Number(asked.numLines) - 1;
        // a short answer stands for text the model holds
        if (meta !== undefined && !isAnchorMode(meta.mode)) {
          if (rewound) safety.notChecked++;
          else {
            safety.checked++;
            const wrong = checkCachedAnswer(String(f.content ?? ""), model.view(path!), lines, {
              start,
              end,
            });
            if (wrong !== undefined) safety.violations++;
          }
        }
        if (end >= start) model.read(path!, start, lines.slice(start - 1, end), lines.length);
        const rewritten = structuredClone(row);
        const c = record(rewritten.message).content as Record<string, unknown>[];
        c[0] = { ...c[0], content: shown };
        rewritten.toolUseResult = replaced;
        await Deno.writeTextFile(transcript, JSON.stringify(rewritten) + "\n", { append: true });
        continue;
      }
      await Deno.writeTextFile(
        transcript,
        JSON.stringify({ ...row, toolUseResult: replaced }) + "\n",
        { append: true },
      );
    }
    counter.done();
    for (const [reason, n] of Object.entries(notJudged)) {
      if (n.reads > 0) (counted.notJudged ??= {})[reason as keyof typeof notJudged] = n;
    }
    return counted;
  } catch {
    return out; // the estimate from the transcript alone
  } finally {
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}
