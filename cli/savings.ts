/**
 * `readcache savings [DIR|FILE ...]` (default: pi's sessions directory): over
 * many pi session files, what was read, what pi sent and what the read cache
 * sent or would have sent.
 *
 * - A session WITH the read cache (its read results carry
 *   `details.readcache`): what was sent is measured (the text of each read
 *   result); what pi's own `read` would have sent is the status estimate
 *   (`PlainReadEstimate`, SPEC §11.4: a short answer costs the lines it
 *   covers times the bytes per line of the file's latest full read), where
 *   what the model wrote with pi's `write` counts like a full read of it (it
 *   holds what it wrote, SPEC §5.8), so a file written and then read back
 *   "unchanged" shows what that saved.
 * - A session WITHOUT it: what pi sent is measured; what the read cache would
 *   have sent is computed by replaying the session's own read results through
 *   the read decision, branch by branch, compactions included. The content of
 *   the file at each read is taken from the session itself: a whole-file read
 *   that pi did not cut shows the whole file; any other read (a range, a cut
 *   read) uses the latest earlier whole-file text of that file whose lines
 *   give exactly that read's text. When there is none, the content cannot be
 *   known: the read counts as sent in full on both sides and is reported
 *   separately. As a check, each answer the replay sends in full is compared
 *   with the text pi really sent.
 *
 * @module
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { type PiEntryLike, piEntryToReplay, readCallsOf } from "../src/adapters/pi/branch.ts";
import { renderBaselineRead } from "../src/core/baseline.ts";
import { decidePlan, planRead } from "../src/core/decision.ts";
import { BranchKnowledge } from "../src/core/knowledge.ts";
import { parseReadCacheMeta, READ_MODES, type ReadCacheMetaV1 } from "../src/core/meta.ts";
import type { ReplayEntry } from "../src/core/replay.ts";
import { bytesInWords, MODE_WORDS, PlainReadEstimate, type TextStyle } from "../src/core/status.ts";
import { locateRead, resolveCall, resolveWriteCall } from "../src/shell/read_service.ts";
import { savingsHtml } from "./savings_html.ts";
import {
  emptySessionSavings,
  type FileSavings,
  hostWords,
  lessWords,
  notJudgedWords,
  piSessionHead,
  readCounter,
  type SavingsTotals,
  sessionLabel,
  type SessionSavings,
  shareOfPi,
  topFiles,
  totalsOf,
} from "./savings_figures.ts";

import {
  CliError,
  colorAllowed,
  EXIT_OK,
  EXIT_PROBLEM,
  EXIT_USAGE,
  NothingFound,
  plural,
  printJson,
  Progress,
  slowStage,
  stdoutStyle,
} from "./support/output.ts";
import { claudeConfigDir } from "./claude.ts";
import { claudeSessionSavings } from "./claude_savings.ts";
import { analyseOpenCodeSession } from "./opencode_savings.ts";
import { openCodeSessionsFromStorage } from "./support/opencode.ts";
import {
  agentDir,
  type AnySessionFile,
  type ClaudeSessionFile,
  permissionWords,
  projectDir,
  readAnySessionFile,
  type SessionFile,
  SessionFileError,
} from "./support/sessions.ts";
import { shellQuote } from "./support/store_scan.ts";
import { replayThroughPi, savingsFromReplay } from "./savings_replay.ts";

/**
 * Options of {@linkcode savingsCommand}.
 *
 * @example
 * ```ts
 * import type { SavingsOptions } from "./savings.ts";
 * const o: SavingsOptions = { top: 10, json: true };
 * ```
 */
export interface SavingsOptions {
  /** How many files to list. */
  top: number;
  /** Also write a self-contained HTML page here. */
  html?: string;
  /** Print JSON. */
  json?: boolean;
  /** Also read the sessions in OpenCode's database (without writing to it). */
  opencode?: boolean;
  /** Also read Claude Code's transcripts (`$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`). */
  claude?: boolean;
  /** With `opencode`: only the sessions of this project directory. */
  cwd?: string;
  /**
   * Estimate pi sessions without the read cache by bench:real's replay through pi (default
   * true); false: from their own read results only.
   */
  replay?: boolean;
}

const encoder = new TextEncoder();
const utf8 = (s: string) => encoder.encode(s).length;

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null ? v as Record<string, unknown> : undefined;
}

