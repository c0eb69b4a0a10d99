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
import type { ReadDecision } from "../../core/decision.ts";
import {
  diffHeader,
  rangeDiffHeader,
  unchangedMarker,
  unchangedRangeElsewhereMarker,
  unchangedRangeMarker,
} from "../../core/markers.ts";
import type { ReadCacheMetaV1 } from "../../core/meta.ts";
import { FULL_SCOPE } from "../../core/scope.ts";
import type { OpenCodeReadView } from "./baseline.ts";

export type { ReadCacheMetaV1, ReadDecision };

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
 * (SPEC §8.1) and diff payload (§8.2, §8.3) with OpenCode's line count, or
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
): string | undefined {
  const total = view.fileLines;
  switch (decision.mode) {
    case "unchanged":
      return unchangedMarker(total);
    case "unchanged_range":
      return decision.reason === "range_slice_unchanged"
        ? unchangedRangeElsewhereMarker(view.start, view.end)
        : unchangedRangeMarker(view.start, view.end, total);
    case "diff": {
      const m = /^\[readcache: (\d+) lines changed[^\n]*/.exec(decision.text);
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
