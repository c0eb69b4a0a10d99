/**
 * The read decision: given a request, the bytes of the file (one read), the
 * trust the active branch holds for the file and the base content looked up
 * by hash, decide what the model gets. Pure.
 *
 * Specified by SPEC.md §7.
 *
 * @module
 */
import { type BaselineReadOutput, baselineShownLines, renderBaselineRead } from "./baseline.ts";
import { unifiedDiff } from "./diff.ts";
import { sha256Hex } from "./hash.ts";
import {
  diffHeader,
  partialAnswer,
  rangeDiffHeader,
  unchangedMarker,
  unchangedRangeElsewhereMarker,
  unchangedRangeMarker,
} from "./markers.ts";
import type { ReadCacheMetaV1, ReadMode } from "./meta.ts";
import { countLines, normalizeRange } from "./range.ts";
import { FULL_SCOPE, type ScopeKey, scopeKeyFor } from "./scope.ts";
import { DEFAULT_SENSITIVE_PATTERNS, isSensitivePath } from "./sensitive.ts";
import type { FileKnowledge } from "./knowledge.ts";
import { type ScopeTrust, selectBase } from "./trust.ts";
import { truncateHead, type TruncationResult } from "./truncate.ts";
import {
  newestViewConflict,
  newestViewNeeds,
  newestViewsOf,
  TO_END,
  type ViewQuery,
  viewsCoverWith,
} from "./view.ts";

/**
 * Tunables of the decision. Every field has a default.
 *
 * @example
 * ```ts
 * import { DEFAULT_DECISION_CONFIG } from "@readcache/core/rules";
 * DEFAULT_DECISION_CONFIG.maxDiffFileLines; // 12000
 * ```
 */
export interface DecisionConfig {
  /** Largest file (bytes, base and current) a diff is computed for. */
  maxDiffFileBytes: number;
  /** Largest file (lines, base and current) a diff is computed for. */
  maxDiffFileLines: number;
  /** A diff is served only when its bytes are below this share of the file's bytes. */
  maxDiffBytesRatio: number;
  /** A diff is served only when its lines are at most this share of the file's lines. */
  maxDiffLinesRatio: number;
  /** Base-name patterns never cached (see `isSensitivePath`). */
  sensitivePatterns: readonly string[];
  /**
   * Read service: files larger than this (bytes) are not cached; the host's
   * own read serves them and nothing is stored (SPEC §13.1).
   */
  maxFileBytes: number;
  /** Answer a request whose lines are partly held with only the other lines (SPEC §8.4). */
  partialAnswers: boolean;
  /**
   * Read service: store bases of files outside the project (cwd) on disk too.
   * Default `false`: they are kept in memory for this process only (SPEC §13.2).
   */
  persistOutsideProject: boolean;
}

/** The default tunables. */
export const DEFAULT_DECISION_CONFIG: DecisionConfig = Object.freeze({
  maxDiffFileBytes: 2 * 1024 * 1024,
  maxDiffFileLines: 12_000,
  maxDiffBytesRatio: 0.9,
  maxDiffLinesRatio: 0.85,
  sensitivePatterns: DEFAULT_SENSITIVE_PATTERNS,
  maxFileBytes: 8 * 1024 * 1024,
  persistOutsideProject: false,
  partialAnswers: true,
});

/**
 * Input of {@linkcode decideRead}.
 *
 * @example
 * ```ts
 * import type { DecisionInput } from "@readcache/core/rules";
 * const input: DecisionInput = {
 *   displayPath: "a.txt", pathKey: "/w/a.txt", bytes: new TextEncoder().encode("hi\n"),
 *   knowledge: { trust: undefined, keyViews: [], nameViews: [] },
 * };
 * ```
 */
