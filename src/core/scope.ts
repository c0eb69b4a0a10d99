/**
 * Scope keys name the part of a file a trust slot covers: the whole file
 * (`"full"`) or an inclusive 1-based line range (`"r:<start>:<end>"`).
 *
 * Specified by SPEC.md §4.3.
 *
 * @module
 */

/** The scope key of a whole-file read. */
export const FULL_SCOPE = "full" as const;

/**
 * A scope key: `"full"` or `` `r:${start}:${end}` ``.
 *
 * @example
 * ```ts
 * import type { ScopeKey } from "@readcache/core/rules";
 * const a: ScopeKey = "full";
 * const b: ScopeKey = "r:10:20";
 * ```
 */
export type ScopeKey = "full" | `r:${number}:${number}`;

/** An inclusive, 1-based line range. */
export interface LineRange {
  /** First line, 1-based. */
  start: number;
  /** Last line, inclusive. */
  end: number;
}

const RANGE_SCOPE = /^r:([1-9][0-9]*):([1-9][0-9]*)$/;

/**
 * The scope key for lines `start..end` of a file with `totalLines` lines:
 * `"full"` exactly when the range spans the whole file.
 *
 * @example
 * ```ts
 * import { scopeKeyFor } from "@readcache/core/rules";
 * scopeKeyFor(1, 10, 10); // "full"
 * scopeKeyFor(2, 10, 10); // "r:2:10"
 * ```
 */
export function scopeKeyFor(start: number, end: number, totalLines: number): ScopeKey {
  return start === 1 && end === totalLines ? FULL_SCOPE : `r:${start}:${end}`;
}

/**
 * Parses a scope key. Returns `"full"`, a {@linkcode LineRange}, or
 * `undefined` when the string is not a well-formed scope key (range keys need
 * positive integers without leading zeros and `end >= start`).
 *
 * @example
 * ```ts
 * import { parseScopeKey } from "@readcache/core/rules";
 * parseScopeKey("r:3:7"); // { start: 3, end: 7 }
 * parseScopeKey("r:7:3"); // undefined
 * ```
 */
export function parseScopeKey(key: string): typeof FULL_SCOPE | LineRange | undefined {
  if (key === FULL_SCOPE) return FULL_SCOPE;
  const m = RANGE_SCOPE.exec(key);
  if (!m) return undefined;
  const start = Number(m[1]);
  const end = Number(m[2]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start) return undefined;
  return { start, end };
}

/**
 * True when `key` is a well-formed scope key.
 *
 * @example
 * ```ts
 * import { isScopeKey } from "@readcache/core/rules";
 * isScopeKey("r:1:2"); // true
 * isScopeKey("r:0:2"); // false
 * ```
 */
export function isScopeKey(key: string): key is ScopeKey {
  return parseScopeKey(key) !== undefined;
}
