/**
 * `readcache savings [DIR|FILE ...]` (default: pi's sessions directory): over
 * many pi session files, what was read, what pi sent and what the read cache
 * sent or would have sent.
 *
 * - A session WITH the read cache (its read results carry
 *   `details.readcache`): what was sent is measured (the text of each read
 *   result); what pi's own `read` would have sent is the status estimate
 *   (`PlainReadEstimate`, SPEC §11.4).
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
import { parseReadCacheMeta, READ_MODES, type ReadMode } from "../src/core/meta.ts";
import type { ReplayEntry } from "../src/core/replay.ts";
import {
  BYTES_PER_TOKEN,
  bytesInWords,
  MODE_WORDS,
  PlainReadEstimate,
} from "../src/core/status.ts";
import { locateRead, resolveCall } from "../src/shell/read_service.ts";
import { savingsHtml } from "./savings_html.ts";
import {
  CliError,
  colorAllowed,
  EXIT_OK,
  EXIT_PROBLEM,
  EXIT_USAGE,
  messageOf,
  plural,
  printJson,
  Progress,
  stdoutStyle,
} from "./support/output.ts";
import { agentDir, readSessionFile, type SessionFile } from "./support/sessions.ts";

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
}

/**
 * Figures of one file (by its real path) over the sessions looked at.
 *
 * @example
 * ```ts
 * import type { FileSavings } from "./savings.ts";
 * const f: FileSavings = { path: "~/w/src/app.ts", reads: 3, repeats: 2, piBytes: 9000,
 *   readcacheBytes: 3100, wastedBytes: 5900, savedBytes: 0 };
 * ```
 */
export interface FileSavings {
  /** The file (under the home directory shown with `~`). */
  path: string;
  /** Successful reads of it. */
  reads: number;
  /** Reads after the first one in the same session. */
  repeats: number;
  /** What pi sent, or would have sent, for them. */
  piBytes: number;
  /** What the read cache sent, or would have sent. */
  readcacheBytes: number;
  /** In sessions without the read cache: bytes it would not have sent. */
  wastedBytes: number;
  /** In sessions with the read cache: bytes it did not send (estimate). */
  savedBytes: number;
}

/**
 * Figures of one session file.
 *
 * @example
 * ```ts
 * import type { SessionSavings } from "./savings.ts";
 * ```
 */
export interface SessionSavings {
  /** The session file. */
  file: string;
  /** The session id in its header. */
  id: string | null;
  /** The project directory in its header. */
  cwd: string | null;
  /** When it started (header timestamp). */
  started: string | null;
  /** True when its reads were answered by the read cache. */
  withReadcache: boolean;
  /** Successful `read` results (every branch). */
  reads: number;
  /** Read results that were images (their bytes are not counted). */
  images: number;
  /** Bytes pi sent (without the read cache: measured) or would have sent (with it: estimate). */
  piBytes: number;
  /** Bytes the read cache sent (measured) or would have sent (replayed). */
  readcacheBytes: number;
  /** Reads by how they were (or would have been) answered; `plain` is pi's own read, not cached. */
  byMode: Record<ReadMode | "plain", number>;
  /** Without the read cache: reads whose file content the session does not show. */
  unknown: { reads: number; bytes: number };
  /** Without the read cache: answers replayed in full, and how many equal pi's own text. */
  checked: { reads: number; matched: number };
  /** Per file. */
  files: FileSavings[];
}

const encoder = new TextEncoder();
const utf8 = (s: string) => encoder.encode(s).length;

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null ? v as Record<string, unknown> : undefined;
}

