/**
 * The model's view (SPEC §5.5): which content the model was shown most
 * recently for each line of a file, kept per canonical identity (`pathKey`)
 * and per name the model used (the resolved path it typed). Trust slots say
 * what a derived answer may be based on; views say whether that base is still
 * the model's NEWEST view of the lines the answer covers.
 *
 * Every function here is pure.
 *
 * Specified by SPEC.md §5.5.
 *
 * @module
 */
import { type Interval, overlapLines, subtractLines } from "./interval.ts";
import type { ReadCacheMetaV1 } from "./meta.ts";
import { FULL_SCOPE } from "./scope.ts";

/**
 * `end` of a view that runs to the end of the file: the model was shown the
 * whole file, including where it ends.
 */
export const TO_END: number = Number.MAX_SAFE_INTEGER;

/**
 * What the model was shown for lines `start..end` of a file by one event, in
 * event order `seq`. `hash` names the content the lines come from (SHA-256 of
 * the file bytes); `null` means the model was shown something we cannot vouch
 * for (a plain read without metadata, an answer whose base could not be
 * proven, a refreshed range): such lines block every older base.
 *
 * @example
 * ```ts
 * import { type LineView, TO_END } from "@readcache/core/rules";
 * const whole: LineView = { seq: 1, start: 1, end: TO_END, hash: "ab".repeat(32) };
 * const unknown: LineView = { seq: 1.5, start: 5, end: 7, hash: null };
 * ```
 */
export interface LineView {
  /** Event order: read events use their `seq`; other events sit between reads (`seq + 0.5`). */
  readonly seq: number;
  /** First line shown, 1-based. */
  readonly start: number;
  /** Last line shown, inclusive; {@linkcode TO_END} for a whole file. */
  readonly end: number;
  /** Content hash the lines come from, or `null` when unknown. */
  readonly hash: string | null;
  /**
   * With `hash: null`: the model holds no text of these lines at all (its own
   * edit moved the lines it held there elsewhere, SPEC §5.9). They back no
   * answer, like unknown lines, but cannot hold text the model could mean.
   */
  readonly vacant?: true;
}

/**
 * The lines a read's metadata says the model was shown: the whole file
 * (`1..TO_END`) for scope `full`; for a range that reaches the last line,
 * `rangeStart..TO_END`, because the answer also showed where the file ends
 * (a plain read without a continuation notice, a marker or diff header
 * naming the total) — except an `unchanged_range` answered against a base
 * with other content ("changes exist outside this range"), which says
 * nothing about the end; else `rangeStart..rangeEnd`.
 *
 * @example
 * ```ts
 * import { viewLinesOf } from "@readcache/core/rules";
 * viewLinesOf({ scopeKey: "r:5:9", rangeStart: 5, rangeEnd: 9, totalLines: 20, mode: "full",
 *   servedHash: "h" }); // { start: 5, end: 9 }
 * ```
 */
export function viewLinesOf(
  meta: Pick<
    ReadCacheMetaV1,
    "scopeKey" | "rangeStart" | "rangeEnd" | "totalLines" | "mode" | "servedHash" | "baseHash"
  >,
): { start: number; end: number } {
  if (meta.scopeKey === FULL_SCOPE) return { start: 1, end: TO_END };
  const showsEnd = meta.rangeEnd === meta.totalLines &&
    !(meta.mode === "unchanged_range" && meta.baseHash !== meta.servedHash);
  return { start: meta.rangeStart, end: showsEnd ? TO_END : meta.rangeEnd };
}

/**
 * Appends a view (the newest) and drops older views it hides completely.
 * Returns a new array; the input is not modified.
 *
 * @example
 * ```ts
 * import { addView, TO_END } from "@readcache/core/rules";
 * const v = addView([{ seq: 1, start: 3, end: 4, hash: "a" }], { seq: 2, start: 1, end: TO_END, hash: "b" });
 * v.length; // 1
 * ```
 */
export function addView(views: readonly LineView[], view: LineView): LineView[] {
  if (view.start === 1 && view.end === TO_END) return [view]; // hides every older view
  const kept = views.filter((v) => v.start < view.start || v.end > view.end);
  kept.push(view);
  return kept;
}

