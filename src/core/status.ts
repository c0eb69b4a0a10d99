/**
 * The read cache status of a branch (`/readcache-status` in pi and
 * `readcache status` on the command line): what the model holds now, how
 * reads were served, and an estimate of what was saved, plus the plain-words
 * report both print. Derived from the branch alone (no global counters),
 * pure, and read-only.
 *
 * Specified by SPEC.md §11.4.
 *
 * @module
 */
import { isAbsolute, relative } from "node:path";
import type { InFlightRead } from "./knowledge.ts";
import {
  isAnchorMode,
  parseEditMeta,
  parseReadCacheMeta,
  READ_MODES,
  type ReadCacheMetaV1,
  type ReadMode,
} from "./meta.ts";
import { type ModeCounts, replayBranch, type ReplayEntry } from "./replay.ts";
import type { StoreProblem, StoreStats } from "./object_store.ts";
import { FULL_SCOPE, parseScopeKey, type ScopeKey } from "./scope.ts";
import { formatSize } from "./truncate.ts";

/** Bytes per token used by the savings estimate. */
export const BYTES_PER_TOKEN = 4;

/**
 * Status of one branch.
 *
 * @example
 * ```ts
 * import { branchStatus } from "@readcache/core/rules";
 * const s = branchStatus([]);
 * s.files.length; // 0
 * ```
 */
export interface BranchStatus {
  /** Files with trust, each with the scopes held (`full` or `r:<start>:<end>`). */
  files: { pathKey: string; scopes: string[] }[];
  /** Entries in the replay window (after the latest compaction). */
  windowSize: number;
  /** Id of the compaction the window starts after, `null` when none. */
  compactionId: string | null;
  /** Valid read events in the window, by mode. */
  modeCounts: ModeCounts;
  /** Reads served in this process but not yet in the session. */
  inFlight: number;
  /** Bytes of output served by the reads in the window. */
  servedBytes: number;
  /**
   * Estimated bytes the same reads would have cost as plain reads: for
   * `unchanged`, `unchanged_range` and `diff` reads, the lines in scope times
   * the bytes per line of the latest anchor read of that file in the window.
   */
  estimatedBaselineBytes: number;
  /** `(estimatedBaselineBytes - servedBytes) / BYTES_PER_TOKEN`, rounded, at least 0. */
  estimatedTokensSaved: number;
}

/**
 * Computes the status of a branch (root to leaf) plus the in-flight overlay.
 * Pure.
 *
 * @example
 * ```ts
 * import { branchStatus } from "@readcache/core/rules";
 * const meta = { v: 1, pathKey: "/a", scopeKey: "full", servedHash: "h", mode: "full",
 *   totalLines: 10, rangeStart: 1, rangeEnd: 10, bytes: 400 };
 * const s = branchStatus([
 *   { id: "r1", parentId: null, kind: "read", meta },
 *   { id: "r2", parentId: "r1", kind: "read", meta: { ...meta, mode: "unchanged", baseHash: "h", bytes: 40 } },
 * ]);
 * s.estimatedTokensSaved; // 90
 * ```
 */
export function branchStatus(
  branch: readonly ReplayEntry[],
  inFlight: readonly InFlightRead[] = [],
): BranchStatus {
  const snap = replayBranch(branch);
  const estimate = new PlainReadEstimate();
  let served = 0;
  let baseline = 0;
  for (let i = snap.boundary.startIndex; i < branch.length; i++) {
    const e = branch[i];
    if (e.kind !== "read") continue;
    const meta = parseReadCacheMeta(e.meta);
    if (!meta) continue;
    served += meta.bytes;
    baseline += estimate.add(meta);
  }
  const files = Object.entries(snap.trust).map(([pathKey, t]) => ({
    pathKey,
    scopes: [...(t.full ? ["full"] : []), ...Object.keys(t.ranges).sort()],
  })).sort((a, b) => a.pathKey < b.pathKey ? -1 : a.pathKey > b.pathKey ? 1 : 0);
  return {
    files,
    windowSize: snap.windowSize,
    compactionId: snap.boundary.compactionId,
    modeCounts: snap.modeCounts,
    inFlight: inFlight.length,
    servedBytes: served,
    estimatedBaselineBytes: baseline,
    estimatedTokensSaved: Math.max(0, Math.round((baseline - served) / BYTES_PER_TOKEN)),
  };
}