/** A successful `read` tool result: its text, whether it holds an image, and its details. */
function readResult(
  e: PiEntryLike,
):
  | { text: string; image: boolean; details: Record<string, unknown> | undefined; callId: string }
  | undefined {
  if (e.type !== "message") return undefined;
  const msg = asRecord(e.message);
  if (msg?.role !== "toolResult" || msg.toolName !== "read" || msg.isError === true) {
    return undefined;
  }
  const content = Array.isArray(msg.content) ? msg.content : [];
  let text = "";
  let image = false;
  for (const part of content) {
    const p = asRecord(part);
    if (p?.type === "text" && typeof p.text === "string") text += p.text;
    if (p?.type === "image") image = true;
  }
  if (typeof msg.content === "string") text = msg.content;
  return {
    text,
    image,
    details: asRecord(msg.details),
    callId: typeof msg.toolCallId === "string" ? msg.toolCallId : "",
  };
}

/** The id of a successful `write` tool result, when `e` is one. */
function writeResultId(e: PiEntryLike): string | undefined {
  if (e.type !== "message") return undefined;
  const msg = asRecord(e.message);
  if (msg?.role !== "toolResult" || msg.toolName !== "write" || msg.isError === true) {
    return undefined;
  }
  return typeof msg.toolCallId === "string" ? msg.toolCallId : undefined;
}

/** The arguments of the `write` tool calls of an assistant message entry, by tool call id. */
function writeCallsOf(e: PiEntryLike): [string, unknown][] {
  if (e.type !== "message") return [];
  const msg = asRecord(e.message);
  if (msg?.role !== "assistant" || !Array.isArray(msg.content)) return [];
  const out: [string, unknown][] = [];
  for (const block of msg.content) {
    const b = asRecord(block);
    if (b?.type === "toolCall" && b.name === "write" && typeof b.id === "string") {
      out.push([b.id, b.arguments]);
    }
  }
  return out;
}

/**
 * What pi's own `read` of the whole file would have sent right after the
 * model wrote `args.content` to it, as read cache metadata of a full read:
 * for the estimate of pi's side, a file the model wrote counts like a file
 * it read whole (SPEC §5.8: what the model wrote is what it holds).
 * `undefined` when the arguments do not resolve.
 */
function writtenAsFullRead(
  args: unknown,
  deps: { cwd: string; home: string },
): ReadCacheMetaV1 | undefined {
  const a = asRecord(args);
  const w = resolveWriteCall(args, deps);
  if (w === undefined || typeof a?.content !== "string" || typeof a.path !== "string") {
    return undefined;
  }
  try {
    const shown = renderBaselineRead({ text: a.content, displayPath: a.path });
    if (shown.shownEnd < shown.shownStart) return undefined;
    return {
      v: 1,
      pathKey: w.call.pathKey,
      scopeKey: "full",
      servedHash: w.hash,
      mode: "full",
      totalLines: shown.totalLines,
      rangeStart: shown.shownStart,
      rangeEnd: shown.shownEnd,
      bytes: utf8(shown.text),
    };
  } catch {
    return undefined;
  }
}

/**
 * Works out the figures of one session file (see the module documentation).
 * Reads nothing but the file's own entries (the project's directory, when it
 * exists, only to resolve paths as pi did).
 *
 * @example
 * ```ts ignore
 * const s = analyseSession(await readSessionFile("session.jsonl"));
 * console.log(s.piBytes, s.readcacheBytes);
 * ```
 */
