/**
 * OpenCode's (1.18.33) own `read`, `write` and `edit` tools, as far as the
 * scenario port and the oracle need them, written from what the binary does
 * (docs/opencode-integration-notes.md; the read tool's code was read in the
 * binary): the output text and metadata OpenCode's tool returns before the
 * plugin's `tool.execute.after` hook sees it, or OpenCode's error.
 *
 * - `read`: `filePath` resolved against the directory; a missing file fails
 *   with `File not found: <path>` (plus up to three sibling names that
 *   contain the name or are contained in it, under `Did you mean one of
 *   these?`); a directory is listed; a JPEG, PNG, GIF or WebP (by content) is
 *   `Image read successfully` with the image attached; a file that looks
 *   binary (a known binary extension, or in its first 4096 bytes a NUL or
 *   over 30% control bytes) fails with `Cannot read binary file: <path>`;
 *   other files are rendered by `renderOpenCodeRead` (an offset past the end
 *   fails with `Offset N is out of range for this file (M lines)`).
 * - `write`: `filePath` joined to the directory, directories created,
 *   `content` written without a leading BOM, plus a BOM when the old file had
 *   one (no formatter is configured here).
 * - `edit`: one replacement (`oldString` → `newString`, `replaceAll`), exact
 *   match only: OpenCode's fuzzy fallbacks (whitespace, indentation, escape
 *   normalising matchers) are NOT modelled; a replacement that is not found
 *   exactly is an error here (the port's applicability rule keeps vectors
 *   whose edits need those fallbacks out).
 *
 * @module
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, extname, isAbsolute, join, resolve } from "node:path";
import {
  decodeOpenCodeText,
  renderOpenCodeRead,
  splitOpenCodeLines,
} from "../../src/adapters/opencode/baseline.ts";

/**
 * A tool's outcome: OpenCode's output and metadata, or its error.
 *
 * @example
 * ```ts
 * import type { OpenCodeToolOutcome } from "./opencode_tools.ts";
 * const o: OpenCodeToolOutcome = { ok: false, error: "File not found: /w/x" };
 * ```
 */
export type OpenCodeToolOutcome =
  | { ok: true; title: string; output: string; metadata: Record<string, unknown> }
  | { ok: false; error: string };

const BINARY_EXTENSIONS = new Set([
  ".zip",
  ".tar",
  ".gz",
  ".exe",
  ".dll",
  ".so",
  ".class",
  ".jar",
  ".war",
  ".7z",
  ".doc",
  ".docx",
  ".xls",
  ".xlsx",
  ".ppt",
  ".pptx",
  ".odt",
  ".ods",
  ".odp",
  ".bin",
  ".dat",
  ".obj",
  ".o",
  ".a",
  ".lib",
  ".wasm",
  ".pyc",
  ".pyo",
]);

/**
 * The image type OpenCode attaches instead of reading the file as text, by
 * the file's first bytes (JPEG, PNG, GIF, WebP).
 *
 * @example
 * ```ts
 * import { imageMime } from "./opencode_tools.ts";
 * imageMime(new Uint8Array([0x89, 0x50, 0x4e, 0x47])); // "image/png"
 * ```
 */
export function imageMime(b: Uint8Array): string | undefined {
  if (b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return "image/png";
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
  if (b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38) return "image/gif";
  const ascii = (from: number, to: number) => String.fromCharCode(...b.subarray(from, to));
  if (ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "image/webp";
  return undefined;
}

/**
 * OpenCode's binary test: a known binary extension, or a NUL or over 30%
 * control bytes in the sample (the file's first 4096 bytes).
 *
 * @example
 * ```ts
 * import { looksBinary } from "./opencode_tools.ts";
 * looksBinary("/w/x.dat", new TextEncoder().encode("text")); // true: the extension
 * looksBinary("/w/x.txt", new Uint8Array([0x61, 0x00])); // true: a NUL
 * ```
 */
export function looksBinary(path: string, sample: Uint8Array): boolean {
  if (BINARY_EXTENSIONS.has(extname(path).toLowerCase())) return true;
  if (sample.length === 0) return false;
  let control = 0;
  for (const byte of sample) {
    if (byte === 0) return true;
    if (byte < 9 || (byte > 13 && byte < 32)) control++;
  }
  return control / sample.length > 0.3;
}

function missing(path: string): string {
  const dir = dirname(path);
  const name = basename(path).toLowerCase();
  let near: string[] = [];
  try {
    near = readdirSync(dir)
      .filter((e) => e.toLowerCase().includes(name) || name.includes(e.toLowerCase()))
      .map((e) => join(dir, e))
      .slice(0, 3);
  } catch {
    near = [];
  }
  return near.length > 0
    ? `File not found: ${path}\n\nDid you mean one of these?\n${near.join("\n")}`
    : `File not found: ${path}`;
}

/**
 * OpenCode's `read` of `args` (`filePath`, `offset?`, `limit?`) in
 * `directory`.
 *
 * @example
 * ```ts
 * import { openCodeReadTool } from "./opencode_tools.ts";
 * const r = openCodeReadTool({ filePath: "/nonexistent/x.txt" }, "/");
 * r.ok ? r.output : r.error; // "File not found: /nonexistent/x.txt"
 * ```
 */
export function openCodeReadTool(
  args: Record<string, unknown>,
  directory: string,
): OpenCodeToolOutcome {
  const filePath = String(args.filePath);
  const path = isAbsolute(filePath) ? filePath : resolve(directory, filePath);
  const offset = typeof args.offset === "number" ? args.offset : undefined;
  const limit = typeof args.limit === "number" ? args.limit : undefined;
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return { ok: false, error: missing(path) };
  }
  if (stat.isDirectory()) {
    const entries = readdirSync(path, { withFileTypes: true })
      .map((e) => e.isDirectory() ? `${e.name}/` : e.name)
      .sort((a, b) => a.localeCompare(b));
    const start = (offset || 1) - 1;
    const shown = entries.slice(start, start + (limit ?? 2000));
    const more = start + shown.length < entries.length;
    const output = [
      `<path>${path}</path>`,
      "<type>directory</type>",
      "<entries>",
      shown.join("\n"),
      more
        ? `\n(Showing ${shown.length} of ${entries.length} entries. Use 'offset' parameter to read beyond entry ${
          (offset || 1) + shown.length
        })`
        : `\n(${entries.length} entries)`,
      "</entries>",
    ].join("\n");
    return { ok: true, title: path, output, metadata: { truncated: more, loaded: [] } };
  }
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    return { ok: false, error: `Failed to read file: ${e instanceof Error ? e.message : e}` };
  }
  const mime = imageMime(bytes);
  if (mime !== undefined) {
    return {
      ok: true,
      title: path,
      output: "Image read successfully",
      metadata: { preview: "Image read successfully", truncated: false, loaded: [] },
    };
  }
  if (looksBinary(path, bytes.subarray(0, 4096))) {
    return { ok: false, error: `Cannot read binary file: ${path}` };
  }
  const text = decodeOpenCodeText(bytes);
  const view = renderOpenCodeRead({ path, text, offset, limit });
  if (view === undefined) {
    return {
      ok: false,
      error: `Offset ${offset || 1} is out of range for this file (${
        splitOpenCodeLines(text).length
      } lines)`,
    };
  }
  return {
    ok: true,
    title: path,
    output: view.text,
    metadata: {
      preview: text.split(/\r?\n/).slice(0, 20).join("\n"),
      truncated: view.more,
      loaded: [],
    },
  };
}

