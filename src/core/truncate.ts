/**
 * Head truncation with the same limits and semantics as pi's built-in read
 * tool: keep whole lines from the start of the content until either the line
 * limit (2000 lines) or the byte limit (50 KiB of UTF-8) would be exceeded,
 * whichever comes first. Partial lines are never returned.
 *
 * Specified by SPEC.md §7.2.
 *
 * @module
 */

/** Default maximum number of lines kept by {@linkcode truncateHead}. */
export const DEFAULT_MAX_LINES: number = 2000;

/** Default maximum number of UTF-8 bytes kept by {@linkcode truncateHead} (50 KiB). */
export const DEFAULT_MAX_BYTES: number = 51200;

/**
 * Outcome of {@linkcode truncateHead}. Field-for-field identical to the
 * `details.truncation` object pi's read tool reports.
 *
 * @example
 * ```ts
 * import { truncateHead, type TruncationResult } from "@readcache/core/rules";
 * const result: TruncationResult = truncateHead("a\nb\nc", { maxLines: 2 });
 * console.log(result.truncatedBy); // "lines"
 * ```
 */
export interface TruncationResult {
  /** The kept content (whole lines joined with `\n`). */
  content: string;
  /** Whether anything was dropped. */
  truncated: boolean;
  /** Which limit caused the truncation, or `null` when nothing was dropped. */
  truncatedBy: "lines" | "bytes" | null;
  /** Lines in the input (`content.split("\n").length`). */
  totalLines: number;
  /** UTF-8 bytes in the input. */
  totalBytes: number;
  /** Lines kept. */
  outputLines: number;
  /** UTF-8 bytes kept. */
  outputBytes: number;
  /** Always `false` for head truncation (whole lines only). */
  lastLinePartial: boolean;
  /** True when the first line alone is larger than the byte limit (nothing kept). */
  firstLineExceedsLimit: boolean;
  /** The line limit that was applied. */
  maxLines: number;
  /** The byte limit that was applied. */
  maxBytes: number;
}

/**
 * Limits for {@linkcode truncateHead}. Omitted limits take the defaults
 * {@linkcode DEFAULT_MAX_LINES} and {@linkcode DEFAULT_MAX_BYTES}.
 *
 * @example
 * ```ts
 * import type { TruncationOptions } from "@readcache/core/rules";
 * const options: TruncationOptions = { maxLines: 100, maxBytes: 4096 };
 * ```
 */
export interface TruncationOptions {
  /** Maximum number of lines to keep. */
  maxLines?: number;
  /** Maximum number of UTF-8 bytes to keep. */
  maxBytes?: number;
}

/**
 * Number of bytes in the UTF-8 encoding of `text`. Lone surrogates count as
 * U+FFFD (3 bytes), matching `Buffer.byteLength` and `TextEncoder`.
 */
function utf8ByteLength(text: string): number {
  let bytes = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) {
      bytes += 1;
    } else if (unit < 0x800) {
      bytes += 2;
    } else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else {
        bytes += 3;
      }
    } else {
      bytes += 3;
    }
  }
  return bytes;
}

/**
 * Format a byte count the way pi does: `512B` below 1 KiB, `50.0KB` below
 * 1 MiB, `1.2MB` otherwise (one decimal, binary units).
 *
 * @example
 * ```ts
 * import { formatSize } from "@readcache/core/rules";
 * formatSize(512); // "512B"
 * formatSize(51200); // "50.0KB"
 * formatSize(1258291); // "1.2MB"
 * ```
 */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

/**
 * Keep the first whole lines of `content` that fit in both the line and the
 * byte limit. If the first line alone exceeds the byte limit, nothing is kept
 * and `firstLineExceedsLimit` is `true`. Byte counts are UTF-8; each kept line
 * after the first also counts its preceding `\n`.
 *
 * @example
 * ```ts
 * import { truncateHead } from "@readcache/core/rules";
 * const result = truncateHead("one\ntwo\nthree", { maxBytes: 7 });
 * console.log(result.content); // "one\ntwo"
 * console.log(result.truncatedBy); // "bytes"
 * ```
 */
export function truncateHead(content: string, options: TruncationOptions = {}): TruncationResult {
  const maxLines: number = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes: number = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const totalBytes: number = utf8ByteLength(content);
  const lines: string[] = content.split("\n");
  const totalLines: number = lines.length;

  if (totalLines <= maxLines && totalBytes <= maxBytes) {
    return {
      content,
      truncated: false,
      truncatedBy: null,
      totalLines,
      totalBytes,
      outputLines: totalLines,
      outputBytes: totalBytes,
      lastLinePartial: false,
      firstLineExceedsLimit: false,
      maxLines,
      maxBytes,
    };
  }

  if (utf8ByteLength(lines[0]) > maxBytes) {
    return {
      content: "",
      truncated: true,
      truncatedBy: "bytes",
      totalLines,
      totalBytes,
      outputLines: 0,
      outputBytes: 0,
      lastLinePartial: false,
      firstLineExceedsLimit: true,
      maxLines,
      maxBytes,
    };
  }

  let kept = 0;
  let keptBytes = 0;
  let truncatedBy: "lines" | "bytes" = "lines";
  while (kept < totalLines && kept < maxLines) {
    const cost = utf8ByteLength(lines[kept]) + (kept > 0 ? 1 : 0);
    if (keptBytes + cost > maxBytes) {
      truncatedBy = "bytes";
      break;
    }
    keptBytes += cost;
    kept++;
  }
  // Reaching the line limit takes precedence in the reported reason (pi's rule).
  if (kept >= maxLines && keptBytes <= maxBytes) truncatedBy = "lines";

  const output: string = lines.slice(0, kept).join("\n");
  return {
    content: output,
    truncated: true,
    truncatedBy,
    totalLines,
    totalBytes,
    outputLines: kept,
    outputBytes: utf8ByteLength(output),
    lastLinePartial: false,
    firstLineExceedsLimit: false,
    maxLines,
    maxBytes,
  };
}