export function analyseSession(session: SessionFile): SessionSavings {
  const cwd = session.header?.cwd ?? "/";
  const deps = { cwd, home: homedir() };
  const args = new Map<string, unknown>();
  const writes = new Map<string, unknown>();
  for (const e of session.entries) {
    for (const [id, a] of readCallsOf(e)) args.set(id, a);
    for (const [id, a] of writeCallsOf(e)) writes.set(id, a);
  }
  const withReadcache = session.entries.some((e) =>
    parseReadCacheMeta(asRecord(readResult(e)?.details)?.readcache) !== undefined
  );
  const out = emptySessionSavings(piSessionHead(session, withReadcache));
  if (!withReadcache) out.estimate = "session";
  const byMode = out.byMode;
  const counter = readCounter(out);
  const count = counter.count;

  // replay state for sessions without the read cache
  const estimate = new PlainReadEstimate();
  const knowledge = new BranchKnowledge();
  const replayed = new Map<string, ReplayEntry>();
  const stored = new Map<string, Uint8Array>();
  const contents = new Map<string, string[]>();
  const lookup = (id: string) => replayed.get(id);

  for (const e of session.entries) {
    const r = readResult(e);
    if (r === undefined) {
      if (!withReadcache) replayed.set(e.id, piEntryToReplay(e));
      const written = withReadcache ? writeResultId(e) : undefined;
      if (written !== undefined) {
        // a later short answer for a file the model wrote is charged at the bytes per line of
        // what it wrote, as after a full read (pi's side of the estimate)
        const meta = writtenAsFullRead(writes.get(written), deps);
        if (meta !== undefined) estimate.add(meta);
      }
      continue;
    }
    out.reads++;
    const a = asRecord(args.get(r.callId));
    const call = a === undefined ? undefined : resolveCall(a, deps);
    const key = call?.pathKey ?? (typeof a?.path === "string" ? resolve(cwd, a.path) : "(unknown)");
    const bytes = utf8(r.text);
    if (r.image) out.images++;
    if (withReadcache) {
      const meta = parseReadCacheMeta(r.details?.readcache);
      if (meta === undefined) {
        byMode.plain++;
        count(key, bytes, bytes);
      } else {
        byMode[meta.mode]++;
        count(key, estimate.add(meta), bytes);
      }
      continue;
    }

    // without the read cache: what would it have answered?
    const asPlain = () => {
      const entry: ReplayEntry = { id: e.id, parentId: e.parentId, kind: "read", meta: undefined };
      if (r.callId !== "") entry.callId = r.callId;
      if (call !== undefined) entry.call = call;
      replayed.set(e.id, entry);
    };
    if (r.image || call === undefined || typeof a?.path !== "string") {
      byMode.plain++;
      count(key, bytes, bytes);
      asPlain();
      continue;
    }
    let displayPath = a.path;
    try {
      displayPath = locateRead({ path: a.path }, deps).target.displayPath;
    } catch {
      // keep the path as typed
    }
    const ranged = call.offset !== undefined || call.limit !== undefined;
    const render = (text: string): string | undefined => {
      try {
        return renderBaselineRead({ text, displayPath, offset: call.offset, limit: call.limit })
          .text;
      } catch {
        return undefined;
      }
    };
    let content: string | undefined;
    if (!ranged && r.details?.truncation === undefined && render(r.text) === r.text) {
      content = r.text;
    } else {
      content = (contents.get(call.pathKey) ?? []).findLast((c) => render(c) === r.text);
    }
    if (content === undefined) {
      out.unknown.reads++;
      out.unknown.bytes += bytes;
      byMode.plain++;
      count(key, bytes, bytes);
      asPlain();
      continue;
    }
    const seen = contents.get(call.pathKey) ?? [];
    if (!ranged && seen.at(-1) !== content) seen.push(content);
    contents.set(call.pathKey, seen);
    knowledge.syncTip(e.parentId, lookup);
    const plan = planRead({
      displayPath,
      pathKey: call.pathKey,
      offset: call.offset,
      limit: call.limit,
      bytes: encoder.encode(content),
      knowledge: knowledge.file(call.pathKey, call.name),
    });
    const d = decidePlan(plan, new Map(plan.needs.map((h) => [h, stored.get(h)])));
    if (d.store) stored.set(d.store.hash, d.store.bytes);
    if (d.mode === null || d.mode === "full" || d.mode === "baseline_fallback") {
      out.checked.reads++;
      if (d.text === r.text) out.checked.matched++;
    }
    byMode[d.mode ?? "plain"]++;
    count(key, bytes, utf8(d.text));
    const entry: ReplayEntry = {
      id: e.id,
      parentId: e.parentId,
      kind: "read",
      meta: d.details.readcache,
      call,
    };
    if (r.callId !== "") entry.callId = r.callId;
    replayed.set(e.id, entry);
  }
  counter.done();
  return out;
}

/** A file to read as a session: named on the command line, or found in a directory. */
interface Candidate {
  path: string;
  named: boolean;
  /** A `.json` file found in a directory: counted only when it is an OpenCode export. */
  sniff?: boolean;
}

/** Something that stops a session file or directory found in a directory from being read. */
interface SavingsProblem {
  path: string;
  what: string;
  fix: string;
}