/** The file a `write` or `edit` call targets: absolute as is, else joined to the directory. */
function target(filePath: string, directory: string): string {
  return isAbsolute(filePath) ? filePath : join(directory, filePath);
}

const BOM = "\uFEFF";

/**
 * True when `bytes` start with the UTF-8 byte order mark (OpenCode's write keeps it).
 *
 * @example
 * ```ts
 * startsWithBom(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])); // true
 * ```
 */
export function startsWithBom(bytes: Uint8Array): boolean {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/**
 * OpenCode's `write` of `args` (`filePath`, `content`) in `directory`.
 *
 * @example
 * ```ts
 * import { openCodeWriteTool } from "./opencode_tools.ts";
 * const dir = Deno.makeTempDirSync();
 * openCodeWriteTool({ filePath: "n.txt", content: "x\n" }, dir).ok; // true
 * ```
 */
export function openCodeWriteTool(
  args: Record<string, unknown>,
  directory: string,
): OpenCodeToolOutcome {
  const path = target(String(args.filePath), directory);
  const exists = existsSync(path);
  const old = exists ? readFileSync(path) : new Uint8Array();
  const hadBom = startsWithBom(old);
  let content = String(args.content);
  if (content.startsWith(BOM)) content = content.slice(1);
  if (hadBom) content = BOM + content;
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content, "utf8");
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
  return {
    ok: true,
    title: path,
    output: "Wrote file successfully.",
    metadata: { filepath: path, exists, diagnostics: {} },
  };
}

/**
 * OpenCode's `edit` of `args` (`filePath`, `oldString`, `newString`,
 * `replaceAll?`) in `directory`, exact matches only (see the module
 * documentation).
 *
 * @example
 * ```ts
 * import { openCodeEditTool } from "./opencode_tools.ts";
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/a.txt`, "one\ntwo\n");
 * openCodeEditTool({ filePath: "a.txt", oldString: "two", newString: "2" }, dir).ok; // true
 * ```
 */
export function openCodeEditTool(
  args: Record<string, unknown>,
  directory: string,
): OpenCodeToolOutcome {
  const path = target(String(args.filePath), directory);
  const oldString = String(args.oldString);
  const newString = String(args.newString);
  if (oldString === newString) {
    return {
      ok: false,
      error: oldString === ""
        ? "oldString and newString are both empty"
        : "No changes to apply: oldString and newString are identical.",
    };
  }
  if (oldString === "") {
    // OpenCode writes newString as the whole file
    writeFileSync(path, newString, "utf8");
    return { ok: true, title: path, output: "Edit applied successfully.", metadata: {} };
  }
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return { ok: false, error: `File ${path} not found` };
  }
  const first = text.indexOf(oldString);
  if (first < 0) {
    return {
      ok: false,
      error:
        "Could not find oldString in the file. It must match exactly, including whitespace and indentation.",
    };
  }
  let next: string;
  if (args.replaceAll === true) next = text.split(oldString).join(newString);
  else {
    if (text.indexOf(oldString, first + 1) >= 0) {
      return {
        ok: false,
        error:
          "Found multiple matches for oldString. Provide more surrounding context to make the match unique.",
      };
    }
    next = text.slice(0, first) + newString + text.slice(first + oldString.length);
  }
  writeFileSync(path, next, "utf8");
  return {
    ok: true,
    title: path,
    output: "Edit applied successfully.",
    metadata: { diagnostics: {}, filediff: { file: path } },
  };
}
