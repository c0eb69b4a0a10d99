/**
 * Canonical file identity (`pathKey`), kept separate from path resolution and
 * from the display path the model typed.
 *
 * Specified by SPEC.md §3.2.
 *
 * @module
 */

/**
 * Computes the canonical identity of a resolved path: its realpath when the
 * file exists (so a symlink and its target share one key), else the resolved
 * absolute path itself. `realpath` is injected and returns `undefined` when the
 * path does not exist or cannot be resolved.
 *
 * @example
 * ```ts
 * import { canonicalPathKey } from "@readcache/core/rules";
 * const links: Record<string, string> = { "/w/link.ts": "/w/real.ts", "/w/real.ts": "/w/real.ts" };
 * canonicalPathKey("/w/link.ts", (p) => links[p]); // "/w/real.ts"
 * canonicalPathKey("/w/missing.ts", (p) => links[p]); // "/w/missing.ts"
 * ```
 */
export function canonicalPathKey(
  resolvedPath: string,
  realpath: (path: string) => string | undefined,
): string {
  return realpath(resolvedPath) ?? resolvedPath;
}
