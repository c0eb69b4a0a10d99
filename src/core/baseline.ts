/**
 * The text pi's built-in `read` tool returns for a text file, as a pure
 * function of the decoded file text and the call's `path`/`offset`/`limit`.
 * The output is byte-identical to pi's, including its continuation notices,
 * and the truncation details match pi's `details.truncation`.
 *
 * Specified by SPEC.md §7.2.
 *
 * @module
 */
import { OffsetBeyondEndError } from "./errors.ts";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  formatSize,
  truncateHead,
  type TruncationResult,
} from "./truncate.ts";

/**
 * Input of {@linkcode renderBaselineRead}.
 *
 * @example
 * ```ts
 * import type { BaselineReadInput } from "@readcache/core/rules";
 * const input: BaselineReadInput = { text: "a\nb\n", displayPath: "notes.txt", offset: 2 };
 * ```
 */
export interface BaselineReadInput {
  /**
   * The whole file decoded as UTF-8 the way Node's `Buffer#toString("utf-8")`
   * does it (a leading BOM is kept as U+FEFF; invalid bytes become U+FFFD).
   */
  text: string;
  /** The path exactly as the caller passed it to the tool; used verbatim in messages. */
  displayPath: string;
  /** 1-based first line to show. `undefined` or `0` means line 1. */
  offset?: number;
  /** Maximum number of lines to show. `undefined` means no limit besides truncation. */
  limit?: number;
}

/**
 * Output of {@linkcode renderBaselineRead}.
 *
 * @example
 * ```ts
 * import { renderBaselineRead, type BaselineReadOutput } from "@readcache/core/rules";
 * const out: BaselineReadOutput = renderBaselineRead({ text: "a\nb", displayPath: "f.txt" });
 * console.log(out.shownStart, out.shownEnd); // 1 2
 * ```
 */
export interface BaselineReadOutput {
  /** Exactly the text pi's read tool returns. */
  text: string;
  /** Exactly pi's `details.truncation`; present only when pi sets it. */
  truncation?: TruncationResult;
  /** Lines in the file as pi counts them: `text.split("\n").length`. */
  totalLines: number;
  /** 1-based number of the first line shown. */
  shownStart: number;
  /**
   * 1-based number of the last line shown; `shownStart - 1` when no line was
   * shown (the first selected line alone exceeds the byte limit).
   */
  shownEnd: number;
}

/**
 * Render what pi's read tool returns for a text file.
 *
 * Semantics (all identical to pi): lines are split on `\n` only (a `\r` stays
 * in the line, a trailing newline yields a final empty line); `offset` is
 * 1-based and a falsy offset means line 1; `limit` slices before truncation;
 * the result is then truncated to 2000 lines / 50 KiB with a
 * `[Showing lines X-Y of Z. Use offset=N to continue.]` notice, or a
 * `[N more lines in file. Use offset=N to continue.]` notice when only the
 * limit stopped early.
 *
 * @throws {OffsetBeyondEndError} when `offset` points past the last line.
 *
 * @example
 * ```ts
 * import { renderBaselineRead } from "@readcache/core/rules";
 * const out = renderBaselineRead({ text: "a\nb\nc", displayPath: "f.txt", limit: 1 });
 * console.log(out.text); // "a\n\n[2 more lines in file. Use offset=2 to continue.]"
 * ```
 */
export function renderBaselineRead(input: BaselineReadInput): BaselineReadOutput {
  const { text, displayPath, offset, limit } = input;
  const allLines: string[] = text.split("\n");
  const totalLines: number = allLines.length;

  // 1-based offset to 0-based index; 0/undefined mean the start (pi's rule).
  const startLine: number = offset ? Math.max(0, offset - 1) : 0;
  const shownStart: number = startLine + 1;
  if (startLine >= totalLines) {
    throw new OffsetBeyondEndError(offset ?? 0, totalLines);
  }

  let selected: string[];
  let userLimitedLines: number | undefined;
  if (limit !== undefined) {
    const endLine: number = Math.min(startLine + limit, totalLines);
    selected = allLines.slice(startLine, endLine);
    userLimitedLines = endLine - startLine;
  } else {
    selected = allLines.slice(startLine);
  }

  const truncation: TruncationResult = truncateHead(selected.join("\n"));

  if (truncation.firstLineExceedsLimit) {
    const firstLineSize: string = formatSize(
      new TextEncoder().encode(allLines[startLine]).length,
    );
    const maxSize: string = formatSize(DEFAULT_MAX_BYTES);
    return {
      text: `[Line ${shownStart} is ${firstLineSize}, exceeds ${maxSize} limit. ` +
        `Use bash: sed -n '${shownStart}p' ${displayPath} | head -c ${DEFAULT_MAX_BYTES}]`,
      truncation,
      totalLines,
      shownStart,
      shownEnd: shownStart - 1,
    };
  }

  if (truncation.truncated) {
    const shownEnd: number = shownStart + truncation.outputLines - 1;
    const nextOffset: number = shownEnd + 1;
    const sizeNote: string = truncation.truncatedBy === "lines"
      ? ""
      : ` (${formatSize(DEFAULT_MAX_BYTES)} limit)`;
    return {
      text: `${truncation.content}\n\n[Showing lines ${shownStart}-${shownEnd} of ${totalLines}` +
        `${sizeNote}. Use offset=${nextOffset} to continue.]`,
      truncation,
      totalLines,
      shownStart,
      shownEnd,
    };
  }

  const shownEnd: number = shownStart - 1 + selected.length;
  if (userLimitedLines !== undefined && startLine + userLimitedLines < totalLines) {
    const remaining: number = totalLines - (startLine + userLimitedLines);
    const nextOffset: number = startLine + userLimitedLines + 1;
    return {
      text: `${truncation.content}\n\n[${remaining} more lines in file. ` +
        `Use offset=${nextOffset} to continue.]`,
      totalLines,
      shownStart,
      shownEnd,
    };
  }

  return { text: truncation.content, totalLines, shownStart, shownEnd };
}

/**
 * The lines {@linkcode renderBaselineRead} shows (`shownStart`, `shownEnd`),
 * found without rendering when nothing can be truncated: a file of at most
 * 2,000 lines and 50 KiB (`byteLength`, its UTF-8 size) shows every line the
 * offset and limit select. `undefined` otherwise (render it to know).
 * `totalLines` is the file's line count (`text.split("\n").length`).
 *
 * @example
 * ```ts
 * import { baselineShownLines } from "@readcache/core/rules";
 * baselineShownLines({ offset: 2, limit: 5 }, 10, 120); // { shownStart: 2, shownEnd: 6 }
 * ```
 */
export function baselineShownLines(
  input: Pick<BaselineReadInput, "offset" | "limit">,
  totalLines: number,
  byteLength: number,
): { shownStart: number; shownEnd: number } | undefined {
  const { offset, limit } = input;
  if (byteLength > DEFAULT_MAX_BYTES || totalLines > DEFAULT_MAX_LINES) return undefined;
  if (offset !== undefined && !(Number.isSafeInteger(offset) && offset >= 0)) return undefined;
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 0)) return undefined;
  const startLine = offset ? offset - 1 : 0;
  if (startLine >= totalLines) return undefined; // renderBaselineRead throws
  const endLine = limit === undefined ? totalLines : Math.min(startLine + limit, totalLines);
  return { shownStart: startLine + 1, shownEnd: endLine };
}
