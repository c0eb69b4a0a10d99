/**
 * The read cache's answer to an OpenCode `read`, from the core's decision
 * (SPEC §7, §8) and what OpenCode's own read showed (`OpenCodeReadView`).
 *
 * The core decides on pi's line model (`text.split("\n")`), OpenCode shows
 * lines split at `\n`, `\r\n` and `\r` with a final terminator not starting a
 * line. Both agree line for line on a file without `\r`, without a BOM and
 * whose shown lines OpenCode did not shorten; only such reads are cached
 * ({@linkcode cacheableView}), and pi's count then has one more, empty, line
 * exactly when the file ends with a line break. The adapter asks the core for
 * the lines OpenCode showed ({@linkcode coreRequest}), accepts the decision
 * only when the core's effective scope is those lines
 * ({@linkcode scopeMatchesView}), keeps OpenCode's own text for anchor modes
 * and writes the markers and diff headers with OpenCode's line count
 * ({@linkcode openCodeAnswerText}). The diff hunks are the core's: their line
 * numbers are the file's, the same in both models; a range diff whose range
 * takes in pi's empty line after a final line break is not given (its hunks
 * may add or remove that line, which OpenCode does not show).
 *
 * Specified by SPEC.md §7.3, §7.4, §8 (for OpenCode: docs/opencode-integration-notes.md).
 *
 * @module
 */
import { DEFAULT_DECISION_CONFIG, type ReadDecision } from "../../core/decision.ts";
import {
  diffHeader,
  partialAnswer,
  rangeDiffHeader,
  unchangedMarker,
  unchangedRangeElsewhereMarker,
  unchangedRangeMarker,
} from "../../core/markers.ts";
import type { ReadCacheMetaV1 } from "../../core/meta.ts";
import { FULL_SCOPE } from "../../core/scope.ts";
import type { OpenCodeReadView } from "./baseline.ts";

export type { ReadCacheMetaV1, ReadDecision };

const encoder = new TextEncoder();

/**
 * The file a partial answer shows lines of: its lines as the core splits
 * them (`text.split("\n")`, the same as OpenCode's for a cacheable read),
 * and the size limit of a partial answer against OpenCode's own (default
 * `maxDiffBytesRatio` of the decision configuration).
 *
 * @example
 * ```ts
 * import type { OpenCodeFileLines } from "@readcache/core/opencode";
 * const f: OpenCodeFileLines = { lines: "a\nb\n".split("\n"), maxBytesRatio: 0.9 };
 * ```
 */
export interface OpenCodeFileLines {
  /** The file's lines (`text.split("\n")`). */
  lines: readonly string[];
  /** A partial answer must be smaller than this share of OpenCode's own answer. */
  maxBytesRatio?: number;
}

/**
 * A partial answer (SPEC §8.4) in OpenCode's terms (§11.8): the marker naming
 * the held lines with OpenCode's line count, each other line of the window
 * numbered as OpenCode numbers it (`N: text`), then OpenCode's own closing
 * notice of that read. `held` are the core's held stretches; pi's empty line
 * after a final line break, which OpenCode does not show, is left out.
 * `undefined` when no line, or every line, of OpenCode's window is held.
 *
 * @example
 * ```ts
 * import { openCodePartialAnswer, renderOpenCodeRead } from "@readcache/core/opencode";
 * const text = "a\nb\nc\n";
 * const view = renderOpenCodeRead({ path: "/w/a", text })!;
 * openCodePartialAnswer(view, text.split("\n"), [{ start: 1, end: 2 }]);
 * // "[readcache: unchanged in lines 1-2 of 3; the other lines follow]\n3: c\n\n(End of file - total 3 lines)"
 * ```
 */
export function openCodePartialAnswer(
  view: OpenCodeReadView,
  lines: readonly string[],
  held: readonly { start: number; end: number }[],
): string | undefined {
  const inWindow = held
    .map((h) => ({ start: Math.max(h.start, view.start), end: Math.min(h.end, view.end) }))
    .filter((h) => h.start <= h.end);
  const shown: number[] = [];
  let next = view.start;
  for (const h of inWindow) {
    for (let n = next; n < h.start; n++) shown.push(n);
    next = Math.max(next, h.end + 1);
  }
  for (let n = next; n <= view.end; n++) shown.push(n);
  if (inWindow.length === 0 || shown.length === 0) return undefined;
  const marker = partialAnswer(lines, inWindow, [], view.fileLines);
  const close = view.text.lastIndexOf("\n\n(");
  const notice = close < 0 ? "" : view.text.slice(close, view.text.length - "\n</content>".length);
  return [marker, ...shown.map((n) => `${n}: ${lines[n - 1]}`)].join("\n") + notice;
}

/**
 * True when a read OpenCode showed as `view` (of `bytes`, decoded to `text`)
 * may be cached: something was shown, no shown line was shortened, and the
 * file has no BOM and no `\r`, so OpenCode's lines are the core's lines.
 *
 * @example
 * ```ts
 * import { cacheableView, renderOpenCodeRead } from "@readcache/core/opencode";
 * const text = "a\r\nb\r\n";
 * const view = renderOpenCodeRead({ path: "/w/a", text })!;
 * cacheableView(view, new TextEncoder().encode(text), text); // false: CRLF
 * ```
 */
