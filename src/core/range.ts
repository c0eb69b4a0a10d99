/**
 * `path:N` / `path:N-M` shorthand parsing and line-range normalisation.
 *
 * Pure: file existence is injected through {@linkcode PathEnv}.
 *
 * Specified by SPEC.md §4.
 *
 * @module
 */
import { OffsetBeyondEndError, RangeSyntaxError } from "./errors.ts";
import { type PathEnv, resolveReadPath } from "./path.ts";
import { type ScopeKey, scopeKeyFor } from "./scope.ts";

/**
 * The arguments of a `read` call, as the model sent them.
 *
 * @example
 * ```ts
 * import type { ReadRequest } from "@readcache/core/rules";
 * const req: ReadRequest = { path: "src/app.ts:10-20" };
 * ```
 */
export interface ReadRequest {
  /** Path as typed, possibly with a `:N` or `:N-M` suffix. */
  path: string;
  /** 1-based first line. */
  offset?: number;
  /** Maximum number of lines. */
  limit?: number;
}

/**
 * A read request after path resolution and shorthand parsing.
 *
 * @example
 * ```ts
 * import type { ReadTarget } from "@readcache/core/rules";
 * const t: ReadTarget = { displayPath: "a.ts", resolvedPath: "/w/a.ts", offset: 3, fromShorthand: true };
 * ```
 */
export interface ReadTarget {
  /** The path as the model typed it, without a parsed range suffix. */
  displayPath: string;
  /** Absolute path after pi's resolution rules. */
  resolvedPath: string;
  /** 1-based first line, when given. */
  offset?: number;
  /** Maximum number of lines, when given. */
  limit?: number;
  /** True when offset/limit came from a `path:N-M` suffix. */
  fromShorthand: boolean;
}

const ACCEPTED_FORMS =
  "Accepted forms: 'path:N' (line N to the end of the file) or 'path:N-M' (lines N to M, M >= N), with N and M positive integers; or pass offset/limit instead.";

/** The largest line number, offset or limit accepted: 2^53 - 1. */
export const MAX_LINE: number = Number.MAX_SAFE_INTEGER;

function parseLineNumber(part: string, suffix: string, path: string): number {
  if (part === "") {
    throw new RangeSyntaxError(
      `Invalid line range ':${suffix}' in '${path}': a line number is missing. ${ACCEPTED_FORMS}`,
    );
  }
  if (!/^[0-9]+$/.test(part) || Number(part) < 1) {
    throw new RangeSyntaxError(
      `Invalid line range ':${suffix}' in '${path}': '${part}' is not a positive integer. ${ACCEPTED_FORMS}`,
    );
  }
  if (!Number.isSafeInteger(Number(part))) {
    throw new RangeSyntaxError(
      `Invalid line range ':${suffix}' in '${path}': '${part}' is too large (at most ${MAX_LINE}). ${ACCEPTED_FORMS}`,
    );
  }
  return Number(part);
}

/**
 * Parses the text after the last `:` of a path as a line range. Throws
 * {@linkcode RangeSyntaxError} naming the bad value when it is malformed.
 *
 * @example
 * ```ts
 * import { parseRangeSuffix } from "@readcache/core/rules";
 * parseRangeSuffix("10-20", "a.ts:10-20"); // { offset: 10, limit: 11 }
 * parseRangeSuffix("7", "a.ts:7"); // { offset: 7 }
 * ```
 */
export function parseRangeSuffix(suffix: string, path: string): { offset: number; limit?: number } {
  const dash = suffix.indexOf("-");
  if (dash === -1) return { offset: parseLineNumber(suffix, suffix, path) };
  const start = parseLineNumber(suffix.slice(0, dash), suffix, path);
  const end = parseLineNumber(suffix.slice(dash + 1), suffix, path);
  if (end < start) {
    throw new RangeSyntaxError(
      `Invalid line range ':${suffix}' in '${path}': end ${end} is before start ${start}. ${ACCEPTED_FORMS}`,
    );
  }
  return { offset: start, limit: end - start + 1 };
}

/**
 * Checks explicit `offset`/`limit` arguments: when present they must be
 * positive integers. Throws {@linkcode RangeSyntaxError} otherwise.
 *
 * @example
 * ```ts
 * import { validateLineArgs } from "@readcache/core/rules";
 * validateLineArgs(5, 10); // ok
 * // validateLineArgs(0, undefined) throws: offset must be a positive integer
 * ```
 */
