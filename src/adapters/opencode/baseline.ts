/**
 * OpenCode's own `read` output, rendered from the file's bytes: the baseline
 * the OpenCode adapter keeps byte-identical for first reads (SPEC §7.2 says
 * the same of pi's read), and the lines a read showed (SPEC §7.3: trust covers
 * what was shown).
 *
 * OpenCode (1.18.33) frames a text file as `<path>…</path>`, `<type>file</type>`
 * and `<content>` with numbered lines (`N: text`). It decodes the bytes as
 * UTF-8 (a BOM dropped, bad sequences become U+FFFD), splits lines at `\n`,
 * `\r\n` and a lone `\r` (a final terminator ends the last line), shows at
 * most `limit` lines (default 2000) from `offset` (default 1; 0 counts as 1),
 * shortens a line longer than 2000 UTF-16 units to its first 2000 plus
 * `... (line truncated to 2000 chars)`, and stops before the line that would
 * take the shown text over 51,200 UTF-8 bytes (each shown line plus one byte
 * per line break, numbers not counted). It then ends with
 * `(End of file - total N lines)`, `(Showing lines S-E of N. Use offset=E+1 to
 * continue.)` or `(Output capped at 50 KB. Showing lines S-E. Use offset=E+1 to
 * continue.)`. OpenCode may append `<system-reminder>` text (instruction files
 * near the file) after `</content>`; that is not part of the baseline.
 *
 * Pure. The adapter compares this rendering with the text OpenCode actually
 * produced before it trusts a read, so a difference only costs caching.
 *
 * Specified by SPEC.md §7.2, §7.3 (for OpenCode: docs/opencode-integration-notes.md).
 *
 * @module
 */

/**
 * Lines OpenCode's read shows when the call gives no `limit`.
 *
 * @example
 * ```ts
 * import { OPENCODE_DEFAULT_LIMIT, renderOpenCodeRead } from "@readcache/core/opencode";
 * const text = "x\n".repeat(OPENCODE_DEFAULT_LIMIT + 1);
 * renderOpenCodeRead({ path: "/w/a", text })?.end; // 2000
 * ```
 */
export const OPENCODE_DEFAULT_LIMIT = 2000;
/**
 * Longest line (UTF-16 units) OpenCode's read shows whole.
 *
 * @example
 * ```ts
 * import { OPENCODE_MAX_LINE_CHARS, renderOpenCodeRead } from "@readcache/core/opencode";
 * const text = "x".repeat(OPENCODE_MAX_LINE_CHARS + 1);
 * renderOpenCodeRead({ path: "/w/a", text })?.shortenedLines; // true
 * ```
 */
export const OPENCODE_MAX_LINE_CHARS = 2000;
/**
 * Most UTF-8 bytes of line text OpenCode's read shows (50 KB): each shown
 * line plus one byte per line break, line numbers not counted.
 *
 * @example
 * ```ts
 * import { OPENCODE_MAX_BYTES, renderOpenCodeRead } from "@readcache/core/opencode";
 * const text = ("y".repeat(99) + "\n").repeat(600); // 60,000 bytes
 * renderOpenCodeRead({ path: "/w/a", text })?.end; // 512: 512 * 100 - 1 <= OPENCODE_MAX_BYTES
 * ```
 */
export const OPENCODE_MAX_BYTES = 51200;

const LINE_CUT_SUFFIX = `... (line truncated to ${OPENCODE_MAX_LINE_CHARS} chars)`;
const LOSSY_UTF8 = new TextDecoder("utf-8");
const encoder = new TextEncoder();

/**
 * Decodes file bytes as OpenCode's read does: UTF-8, a leading BOM dropped,
 * invalid sequences replaced by U+FFFD.
 *
 * @example
 * ```ts
 * import { decodeOpenCodeText } from "@readcache/core/opencode";
 * decodeOpenCodeText(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])); // "a"
 * ```
 */
export function decodeOpenCodeText(bytes: Uint8Array): string {
  return LOSSY_UTF8.decode(bytes);
}

/**
 * Splits text into lines as OpenCode's read does (Effect's
 * `Stream.splitLines`): at `\n`, `\r\n` and a lone `\r`; a terminator at the
 * very end does not start another line; empty text has no lines.
 *
 * @example
 * ```ts
 * import { splitOpenCodeLines } from "@readcache/core/opencode";
 * splitOpenCodeLines("a\r\nb\rc\n"); // ["a", "b", "c"]
 * splitOpenCodeLines(""); // []
 * ```
 */