/**
 * The files to read under `path`: the file itself when it is one (read as a
 * session whatever its name), else the `.jsonl` files of the directory and
 * its subdirectories, and its `.json` files (kept only when they are OpenCode
 * exports), sorted. A path named on the command line (`named`)
 * that is missing, unreadable or neither a file nor a directory is a usage
 * error; a subdirectory that cannot be read is added to `problems`.
 */
async function candidates(
  path: string,
  named: boolean,
  problems: SavingsProblem[],
): Promise<Candidate[]> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (e) {
    throw new CliError(
      `Cannot read ${path}: ${
        e instanceof Deno.errors.NotFound ? "no such file or directory" : permissionWords(e)
      }. Pass pi session files or directories that hold them (default: pi's sessions directory).`,
      EXIT_USAGE,
    );
  }
  if (info.isFile) return [{ path, named }];
  if (!info.isDirectory) {
    throw new CliError(
      `${path} is neither a file nor a directory. Pass pi session files or directories that ` +
        "hold them.",
      EXIT_USAGE,
    );
  }
  const out: Candidate[] = [];
  const walk = async (dir: string, top: boolean) => {
    const entries: Deno.DirEntry[] = [];
    try {
      for await (const e of Deno.readDir(dir)) entries.push(e);
    } catch (e) {
      if (top && named) {
        throw new CliError(
          `Cannot read the directory ${dir}: ${permissionWords(e)}. Make it readable ` +
            `(chmod u+rx ${shellQuote(dir)}) or pass another directory.`,
          EXIT_USAGE,
        );
      }
      problems.push({
        path: dir,
        what: `is a directory that cannot be read (${permissionWords(e)}): ` +
          "the sessions in it were not counted",
        fix: `chmod u+rx ${shellQuote(dir)}`,
      });
      return;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory) await walk(p, false);
      else if (e.isFile && e.name.endsWith(".jsonl")) out.push({ path: p, named: false });
      else if (e.isFile && e.name.endsWith(".json")) {
        out.push({ path: p, named: false, sniff: true });
      }
    }
  };
  await walk(path, true);
  return out.sort((x, y) => x.path < y.path ? -1 : x.path > y.path ? 1 : 0);
}

function bar(part: number, whole: number, width: number, color: boolean): string {
  if (whole <= 0) return " ".repeat(width);
  const kept = Math.min(width, Math.round((part / whole) * width));
  const a = "\u2588".repeat(kept);
  const b = "\u2591".repeat(width - kept);
  return color ? `${a}\x1b[32m${b}\x1b[0m` : a + b;
}

const pad = (s: string, n: number) => s.length >= n ? s : s + " ".repeat(n - s.length);
const lpad = (s: string, n: number) => s.length >= n ? s : " ".repeat(n - s.length) + s;

/**
 * Runs `readcache savings`; returns the exit code: 2 when no session was
 * found (nothing to measure: as `readcache status` says of a project without
 * sessions, the user passes where they are), 1 when a file or directory
 * found in a directory cannot be read. A file or directory named on the
 * command line that is missing, cannot be read or is not a pi session file
 * is a usage error (exit code 2, thrown as `CliError`), as for
 * `readcache status`.
 *
 * @example
 * ```ts ignore
 * const code = await savingsCommand([], { top: 10 });
 * ```
 */
