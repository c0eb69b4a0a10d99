/**
 * The exact marker texts of the read cache (SPEC §8).
 *
 * Specified by SPEC.md §8.1.
 *
 * @module
 */

/** `n` with its noun: `1 line`, `2 lines` (a one-line file, an empty one, is `1 line`). */
function lines(n: number): string {
  return n === 1 ? "1 line" : `${n} lines`;
}

/**
 * Marker for an unchanged whole file (`1 line` for a file of one line: an
 * empty file is one empty line, SPEC §4.3).
 *
 * @example
 * ```ts
 * import { unchangedMarker } from "@readcache/core/rules";
 * unchangedMarker(120); // "[readcache: unchanged, 120 lines]"
 * ```
 */
export function unchangedMarker(totalLines: number): string {
  return `[readcache: unchanged, ${lines(totalLines)}]`;
}

/**
 * Marker for an unchanged range of an unchanged file.
 *
 * @example
 * ```ts
 * import { unchangedRangeMarker } from "@readcache/core/rules";
 * unchangedRangeMarker(10, 20, 120); // "[readcache: unchanged in lines 10-20 of 120]"
 * ```
 */
export function unchangedRangeMarker(start: number, end: number, totalLines: number): string {
  return `[readcache: unchanged in lines ${start}-${end} of ${totalLines}]`;
}

/**
 * Marker for an unchanged range of a file that changed elsewhere.
 *
 * @example
 * ```ts
 * import { unchangedRangeElsewhereMarker } from "@readcache/core/rules";
 * unchangedRangeElsewhereMarker(10, 20);
 * // "[readcache: unchanged in lines 10-20; changes exist outside this range]"
 * ```
 */
export function unchangedRangeElsewhereMarker(start: number, end: number): string {
  return `[readcache: unchanged in lines ${start}-${end}; changes exist outside this range]`;
}

/**
 * Header line of a diff payload.
 *
 * @example
 * ```ts
 * import { diffHeader } from "@readcache/core/rules";
 * diffHeader(2, 120); // "[readcache: 2 lines changed of 120]"
 * ```
 */
export function diffHeader(changedLines: number, totalLines: number): string {
  return `[readcache: ${lines(changedLines)} changed of ${totalLines}]`;
}

/**
 * Header line of a range diff payload (SPEC §8.2): the lines `start..end` the
 * model holds changed; the hunks that follow use line numbers of the file.
 *
 * @example
 * ```ts
 * import { rangeDiffHeader } from "@readcache/core/rules";
 * rangeDiffHeader(2, 50, 250, 3001); // "[readcache: 2 lines changed in lines 50-250 of 3001]"
 * ```
 */
export function rangeDiffHeader(
  changedLines: number,
  start: number,
  end: number,
  totalLines: number,
): string {
  return `[readcache: ${lines(changedLines)} changed in lines ${start}-${end} of ${totalLines}]`;
}

/**
 * A partial answer (SPEC §8.4): a marker naming the lines of the request the
 * model holds unchanged, then each other stretch of lines under its own
 * `[lines A-B]` header. `lines` are the file's lines (`text.split("\n")`),
 * `held` and `shown` sorted stretches that together make the request.
 *
 * @example
 * ```ts
 * import { partialAnswer } from "@readcache/core/rules";
 * partialAnswer(["a", "b", "c", "d"], [{ start: 1, end: 2 }], [{ start: 3, end: 4 }], 4);
 * // "[readcache: unchanged in lines 1-2 of 4; the other lines follow]\n[lines 3-4]\nc\nd"
 * ```
 */
export function partialAnswer(
  lines: readonly string[],
  held: readonly { start: number; end: number }[],
  shown: readonly { start: number; end: number }[],
  totalLines: number,
): string {
  const span = (s: { start: number; end: number }) =>
    s.start === s.end ? `${s.start}` : `${s.start}-${s.end}`;
  // stretches that touch (held from two contents) read as one
  const joined: { start: number; end: number }[] = [];
  for (const h of held) {
    const last = joined.at(-1);
    if (last !== undefined && h.start === last.end + 1) last.end = h.end;
    else joined.push({ start: h.start, end: h.end });
  }
  const list = joined.map(span).join(", ");
  const out = [`[readcache: unchanged in lines ${list} of ${totalLines}; the other lines follow]`];
  for (const s of shown) {
    out.push(
      `[${s.start === s.end ? "line" : "lines"} ${span(s)}]`,
      ...lines.slice(s.start - 1, s.end),
    );
  }
  return out.join("\n");
}
