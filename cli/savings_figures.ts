/**
 * The savings figures every host's reader fills in and every report renders
 * (`readcache savings`, its table and its HTML page): one session's figures
 * (`SessionSavings`), the counting of its reads (`readCounter`), the totals,
 * the files read most, the reasons a read is not judged, and the words the
 * table and the page share. Host-neutral: the pi, OpenCode and Claude Code
 * readers (`savings.ts`, `opencode_savings.ts`, `claude_savings.ts`,
 * `savings_replay.ts`) import it; it imports none of them.
 *
 * @module
 */
import { homedir } from "node:os";
import { READ_MODES, type ReadMode } from "../src/core/meta.ts";
import { BYTES_PER_TOKEN, bytesInWords } from "../src/core/status.ts";
import { plural } from "./support/output.ts";
import type { SessionFile } from "./support/sessions.ts";

/**
 * Why a read of a replayed session is not judged (left out of both sides of the figure).
 *
 * @example
 * ```ts
 * import { NOT_JUDGED } from "./savings_figures.ts";
 * NOT_JUDGED.unapplied;
 * ```
 */
export const NOT_JUDGED = {
  unapplied: "came after a shell command the replay cannot apply (a formatter, git checkout, " +
    "sed -i) where the model held lines of the file: what the cache would have held then is " +
    "not known",
  "replay-failed": "succeeded in the session but failed in the replay (the rebuilt file is " +
    "missing or is no file)",
  unseen: "showed part of a file whose whole content the transcript never showed before (the " +
    "Claude Code replay cannot rebuild it)",
  subagent: "were a Claude Code subagent's, whose transcript keeps none of the results the " +
    "replay rebuilds files from",
} as const;

/** A reason of {@linkcode NOT_JUDGED}. */
export type NotJudgedReason = keyof typeof NOT_JUDGED;

/**
 * Figures of one file (by its real path) over the sessions looked at.
 *
 * @example
 * ```ts
 * import type { FileSavings } from "./savings_figures.ts";
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
  /**
   * Reads of it in sessions that were not judged (recorded without the read cache and not
   * replayed): they count as sent in full on both sides, which says nothing about waste.
   */
  notJudgedReads?: number;
}

/**
 * Figures of one session file.
 *
 * @example
 * ```ts
 * import type { SessionSavings } from "./savings_figures.ts";
 * ```
 */
export interface SessionSavings {
  /** The session file (for OpenCode's database: `<database>#<sessionID>`). */
  file: string;
  /** Which agent wrote it (absent: pi). */
  host?: "pi" | "opencode" | "claude";
  /** The session id in its header. */
  id: string | null;
  /** The project directory in its header. */
  cwd: string | null;
  /** When it started (header timestamp). */
  started: string | null;
  /** True when its reads were answered by the read cache. */
  withReadcache: boolean;
  /**
   * True for a session without the read cache that could not be replayed (OpenCode: its read
   * output does not show the file exactly); its reads count as sent in full on both sides.
   */
  notReplayed?: boolean;
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
  /**
   * Without the read cache, how the read cache's side was worked out: `replay`, by bench:real's
   * replay through pi and the extension (cli/savings_replay.ts); `session`, by the read decision
   * over the session's own read results only (when that replay cannot run or skips the session).
   */
  estimate?: "replay" | "session" | "transcript";
  /** With `estimate: "session"`: why bench:real's replay was not used. */
  replaySkipped?: string;
  /** With `estimate: "replay"`: reads left out of both sides, by reason (`NOT_JUDGED`). */
  notJudged?: Partial<Record<NotJudgedReason, ReadsAndBytes>>;
  /**
   * With `estimate: "replay"` or `"transcript"`: short answers checked against what the
   * session's outputs showed the model.
   */
  safety?: {
    checked: number;
    violations: number;
    /** Short answers after a rewind of the session in its file (the check follows one line). */
    notChecked?: number;
  };
  /** Per file. */
  files: FileSavings[];
}

/** A count of reads and their bytes. */
type ReadsAndBytes = { reads: number; bytes: number };

