/**
 * Explicit refresh (`/readcache-refresh <path> [start-end]` and the
 * `readcache_refresh` tool): parsing the command's arguments and building the
 * persistent invalidation record. Pure.
 *
 * Specified by SPEC.md §11.2.
 *
 * @module
 */
import { ReadCacheError } from "./errors.ts";
import type { ReadCacheInvalidationV1 } from "./meta.ts";
import { normalizeRange, parseRangeSuffix, type ReadRequest } from "./range.ts";
import { FULL_SCOPE, type ScopeKey } from "./scope.ts";

/** Usage line of the refresh command, used in its error messages. */
export const REFRESH_USAGE = "usage: /readcache-refresh <path> [start-end]";

function unquote(s: string): string {
  const t = s.trim();
  if (t.length >= 2 && (t[0] === '"' || t[0] === "'") && t[t.length - 1] === t[0]) {
    return t.slice(1, -1);
  }
  return t;
}

/**
 * Parses the argument text of `/readcache-refresh`. The last word is taken as
 * a line range when it looks like one (`N`, `N-M`, or a malformed attempt such
 * as `N-`, which is rejected); everything before it is the path, which may
 * contain spaces and may be quoted. A `path:N-M` suffix is left in the path, where read
 * resolution handles it. Throws `ReadCacheError` (`INVALID_ARGUMENT`) for an
 * empty path and `RangeSyntaxError` for a malformed range.
 *
 * @example
 * ```ts
 * import { parseRefreshArgs } from "@readcache/core/rules";
 * parseRefreshArgs("src/app.ts 10-20"); // { path: "src/app.ts", offset: 10, limit: 11 }
 * parseRefreshArgs("'my notes.md'"); // { path: "my notes.md" }
 * ```
 */
export function parseRefreshArgs(args: string): ReadRequest {
  const text = args.trim();
  const m = /^(.*\S)\s+(\d+(?:-\d*)?|\d*-\d+)$/.exec(text);
  if (m) {
    const path = unquote(m[1]);
    if (path !== "") return { path, ...parseRangeSuffix(m[2], `${path} ${m[2]}`) };
  }
  const path = unquote(text);
  if (path === "") {
    throw new ReadCacheError("INVALID_ARGUMENT", `No path given. ${REFRESH_USAGE}`);
  }
  return { path };
}

/**
 * The scope an invalidation of `offset`/`limit` drops, normalised like a read
 * of the same range so that it names the same scope key: `"full"` without a
 * range (every scope of the file), else the clamped `r:<start>:<end>` (or
 * `"full"` when the range covers the whole file). `totalLines` is needed only
 * for a range.
 *
 * @example
 * ```ts
 * import { invalidationScope } from "@readcache/core/rules";
 * invalidationScope(5, 3, 40); // "r:5:7"
 * invalidationScope(undefined, undefined, undefined); // "full"
 * ```
 */
export function invalidationScope(
  offset: number | undefined,
  limit: number | undefined,
  totalLines: number | undefined,
): ScopeKey {
  if (offset === undefined && limit === undefined) return FULL_SCOPE;
  if (totalLines === undefined) {
    throw new ReadCacheError(
      "INVALID_ARGUMENT",
      "A line range can only be refreshed for a file that exists; refresh the whole file instead.",
    );
  }
  return normalizeRange(offset, limit, totalLines).scopeKey;
}

/**
 * Builds the `pi-readcache` custom entry data of an invalidation.
 *
 * @example
 * ```ts
 * import { invalidationRecord } from "@readcache/core/rules";
 * invalidationRecord("/w/a.ts", "full", 1_700_000_000_000);
 * // { v: 1, kind: "invalidate", pathKey: "/w/a.ts", scopeKey: "full", at: 1700000000000 }
 * ```
 */
export function invalidationRecord(
  pathKey: string,
  scopeKey: ScopeKey,
  at: number,
): ReadCacheInvalidationV1 {
  return { v: 1, kind: "invalidate", pathKey, scopeKey, at };
}