export function cacheableView(view: OpenCodeReadView, bytes: Uint8Array, text: string): boolean {
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  return view.end >= view.start && !view.shortenedLines && !bom && !text.includes("\r");
}

/**
 * The request the core decides for a read OpenCode showed as `view`: the same
 * first line, and the call's own `limit` when it gave a positive one (without
 * one, OpenCode's default of 2000 lines is also the core's line cap). Used
 * with the call resolved by `openCodeReadCall`, so the metadata matches its
 * call on replay (SPEC §5.6).
 *
 * @example
 * ```ts
 * import { coreRequest, renderOpenCodeRead } from "@readcache/core/opencode";
 * const view = renderOpenCodeRead({ path: "/w/a", text: "1\n2\n3\n", offset: 2, limit: 1 })!;
 * coreRequest(view, 1); // { offset: 2, limit: 1 }
 * ```
 */
export function coreRequest(
  view: OpenCodeReadView,
  limit: number | undefined,
): { offset?: number; limit?: number } {
  const req: { offset?: number; limit?: number } = {};
  if (view.start > 1) req.offset = view.start;
  if (limit !== undefined && Number.isSafeInteger(limit) && limit > 0) req.limit = limit;
  return req;
}

/**
 * True when the core's effective scope (its metadata) is the lines OpenCode
 * showed: the same first line, and the same last line, or pi's empty line
 * after a final line break when OpenCode showed the file to its end.
 *
 * @example
 * ```ts
 * import { renderOpenCodeRead, scopeMatchesView } from "@readcache/core/opencode";
 * const view = renderOpenCodeRead({ path: "/w/a", text: "x\ny\n" })!;
 * scopeMatchesView({ v: 1, pathKey: "/w/a", scopeKey: "full", servedHash: "h", mode: "full",
 *   totalLines: 3, rangeStart: 1, rangeEnd: 3, bytes: 4 }, view); // true
 * ```
 */
export function scopeMatchesView(meta: ReadCacheMetaV1, view: OpenCodeReadView): boolean {
  if (meta.rangeStart !== view.start) return false;
  if (meta.rangeEnd === view.end) return true;
  return meta.rangeEnd === view.end + 1 && !view.more && view.end === view.fileLines &&
    meta.totalLines === view.fileLines + 1;
}

/**
 * The text OpenCode's model gets for a cached answer: the core's markers
 * (SPEC §8.1) and diff payload (§8.2, §8.3) with OpenCode's line count, a
 * partial answer in OpenCode's terms when `file` is given
 * ({@linkcode openCodePartialAnswer}, §8.4), or
 * `undefined` for the modes that keep OpenCode's own output (`full`,
 * `baseline_fallback`, and the plain read `null`). Call it only when
 * {@linkcode scopeMatchesView} holds.
 *
 * @example
 * ```ts
 * import { openCodeAnswerText, renderOpenCodeRead } from "@readcache/core/opencode";
 * const view = renderOpenCodeRead({ path: "/w/a", text: "x\ny\n" })!;
 * openCodeAnswerText({ mode: "unchanged", text: "[readcache: unchanged, 3 lines]", details: {},
 *   reason: "hash_match" }, view); // "[readcache: unchanged, 2 lines]"
 * ```
 */
export function openCodeAnswerText(
  decision: ReadDecision,
  view: OpenCodeReadView,
  file?: OpenCodeFileLines,
): string | undefined {
  const total = view.fileLines;
  switch (decision.mode) {
    case "partial": {
      const held = decision.details.readcache?.held;
      if (file === undefined || held === undefined) return undefined;
      const text = openCodePartialAnswer(view, file.lines, held);
      const ratio = file.maxBytesRatio ?? DEFAULT_DECISION_CONFIG.maxDiffBytesRatio;
      // as for pi (SPEC §8.4): only when much smaller than OpenCode's own answer
      return text !== undefined &&
          encoder.encode(text).length < ratio * encoder.encode(view.text).length
        ? text
        : undefined;
    }
    case "unchanged":
      return unchangedMarker(total);
    case "unchanged_range":
      return decision.reason === "range_slice_unchanged"
        ? unchangedRangeElsewhereMarker(view.start, view.end)
        : unchangedRangeMarker(view.start, view.end, total);
    case "diff": {
      const m = /^\[readcache: (\d+) lines? changed[^\n]*/.exec(decision.text);
      if (m === null) return undefined;
      const changed = Number(m[1]);
      const meta = decision.details.readcache;
      if (meta?.scopeKey === FULL_SCOPE) {
        return diffHeader(changed, total) + decision.text.slice(m[0].length);
      }
      // a range diff compares the lines of the range as pi counts them: when the range takes in
      // pi's empty line after a final line break, its hunks can add or remove that line, which is
      // no line in OpenCode's view (the model would believe in a blank last line): no range diff
      if (meta?.rangeEnd !== view.end) return undefined;
      return rangeDiffHeader(changed, view.start, view.end, total) +
        decision.text.slice(m[0].length);
    }
    default:
      return undefined;
  }
}