function tilde(path: string): string {
  const home = homedir();
  return path === home || path.startsWith(`${home}/`) ? `~${path.slice(home.length)}` : path;
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
  for (const e of session.entries) for (const [id, a] of readCallsOf(e)) args.set(id, a);
  const withReadcache = session.entries.some((e) =>
    parseReadCacheMeta(asRecord(readResult(e)?.details)?.readcache) !== undefined
  );
  const byMode = Object.fromEntries([...READ_MODES, "plain"].map((m) => [m, 0])) as Record<
    ReadMode | "plain",
    number
  >;
  const out: SessionSavings = {
    file: session.path,
    id: session.header?.id ?? null,
    cwd: session.header?.cwd ?? null,
    started: session.header?.timestamp ?? null,
    withReadcache,
    reads: 0,
    images: 0,
    piBytes: 0,
    readcacheBytes: 0,
    byMode,
    unknown: { reads: 0, bytes: 0 },
    checked: { reads: 0, matched: 0 },
    files: [],
  };
  const files = new Map<string, FileSavings>();
  const count = (key: string, pi: number, rc: number) => {
    let f = files.get(key);
    const first = f === undefined;
    f ??= {
      path: tilde(key),
      reads: 0,
      repeats: 0,
      piBytes: 0,
      readcacheBytes: 0,
      wastedBytes: 0,
      savedBytes: 0,
    };
    files.set(key, f);
    f.reads++;
    if (!first) f.repeats++;
    f.piBytes += pi;
    f.readcacheBytes += rc;
    if (withReadcache) f.savedBytes += pi - rc;
    else f.wastedBytes += pi - rc;
    out.piBytes += pi;
    out.readcacheBytes += rc;
  };

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
  out.files = [...files.values()];
  return out;
}

/** The `.jsonl` files under `path` (a file, or a directory searched recursively), sorted. */
async function jsonlFiles(path: string): Promise<string[]> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (e) {
    throw new CliError(
      `Cannot read ${path}: ${
        e instanceof Deno.errors.NotFound ? "no such file or directory" : messageOf(e)
      }. Pass pi session files or directories that hold them (default: pi's sessions directory).`,
      EXIT_USAGE,
    );
  }
  if (info.isFile) return [path];
  const out: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const p = join(dir, e.name);
      if (e.isDirectory) await walk(p);
      else if (e.isFile && e.name.endsWith(".jsonl")) out.push(p);
    }
  };
  await walk(path);
  return out.sort();
}

/**
 * Totals over the sessions looked at.
 *
 * @example
 * ```ts
 * import type { SavingsTotals } from "./savings.ts";
 * ```
 */
export interface SavingsTotals {
  /** Session files. */
  sessions: number;
  /** Of which answered by the read cache. */
  withReadcache: number;
  /** Successful reads. */
  reads: number;
  /** Bytes pi sent or would have sent. */
  piBytes: number;
  /** Bytes the read cache sent or would have sent. */
  readcacheBytes: number;
  /** `(piBytes - readcacheBytes) / 4`, rounded. */
  estimatedTokensSaved: number;
  /** Reads whose content is not known (sessions without the read cache). */
  unknown: { reads: number; bytes: number };
  /** Replayed full answers, and how many equal pi's own text. */
  checked: { reads: number; matched: number };
  /** Reads by how they were (or would have been) answered. */
  byMode: Record<ReadMode | "plain", number>;
}

/**
 * Sums the figures of many sessions.
 *
 * @example
 * ```ts
 * import { totalsOf } from "./savings.ts";
 * totalsOf([]).reads; // 0
 * ```
 */
export function totalsOf(sessions: readonly SessionSavings[]): SavingsTotals {
  const byMode = Object.fromEntries([...READ_MODES, "plain"].map((m) => [m, 0])) as Record<
    ReadMode | "plain",
    number
  >;
  const t: SavingsTotals = {
    sessions: sessions.length,
    withReadcache: 0,
    reads: 0,
    piBytes: 0,
    readcacheBytes: 0,
    estimatedTokensSaved: 0,
    unknown: { reads: 0, bytes: 0 },
    checked: { reads: 0, matched: 0 },
    byMode,
  };
  for (const s of sessions) {
    if (s.withReadcache) t.withReadcache++;
    t.reads += s.reads;
    t.piBytes += s.piBytes;
    t.readcacheBytes += s.readcacheBytes;
    t.unknown.reads += s.unknown.reads;
    t.unknown.bytes += s.unknown.bytes;
    t.checked.reads += s.checked.reads;
    t.checked.matched += s.checked.matched;
    for (const m of Object.keys(byMode) as (ReadMode | "plain")[]) byMode[m] += s.byMode[m];
  }
  t.estimatedTokensSaved = Math.max(
    0,
    Math.round((t.piBytes - t.readcacheBytes) / BYTES_PER_TOKEN),
  );
  return t;
}