export function validateLineArgs(offset: number | undefined, limit: number | undefined): void {
  for (const [name, value] of [["offset", offset], ["limit", limit]] as const) {
    if (value !== undefined && Number.isInteger(value) && value > MAX_LINE) {
      throw new RangeSyntaxError(
        `Invalid ${name} ${value}: ${name} is too large (at most ${MAX_LINE}); pass a smaller ${name}, or omit it.`,
      );
    }
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) {
      throw new RangeSyntaxError(
        `Invalid ${name} ${value}: ${name} must be a positive integer (1 or more), or omitted.`,
      );
    }
  }
}

/**
 * Resolves the path of a read request and applies `path:N-M` shorthand.
 *
 * The suffix is parsed only when `offset` and `limit` are both absent, the raw
 * path does not exist, and the path before the last `:` does; when both exist
 * the raw path wins. A malformed suffix on an existing candidate throws
 * {@linkcode RangeSyntaxError}; so do explicit offset/limit values that are not
 * positive integers.
 *
 * @example
 * ```ts
 * import { resolveReadTarget } from "@readcache/core/rules";
 * const env = { cwd: "/w", home: "/h", exists: (p: string) => p === "/w/a.ts" };
 * resolveReadTarget({ path: "a.ts:3-4" }, env);
 * // { displayPath: "a.ts", resolvedPath: "/w/a.ts", offset: 3, limit: 2, fromShorthand: true }
 * ```
 */
export function resolveReadTarget(req: ReadRequest, env: PathEnv): ReadTarget {
  validateLineArgs(req.offset, req.limit);
  const resolvedPath = resolveReadPath(req.path, env);
  const plain: ReadTarget = { displayPath: req.path, resolvedPath, fromShorthand: false };
  if (req.offset !== undefined) plain.offset = req.offset;
  if (req.limit !== undefined) plain.limit = req.limit;
  if (req.offset !== undefined || req.limit !== undefined) return plain;
  if (env.exists(resolvedPath)) return plain;
  const colon = req.path.lastIndexOf(":");
  if (colon <= 0) return plain;
  const candidate = req.path.slice(0, colon);
  const candidatePath = resolveReadPath(candidate, env);
  if (!env.exists(candidatePath)) return plain;
  const range = parseRangeSuffix(req.path.slice(colon + 1), req.path);
  const target: ReadTarget = {
    displayPath: candidate,
    resolvedPath: candidatePath,
    offset: range.offset,
    fromShorthand: true,
  };
  if (range.limit !== undefined) target.limit = range.limit;
  return target;
}

/**
 * A requested line range normalised against the file.
 *
 * @example
 * ```ts
 * import type { NormalizedRange } from "@readcache/core/rules";
 * const r: NormalizedRange = { start: 1, end: 3, totalLines: 3, scopeKey: "full" };
 * ```
 */
export interface NormalizedRange {
  /** First requested line, 1-based. */
  start: number;
  /** Last requested line, clamped to the file. */
  end: number;
  /** Lines in the file (pi's count: `text.split("\n").length`). */
  totalLines: number;
  /** `"full"` when the range is the whole file, else `r:<start>:<end>`. */
  scopeKey: ScopeKey;
}

/**
 * Counts lines the way pi's read tool does: `text.split("\n").length`, so a
 * trailing newline adds an empty last line and an empty file has one line.
 *
 * @example
 * ```ts
 * import { countLines } from "@readcache/core/rules";
 * countLines("a\nb\n"); // 3
 * ```
 */
export function countLines(text: string): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * Normalises offset/limit against a file of `totalLines` lines:
 * `start = offset ?? 1`, `end = limit ? start + limit - 1 : totalLines`, clamped
 * to `totalLines`. Throws {@linkcode OffsetBeyondEndError} (pi's message) when
 * `start > totalLines`, and {@linkcode RangeSyntaxError} for non-positive or
 * non-integer values.
 *
 * @example
 * ```ts
 * import { normalizeRange } from "@readcache/core/rules";
 * normalizeRange(2, 100, 10); // { start: 2, end: 10, totalLines: 10, scopeKey: "r:2:10" }
 * ```
 */
export function normalizeRange(
  offset: number | undefined,
  limit: number | undefined,
  totalLines: number,
): NormalizedRange {
  validateLineArgs(offset, limit);
  const start = offset ?? 1;
  if (start > totalLines) throw new OffsetBeyondEndError(start, totalLines);
  const end = Math.min(limit !== undefined ? start + limit - 1 : totalLines, totalLines);
  return { start, end, totalLines, scopeKey: scopeKeyFor(start, end, totalLines) };
}
