/**
 * Paths the read cache never optimises or stores (secrets). Matching is on the
 * file's base name, case-insensitive, with `*` as the only wildcard.
 *
 * @module
 */

/** Default sensitive base-name patterns. */
export const DEFAULT_SENSITIVE_PATTERNS: readonly string[] = [
  ".env*",
  "*.pem",
  "*.key",
  "*.p12",
  "*.pfx",
  "*.crt",
  "*.cer",
  "*.der",
  "*.pk8",
  "id_rsa",
  "id_ed25519",
  ".npmrc",
  ".netrc",
];

function toRegExp(pattern: string): RegExp {
  const body = pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  return new RegExp(`^${body}$`, "i");
}

/**
 * True when the base name of `path` matches one of `patterns`.
 *
 * @example
 * ```ts
 * import { isSensitivePath } from "@readcache/core";
 * isSensitivePath("/w/.env.local"); // true
 * isSensitivePath("/w/src/env.ts"); // false
 * ```
 */
export function isSensitivePath(
  path: string,
  patterns: readonly string[] = DEFAULT_SENSITIVE_PATTERNS,
): boolean {
  const base = path.split(/[\\/]/).pop() ?? path;
  return patterns.some((p) => toRegExp(p).test(base));
}
