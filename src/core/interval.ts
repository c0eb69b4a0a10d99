/**
 * Stretches of line numbers as `[first, last]` pairs (inclusive), for the
 * views of the model's context (SPEC §5.5, §5.9). Internal: not part of the
 * public surface.
 *
 * @module
 */

/**
 * Lines `first..last`, 1-based, inclusive.
 *
 * @example
 * ```ts
 * import type { Interval } from "./interval.ts";
 * const lines: Interval = [3, 7];
 * ```
 */
export type Interval = [number, number];

/**
 * `parts` without the lines `start..end`.
 *
 * @example
 * ```ts
 * import { subtractLines } from "./interval.ts";
 * subtractLines([[1, 10]], 4, 6); // [[1, 3], [7, 10]]
 * ```
 */
export function subtractLines(parts: readonly Interval[], start: number, end: number): Interval[] {
  const out: Interval[] = [];
  for (const [a, b] of parts) {
    if (b < start || a > end) {
      out.push([a, b]);
      continue;
    }
    if (a < start) out.push([a, start - 1]);
    if (b > end) out.push([end + 1, b]);
  }
  return out;
}

/**
 * The lines of `parts` within `start..end`.
 *
 * @example
 * ```ts
 * import { overlapLines } from "./interval.ts";
 * overlapLines([[1, 3], [7, 10]], 2, 8); // [[2, 3], [7, 8]]
 * ```
 */
export function overlapLines(parts: readonly Interval[], start: number, end: number): Interval[] {
  const out: Interval[] = [];
  for (const [a, b] of parts) {
    const x = Math.max(a, start);
    const y = Math.min(b, end);
    if (x <= y) out.push([x, y]);
  }
  return out;
}
