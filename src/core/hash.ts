/**
 * SHA-256 content hashing. Hashes are lowercase hex, 64 characters, computed
 * over the exact bytes of a file (a UTF-8 BOM stays in the hashed bytes).
 *
 * Specified by SPEC.md §5.1.
 *
 * @module
 */
import { createHash } from "node:crypto";

/** Matches a valid content hash: 64 lowercase hex digits. */
export const HASH_PATTERN: RegExp = /^[0-9a-f]{64}$/;

/**
 * SHA-256 of the given bytes (or of the UTF-8 encoding of a string), as
 * lowercase hex.
 *
 * @example
 * ```ts
 * import { sha256Hex } from "@readcache/core/rules";
 * sha256Hex("abc"); // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
 * ```
 */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * True when `value` is a well-formed content hash (64 lowercase hex digits).
 *
 * @example
 * ```ts
 * import { isContentHash } from "@readcache/core/rules";
 * isContentHash("abc"); // false
 * ```
 */
export function isContentHash(value: string): boolean {
  return HASH_PATTERN.test(value);
}
