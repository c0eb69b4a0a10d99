/**
 * Typed errors raised by `@readcache/core`.
 *
 * Every error carries a stable machine-readable {@linkcode ReadCacheError.code}
 * so callers (and ports) can branch on it without parsing the message. Messages
 * say what was wrong and what to do instead.
 *
 * Specified by SPEC.md §2 (invariant 5), §4.2.
 *
 * @module
 */

/**
 * Stable error codes. Adding a code is a minor change; renaming one is breaking.
 *
 * @example
 * ```ts
 * import type { ReadCacheErrorCode } from "@readcache/core";
 * const code: ReadCacheErrorCode = "INVALID_RANGE";
 * ```
 */
export type ReadCacheErrorCode =
  | "INVALID_RANGE"
  | "OFFSET_BEYOND_END"
  | "INVALID_PATH"
  | "INVALID_HASH"
  | "STORE_WRITE_FAILED"
  | "INVALID_VECTOR"
  | "INVALID_ARGUMENT"
  | "FILE_NOT_FOUND"
  | "NOT_A_FILE"
  | "PERMISSION_DENIED"
  | "LINK_LOOP"
  | "READ_FAILED";

/**
 * Base class of every error thrown by this library.
 *
 * @example
 * ```ts
 * import { ReadCacheError } from "@readcache/core";
 * try {
 *   throw new ReadCacheError("INVALID_ARGUMENT", "limit must be a positive integer, got -1");
 * } catch (e) {
 *   if (e instanceof ReadCacheError) console.log(e.code);
 * }
 * ```
 */
export class ReadCacheError extends Error {
  /** Stable machine-readable code. */
  readonly code: ReadCacheErrorCode;

  /**
   * Creates an error with a stable code.
   *
   * @param code stable error code
   * @param message human-readable message naming the bad value and the fix
   */
  constructor(code: ReadCacheErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ReadCacheError";
    this.code = code;
  }
}

/**
 * A line range (from `path:N-M` shorthand or `offset`/`limit`) is malformed.
 *
 * @example
 * ```ts
 * import { RangeSyntaxError } from "@readcache/core";
 * const err = new RangeSyntaxError("line numbers must be positive integers, got '0'");
 * console.log(err.code); // "INVALID_RANGE"
 * ```
 */
export class RangeSyntaxError extends ReadCacheError {
  /**
   * Creates an `INVALID_RANGE` error.
   *
   * @param message what was wrong and the accepted forms
   */
  constructor(message: string) {
    super("INVALID_RANGE", message);
    this.name = "RangeSyntaxError";
  }
}

/**
 * The requested `offset` lies past the last line of the file. The message is
 * byte-identical to pi's built-in read tool.
 *
 * @example
 * ```ts
 * import { OffsetBeyondEndError } from "@readcache/core";
 * const err = new OffsetBeyondEndError(10, 3);
 * console.log(err.message); // "Offset 10 is beyond end of file (3 lines total)"
 * ```
 */
export class OffsetBeyondEndError extends ReadCacheError {
  /** The offset that was requested. */
  readonly offset: number;
  /** The number of lines in the file. */
  readonly totalLines: number;

  /**
   * Creates an `OFFSET_BEYOND_END` error with pi's message.
   *
   * @param offset requested 1-based start line
   * @param totalLines lines in the file
   */
  constructor(offset: number, totalLines: number) {
    super(
      "OFFSET_BEYOND_END",
      `Offset ${offset} is beyond end of file (${totalLines} lines total)`,
    );
    this.name = "OffsetBeyondEndError";
    this.offset = offset;
    this.totalLines = totalLines;
  }
}

/**
 * A file the host asked to read could not be read: missing (`FILE_NOT_FOUND`),
 * a directory (`NOT_A_FILE`), not permitted (`PERMISSION_DENIED`), a symbolic
 * link loop (`LINK_LOOP`), or another file system error (`READ_FAILED`). The
 * system's error is its `cause`; `path` is the path that was resolved.
 *
 * @example
 * ```ts
 * import { createReadCache, FileReadError } from "@readcache/core";
 * const cache = createReadCache({ cwd: Deno.makeTempDirSync(), store: "memory" });
 * try {
 *   await cache.read({ path: "missing.txt" });
 * } catch (e) {
 *   if (e instanceof FileReadError) e.code; // "FILE_NOT_FOUND"
 * }
 * ```
 */
export class FileReadError extends ReadCacheError {
  /** The resolved path that could not be read. */
  readonly path: string;

  /** `code` says what failed, `path` where, `cause` the system's error. */
  constructor(code: ReadCacheErrorCode, path: string, message: string, cause?: unknown) {
    super(code, message, { cause });
    this.name = "FileReadError";
    this.path = path;
  }
}
