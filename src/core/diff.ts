/**
 * Unified diff between two texts (base -> current), formatted the way the read
 * cache serves it: `--- a/<path>`, `+++ b/<path>`, then hunks with 3 lines of
 * context. Built on `npm:diff`.
 *
 * Specified by SPEC.md §8.2.
 *
 * @module
 */
import { structuredPatch } from "diff";

/**
 * A unified diff and its size.
 *
 * @example
 * ```ts
 * import type { UnifiedDiff } from "@readcache/core/rules";
 * const d: UnifiedDiff = { text: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b", changedLines: 2, hunks: 1 };
 * ```
 */
export interface UnifiedDiff {
  /** The diff text, without a trailing newline. */
  text: string;
  /** Added plus removed lines. */
  changedLines: number;
  /** Number of hunks. */
  hunks: number;
}

function range(start: number, count: number): string {
  // unified diff convention: an empty side starts one line before
  const s = count === 0 ? start - 1 : start;
  return count === 1 ? `${s}` : `${s},${count}`;
}

/**
 * Computes the unified diff from `base` to `current`, labelling the sides
 * `a/<displayPath>` and `b/<displayPath>`.
 *
 * @example
 * ```ts
 * import { unifiedDiff } from "@readcache/core/rules";
 * unifiedDiff("x\ny\n", "x\nz\n", "f.txt").text;
 * // "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n x\n-y\n+z"
 * ```
 */
export function unifiedDiff(
  base: string,
  current: string,
  displayPath: string,
  lineOffset = 0,
): UnifiedDiff {
  const patch = structuredPatch(`a/${displayPath}`, `b/${displayPath}`, base, current, "", "", {
    context: 3,
  });
  const out = [`--- a/${displayPath}`, `+++ b/${displayPath}`];
  let changed = 0;
  for (const h of patch.hunks) {
    out.push(
      `@@ -${range(h.oldStart + lineOffset, h.oldLines)} +${
        range(h.newStart + lineOffset, h.newLines)
      } @@`,
    );
    for (const line of h.lines) {
      if (line.startsWith("+") || line.startsWith("-")) changed++;
      out.push(line);
    }
  }
  return { text: out.join("\n"), changedLines: changed, hunks: patch.hunks.length };
}