/**
 * A path under the home directory shown with `~`.
 *
 * @example
 * ```ts ignore
 * tilde("/home/me/w/a.ts"); // "~/w/a.ts"
 * ```
 */
export function tilde(path: string): string {
  const home = homedir();
  return path === home || path.startsWith(`${home}/`) ? `~${path.slice(home.length)}` : path;
}

/**
 * The figures of one session before any read is counted: `head` names it,
 * every count is 0 and `byMode` has every mode.
 *
 * @example
 * ```ts
 * import { emptySessionSavings } from "./savings_figures.ts";
 * const s = emptySessionSavings({ file: "s.jsonl", host: "pi", id: null, cwd: null, started: null,
 *   withReadcache: false, notReplayed: false });
 * s.byMode.plain; // 0
 * ```
 */
export function emptySessionSavings(
  head:
    & Pick<
      SessionSavings,
      "file" | "host" | "id" | "cwd" | "started" | "withReadcache" | "notReplayed"
    >
    & { reads?: number },
): SessionSavings {
  const byMode = Object.fromEntries([...READ_MODES, "plain"].map((m) => [m, 0])) as Record<
    ReadMode | "plain",
    number
  >;
  return {
    reads: 0,
    ...head,
    images: 0,
    piBytes: 0,
    readcacheBytes: 0,
    byMode,
    unknown: { reads: 0, bytes: 0 },
    checked: { reads: 0, matched: 0 },
    files: [],
  };
}

/**
 * What names a pi session in its figures (file, id, project, start), from its header.
 *
 * @example
 * ```ts
 * import { piSessionHead } from "./savings_figures.ts";
 * piSessionHead({ path: "/s.jsonl", mtimeMs: 0, bytes: 0, header: undefined, entries: [] }, false).cwd;
 * // null
 * ```
 */
export function piSessionHead(
  session: SessionFile,
  withReadcache: boolean,
): Parameters<typeof emptySessionSavings>[0] {
  return {
    file: session.path,
    host: "pi",
    id: session.header?.id ?? null,
    cwd: session.header?.cwd ?? null,
    started: session.header?.timestamp ?? null,
    withReadcache,
    notReplayed: false,
  };
}

/**
 * Counts reads into a session's figures and into the row of their file:
 * `count(key, pi, rc)` adds one read of `key` for which pi sent (or would
 * have sent) `pi` bytes and the read cache `rc`; `done()` puts the rows into
 * `out.files`, in the order the files were first read.
 *
 * @example
 * ```ts
 * import { emptySessionSavings, readCounter } from "./savings_figures.ts";
 * const out = emptySessionSavings({ file: "s.jsonl", host: "pi", id: null, cwd: null,
 *   started: null, withReadcache: true, notReplayed: false });
 * const c = readCounter(out);
 * c.count("/w/a.ts", 900, 30);
 * c.done();
 * out.files[0].savedBytes; // 870
 * ```
 */
export function readCounter(
  out: SessionSavings,
): { count(key: string, pi: number, rc: number): void; done(): void } {
  const files = new Map<string, FileSavings>();
  return {
    count(key, pi, rc) {
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
      if (out.withReadcache) f.savedBytes += pi - rc;
      else f.wastedBytes += pi - rc;
      if (out.notReplayed === true) f.notJudgedReads = (f.notJudgedReads ?? 0) + 1;
      out.piBytes += pi;
      out.readcacheBytes += rc;
    },
    done() {
      out.files = [...files.values()];
    },
  };
}

/**
 * Totals over the sessions looked at.
 *
 * @example
 * ```ts
 * import type { SavingsTotals } from "./savings_figures.ts";
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
  /** Sessions by agent. */
  hosts: { pi: number; opencode: number; claude: number };
  /** Sessions without the read cache that could not be replayed, and their reads and bytes. */
  notReplayed: { sessions: number; reads: number; bytes: number };
  /** Claude Code transcripts without the read cache: not replayed (yet). */
  notReplayedClaude: { sessions: number; reads: number; bytes: number };
  /** Sessions without the read cache estimated by bench:real's replay, and by their own reads. */
  estimates: { replay: number; session: number; transcript: number };
  /** Reads of replayed sessions left out of both sides, by reason. */
  notJudged: Partial<Record<NotJudgedReason, ReadsAndBytes>>;
  /** Cached answers of replayed sessions checked against the model's context. */
  safety: { checked: number; violations: number; notChecked: number };
  /** Why bench:real's replay was not used for some sessions (one line per reason). */
  replaySkipped: string[];
}