export interface DecisionInput {
  /** Path as the model typed it (used in pi's hint text and diff headers). */
  displayPath: string;
  /** Canonical identity of the file. */
  pathKey: string;
  /** 1-based first line requested. */
  offset?: number;
  /** Maximum lines requested. */
  limit?: number;
  /** The file's bytes, read once. The output and its hash both come from these. */
  bytes: Uint8Array;
  /**
   * What the active branch provably holds for the file: trust slots of
   * `pathKey` and the model's views under `pathKey` and under the request's
   * name (`BranchKnowledge.file`).
   */
  knowledge: FileKnowledge;
  /**
   * Stored contents by hash, for the hashes {@linkcode planRead} listed in
   * `needs` (`undefined`, or absent: the store has no valid object). Each is
   * verified against its hash before use.
   */
  objects?: ReadonlyMap<string, Uint8Array | undefined>;
  /** Serve the baseline and re-anchor, ignoring trust. */
  bypass?: boolean;
  /** Tunables; defaults from {@linkcode DEFAULT_DECISION_CONFIG}. */
  config?: Partial<DecisionConfig>;
}

/**
 * Why the decision came out as it did (diagnostics; not part of the wire format).
 *
 * @example
 * ```ts
 * import type { DecisionReason } from "@readcache/core/rules";
 * const r: DecisionReason = "no_base";
 * ```
 */
export type DecisionReason =
  | "sensitive_path"
  | "not_utf8"
  | "binary"
  | "nothing_shown"
  | "bypass"
  | "no_base"
  | "hash_match"
  | "base_missing"
  | "newer_view_differs"
  | "name_not_seen"
  | "range_slice_unchanged"
  | "interval_covered"
  | "partly_held"
  | "range_slice_changed"
  | "diff_too_large_file"
  | "diff_not_useful"
  | "diff_payload_truncated"
  | "diff_emitted"
  | "range_diff_emitted";

/**
 * What the model gets, and what the shell must do next.
 *
 * @example
 * ```ts
 * import type { ReadDecision } from "@readcache/core/rules";
 * const d: ReadDecision = { mode: null, text: "x", details: {}, reason: "binary" };
 * ```
 */
export interface ReadDecision {
  /** How the read is served; `null` for the plain read without readcache metadata. */
  mode: ReadMode | null;
  /** The exact output text. */
  text: string;
  /** Tool-result details: pi's `truncation` when pi would set it, and `readcache` metadata. */
  details: { truncation?: TruncationResult; readcache?: ReadCacheMetaV1 };
  /** Content the shell persists in the object store (absent when nothing may be stored). */
  store?: { hash: string; bytes: Uint8Array };
  /** Diagnostics. */
  reason: DecisionReason;
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const LOSSY_UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });
const encoder = new TextEncoder();