export function splitOpenCodeLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r\n|\r|\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/**
 * What to render: the path as OpenCode shows it (absolute, as OpenCode
 * resolved it), the decoded text, and the call's `offset`/`limit` as the
 * model sent them.
 *
 * @example
 * ```ts
 * import type { OpenCodeReadInput } from "@readcache/core/opencode";
 * const input: OpenCodeReadInput = { path: "/w/a.ts", text: "x\n", offset: 1, limit: 10 };
 * ```
 */
export interface OpenCodeReadInput {
  /** The absolute path OpenCode prints in `<path>`. */
  path: string;
  /** The file's text, decoded with {@linkcode decodeOpenCodeText}. */
  text: string;
  /** The call's `offset` (1-based; 0 or absent means 1). */
  offset?: number;
  /** The call's `limit` (absent means 2000). */
  limit?: number;
}

/**
 * OpenCode's read of a text file: the exact output and what it showed.
 *
 * @example
 * ```ts
 * import { renderOpenCodeRead, type OpenCodeReadView } from "@readcache/core/opencode";
 * const view: OpenCodeReadView | undefined = renderOpenCodeRead({ path: "/w/a", text: "x\n" });
 * view?.end; // 1
 * ```
 */
export interface OpenCodeReadView {
  /** The output text, exactly as OpenCode's read returns it (no `<system-reminder>`). */
  text: string;
  /** First line shown (1-based): the effective offset. */
  start: number;
  /** Last line shown; `start - 1` when none was. */
  end: number;
  /** Lines of the file as OpenCode counts them ({@linkcode splitOpenCodeLines}). */
  fileLines: number;
  /** Lines OpenCode counted before it stopped (its `total` when nothing was cut). */
  counted: number;
  /** More lines follow the shown ones (limit reached, or cut). */
  more: boolean;
  /** Stopped at the 50 KB limit. */
  cut: boolean;
  /** At least one shown line was shortened to 2000 characters. */
  shortenedLines: boolean;
}

/**
 * Renders OpenCode's read of a text file, or `undefined` where OpenCode fails
 * the call instead (`Offset N is out of range for this file (M lines)`).
 * Offsets and limits must be non-negative integers, as OpenCode's schema
 * requires; other values give `undefined`.
 *
 * @example
 * ```ts
 * import { renderOpenCodeRead } from "@readcache/core/opencode";
 * renderOpenCodeRead({ path: "/w/a.txt", text: "hello\nworld\n" })?.text;
 * // "<path>/w/a.txt</path>\n<type>file</type>\n<content>\n1: hello\n2: world\n\n(End of file - total 2 lines)\n</content>"
 * ```
 */
export function renderOpenCodeRead(input: OpenCodeReadInput): OpenCodeReadView | undefined {
  const isCount = (v: number | undefined) => v === undefined || (Number.isSafeInteger(v) && v >= 0);
  if (!isCount(input.offset) || !isCount(input.limit)) return undefined;
  const offset = input.offset || 1;
  const limit = input.limit ?? OPENCODE_DEFAULT_LIMIT;
  const lines = splitOpenCodeLines(input.text);
  const shown: string[] = [];
  let bytes = 0;
  let counted = 0;
  let more = false;
  let cut = false;
  let shortenedLines = false;
  for (const line of lines) {
    counted++;
    if (counted < offset) continue;
    if (shown.length >= limit) {
      more = true;
      continue;
    }
    const text = line.length > OPENCODE_MAX_LINE_CHARS
      ? line.substring(0, OPENCODE_MAX_LINE_CHARS) + LINE_CUT_SUFFIX
      : line;
    const cost = encoder.encode(text).length + (shown.length > 0 ? 1 : 0);
    if (bytes + cost > OPENCODE_MAX_BYTES) {
      cut = true;
      more = true;
      break;
    }
    shown.push(text);
    bytes += cost;
    if (text !== line) shortenedLines = true;
  }
  if (counted < offset && !(counted === 0 && offset === 1)) return undefined;
  const end = offset + shown.length - 1;
  let text = `<path>${input.path}</path>\n<type>file</type>\n<content>\n` +
    shown.map((line, i) => `${i + offset}: ${line}`).join("\n");
  if (cut) {
    text += `\n\n(Output capped at ${OPENCODE_MAX_BYTES / 1024} KB. ` +
      `Showing lines ${offset}-${end}. Use offset=${end + 1} to continue.)`;
  } else if (more) {
    text += `\n\n(Showing lines ${offset}-${end} of ${counted}. Use offset=${
      end + 1
    } to continue.)`;
  } else {
    text += `\n\n(End of file - total ${counted} lines)`;
  }
  text += "\n</content>";
  return {
    text,
    start: offset,
    end,
    fileLines: lines.length,
    counted,
    more,
    cut,
    shortenedLines,
  };
}