/**
 * Sums the figures of many sessions.
 *
 * @example
 * ```ts
 * import { totalsOf } from "./savings_figures.ts";
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
    hosts: { pi: 0, opencode: 0, claude: 0 },
    notReplayed: { sessions: 0, reads: 0, bytes: 0 },
    notReplayedClaude: { sessions: 0, reads: 0, bytes: 0 },
    estimates: { replay: 0, session: 0, transcript: 0 },
    notJudged: {},
    safety: { checked: 0, violations: 0, notChecked: 0 },
    replaySkipped: [],
  };
  for (const s of sessions) {
    if (s.estimate !== undefined) t.estimates[s.estimate]++;
    if (s.replaySkipped !== undefined && !t.replaySkipped.includes(s.replaySkipped)) {
      t.replaySkipped.push(s.replaySkipped);
    }
    const judged = Object.entries(s.notJudged ?? {}) as [NotJudgedReason, ReadsAndBytes][];
    for (const [k, v] of judged) {
      const n = t.notJudged[k] ??= { reads: 0, bytes: 0 };
      n.reads += v.reads;
      n.bytes += v.bytes;
    }
    t.safety.checked += s.safety?.checked ?? 0;
    t.safety.violations += s.safety?.violations ?? 0;
    t.safety.notChecked += s.safety?.notChecked ?? 0;
    if (s.withReadcache) t.withReadcache++;
    t.hosts[s.host ?? "pi"]++;
    if (s.notReplayed) {
      const n = s.host === "claude" ? t.notReplayedClaude : t.notReplayed;
      n.sessions++;
      n.reads += s.reads;
      n.bytes += s.piBytes;
    }
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
 * Adds the figures of `from` to `into`, a file's figures of the same path (reads, repeats,
 * bytes, reads not judged).
 *
 * @example
 * ```ts
 * import { addFileSavings, type FileSavings } from "./savings_figures.ts";
 * const f = (reads: number): FileSavings => ({ path: "a.ts", reads, repeats: 0, piBytes: 10,
 *   readcacheBytes: 4, wastedBytes: 0, savedBytes: 6 });
 * const into = f(1);
 * addFileSavings(into, f(2)); // into.reads === 3, into.piBytes === 20
 * ```
 */
export function addFileSavings(into: FileSavings, from: FileSavings): void {
  into.reads += from.reads;
  into.repeats += from.repeats;
  into.piBytes += from.piBytes;
  into.readcacheBytes += from.readcacheBytes;
  into.wastedBytes += from.wastedBytes;
  into.savedBytes += from.savedBytes;
  if (from.notJudgedReads !== undefined) {
    into.notJudgedReads = (into.notJudgedReads ?? 0) + from.notJudgedReads;
  }
}

/**
 * The files of many sessions merged by path, sorted by wasted bytes, then
 * saved bytes, then reads; the first `top`.
 *
 * @example
 * ```ts
 * import { topFiles } from "./savings_figures.ts";
 * topFiles([], 10); // []
 * ```
 */
export function topFiles(sessions: readonly SessionSavings[], top: number): FileSavings[] {
  const merged = new Map<string, FileSavings>();
  for (const s of sessions) {
    for (const f of s.files) {
      const m = merged.get(f.path);
      if (m === undefined) merged.set(f.path, { ...f });
      else addFileSavings(m, f);
    }
  }
  return [...merged.values()]
    .sort((a, b) =>
      b.wastedBytes - a.wastedBytes || b.savedBytes - a.savedBytes || b.reads - a.reads ||
      (a.path < b.path ? -1 : 1)
    )
    .slice(0, top);
}