/**
 * The files of many sessions merged by path, sorted by wasted bytes, then
 * saved bytes, then reads; the first `top`.
 *
 * @example
 * ```ts
 * import { topFiles } from "./savings.ts";
 * topFiles([], 10); // []
 * ```
 */
export function topFiles(sessions: readonly SessionSavings[], top: number): FileSavings[] {
  const merged = new Map<string, FileSavings>();
  for (const s of sessions) {
    for (const f of s.files) {
      const m = merged.get(f.path);
      if (m === undefined) merged.set(f.path, { ...f });
      else {
        m.reads += f.reads;
        m.repeats += f.repeats;
        m.piBytes += f.piBytes;
        m.readcacheBytes += f.readcacheBytes;
        m.wastedBytes += f.wastedBytes;
        m.savedBytes += f.savedBytes;
      }
    }
  }
  return [...merged.values()]
    .sort((a, b) =>
      b.wastedBytes - a.wastedBytes || b.savedBytes - a.savedBytes || b.reads - a.reads ||
      (a.path < b.path ? -1 : 1)
    )
    .slice(0, top);
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
 * Runs `readcache savings`; returns the exit code (1 when no session file
 * was found).
 *
 * @example
 * ```ts ignore
 * const code = await savingsCommand([], { top: 10 });
 * ```
 */
export async function savingsCommand(paths: string[], options: SavingsOptions): Promise<number> {
  const envDir = Deno.env.get("PI_CODING_AGENT_SESSION_DIR");
  const roots = paths.length > 0
    ? paths
    : [envDir ? resolve(envDir) : join(agentDir(), "sessions")];
  const files: string[] = [];
  for (const p of roots) {
    if (paths.length === 0) {
      try {
        await Deno.stat(p);
      } catch {
        throw new CliError(
          `No pi sessions directory at ${p}. Pass session files or directories, or set ` +
            "PI_CODING_AGENT_DIR when pi keeps its data elsewhere.",
          EXIT_PROBLEM,
        );
      }
    }
    files.push(...await jsonlFiles(p));
  }
  const sessions: SessionSavings[] = [];
  let skipped = 0;
  const progress = new Progress("session files", files.length);
  for (const f of files) {
    progress.tick();
    let s: SessionFile;
    try {
      s = await readSessionFile(f, EXIT_PROBLEM);
    } catch {
      skipped++;
      continue;
    }
    sessions.push(analyseSession(s));
  }
  progress.done();
  sessions.sort((a, b) =>
    (a.started ?? "") < (b.started ?? "") ? -1 : (a.started ?? "") > (b.started ?? "") ? 1 : 0
  );
  const totals = totalsOf(sessions);
  const top = topFiles(sessions, options.top);
  if (options.html !== undefined) {
    try {
      await Deno.writeTextFile(options.html, savingsHtml(sessions, totals, top));
    } catch (e) {
      throw new CliError(
        `Cannot write ${options.html}: ${messageOf(e)}. Pass a writable file path to --html.`,
        EXIT_PROBLEM,
      );
    }
  }
  if (options.json) {
    printJson({
      sessions: sessions.map(({ files: _files, ...s }) => s),
      totals,
      topFiles: top,
      skipped,
      html: options.html ?? null,
    });
    return sessions.length === 0 ? EXIT_PROBLEM : EXIT_OK;
  }
  const style = stdoutStyle();
  const color = colorAllowed(Deno.stdout);
  const out: string[] = [
    style.heading(
      `readcache savings: ${plural(sessions.length, "session file")} in ${roots.join(", ")}`,
    ),
  ];
  if (skipped > 0) out.push(`  (${plural(skipped, "file")} skipped: not pi session files)`);
  if (sessions.length === 0) {
    out.push("no pi session files found.");
    console.log(out.join("\n"));
    return EXIT_PROBLEM;
  }
  const names = sessions.map((s) => {
    const when = s.started === null ? "" : `${s.started.slice(0, 16).replace("T", " ")} `;
    const project = s.cwd === null ? "?" : s.cwd.split("/").filter((p) => p !== "").at(-1) ?? "/";
    const id = s.id === null ? "" : ` ${s.id.slice(-6)}`;
    return `${when}${project.length > 20 ? `${project.slice(0, 17)}...` : project}${id}`;
  });
  const nameWidth = Math.max(...names.map((n) => n.length), 7);
  out.push(
    "",
    `  ${pad("session", nameWidth)}  ${pad("readcache", 9)}  ${lpad("reads", 5)}  ${
      lpad("pi alone", 9)
    }  ${lpad("readcache", 9)}  readcache / pi`,
  );
  const widest = Math.max(...sessions.map((s) => s.piBytes), 1);
  for (const [i, s] of sessions.entries()) {
    const width = Math.max(1, Math.round((s.piBytes / widest) * 30));
    const less = s.piBytes > 0 ? Math.round((1 - s.readcacheBytes / s.piBytes) * 100) : 0;
    out.push(
      `  ${pad(names[i], nameWidth)}  ${pad(s.withReadcache ? "on" : "replayed", 9)}  ${
        lpad(String(s.reads), 5)
      }  ${lpad(bytesInWords(s.piBytes), 9)}  ${lpad(bytesInWords(s.readcacheBytes), 9)}  ${
        bar(s.readcacheBytes, s.piBytes, width, color)
      } ${less}% less`,
    );
  }
  out.push(
    "",
    style.heading("total") +
      `: ${plural(totals.reads, "read")}; pi ${bytesInWords(totals.piBytes)}, readcache ${
        bytesInWords(totals.readcacheBytes)
      }: ` +
      style.good(
        `${bytesInWords(Math.max(0, totals.piBytes - totals.readcacheBytes))} less, about ${
          totals.estimatedTokensSaved.toLocaleString("en-US")
        } tokens`,
      ),
  );
  const modes = ([...READ_MODES, "plain"] as const).filter((m) => totals.byMode[m] > 0)
    .map((m) => `${totals.byMode[m]} ${m === "plain" ? "served by pi itself" : MODE_WORDS[m]}`);
  out.push(`  reads: ${modes.join(", ")}`);
  const used = totals.withReadcache;
  const replayed = totals.sessions - used;
  if (used > 0) {
    out.push(
      `  ${plural(used, "session")} with readcache ("on"): what it sent is measured; what pi ` +
        "would have sent is an estimate (lines times bytes per line of the file's last full read)",
    );
  }
  if (replayed > 0) {
    out.push(
      `  ${
        plural(replayed, "session")
      } without readcache ("replayed"): what pi sent is measured; ` +
        "what readcache would have sent is its read decision replayed over the session's own reads",
    );
    out.push(
      `  check: ${totals.checked.matched} of ${totals.checked.reads} replayed answers sent in full ` +
        "equal pi's own text exactly",
    );
  }
  if (totals.unknown.reads > 0) {
    out.push(
      style.warn(
        `  cannot be known: ${plural(totals.unknown.reads, "read")} (${
          bytesInWords(totals.unknown.bytes)
        }) show part of a file whose whole content the session never showed before; ` +
          "they count as sent in full on both sides",
      ),
    );
  }
  if (top.length > 0) {
    out.push(
      "",
      style.heading("files by wasted bytes") + " (re-sent in full while the model held them)",
    );
    const w = Math.max(...top.map((f) => f.path.length), 4);
    out.push(
      `  ${pad("file", w)}  ${lpad("reads", 5)}  ${lpad("repeats", 7)}  ${lpad("wasted", 9)}  ${
        lpad("saved", 9)
      }`,
    );
    for (const f of top) {
      out.push(
        `  ${pad(f.path, w)}  ${lpad(String(f.reads), 5)}  ${lpad(String(f.repeats), 7)}  ${
          lpad(bytesInWords(f.wastedBytes), 9)
        }  ${lpad(bytesInWords(f.savedBytes), 9)}`,
      );
    }
    out.push(
      style.dim(
        "  wasted: in sessions without readcache, what it would not have sent; " +
          "saved: in sessions with it, what it did not send",
      ),
    );
  }
  if (options.html !== undefined) out.push("", `chart written to ${options.html}`);
  console.log(out.join("\n"));
  return EXIT_OK;
}