/**
 * Renders a status report as plain text. `store` is the object store's
 * statistics, or a message saying why they are not available.
 *
 * @example
 * ```ts
 * import { branchStatus, formatBranchStatus } from "@readcache/core/rules";
 * console.log(formatBranchStatus(branchStatus([]), { objects: 0, bytes: 0 }));
 * ```
 */
export function formatBranchStatus(status: BranchStatus, store: StoreStats | string): string {
  const lines: string[] = ["readcache status (active branch)"];
  const since = status.compactionId === null
    ? "session start"
    : `compaction ${status.compactionId}`;
  lines.push(`replay window: ${status.windowSize} entries since ${since}`);
  lines.push(
    `reads by mode: ${READ_MODES.map((m) => `${m} ${status.modeCounts[m]}`).join(", ")}`,
  );
  if (status.inFlight > 0) lines.push(`in flight (not yet in the session): ${status.inFlight}`);
  lines.push(
    `served ${formatSize(status.servedBytes)} for an estimated ${
      formatSize(status.estimatedBaselineBytes)
    } of plain reads: about ${status.estimatedTokensSaved} tokens saved (estimate, ${BYTES_PER_TOKEN} bytes per token)`,
  );
  lines.push(
    typeof store === "string"
      ? `object store: ${store}`
      : `object store: ${store.objects} objects, ${formatSize(store.bytes)}`,
  );
  if (typeof store !== "string" && store.problem !== undefined) {
    const p = store.problem;
    lines.push(`object store problem: ${p.path} ${p.what}; reads are served in full meanwhile.`);
    lines.push(`  fix: ${p.fix}`);
  }
  if (status.files.length === 0) lines.push("tracked files: none");
  else {
    lines.push(`tracked files: ${status.files.length}`);
    for (const f of status.files) lines.push(`  ${f.pathKey}  [${f.scopes.join(", ")}]`);
  }
  return lines.join("\n");
}

/**
 * The estimate of what pi's own `read` would have sent for reads answered by
 * the read cache (SPEC §11.4): a read that sent content (`full`, or sent in
 * full again) costs its own bytes; an answer that relied on earlier content
 * (`unchanged`, a range marked unchanged, a diff) is charged the lines it
 * covers times the bytes per line of the latest read of that file that sent
 * content, and at least its own bytes. Feed reads in session order.
 *
 * @example
 * ```ts
 * import { PlainReadEstimate } from "@readcache/core/rules";
 * const est = new PlainReadEstimate();
 * const meta = { v: 1, pathKey: "/a", scopeKey: "full", servedHash: "h", mode: "full",
 *   totalLines: 10, rangeStart: 1, rangeEnd: 10, bytes: 400 } as const;
 * est.add(meta); // 400
 * est.add({ ...meta, mode: "unchanged", baseHash: "h", bytes: 30 }); // 400
 * ```
 */
export class PlainReadEstimate {
  readonly #perLine = new Map<string, number>();