function decodeStrict(bytes: Uint8Array): string | undefined {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

function plain(input: DecisionInput, text: string, reason: DecisionReason): ReadDecision {
  const b = renderBaselineRead({
    text,
    displayPath: input.displayPath,
    offset: input.offset,
    limit: input.limit,
  });
  return {
    mode: null,
    text: b.text,
    details: b.truncation ? { truncation: b.truncation } : {},
    reason,
  };
}

interface Prepared {
  text: string;
  hash: string;
  totalLines: number;
  start: number;
  end: number;
  scope: ScopeKey;
  /** pi's output for the read, rendered when an answer needs it (an unchanged one does not). */
  readonly baseline: BaselineReadOutput;
}

type Preparation = { kind: "plain"; decision: ReadDecision } | { kind: "ok"; p: Prepared };

function prepare(input: DecisionInput, cfg: DecisionConfig): Preparation {
  if (
    isSensitivePath(input.pathKey, cfg.sensitivePatterns) ||
    isSensitivePath(input.displayPath, cfg.sensitivePatterns)
  ) {
    return {
      kind: "plain",
      decision: plain(input, LOSSY_UTF8.decode(input.bytes), "sensitive_path"),
    };
  }
  const text = decodeStrict(input.bytes);
  if (text === undefined) {
    return { kind: "plain", decision: plain(input, LOSSY_UTF8.decode(input.bytes), "not_utf8") };
  }
  if (text.includes("\0")) return { kind: "plain", decision: plain(input, text, "binary") };
  const totalLines = countLines(text);
  normalizeRange(input.offset, input.limit, totalLines); // validates; throws pi's offset error
  let rendered: BaselineReadOutput | undefined;
  const render = (): BaselineReadOutput =>
    rendered ??= renderBaselineRead({
      text,
      displayPath: input.displayPath,
      offset: input.offset,
      limit: input.limit,
    });
  // the lines shown, without rendering them where nothing can be truncated
  const shown = baselineShownLines(input, totalLines, input.bytes.length) ?? render();
  if (shown.shownEnd < shown.shownStart) {
    return { kind: "plain", decision: plain(input, text, "nothing_shown") };
  }
  const start = shown.shownStart;
  const end = shown.shownEnd;
  return {
    kind: "ok",
    p: {
      text,
      hash: sha256Hex(input.bytes),
      totalLines,
      start,
      end,
      scope: scopeKeyFor(start, end, totalLines),
      get baseline() {
        return render();
      },
    },
  };
}

/**
 * A read prepared once (decoded, hashed, rendered) with the stored contents
 * the decision will compare against. Pass it to {@linkcode decidePlan} with
 * those contents loaded.
 *
 * @example
 * ```ts
 * import { planRead } from "@readcache/core/rules";
 * const plan = planRead({ displayPath: "a", pathKey: "/a", bytes: new Uint8Array(),
 *   knowledge: { trust: undefined, keyViews: [], nameViews: [] } });
 * plan.needs; // []
 * ```
 */
export interface ReadPlan {
  /** The request. */
  readonly input: DecisionInput;
  /** Content hashes to load from the object store before deciding. */
  readonly needs: readonly string[];
}

interface PlanState {
  cfg: DecisionConfig;
  prep: Preparation;
  base: ScopeTrust | undefined;
  query: ViewQuery | undefined;
}

const plans = new WeakMap<ReadPlan, PlanState>();

/**
 * Prepares a read: one decode, hash and baseline render of the bytes, the base
 * selection (SPEC §5.4) and the list of stored contents the decision needs
 * (the base, and the views the newest-view rule compares it with, SPEC §5.5).
 * Throws `OffsetBeyondEndError` / `RangeSyntaxError` for bad ranges, like pi.
 *
 * @example
 * ```ts
 * import { planRead } from "@readcache/core/rules";
 * const bytes = new TextEncoder().encode("one\ntwo");
 * const plan = planRead({ displayPath: "a.txt", pathKey: "/w/a.txt", bytes,
 *   knowledge: { trust: { full: { hash: "old", seq: 1 }, ranges: {} }, keyViews: [], nameViews: [] } });
 * plan.needs; // ["old"]
 * ```
 */
export function planRead(input: DecisionInput): ReadPlan {
  const cfg: DecisionConfig = { ...DEFAULT_DECISION_CONFIG, ...input.config };
  const prep = prepare(input, cfg);
  let base: ScopeTrust | undefined;
  let query: ViewQuery | undefined;
  const needs = new Set<string>();
  if (prep.kind === "ok" && !input.bypass) {
    const p = prep.p;
    base = selectBase(input.knowledge.trust, p.scope);
    if (base) {
      query = {
        base,
        start: p.start,
        end: p.scope === FULL_SCOPE ? TO_END : p.end,
        keyViews: input.knowledge.keyViews,
        nameViews: input.knowledge.nameViews,
      };
      if (base.hash !== p.hash) needs.add(base.hash);
      for (const h of newestViewNeeds(query)) if (h !== p.hash) needs.add(h);
    }
  }
  const plan: ReadPlan = { input, needs: [...needs] };
  plans.set(plan, { cfg, prep, base, query });
  return plan;
}

function lineSlice(text: string, start: number, end: number): string[] | undefined {
  const lines = text.split("\n");
  return end <= lines.length ? lines.slice(start - 1, end) : undefined;
}

/**
 * Decides how to serve a read (SPEC §7.4 precedence), given its plan and the
 * stored contents it asked for. Pure.
 *
 * @example
 * ```ts
 * import { decidePlan, planRead } from "@readcache/core/rules";
 * const bytes = new TextEncoder().encode("one\ntwo");
 * const plan = planRead({ displayPath: "a.txt", pathKey: "/w/a.txt", bytes,
 *   knowledge: { trust: undefined, keyViews: [], nameViews: [] } });
 * decidePlan(plan, new Map()).mode; // "full"
 * ```
 */
export function decidePlan(
  plan: ReadPlan,
  objects: ReadonlyMap<string, Uint8Array | undefined>,
): ReadDecision {
  const d = decideFromBase(plan, objects);
  // Interval coverage (SPEC §5.7): a range the model's newest views already show, with exactly
  // the current content, is unchanged even when no single earlier read covers it.
  const state = plans.get(plan)!;
  const meta = d.details.readcache;
  if (
    state.prep.kind === "ok" && !plan.input.bypass && meta !== undefined &&
    (d.mode === "full" || d.mode === "baseline_fallback") && meta.scopeKey !== FULL_SCOPE &&
    viewsCoverWith(
      meta.servedHash,
      meta.rangeStart,
      meta.rangeEnd,
      plan.input.knowledge.keyViews,
      plan.input.knowledge.nameViews,
    )
  ) {
    const text = unchangedRangeMarker(meta.rangeStart, meta.rangeEnd, meta.totalLines);
    return {
      mode: "unchanged_range",
      text,
      details: {
        readcache: {
          ...meta,
          mode: "unchanged_range",
          baseHash: meta.servedHash,
          bytes: encoder.encode(text).length,
        },
      },
      store: d.store,
      reason: "interval_covered",
    };
  }
  return partialOrPlain(plan, state, d, objects);
}

/** At most this many view contents are loaded to find held lines for a partial answer. */
const MAX_PARTIAL_VIEWS = 16;

/** The newest views of each line of the request under the identity and the name. */
function partialViews(
  input: DecisionInput,
  start: number,
  end: number,
): { key: ReturnType<typeof newestViewsOf>; name: ReturnType<typeof newestViewsOf> } {
  return {
    key: newestViewsOf(input.knowledge.keyViews, start, end),
    name: newestViewsOf(input.knowledge.nameViews, start, end),
  };
}

/**
 * The contents a partial answer (SPEC §8.4) compares lines with, beyond
 * `plan.needs`: the newest views of the request's lines. Load them and decide
 * again only when the first decision is a plain read (worked out only then:
 * not on the path of every read).
 *
 * @example
 * ```ts
 * import { partialNeedsOf, planRead } from "@readcache/core/rules";
 * const plan = planRead({ displayPath: "a", pathKey: "/a", bytes: new Uint8Array(),
 *   knowledge: { trust: undefined, keyViews: [], nameViews: [] } });
 * partialNeedsOf(plan); // []
 * ```
 */
export function partialNeedsOf(plan: ReadPlan): string[] {
  const state = plans.get(plan);
  if (
    state === undefined || state.prep.kind !== "ok" || plan.input.bypass ||
    !state.cfg.partialAnswers
  ) return [];
  const p = state.prep.p;
  const { key, name } = partialViews(plan.input, p.start, p.end);
  const out = new Set<string>();
  for (const v of [...key, ...name]) if (v.hash !== null && v.hash !== p.hash) out.add(v.hash);
  return out.size > MAX_PARTIAL_VIEWS ? [] : [...out];
}

/**
 * A partial answer (SPEC §8.4) instead of a plain answer: where some
 * lines of the request are held (the newest view of the line, under the
 * identity and under the name, is one content whose line is the current
 * line), a marker names them and the other lines are shown, when that is
 * smaller than the plain answer by the diff ratio.
 */
function partialOrPlain(
  plan: ReadPlan,
  state: PlanState,
  d: ReadDecision,
  objects: ReadonlyMap<string, Uint8Array | undefined>,
): ReadDecision {
  const meta = d.details.readcache;
  if (
    state.prep.kind !== "ok" || plan.input.bypass || meta === undefined ||
    (d.mode !== "full" && d.mode !== "baseline_fallback") || !state.cfg.partialAnswers
  ) return d;
  const p = state.prep.p;
  const lines = p.text.split("\n");
  const contents = new Map<string, string[] | undefined>([[p.hash, lines]]);
  const linesOf = (hash: string): string[] | undefined => {
    if (!contents.has(hash)) {
      const bytes = objects.get(hash);
      const text = bytes !== undefined && sha256Hex(bytes) === hash
        ? decodeStrict(bytes)
        : undefined;
      contents.set(hash, text?.split("\n"));
    }
    return contents.get(hash);
  };
  const { key, name } = partialViews(plan.input, p.start, p.end);
  const hashAt = (pieces: typeof key, n: number) => {
    for (const v of pieces) if (v.start <= n && n <= v.end) return v.hash;
    return null;
  };
  const held: { start: number; end: number; hash: string }[] = [];
  for (let n = p.start; n <= p.end; n++) {
    const h = hashAt(key, n);
    const ok = h !== null && h === hashAt(name, n) && linesOf(h)?.[n - 1] === lines[n - 1] &&
      (linesOf(h)?.length ?? 0) >= n;
    if (!ok) continue;
    const last = held.at(-1);
    if (last !== undefined && last.end === n - 1 && last.hash === h) last.end = n;
    else held.push({ start: n, end: n, hash: h });
  }
  if (held.length === 0) return d;
  const shown: { start: number; end: number }[] = [];
  let next = p.start;
  for (const h of held) {
    if (h.start > next) shown.push({ start: next, end: h.start - 1 });
    next = h.end + 1;
  }
  if (next <= p.end) shown.push({ start: next, end: p.end });
  // every line held (from several contents, or §5.7 would have answered): for a range, the
  // range marker; a whole file is sent in full (the views need not agree on where it ends)
  if (shown.length === 0 && p.scope === FULL_SCOPE) return d;
  const window = lines.slice(p.start - 1, p.end).join("\n");
  if (!p.baseline.text.startsWith(window)) return d;
  // pi's continuation notice, when the plain answer has one
  const notice = p.baseline.text.slice(window.length);
  const text = shown.length === 0
    ? unchangedRangeMarker(p.start, p.end, p.totalLines)
    : partialAnswer(lines, held, shown, p.totalLines) + notice;
  const bytes = encoder.encode(text).length;
  if (bytes >= state.cfg.maxDiffBytesRatio * encoder.encode(p.baseline.text).length) return d;
  return {
    mode: "partial",
    text,
    details: {
      readcache: { ...meta, mode: "partial", baseHash: p.hash, bytes, held },
    },
    store: d.store,
    reason: "partly_held",
  };
}

function decideFromBase(
  plan: ReadPlan,
  objects: ReadonlyMap<string, Uint8Array | undefined>,
): ReadDecision {
  const state = plans.get(plan);
  if (state === undefined) throw new TypeError("decidePlan needs a plan made by planRead");
  const { cfg, prep, base, query } = state;
  const input = plan.input;
  if (prep.kind === "plain") return prep.decision;
  const p = prep.p;

  const serve = (
    mode: ReadMode,
    text: string,
    reason: DecisionReason,
    baseHash: string | undefined,
    truncation: TruncationResult | undefined,
  ): ReadDecision => {
    const meta: ReadCacheMetaV1 = {
      v: 1,
      pathKey: input.pathKey,
      scopeKey: p.scope,
      servedHash: p.hash,
      mode,
      totalLines: p.totalLines,
      rangeStart: p.start,
      rangeEnd: p.end,
      bytes: encoder.encode(text).length,
    };
    if (baseHash !== undefined) meta.baseHash = baseHash;
    const details: ReadDecision["details"] = truncation ? { truncation, readcache: meta } : {
      readcache: meta,
    };
    return { mode, text, details, store: { hash: p.hash, bytes: input.bytes }, reason };
  };
  const baseline = (mode: ReadMode, reason: DecisionReason, baseHash?: string) =>
    serve(mode, p.baseline.text, reason, baseHash, p.baseline.truncation);

  if (input.bypass) return baseline("full", "bypass");
  if (!base || !query) return baseline("full", "no_base");

  const texts = new Map<string, string | undefined>([[p.hash, p.text]]);
  const textOf = (hash: string): string | undefined => {
    if (!texts.has(hash)) {
      const bytes = objects.get(hash);
      texts.set(
        hash,
        bytes !== undefined && sha256Hex(bytes) === hash ? decodeStrict(bytes) : undefined,
      );
    }
    return texts.get(hash);
  };
  const baseText = textOf(base.hash);
  if (baseText === undefined) return baseline("baseline_fallback", "base_missing", base.hash);
  const linesCache = new Map<string, string[] | undefined>();
  const linesOf = (hash: string): string[] | undefined => {
    if (!linesCache.has(hash)) linesCache.set(hash, textOf(hash)?.split("\n"));
    return linesCache.get(hash);
  };
  const conflict = newestViewConflict(query, linesOf(base.hash)!, linesOf);
  if (conflict !== undefined) return baseline("baseline_fallback", conflict, base.hash);

  if (base.hash === p.hash) {
    return p.scope === FULL_SCOPE
      ? serve("unchanged", unchangedMarker(p.totalLines), "hash_match", base.hash, undefined)
      : serve(
        "unchanged_range",
        unchangedRangeMarker(p.start, p.end, p.totalLines),
        "hash_match",
        base.hash,
        undefined,
      );
  }

  if (p.scope !== FULL_SCOPE) {
    const before = lineSlice(baseText, p.start, p.end);
    const now = lineSlice(p.text, p.start, p.end);
    if (before && now && before.join("\n") === now.join("\n")) {
      return serve(
        "unchanged_range",
        unchangedRangeElsewhereMarker(p.start, p.end),
        "range_slice_unchanged",
        base.hash,
        undefined,
      );
    }
    // Range diff (SPEC §8.2): the model holds the base's lines start..end (§5.5 checked them);
    // a diff of that slice, in file line numbers, when it is much smaller than the slice.
    if (before && now) {
      const diff = unifiedDiff(
        before.join("\n") + "\n",
        now.join("\n") + "\n",
        input.displayPath,
        p.start - 1,
      );
      const payload = `${
        rangeDiffHeader(diff.changedLines, p.start, p.end, p.totalLines)
      }\n${diff.text}`;
      if (
        diff.hunks > 0 &&
        encoder.encode(payload).length <
          cfg.maxDiffBytesRatio * encoder.encode(p.baseline.text).length &&
        countLines(payload) <= cfg.maxDiffLinesRatio * (p.end - p.start + 1) &&
        !truncateHead(payload).truncated
      ) {
        return serve("diff", payload, "range_diff_emitted", base.hash, undefined);
      }
    }
    return baseline("baseline_fallback", "range_slice_changed", base.hash);
  }

  const baseBytes = objects.get(base.hash)!.length;
  if (
    input.bytes.length > cfg.maxDiffFileBytes || baseBytes > cfg.maxDiffFileBytes ||
    p.totalLines > cfg.maxDiffFileLines || countLines(baseText) > cfg.maxDiffFileLines
  ) {
    return baseline("baseline_fallback", "diff_too_large_file", base.hash);
  }
  const diff = unifiedDiff(baseText, p.text, input.displayPath);
  const payload = `${diffHeader(diff.changedLines, p.totalLines)}\n${diff.text}`;
  const payloadBytes = encoder.encode(payload).length;
  const payloadLines = countLines(payload);
  if (
    diff.hunks === 0 ||
    payloadBytes >= cfg.maxDiffBytesRatio * input.bytes.length ||
    payloadLines > cfg.maxDiffLinesRatio * p.totalLines
  ) {
    return baseline("baseline_fallback", "diff_not_useful", base.hash);
  }
  if (truncateHead(payload).truncated) {
    return baseline("baseline_fallback", "diff_payload_truncated", base.hash);
  }
  return serve("diff", payload, "diff_emitted", base.hash, undefined);
}

/**
 * Plans and decides in one call, with `input.objects` as the stored contents
 * (SPEC §7). Throws `OffsetBeyondEndError` / `RangeSyntaxError` for bad
 * ranges, like pi's read.
 *
 * @example
 * ```ts
 * import { decideRead, TO_END } from "@readcache/core/rules";
 * const bytes = new TextEncoder().encode("one\ntwo");
 * const first = decideRead({ displayPath: "a.txt", pathKey: "/w/a.txt", bytes,
 *   knowledge: { trust: undefined, keyViews: [], nameViews: [] } });
 * first.mode; // "full"
 * const hash = first.details.readcache!.servedHash;
 * const seen = [{ seq: 1, start: 1, end: TO_END, hash }];
 * const again = decideRead({ displayPath: "a.txt", pathKey: "/w/a.txt", bytes,
 *   knowledge: { trust: { full: { hash, seq: 1 }, ranges: {} }, keyViews: seen, nameViews: seen } });
 * again.text; // "[readcache: unchanged, 2 lines]"
 * ```
 */
export function decideRead(input: DecisionInput): ReadDecision {
  return decidePlan(planRead(input), input.objects ?? new Map());
}