/**
 * The name of a session in tables and charts: the date and minute it started
 * (UTC, from its header), its project (the last part of its directory) and
 * the end of its id, like `2026-11-23 15:07 app 245b15`.
 *
 * @example
 * ```ts
 * import { sessionLabel } from "./savings_figures.ts";
 * sessionLabel({ started: "2026-11-23T15:07:58.351Z", cwd: "/w/app", id: "01a2-ba2de1245b15" });
 * // "2026-11-23 15:07 app 245b15"
 * sessionLabel({ started: null, cwd: "/w/app", id: "ses_df456e613ffe", host: "opencode" });
 * // "app 613ffe (OpenCode)"
 * ```
 */
export function sessionLabel(
  s: Pick<SessionSavings, "started" | "cwd" | "id"> & { host?: SessionSavings["host"] },
): string {
  const when = s.started === null ? "" : `${s.started.slice(0, 16).replace("T", " ")} `;
  const project = s.cwd === null ? "?" : s.cwd.split("/").filter((p) => p !== "").at(-1) ?? "/";
  const id = s.id === null ? "" : ` ${s.id.slice(-6)}`;
  const host = s.host === "opencode" ? " (OpenCode)" : s.host === "claude" ? " (Claude Code)" : "";
  return `${when}${project.length > 20 ? `${project.slice(0, 17)}...` : project}${id}${host}`;
}

/**
 * What the read cache sent as a share of what pi sent (`served`, in whole
 * percent) and what it saved (`saved`, `100 - served`; negative when it sent
 * more); `undefined` when pi sent nothing.
 *
 * @example
 * ```ts
 * import { shareOfPi } from "./savings_figures.ts";
 * shareOfPi({ piBytes: 200, readcacheBytes: 50 }); // { served: 25, saved: 75 }
 * ```
 */
export function shareOfPi(
  s: Pick<SessionSavings, "piBytes" | "readcacheBytes">,
): { served: number; saved: number } | undefined {
  if (s.piBytes <= 0) return undefined;
  const served = Math.round((s.readcacheBytes / s.piBytes) * 100);
  return { served, saved: 100 - served };
}

/**
 * A saving in percent, in words: `47% less`, or `5% more` when the read
 * cache sent more than pi.
 *
 * @example
 * ```ts
 * import { lessWords } from "./savings_figures.ts";
 * lessWords(47); // "47% less"
 * ```
 */
export function lessWords(saved: number): string {
  return saved >= 0 ? `${saved}% less` : `${-saved}% more`;
}

/**
 * How the agents of a set of sessions are named in the savings report: `pi`,
 * `OpenCode`, or `pi or OpenCode`.
 *
 * @example
 * ```ts
 * import { hostWords, totalsOf } from "./savings_figures.ts";
 * hostWords(totalsOf([])); // "pi"
 * ```
 */
export function hostWords(totals: Pick<SavingsTotals, "hosts">): string {
  const { pi, opencode, claude } = totals.hosts;
  const names = [
    ...(pi > 0 ? ["pi"] : []),
    ...(opencode > 0 ? ["OpenCode"] : []),
    ...(claude > 0 ? ["Claude Code"] : []),
  ];
  return names.length === 0 ? "pi" : names.join(" or ");
}

/**
 * The reads of replayed sessions left out of both sides, with the reasons, in words; `undefined`
 * when there are none.
 *
 * @example
 * ```ts
 * import { notJudgedWords, totalsOf } from "./savings_figures.ts";
 * notJudgedWords(totalsOf([])); // undefined
 * ```
 */
export function notJudgedWords(totals: Pick<SavingsTotals, "notJudged">): string | undefined {
  const nj = Object.entries(totals.notJudged) as [NotJudgedReason, ReadsAndBytes][];
  if (nj.length === 0) return undefined;
  const reads = nj.reduce((a, [, n]) => a + n.reads, 0);
  const bytes = nj.reduce((a, [, n]) => a + n.bytes, 0);
  return `not judged: ${plural(reads, "read")} (${bytesInWords(bytes)}), left out of both ` +
    `sides: ${nj.map(([k, n]) => `${n.reads} ${NOT_JUDGED[k]}`).join("; ")}`;
}