  /** Adds one read; returns the bytes pi's own `read` would have sent for it (estimate). */
  add(meta: ReadCacheMetaV1): number {
    const lines = meta.rangeEnd - meta.rangeStart + 1;
    if (isAnchorMode(meta.mode)) {
      this.#perLine.set(meta.pathKey, meta.bytes / lines);
      return meta.bytes;
    }
    return Math.max(meta.bytes, Math.round((this.#perLine.get(meta.pathKey) ?? 0) * lines));
  }

  /** The model wrote `bytes` in `lines` lines to the file (SPEC §5.8): its bytes per line. */
  wrote(pathKey: string, bytes: number, lines: number): void {
    if (lines > 0) this.#perLine.set(pathKey, bytes / lines);
  }
}

/**
 * Reads of a list of session entries, by how they were served, with the bytes
 * sent and the estimate of what pi's own `read` would have sent.
 *
 * @example
 * ```ts
 * import { tallyReads } from "@readcache/core/rules";
 * const t = tallyReads([]);
 * t.reads; // 0
 * ```
 */
export interface ReadTally {
  /** `read` results counted: those with read cache metadata plus `uncached`. */
  reads: number;
  /** Reads with valid read cache metadata, by mode. */
  byMode: ModeCounts;
  /** Reads without read cache metadata (pi's own read: images, secret files, pi's errors, or no readcache). */
  uncached: number;
  /** Bytes sent by the reads with metadata. */
  servedBytes: number;
  /** Estimated bytes pi's own `read` would have sent for the same reads ({@linkcode PlainReadEstimate}). */
  estimatedPlainBytes: number;
  /** `(estimatedPlainBytes - servedBytes) / BYTES_PER_TOKEN`, rounded, at least 0. */
  estimatedTokensSaved: number;
}

/**
 * Counts the reads among `entries` (every entry given, in order: pass a whole
 * branch, or every entry of a session file, compactions included; nothing is
 * skipped). Pure.
 *
 * @example
 * ```ts
 * import { tallyReads } from "@readcache/core/rules";
 * const meta = { v: 1, pathKey: "/a", scopeKey: "full", servedHash: "h", mode: "full",
 *   totalLines: 10, rangeStart: 1, rangeEnd: 10, bytes: 400 };
 * const t = tallyReads([
 *   { id: "r1", parentId: null, kind: "read", meta },
 *   { id: "c1", parentId: "r1", kind: "compaction" },
 *   { id: "r2", parentId: "c1", kind: "read", meta: { ...meta, mode: "unchanged", baseHash: "h", bytes: 40 } },
 * ]);
 * t.byMode.unchanged; // 1
 * t.estimatedTokensSaved; // 90
 * ```
 */
export function tallyReads(entries: readonly ReplayEntry[]): ReadTally {
  const byMode = Object.fromEntries(READ_MODES.map((m) => [m, 0])) as ModeCounts;
  const estimate = new PlainReadEstimate();
  let uncached = 0;
  let served = 0;
  let plain = 0;
  for (const e of entries) {
    if (e.kind === "wrote" && e.bytes !== undefined && e.totalLines !== undefined) {
      estimate.wrote(e.call.pathKey, e.bytes, e.totalLines);
    }
    if (e.kind !== "read") continue;
    const meta = e.meta === undefined ? undefined : parseReadCacheMeta(e.meta);
    if (meta === undefined) {
      uncached++;
      continue;
    }
    byMode[meta.mode]++;
    served += meta.bytes;
    plain += estimate.add(meta);
  }
  const counted = READ_MODES.reduce((n, m) => n + byMode[m], 0);
  return {
    reads: counted + uncached,
    byMode,
    uncached,
    servedBytes: served,
    estimatedPlainBytes: plain,
    estimatedTokensSaved: Math.max(0, Math.round((plain - served) / BYTES_PER_TOKEN)),
  };
}

/**
 * One part of a file the model holds now: the whole file or a line range.
 *
 * @example
 * ```ts
 * import type { HeldPart } from "@readcache/core/rules";
 * const part: HeldPart = { pathKey: "/w/src/app.ts", scope: "r:50:60", start: 50, end: 60, totalLines: 200 };
 * ```
 */
export interface HeldPart {
  /** Canonical identity of the file. */
  pathKey: string;
  /** `full`, or `r:<start>:<end>`. */
  scope: ScopeKey;
  /** First line held. */
  start: number;
  /** Last line held (for the whole file: its last line). */
  end: number;
  /** Lines of the file when the model was shown it. */
  totalLines: number;
}

/**
 * What the model holds now on a branch (root to leaf): every trust slot left
 * after the latest compaction, as whole files and line ranges, sorted by file
 * then by first line (the whole file first). Pure.
 *
 * @example
 * ```ts
 * import { heldParts } from "@readcache/core/rules";
 * const meta = { v: 1, pathKey: "/w/a", scopeKey: "full", servedHash: "h", mode: "full",
 *   totalLines: 10, rangeStart: 1, rangeEnd: 10, bytes: 40 };
 * heldParts([{ id: "r1", parentId: null, kind: "read", meta }]);
 * // [{ pathKey: "/w/a", scope: "full", start: 1, end: 10, totalLines: 10 }]
 * ```
 */
export function heldParts(branch: readonly ReplayEntry[]): HeldPart[] {
  const snap = replayBranch(branch);
  const lines = new Map<string, number>();
  for (let i = snap.boundary.startIndex; i < branch.length; i++) {
    const e = branch[i];
    const meta = e.kind === "read" ? parseReadCacheMeta(e.meta) : undefined;
    if (meta) lines.set(`${meta.pathKey}\u0000${meta.servedHash}`, meta.totalLines);
    if (e.kind === "wrote" && e.totalLines !== undefined) {
      lines.set(`${e.call.pathKey}\u0000${e.hash}`, e.totalLines);
    }
    const edit = e.kind === "changed" ? parseEditMeta(e.meta) : undefined;
    if (edit) lines.set(`${edit.pathKey}\u0000${edit.servedHash}`, edit.totalLines);
  }
  const out: HeldPart[] = [];
  for (const [pathKey, t] of Object.entries(snap.trust)) {
    const total = (hash: string) => lines.get(`${pathKey}\u0000${hash}`) ?? 0;
    if (t.full) {
      const n = total(t.full.hash);
      out.push({ pathKey, scope: FULL_SCOPE, start: 1, end: n, totalLines: n });
    }
    for (const [key, slot] of Object.entries(t.ranges)) {
      const r = parseScopeKey(key);
      if (r === undefined || r === FULL_SCOPE) continue;
      out.push({
        pathKey,
        scope: key as ScopeKey,
        start: r.start,
        end: r.end,
        totalLines: total(slot.hash),
      });
    }
  }
  return out.sort((a, b) =>
    a.pathKey < b.pathKey
      ? -1
      : a.pathKey > b.pathKey
      ? 1
      : (a.scope === FULL_SCOPE ? 0 : a.start) - (b.scope === FULL_SCOPE ? 0 : b.start)
  );
}

/**
 * How the next read of a part the model holds would be answered, as the
 * decision would answer it now (`reason` is the decision's reason, or
 * `missing`, `not_a_regular_file`, `too_large`, `image`, `error` when the
 * file cannot be read by the cache).
 *
 * @example
 * ```ts
 * import type { NextRead } from "@readcache/core/rules";
 * const next: NextRead = { mode: "unchanged", reason: "hash_match", bytes: 32, plainBytes: 1666 };
 * ```
 */
export interface NextRead {
  /** The mode it would be served with; `null` for pi's own plain read (nothing cached). */
  mode: ReadMode | null;
  /** Why. */
  reason: string;
  /** Bytes the answer would have. */
  bytes?: number;
  /** Bytes pi's own `read` would send for the same request now. */
  plainBytes?: number;
  /** For a diff: lines added plus removed. */
  changedLines?: number;
  /** For `error`: what went wrong. */
  error?: string;
}

/**
 * A status report, as `/readcache-status` and `readcache status` print it.
 *
 * @example
 * ```ts
 * import { formatStatusReport, type StatusReport, tallyReads } from "@readcache/core/rules";
 * const report: StatusReport = { cwd: "/w", branchEntries: 0, compactions: 0, held: [],
 *   branch: tallyReads([]), store: { path: "/w/.pi/readcache", objects: 0, bytes: 0 } };
 * formatStatusReport(report);
 * ```
 */
export interface StatusReport {
  /** The session file, when known. */
  sessionFile?: string;
  /** The project directory (paths inside it are shown relative to it). */
  cwd: string;
  /** Entries on the active branch (root to leaf). */
  branchEntries: number;
  /** Compactions on the active branch. */
  compactions: number;
  /** What the model holds now, with the next read of each part when known. */
  held: (HeldPart & { next?: NextRead })[];
  /** Reads answered in this process and not yet saved in the session. */
  inFlight?: number;
  /** Reads on the active branch, root to leaf (across compactions). */
  branch: ReadTally;
  /** Reads in the whole session file (every branch), when known. */
  session?: ReadTally;
  /** The object store: statistics, or why they are not available. */
  store: StoreStats & { path: string } | { path: string; error: string };
}

/**
 * How text is highlighted (colour on a terminal); every function returns its
 * argument unchanged in {@linkcode PLAIN_STYLE}.
 *
 * @example
 * ```ts
 * import type { TextStyle } from "@readcache/core/rules";
 * const loud: TextStyle = { heading: (s) => s.toUpperCase(), good: (s) => s, warn: (s) => s,
 *   bad: (s) => s, dim: (s) => s };
 * ```
 */
export interface TextStyle {
  /** Section headings. */
  heading(s: string): string;
  /** Something saved or fine. */
  good(s: string): string;
  /** Something sent in full or worth a look. */
  warn(s: string): string;
  /** A problem. */
  bad(s: string): string;
  /** Secondary detail. */
  dim(s: string): string;
}

const same = (s: string): string => s;

/** No highlighting. */
export const PLAIN_STYLE: TextStyle = Object.freeze({
  heading: same,
  good: same,
  warn: same,
  bad: same,
  dim: same,
});

/**
 * A byte count in words: `871 bytes`, `1.6 KB`, `2.3 MB` (1 KB = 1024 bytes).
 *
 * @example
 * ```ts
 * import { bytesInWords } from "@readcache/core/rules";
 * bytesInWords(1666); // "1.6 KB"
 * ```
 */
export function bytesInWords(bytes: number): string {
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? "byte" : "bytes"}`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * The path to show for a file: relative to `cwd` when inside it, else absolute.
 *
 * @example
 * ```ts
 * import { shownPath } from "@readcache/core/rules";
 * shownPath("/w/src/app.ts", "/w"); // "src/app.ts"
 * shownPath("/etc/hosts", "/w"); // "/etc/hosts"
 * ```
 */
export function shownPath(pathKey: string, cwd: string): string {
  const rel = relative(cwd, pathKey);
  return rel === "" || rel === ".." || rel.startsWith("../") || isAbsolute(rel) ? pathKey : rel;
}

/**
 * What the model holds of a file, in words.
 *
 * @example
 * ```ts
 * import { describeHeld } from "@readcache/core/rules";
 * describeHeld("src/b.ts", { scope: "full", start: 1, end: 120, totalLines: 120 });
 * // "the whole of src/b.ts (120 lines)"
 * describeHeld("src/app.ts", { scope: "r:50:60", start: 50, end: 60, totalLines: 200 });
 * // "lines 50-60 of src/app.ts"
 * ```
 */
export function describeHeld(
  path: string,
  part: Pick<HeldPart, "scope" | "start" | "end" | "totalLines">,
): string {
  if (part.scope === FULL_SCOPE) {
    return `the whole of ${path} (${part.totalLines} ${part.totalLines === 1 ? "line" : "lines"})`;
  }
  return part.start === part.end
    ? `line ${part.start} of ${path}`
    : `lines ${part.start}-${part.end} of ${path}`;
}

/** Why a read is sent in full again, by decision reason. */
const FULL_AGAIN_BECAUSE: Record<string, string> = {
  base_missing: "the stored copy to compare with is missing or damaged",
  newer_view_differs: "the model has since been shown other text for some of these lines",
  name_not_seen: "the model read this file under another name",
  range_slice_changed: "these lines changed",
  diff_too_large_file: "the file is too large to compare",
  diff_not_useful: "the changes are too large for a diff to help",
  diff_payload_truncated: "the diff would be cut off",
  no_base: "the model holds no earlier copy",
  bypass: "asked for in full",
};

/** Why pi's own read would serve it, by reason. */
const PLAIN_BECAUSE: Record<string, string> = {
  sensitive_path: "a secret file, never cached",
  not_utf8: "not UTF-8 text",
  binary: "binary content",
  nothing_shown: "no line fits in pi's output limit",
  not_a_regular_file: "not a regular file",
  too_large: "larger than the cache's size limit",
  image: "an image",
};

/**
 * The next read of a held part, in words.
 *
 * @example
 * ```ts
 * import { describeNextRead } from "@readcache/core/rules";
 * describeNextRead({ mode: "unchanged", reason: "hash_match", bytes: 32, plainBytes: 1666 });
 * // 'a short "unchanged" note (32 bytes instead of 1.6 KB)'
 * ```
 */
export function describeNextRead(next: NextRead): string {
  const sizes = next.bytes !== undefined && next.plainBytes !== undefined
    ? ` (${bytesInWords(next.bytes)} instead of ${bytesInWords(next.plainBytes)})`
    : "";
  const inFull = next.plainBytes !== undefined ? ` (${bytesInWords(next.plainBytes)})` : "";
  switch (next.mode) {
    case "unchanged":
      return `a short "unchanged" note${sizes}`;
    case "unchanged_range":
      return next.reason === "range_slice_unchanged"
        ? `a short "unchanged" note: these lines are the same, the file changed elsewhere${sizes}`
        : `a short "unchanged" note${sizes}`;
    case "diff": {
      const n = next.changedLines;
      const what = n === undefined ? "" : ` of ${n} added or removed ${n === 1 ? "line" : "lines"}`;
      return `only the changes, as a diff${what}${sizes}`;
    }
    case "partial":
      return `only the lines not held, the others marked unchanged${sizes}`;
    case "full":
    case "baseline_fallback":
      return `in full again${inFull}: ${FULL_AGAIN_BECAUSE[next.reason] ?? next.reason}`;
    default:
      if (next.reason === "missing") return "an error: the file no longer exists";
      if (next.reason === "error") return `an error: ${next.error ?? "the file cannot be read"}`;
      return `in full by pi itself${inFull}: ${PLAIN_BECAUSE[next.reason] ?? next.reason}`;
  }
}

/** Plain words for each way a read was answered (human output; `--json` keeps the mode names). */
export const MODE_WORDS: Readonly<Record<ReadMode, string>> = Object.freeze({
  full: "sent in full",
  unchanged: 'answered "unchanged"',
  unchanged_range: 'answered "unchanged" for a line range',
  diff: "answered with a diff",
  baseline_fallback: "sent in full again (no safe short answer)",
  partial: "answered in part (held lines marked, the others sent)",
});

/**
 * The reads of a tally by how they were answered, in words (modes with no
 * read are left out).
 *
 * @example
 * ```ts
 * import { describeReads, tallyReads } from "@readcache/core/rules";
 * describeReads(tallyReads([])); // "no reads"
 * ```
 */
export function describeReads(t: ReadTally): string {
  if (t.reads === 0) return "no reads";
  const parts = READ_MODES.filter((m) => t.byMode[m] > 0).map((m) =>
    `${t.byMode[m]} ${MODE_WORDS[m]}`
  );
  if (t.uncached > 0) parts.push(`${t.uncached} served by pi itself (not cached)`);
  return `${t.reads} ${t.reads === 1 ? "read" : "reads"}: ${parts.join(", ")}`;
}

/**
 * What a tally sent against what pi's own `read` would have sent, in words.
 *
 * @example
 * ```ts
 * import { describeSavings, tallyReads } from "@readcache/core/rules";
 * describeSavings(tallyReads([])); // "nothing sent through the read cache"
 * ```
 */
export function describeSavings(t: ReadTally): string {
  if (t.reads - t.uncached === 0) return "nothing sent through the read cache";
  const saved = t.estimatedTokensSaved;
  return `sent ${bytesInWords(t.servedBytes)} instead of about ${
    bytesInWords(t.estimatedPlainBytes)
  }: about ${saved.toLocaleString("en-US")} ${saved === 1 ? "token" : "tokens"} saved`;
}

/**
 * Renders a status report in plain words (no internal names): what the model
 * holds now and what its next read of each part would be, how reads were
 * answered on the branch and in the whole session, and the store. `style`
 * adds colour. Pure.
 *
 * @example
 * ```ts
 * import { formatStatusReport, tallyReads } from "@readcache/core/rules";
 * const text = formatStatusReport({ cwd: "/w", branchEntries: 3, compactions: 0,
 *   held: [{ pathKey: "/w/a.ts", scope: "full", start: 1, end: 9, totalLines: 9 }],
 *   branch: tallyReads([]), store: { path: "/w/.pi/readcache", objects: 1, bytes: 90 } });
 * text.includes("the whole of a.ts (9 lines)"); // true
 * ```
 */
export function formatStatusReport(r: StatusReport, style: TextStyle = PLAIN_STYLE): string {
  const out: string[] = [style.heading("readcache status")];
  if (r.sessionFile !== undefined) out.push(`session: ${r.sessionFile}`);
  out.push(`project: ${r.cwd}`);
  const compacted = r.compactions === 0
    ? "never compacted"
    : `compacted ${r.compactions === 1 ? "once" : `${r.compactions} times`}; ` +
      "only what was read after the last compaction is still in the model's context";
  out.push(
    `active branch: ${r.branchEntries} ${
      r.branchEntries === 1 ? "entry" : "entries"
    }, ${compacted}`,
  );
  out.push("");
  if (r.held.length === 0) {
    out.push(style.heading("The model holds no file content from earlier reads."));
  } else {
    const files = new Set(r.held.map((h) => h.pathKey)).size;
    const parts = r.held.length > files ? `, in ${r.held.length} parts` : "";
    out.push(
      style.heading(`The model holds now (${files} ${files === 1 ? "file" : "files"}${parts}):`),
    );
    for (const h of r.held) {
      out.push(`  ${describeHeld(shownPath(h.pathKey, r.cwd), h)}`);
      if (h.next !== undefined) {
        const words = describeNextRead(h.next);
        const paint = h.next.mode === "unchanged" || h.next.mode === "unchanged_range" ||
            h.next.mode === "diff"
          ? style.good
          : h.next.reason === "missing" || h.next.reason === "error"
          ? style.bad
          : style.warn;
        out.push(`    next read: ${paint(words)}`);
      }
    }
  }
  if (r.inFlight !== undefined && r.inFlight > 0) {
    out.push(
      `  ${r.inFlight} ${r.inFlight === 1 ? "read" : "reads"} answered in this turn ` +
        "not yet saved in the session",
    );
  }
  out.push("");
  out.push(style.heading("On this branch") + ` (${describeReads(r.branch)})`);
  out.push(`  ${style.good(describeSavings(r.branch))}`);
  if (r.session !== undefined) {
    out.push(
      style.heading("In the whole session file") +
        ` (every branch, across compactions: ${describeReads(r.session)})`,
    );
    out.push(`  ${style.good(describeSavings(r.session))}`);
  }
  out.push(style.dim(`  (estimates: ${BYTES_PER_TOKEN} bytes per token)`));
  out.push("");
  const s = r.store;
  if ("error" in s) out.push(`object store: ${style.bad(s.error)} (${s.path})`);
  else {
    out.push(
      `object store: ${s.path}: ${s.objects} stored ${s.objects === 1 ? "copy" : "copies"}, ${
        bytesInWords(s.bytes)
      }`,
    );
    if (s.problem !== undefined) out.push(...describeStoreProblem(s.problem, style));
  }
  return out.join("\n");
}

/**
 * A store problem in words, with its fix, as lines.
 *
 * @example
 * ```ts
 * import { describeStoreProblem } from "@readcache/core/rules";
 * describeStoreProblem({ path: "/w/.pi", what: "is a symbolic link", fix: "Remove the link." });
 * // ["  object store problem: /w/.pi is a symbolic link; reads are sent in full meanwhile.",
 * //  "  fix: Remove the link."]
 * ```
 */
export function describeStoreProblem(p: StoreProblem, style: TextStyle = PLAIN_STYLE): string[] {
  return [
    `  ${
      style.bad("object store problem:")
    } ${p.path} ${p.what}; reads are sent in full meanwhile.`,
    `  fix: ${p.fix}`,
  ];
}