/**
 * What {@linkcode newestViewConflict} and {@linkcode newestViewNeeds} check:
 * a base (trust slot) for the lines `start..end` of a request, against the
 * views kept under the file's `pathKey` and under the name the model used.
 *
 * @example
 * ```ts
 * import type { ViewQuery } from "@readcache/core/rules";
 * const q: ViewQuery = { base: { hash: "h", seq: 2 }, start: 1, end: 10, keyViews: [], nameViews: [] };
 * ```
 */
export interface ViewQuery {
  /** The selected base: its content hash and event order. */
  base: { hash: string; seq: number };
  /** First line the answer covers. */
  start: number;
  /** Last line the answer covers; {@linkcode TO_END} for a whole-file answer. */
  end: number;
  /** Views kept under the file's canonical identity, oldest first. */
  keyViews: readonly LineView[];
  /** Views kept under the name the model used for this request, oldest first. */
  nameViews: readonly LineView[];
}

/** Why the newest-view check refused a base. */
export type ViewConflict = "newer_view_differs" | "name_not_seen";

interface Piece {
  hash: string | null;
  start: number;
  end: number;
}

/**
 * The pieces of views the check compares against the base, newest first:
 * (a) under `pathKey`, every view fresher than the base on the lines of the
 * answer not hidden by an even fresher view; (b) under the name, the newest
 * view of every line of the answer. `uncoveredName` is the part of the answer
 * no view under the name covers.
 */
function walk(q: ViewQuery): { pieces: Piece[]; uncoveredName: Interval[] } {
  const pieces: Piece[] = [];
  let open: Interval[] = [[q.start, q.end]];
  for (let i = q.keyViews.length - 1; i >= 0 && open.length > 0; i--) {
    const v = q.keyViews[i];
    if (v.seq <= q.base.seq) break;
    for (const [x, y] of overlapLines(open, v.start, v.end)) {
      pieces.push({ hash: v.hash, start: x, end: y });
    }
    open = subtractLines(open, v.start, v.end);
  }
  open = [[q.start, q.end]];
  for (let i = q.nameViews.length - 1; i >= 0 && open.length > 0; i--) {
    const v = q.nameViews[i];
    for (const [x, y] of overlapLines(open, v.start, v.end)) {
      pieces.push({ hash: v.hash, start: x, end: y });
    }
    open = subtractLines(open, v.start, v.end);
  }
  return { pieces, uncoveredName: open };
}

/**
 * Content hashes (other than the base's) the newest-view check must compare
 * the base with. The shell loads them from the object store.
 *
 * @example
 * ```ts
 * import { newestViewNeeds, TO_END } from "@readcache/core/rules";
 * newestViewNeeds({ base: { hash: "a", seq: 1 }, start: 1, end: TO_END,
 *   keyViews: [{ seq: 1, start: 1, end: TO_END, hash: "a" }, { seq: 2, start: 1, end: 4, hash: "b" }],
 *   nameViews: [] }); // ["b"]
 * ```
 */
export function newestViewNeeds(q: ViewQuery): string[] {
  const out = new Set<string>();
  for (const p of walk(q).pieces) if (p.hash !== null && p.hash !== q.base.hash) out.add(p.hash);
  return [...out];
}