export async function savingsCommand(paths: string[], options: SavingsOptions): Promise<number> {
  const envDir = Deno.env.get("PI_CODING_AGENT_SESSION_DIR");
  const named = paths.length > 0;
  if (options.cwd !== undefined && !options.opencode) {
    throw new CliError(
      "--cwd chooses the project of OpenCode's sessions and goes with --opencode. For pi, pass " +
        "the project's sessions directory instead (readcache savings ~/.pi/agent/sessions/--work-app--).",
      EXIT_USAGE,
    );
  }
  // without paths: pi's sessions directory, unless only OpenCode's sessions were asked for
  const roots = named
    ? [...paths]
    : options.opencode || options.claude
    ? []
    : [envDir ? resolve(envDir) : join(agentDir(), "sessions")];
  if (options.claude) {
    const projects = join(claudeConfigDir(), "projects");
    try {
      await Deno.stat(projects);
      roots.push(projects);
    } catch {
      throw new NothingFound(
        `No Claude Code transcripts at ${projects}: Claude Code has saved no session there. ` +
          "Set CLAUDE_CONFIG_DIR when Claude Code keeps its data elsewhere.",
      );
    }
  }
  if (!named && !options.opencode && !options.claude) {
    try {
      await Deno.stat(roots[0]);
    } catch {
      throw new NothingFound(
        `No pi sessions directory at ${roots[0]}: pi has saved no session there. Pass session ` +
          "files or directories, or set PI_CODING_AGENT_DIR (or PI_CODING_AGENT_SESSION_DIR) " +
          "when pi keeps its data elsewhere.",
      );
    }
  }
  const problems: SavingsProblem[] = [];
  const files: Candidate[] = [];
  for (const p of roots) files.push(...await candidates(p, named, problems));
  const sessions: SessionSavings[] = [];
  const piFiles = new Map<string, SessionFile>();
  const claudeFiles: ClaudeSessionFile[] = [];
  let skipped = 0;
  const progress = new Progress("session files", files.length, options.json === true);
  for (const f of files) {
    progress.tick();
    let s: AnySessionFile;
    try {
      // named on the command line: any reason it cannot be used ends the command (exit code 2)
      s = await readAnySessionFile(f.path, f.named ? EXIT_USAGE : EXIT_PROBLEM);
    } catch (e) {
      if (f.named || !(e instanceof SessionFileError)) throw e;
      if (e.kind === "unreadable") {
        problems.push({
          path: f.path,
          what: `cannot be read (${e.why}): it was not counted`,
          fix: `chmod u+r ${shellQuote(f.path)}`,
        });
      } else if (!f.sniff) skipped++;
      continue;
    }
    if (s.host === "pi") piFiles.set(s.file.path, s.file);
    if (s.host === "claude") {
      claudeFiles.push(s.file);
      continue;
    }
    sessions.push(s.host === "pi" ? analyseSession(s.file) : analyseOpenCodeSession(s.file));
  }
  progress.done();
  // a subagent's transcript (<session>/subagents/agent-<id>.jsonl) counts within its session
  const byPath = new Map(claudeFiles.map((f) => [resolve(f.path), f]));
  const subagentsOf = new Map<string, ClaudeSessionFile[]>();
  const parents: ClaudeSessionFile[] = [];
  for (const f of claudeFiles) {
    const m = /^(.*)\/([^/]+)\/subagents\/agent-[^/]+\.jsonl$/.exec(resolve(f.path));
    const parent = m === null ? undefined : `${m[1]}/${m[2]}.jsonl`;
    if (parent !== undefined && byPath.has(parent)) {
      subagentsOf.set(parent, [...subagentsOf.get(parent) ?? [], f]);
    } else parents.push(f);
  }
  const claudeStage = slowStage(
    `reading ${plural(parents.length, "Claude Code session")} (those recorded without readcache ` +
      "are replayed through the Claude Code host)",
    options.json === true || parents.length === 0,
  );
  for (const f of parents) {
    sessions.push(
      await claudeSessionSavings(
        f,
        subagentsOf.get(resolve(f.path)) ?? await subagentsBeside(f.path),
        options.replay !== false,
      ),
    );
  }
  claudeStage.done();
  if (options.replay !== false) await estimateByReplay(sessions, piFiles, options.json === true);
  else {
    for (const s of sessions) {
      if (s.estimate === "session") s.replaySkipped = "--no-replay was given";
    }
  }
  if (options.opencode) {
    const cwd = options.cwd === undefined ? undefined : await projectDir(options.cwd, Deno.cwd());
    const found = await openCodeSessionsFromStorage(cwd);
    roots.push(cwd === undefined ? found.database : `${found.database} (sessions of ${cwd})`);
    sessions.push(...found.sessions.map(analyseOpenCodeSession));
  }
  sessions.sort((a, b) =>
    (a.started ?? "") < (b.started ?? "") ? -1 : (a.started ?? "") > (b.started ?? "") ? 1 : 0
  );
  const totals = totalsOf(sessions);
  const top = topFiles(sessions, options.top);
  // no session found is an answer (said in words): only problems found make the exit code 1
  const code = problems.length > 0 ? EXIT_PROBLEM : EXIT_OK;
  if (options.html !== undefined) {
    try {
      await Deno.writeTextFile(options.html, savingsHtml(sessions, totals, top));
    } catch (e) {
      throw new CliError(
        `Cannot write ${options.html}: ${
          e instanceof Deno.errors.NotFound ? "its directory does not exist" : permissionWords(e)
        }. Pass --html a file path in a directory you can write to.`,
        EXIT_USAGE,
      );
    }
  }
  if (options.json) {
    printJson({
      sessions: sessions.map(({ files: _files, ...s }) => ({ ...s, label: sessionLabel(s) })),
      totals,
      topFiles: top,
      skipped,
      problems,
      html: options.html ?? null,
    });
    return code;
  }
  console.log(
    formatSavings(
      {
        sessions,
        totals,
        top,
        roots,
        fromFiles: files.some((f) => f.named),
        skipped,
        problems,
        html: options.html,
      },
      stdoutStyle(),
      colorAllowed(Deno.stdout),
    ),
  );
  return code;
}

/**
 * Replaces the figures of pi sessions without the read cache by those of bench:real's replay
 * (cli/savings_replay.ts); a session the replay skips, or all of them when it cannot run, keep the
 * estimate from their own reads, with the reason.
 */
/**
 * The transcripts of a Claude Code session's subagents, beside its own
 * (`<session>/subagents/agent-<id>.jsonl`), for a transcript named on its own; any that cannot be
 * read are left out.
 */
async function subagentsBeside(path: string): Promise<ClaudeSessionFile[]> {
  if (!path.endsWith(".jsonl")) return [];
  const dir = join(path.slice(0, -".jsonl".length), "subagents");
  const out: ClaudeSessionFile[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!e.isFile || !/^agent-[^/]+\.jsonl$/.test(e.name)) continue;
      const s = await readAnySessionFile(join(dir, e.name), EXIT_PROBLEM).catch(() => undefined);
      if (s?.host === "claude") out.push(s.file);
    }
  } catch {
    return out;
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

async function estimateByReplay(
  sessions: SessionSavings[],
  piFiles: ReadonlyMap<string, SessionFile>,
  quiet: boolean,
): Promise<void> {
  const todo = new Set(sessions.filter((s) => s.estimate === "session" && piFiles.has(s.file)));
  if (todo.size === 0) return;
  const stage = slowStage(
    `replaying ${plural(todo.size, "pi session")} recorded without readcache through pi and the ` +
      "extension (the first run fetches pi from npm, about 212 MB, once)",
    quiet,
  );
  const replay = await replayThroughPi([...todo].map((s) => s.file));
  stage.done();
  for (const [i, s] of sessions.entries()) {
    if (!todo.has(s)) continue;
    if ("error" in replay) {
      s.replaySkipped = replay.error;
      continue;
    }
    const r = replay.results.get(s.file);
    const by = r === undefined ? undefined : savingsFromReplay(piFiles.get(s.file)!, r);
    if (by !== undefined) sessions[i] = by;
    else {
      s.replaySkipped = r !== undefined && "skipped" in r
        ? r.skipped.replace(`${s.file}: `, "")
        : "the replay gave no result";
    }
  }
}

/**
 * What `readcache savings` prints, as figures (see {@linkcode formatSavings}).
 *
 * @example
 * ```ts
 * import type { SavingsReport } from "./savings.ts";
 * ```
 */
export interface SavingsReport {
  /** The sessions, in the order shown. */
  sessions: readonly SessionSavings[];
  /** Their totals. */
  totals: SavingsTotals;
  /** The files listed. */
  top: readonly FileSavings[];
  /** Where the session files were looked for. */
  roots: readonly string[];
  /** True when some of `roots` are files (named on the command line). */
  fromFiles: boolean;
  /** Files found in a directory that are not pi session files. */
  skipped: number;
  /** Files or directories found in a directory that cannot be read. */
  problems: readonly { path: string; what: string; fix: string }[];
  /** Where the page was written, if it was. */
  html?: string;
}

/**
 * The text `readcache savings` prints. Pure; `color` adds ANSI colour to the
 * bars.
 *
 * @example
 * ```ts
 * import { formatSavings } from "./savings.ts";
 * import { totalsOf } from "./savings_figures.ts";
 * import { PLAIN_STYLE } from "../src/core/status.ts";
 * formatSavings({ sessions: [], totals: totalsOf([]), top: [], roots: ["/s"], fromFiles: false,
 *   skipped: 0, problems: [] }, PLAIN_STYLE, false);
 * ```
 */
export function formatSavings(r: SavingsReport, style: TextStyle, color: boolean): string {
  const { sessions, totals, skipped, problems } = r;
  const out: string[] = [
    style.heading(
      `readcache savings: ${
        plural(
          sessions.length,
          totals.hosts.opencode > 0 || totals.hosts.claude > 0 ? "session" : "session file",
        )
      } ${r.fromFiles ? "from" : "in"} ${r.roots.join(", ")}`,
    ),
  ];
  if (skipped > 0) {
    out.push(
      `  (${plural(skipped, "file")} skipped: ${
        skipped === 1 ? "not a pi session file" : "not pi session files"
      })`,
    );
  }
  if (sessions.length === 0) {
    out.push(
      style.warn(
        "no pi session files found. Pass session files or directories that hold them " +
          `(pi keeps them in ${join(agentDir(), "sessions")}), or --opencode for OpenCode's ` +
          "sessions.",
      ),
    );
  } else {
    out.push(...sessionTable(sessions, color, hostWords(totals)), "", ...totalLines(totals, style));
    out.push(...fileTable(r.top, style));
  }
  if (problems.length > 0) {
    out.push("", style.bad(`${plural(problems.length, "problem")}:`));
    for (const p of problems) out.push(`  ${p.path} ${p.what}`, `    fix: ${p.fix}`);
  }
  if (r.html !== undefined) out.push("", `chart written to ${r.html}`);
  return out.join("\n");
}

function sessionTable(
  sessions: readonly SessionSavings[],
  color: boolean,
  host: string,
): string[] {
  const names = sessions.map(sessionLabel);
  const nameWidth = Math.max(...names.map((n) => n.length), 7);
  const alone = host.includes(" or ") ? "own read" : `${host} alone`;
  const w = Math.max(9, alone.length);
  const out = [
    "",
    `  ${pad("session", nameWidth)}  ${pad("readcache", 9)}  ${lpad("reads", 5)}  ${
      lpad(alone, w)
    }  ${lpad("readcache", 9)}  readcache / ${host === "pi" ? "pi" : "own"}`,
  ];
  const widest = Math.max(...sessions.map((s) => s.piBytes), 1);
  for (const [i, s] of sessions.entries()) {
    const width = Math.max(1, Math.round((s.piBytes / widest) * 30));
    const share = shareOfPi(s);
    out.push(
      `  ${pad(names[i], nameWidth)}  ${
        pad(s.withReadcache ? "on" : s.notReplayed ? "off" : "replayed", 9)
      }  ${lpad(String(s.reads), 5)}  ${lpad(bytesInWords(s.piBytes), w)}  ${
        lpad(bytesInWords(s.readcacheBytes), 9)
      }  ${
        s.notReplayed === true
          ? "not judged (not replayed)"
          : share === undefined
          ? "nothing sent"
          : `${bar(s.readcacheBytes, s.piBytes, width, color)} ${lessWords(share.saved)}`
      }`,
    );
  }
  return out;
}

function totalLines(totals: SavingsTotals, style: TextStyle): string[] {
  const out: string[] = [];
  const diff = totals.piBytes - totals.readcacheBytes;
  const share = shareOfPi(totals);
  const tokens = totals.estimatedTokensSaved;
  const host = hostWords(totals);
  out.push(
    style.heading("total") +
      `: ${plural(totals.reads, "read")}; ${host} ${bytesInWords(totals.piBytes)}, readcache ${
        bytesInWords(totals.readcacheBytes)
      }` +
      (share === undefined ? "" : `: ${
        style.good(
          diff >= 0
            ? `${bytesInWords(diff)} less (${share.saved}%), about ${plural(tokens, "token")}`
            : `${bytesInWords(-diff)} more (${-share.saved}%)`,
        )
      }`),
  );
  const modes = ([...READ_MODES, "plain"] as const).filter((m) => totals.byMode[m] > 0)
    .map((m) =>
      `${totals.byMode[m]} ${m === "plain" ? `served by ${host} itself` : MODE_WORDS[m]}`
    );
  if (modes.length > 0) out.push(`  reads: ${modes.join(", ")}`);
  const used = totals.withReadcache;
  const off = totals.notReplayed.sessions;
  const offClaude = totals.notReplayedClaude.sessions;
  const replayed = totals.sessions - used - off - offClaude;
  if (used > 0) {
    out.push(
      `  ${
        plural(used, "session")
      } with readcache ("on"): what it sent is measured; what ${host} ` +
        "would have sent is an estimate (lines times bytes per line of the file's latest full " +
        "read, or of what the model wrote)",
    );
  }
  const { replay: byReplay, session: bySession } = totals.estimates;
  if (byReplay > 0) {
    out.push(
      `  ${
        plural(byReplay, "session")
      } without readcache ("replayed"): what pi sent is measured; what readcache would have ` +
        "sent is an estimate: the session's own calls run again through pi and the extension, " +
        "on files rebuilt from what the session's outputs showed (the replay of " +
        "deno task bench:real)",
    );
  }
  const byTranscript = totals.estimates.transcript;
  if (byTranscript > 0) {
    out.push(
      `  ${
        plural(byTranscript, "Claude Code session")
      } without readcache ("replayed"): what Claude Code sent is measured; what readcache would ` +
        "have sent is an estimate: the transcript's calls run again through the Claude Code host, " +
        "on files rebuilt from what the session's reads, writes, edits and `cat` showed",
    );
  }
  if (byReplay + byTranscript > 0) {
    const v = totals.safety;
    const check = `  check: ${plural(v.checked, "short answer")} checked against what the model ` +
      `had been shown: ${v.violations} wrong${
        v.notChecked > 0
          ? `; ${v.notChecked} not checked (after a rewind in a Claude Code session's file: the ` +
            "check follows its rows one after another)"
          : ""
      }`;
    out.push(v.violations > 0 ? style.bad(check) : check);
  }
  const nj = notJudgedWords(totals);
  if (nj !== undefined) out.push(style.warn(`  ${nj}`));
  if (replayed > 0 && bySession > 0) {
    out.push(
      `  ${
        plural(bySession, "session")
      } without readcache ("replayed"): what pi sent is measured; what readcache would have ` +
        "sent is its read decision replayed over the session's own read results only (a lower " +
        `figure than the replay through pi)${
          totals.replaySkipped.length > 0 ? `, because ${totals.replaySkipped.join("; ")}` : ""
        }`,
    );
    const c = totals.checked;
    out.push(
      c.reads === 0
        ? "  check: no replayed answer was sent in full, so none could be compared with pi's text"
        : `  check: ${c.matched} of ${plural(c.reads, "replayed answer")} sent in full ${
          c.matched === 1 ? "equals" : "equal"
        } pi's own text exactly`,
    );
  }
  if (off > 0) {
    const n = totals.notReplayed;
    out.push(
      style.warn(
        `  ${plural(off, "OpenCode session")} without readcache ("off"): not replayed, because ` +
          "OpenCode's read output does not show the file exactly (not whether it ends with a " +
          `line break, nor CR or a byte order mark); ${plural(n.reads, "read")} (${
            bytesInWords(n.bytes)
          }) count as sent in full on both sides`,
      ),
    );
  }
  if (offClaude > 0) {
    const n = totals.notReplayedClaude;
    out.push(
      style.warn(
        `  ${plural(offClaude, "Claude Code session")} without readcache ("off"): not replayed ` +
          `(--no-replay was given, or the replay failed); ${plural(n.reads, "read")} (${
            bytesInWords(n.bytes)
          }) count as sent in full on both sides`,
      ),
    );
  }
  const u = totals.unknown;
  if (u.reads > 0) {
    out.push(
      style.warn(
        `  cannot be known: ${plural(u.reads, "read")} (${bytesInWords(u.bytes)}) ${
          u.reads === 1 ? "shows" : "show"
        } part of a file whose whole content the session never showed before; ${
          u.reads === 1 ? "it counts" : "they count"
        } as sent in full on both sides`,
      ),
    );
  }
  return out;
}

function fileTable(top: readonly FileSavings[], style: TextStyle): string[] {
  if (top.length === 0) return [];
  const out = [
    "",
    style.heading("files by wasted bytes") + " (re-sent in full while the model held them)",
  ];
  const w = Math.max(...top.map((f) => f.path.length), 4);
  out.push(
    `  ${pad("file", w)}  ${lpad("reads", 5)}  ${lpad("repeats", 7)}  ${lpad("wasted", 10)}  ${
      lpad("saved", 9)
    }`,
  );
  for (const f of top) {
    out.push(
      `  ${pad(f.path, w)}  ${lpad(String(f.reads), 5)}  ${lpad(String(f.repeats), 7)}  ${
        lpad(f.notJudgedReads === f.reads ? "not judged" : bytesInWords(f.wastedBytes), 10)
      }  ${lpad(bytesInWords(f.savedBytes), 9)}`,
    );
  }
  out.push(
    style.dim(
      "  wasted: in sessions without readcache, what it would not have sent (not judged: read " +
        "only in sessions that were not replayed); saved: in sessions with it, what it did not send",
    ),
  );
  return out;
}