function sameLines(
  a: readonly string[],
  b: readonly string[],
  start: number,
  end: number,
): boolean {
  if (end === TO_END) {
    if (a.length !== b.length) return false;
    end = a.length;
  } else if (end > a.length || end > b.length) {
    return false;
  }
  for (let i = start - 1; i < end; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The newest-view rule (SPEC §5.5): a base may back a derived answer only if,
 * on every line the answer covers, it agrees with the model's newest view of
 * that line under the file's `pathKey` AND under the name the model used, and
 * every line of the answer is covered by some view under that name. Returns
 * `undefined` when the base may be used, else why not. `lines(hash)` gives the
 * lines of a content (`undefined` when it cannot be loaded: disagreement);
 * `baseLines` are the base's lines.
 *
 * @example
 * ```ts
 * import { newestViewConflict, TO_END } from "@readcache/core/rules";
 * const views = [{ seq: 1, start: 1, end: TO_END, hash: "A" }, { seq: 2, start: 1, end: 2, hash: "B" }];
 * const text: Record<string, string[]> = { A: ["x", "y", "z"], B: ["x", "Y"] };
 * newestViewConflict(
 *   { base: { hash: "A", seq: 1 }, start: 1, end: TO_END, keyViews: views, nameViews: views },
 *   text.A,
 *   (h) => text[h],
 * ); // "newer_view_differs"
 * ```
 */
export function newestViewConflict(
  q: ViewQuery,
  baseLines: readonly string[],
  lines: (hash: string) => readonly string[] | undefined,
): ViewConflict | undefined {
  const { pieces, uncoveredName } = walk(q);
  for (const p of pieces) {
    if (p.hash === q.base.hash) continue;
    const other = p.hash === null ? undefined : lines(p.hash);
    if (other === undefined || !sameLines(other, baseLines, p.start, p.end)) {
      return "newer_view_differs";
    }
  }
  // Lines past the end of the base need no view: the answer does not show them.
  const last = q.end === TO_END ? baseLines.length : q.end;
  if (overlapLines(uncoveredName, q.start, last).length > 0) return "name_not_seen";
  return undefined;
}

/**
 * The newest-view rule checked from hashes alone, as replay does for a
 * derived answer found in the session (SPEC §5.5): true when every view the
 * rule compares carries the base's own hash and every line of the answer has
 * a view under the name (for a whole-file answer: up to the end of the file).
 * Different content counts as disagreement, so this is never less strict than
 * {@linkcode newestViewConflict}.
 *
 * @example
 * ```ts
 * import { TO_END, viewsHoldBase } from "@readcache/core/rules";
 * const seen = [{ seq: 1, start: 1, end: TO_END, hash: "A" }];
 * viewsHoldBase({ base: { hash: "A", seq: 1 }, start: 1, end: TO_END, keyViews: seen, nameViews: seen }); // true
 * viewsHoldBase({ base: { hash: "A", seq: 1 }, start: 1, end: TO_END, keyViews: seen, nameViews: [] }); // false
 * ```
 */
export function viewsHoldBase(q: ViewQuery): boolean {
  const { pieces, uncoveredName } = walk(q);
  return pieces.every((p) => p.hash === q.base.hash) &&
    overlapLines(uncoveredName, q.start, q.end).length === 0;
}

/**
 * Interval coverage (SPEC §5.7): true when lines `start..end` are each covered
 * by the model's newest view under the file's identity AND under the name,
 * and every one of those newest views shows content with hash `hash` — for
 * example two earlier reads of lines 1-100 and 101-200 of an unchanged file
 * cover a request for lines 50-150. Hashes only: different content with equal
 * lines does not count.
 *
 * @example
 * ```ts
 * import { viewsCoverWith } from "@readcache/core/rules";
 * const seen = [{ seq: 1, start: 1, end: 100, hash: "A" }, { seq: 2, start: 101, end: 200, hash: "A" }];
 * viewsCoverWith("A", 50, 150, seen, seen); // true
 * viewsCoverWith("A", 50, 250, seen, seen); // false
 * ```
 */
export function viewsCoverWith(
  hash: string,
  start: number,
  end: number,
  keyViews: readonly LineView[],
  nameViews: readonly LineView[],
): boolean {
  for (const views of [keyViews, nameViews]) {
    let open: Interval[] = [[start, end]];
    for (let i = views.length - 1; i >= 0 && open.length > 0; i--) {
      const v = views[i];
      if (overlapLines(open, v.start, v.end).length === 0) continue;
      if (v.hash !== hash) return false;
      open = subtractLines(open, v.start, v.end);
    }
    if (open.length > 0) return false;
  }
  return true;
}

/**
 * The lines whose newest view under the file's identity AND under the name
 * both show content `hash` (SPEC §5.9: what the model holds of that content
 * now), as sorted, disjoint `[start, end]` stretches (`end` may be
 * {@linkcode TO_END}).
 *
 * @example
 * ```ts
 * import { linesHeldWith, TO_END } from "@readcache/core/rules";
 * const views = [{ seq: 1, start: 1, end: TO_END, hash: "A" }, { seq: 2, start: 4, end: 6, hash: "B" }];
 * linesHeldWith("A", views, views); // [[1, 3], [7, TO_END]]
 * ```
 */
export function linesHeldWith(
  hash: string,
  keyViews: readonly LineView[],
  nameViews: readonly LineView[],
): [number, number][] {
  const held = (views: readonly LineView[]): Interval[] => {
    const out: Interval[] = [];
    let open: Interval[] = [[1, TO_END]];
    for (let i = views.length - 1; i >= 0 && open.length > 0; i--) {
      const v = views[i];
      if (v.hash === hash) out.push(...overlapLines(open, v.start, v.end));
      open = subtractLines(open, v.start, v.end);
    }
    return out;
  };
  const a = held(keyViews);
  const out: Interval[] = [];
  for (const [x, y] of held(nameViews)) out.push(...overlapLines(a, x, y));
  out.sort((p, q) => p[0] - q[0]);
  // join stretches that touch
  const joined: Interval[] = [];
  for (const s of out) {
    const last = joined.at(-1);
    if (last !== undefined && s[0] <= last[1] + 1) last[1] = Math.max(last[1], s[1]);
    else joined.push([s[0], s[1]]);
  }
  return joined;
}

/**
 * The newest view of each line of `start..end`, as stretches with the content
 * hash they show (`null`: unknown; lines no view covers are left out), sorted.
 *
 * @example
 * ```ts
 * import { newestViewsOf, TO_END } from "@readcache/core/rules";
 * newestViewsOf([{ seq: 1, start: 1, end: TO_END, hash: "A" }, { seq: 2, start: 3, end: 4, hash: "B" }], 1, 5);
 * // [{ start: 1, end: 2, hash: "A" }, { start: 3, end: 4, hash: "B" }, { start: 5, end: 5, hash: "A" }]
 * ```
 */
export function newestViewsOf(
  views: readonly LineView[],
  start: number,
  end: number,
): { start: number; end: number; hash: string | null; vacant?: true }[] {
  const out: { start: number; end: number; hash: string | null; vacant?: true }[] = [];
  let open: Interval[] = [[start, end]];
  for (let i = views.length - 1; i >= 0 && open.length > 0; i--) {
    const v = views[i];
    for (const [x, y] of overlapLines(open, v.start, v.end)) {
      out.push(
        v.vacant
          ? { start: x, end: y, hash: null, vacant: true }
          : { start: x, end: y, hash: v.hash },
      );
    }
    open = subtractLines(open, v.start, v.end);
  }
  return out.sort((a, b) => a.start - b.start);
}

/**
 * True when every line whose newest view (in `views`) shows known content
 * shows what the file holds now (`hash`, `lines`): the content named by the
 * view is `hash` itself, or its lines there equal `lines` (a view running to
 * the end of the file also needs the same line count). `load(hash)` gives
 * the lines of another content, `undefined` when it cannot be loaded (then
 * the lines differ). Unknown and vacant lines are not compared: they back no
 * answer already. What a tool result is checked with (SPEC §5.10).
 *
 * @example
 * ```ts
 * import { TO_END, viewsShowContent } from "@readcache/core/rules";
 * const views = [{ seq: 1, start: 1, end: 2, hash: "A" }];
 * const text: Record<string, string[]> = { A: ["x", "y", "z"] };
 * viewsShowContent(views, "B", ["x", "y", "Z"], (h) => text[h]); // true: lines 1-2 agree
 * viewsShowContent(views, "B", ["x", "Y"], (h) => text[h]); // false
 * viewsShowContent([{ seq: 1, start: 1, end: TO_END, hash: "A" }], "B", ["x", "y"], (h) => text[h]); // false
 * ```
 */
export function viewsShowContent(
  views: readonly LineView[],
  hash: string,
  lines: readonly string[],
  load: (hash: string) => readonly string[] | undefined,
): boolean {
  for (const p of newestViewsOf(views, 1, TO_END)) {
    if (p.hash === null || p.hash === hash) continue;
    const other = load(p.hash);
    if (other === undefined || !sameLines(other, lines, p.start, p.end)) return false;
  }
  return true;
}
