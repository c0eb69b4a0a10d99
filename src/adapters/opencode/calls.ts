/**
 * OpenCode's tool calls as the read cache sees them: the file a `read` call
 * names (its name, identity, offset and limit, SPEC §3, §5.6), whether a
 * `write` call is proof of content (SPEC §5.8), and the files a `write`,
 * `edit` or `apply_patch` call changes (SPEC §5.9).
 *
 * OpenCode (1.18.33) resolves paths itself, not as pi does: `read` takes
 * `filePath` as is when absolute, else `path.resolve(directory, filePath)`;
 * `write` and `edit` use `path.join(directory, filePath)` for a relative path;
 * `apply_patch` resolves each `*** Add/Update/Delete File:` and `*** Move to:`
 * path against the directory. There is no `@`, `~` or `path:N-M` shorthand.
 * The name of a call (SPEC §3.2) is that path normalised; its `pathKey` the
 * realpath.
 *
 * `write` writes `content` as UTF-8, minus a leading BOM, plus a BOM when the
 * file it replaces had one, and then runs a formatter when one is configured
 * for the file. So a write is proof of content (SPEC §5.8) only when `content`
 * is well-formed Unicode without a leading BOM; where OpenCode still wrote
 * other bytes (old BOM, formatter), the next read compares hashes and serves a
 * diff or the whole file, never `unchanged`.
 *
 * Specified by SPEC.md §3, §5.6, §5.8, §5.9.
 *
 * @module
 */
import { isAbsolute, join, resolve } from "node:path";
import { sha256Hex } from "../../core/hash.ts";
import { countLines } from "../../core/range.ts";
import type { ReadCall } from "../../core/replay.ts";
import { pathKeyOnDisk } from "../../shell/read_service.ts";

export type { ReadCall };

/**
 * Tools of OpenCode that change files (SPEC §5.8, §5.9).
 *
 * @example
 * ```ts
 * import { OPENCODE_FILE_TOOLS } from "@readcache/core/opencode";
 * OPENCODE_FILE_TOOLS.has("apply_patch"); // true
 * ```
 */
export const OPENCODE_FILE_TOOLS: ReadonlySet<string> = new Set(["write", "edit", "apply_patch"]);

/**
 * Tools of OpenCode the plugin follows itself, or that show no file content
 * and change nothing (`glob`, `list`, the todo list): their results are not
 * checked (SPEC §5.10). Every other tool's result is.
 */
const FOLLOWED: ReadonlySet<string> = new Set([
  "read",
  "write",
  "edit",
  "apply_patch",
  "glob",
  "list",
  "todowrite",
  "todoread",
  "invalid",
  "readcache_refresh",
]);

/** Tools of OpenCode that show content but change no file: not opaque (SPEC §5.10). */
const VIEWING: ReadonlySet<string> = new Set([
  "grep",
  "webfetch",
  "websearch",
  "codesearch",
  "lsp",
  "skill",
]);

/**
 * How the plugin treats a tool's calls (SPEC §5.10): `followed` (read,
 * write, edit, apply_patch, and tools that show no file content), `viewing`
 * (checked when it returns: grep and other tools that only show), or
 * `opaque` (checked, and may change any file: bash, task, any tool the
 * plugin does not know).
 *
 * @example
 * ```ts
 * import { openCodeToolClass } from "@readcache/core/opencode";
 * openCodeToolClass("bash"); // "opaque"
 * openCodeToolClass("grep"); // "viewing"
 * openCodeToolClass("glob"); // "followed"
 * ```
 */
export function openCodeToolClass(tool: string): "followed" | "viewing" | "opaque" {
  return FOLLOWED.has(tool) ? "followed" : VIEWING.has(tool) ? "viewing" : "opaque";
}

function record(v: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null ? v as Record<string, unknown> : {};
}

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

/**
 * The absolute path OpenCode's `read` opens for `filePath` (and prints in
 * `<path>`): as is when absolute, else resolved against `directory`.
 *
 * @example
 * ```ts
 * import { openCodeReadPath } from "@readcache/core/opencode";
 * openCodeReadPath("src/a.ts", "/w"); // "/w/src/a.ts"
 * openCodeReadPath("/w/./a.ts", "/w"); // "/w/./a.ts"
 * ```
 */
export function openCodeReadPath(filePath: string, directory: string): string {
  return isAbsolute(filePath) ? filePath : resolve(directory, filePath);
}

/**
 * Resolves the arguments of an OpenCode `read` call (`filePath`, `offset`,
 * `limit`) into the call the read cache checks metadata against (SPEC §5.6):
 * the normalised absolute path as its name, the realpath as its `pathKey`,
 * `offset` when above 1 (OpenCode reads `0` as 1) and `limit` when given and
 * positive. `undefined` without a path, or with an `offset` or `limit` that is
 * not a non-negative integer (OpenCode refuses those).
 *
 * @example
 * ```ts
 * import { openCodeReadCall } from "@readcache/core/opencode";
 * openCodeReadCall({ filePath: "/tmp/x.txt", offset: 3, limit: 10 }, "/w");
 * // { name: "/tmp/x.txt", pathKey: "/tmp/x.txt", offset: 3, limit: 10 }
 * ```
 */
export function openCodeReadCall(args: unknown, directory: string): ReadCall | undefined {
  const a = record(args);
  if (typeof a.filePath !== "string" || a.filePath === "") return undefined;
  if (a.offset !== undefined && !isCount(a.offset)) return undefined;
  if (a.limit !== undefined && !isCount(a.limit)) return undefined;
  const name = resolve(openCodeReadPath(a.filePath, directory));
  const call: ReadCall = { name, pathKey: pathKeyOnDisk(name) };
  if (isCount(a.offset) && a.offset > 1) call.offset = a.offset;
  if (isCount(a.limit) && a.limit > 0) call.limit = a.limit;
  return call;
}

/**
 * The file an OpenCode `write` or `edit` call targets: `filePath` as is when
 * absolute, else joined to `directory`, normalised; `undefined` without a
 * path.
 *
 * @example
 * ```ts
 * import { openCodeFileTarget } from "@readcache/core/opencode";
 * openCodeFileTarget({ filePath: "/tmp/new.txt", content: "x" }, "/w");
 * // { name: "/tmp/new.txt", pathKey: "/tmp/new.txt" }
 * ```
 */
export function openCodeFileTarget(args: unknown, directory: string): ReadCall | undefined {
  const a = record(args);
  if (typeof a.filePath !== "string" || a.filePath === "") return undefined;
  const name = resolve(isAbsolute(a.filePath) ? a.filePath : join(directory, a.filePath));
  return { name, pathKey: pathKeyOnDisk(name) };
}

/**
 * The proof of content an OpenCode `write` call gives (SPEC §5.8): its target,
 * the SHA-256 of the UTF-8 bytes of `content`, and its line count (pi's count)
 * and UTF-8 length for status reports. `undefined` when `content` is not a string, is not
 * well-formed Unicode, or starts with a BOM (OpenCode strips it and decides
 * the BOM from the old file, so the bytes are not known from the call).
 *
 * @example
 * ```ts
 * import { openCodeWriteProof } from "@readcache/core/opencode";
 * openCodeWriteProof({ filePath: "/tmp/n.txt", content: "hi\n" }, "/w")?.totalLines; // 2
 * openCodeWriteProof({ filePath: "/tmp/n.txt", content: "\uFEFFhi" }, "/w"); // undefined
 * ```
 */
export function openCodeWriteProof(
  args: unknown,
  directory: string,
): { call: ReadCall; hash: string; totalLines: number; bytes: number } | undefined {
  const a = record(args);
  const content = a.content;
  if (typeof content !== "string" || !content.isWellFormed() || content.startsWith("\uFEFF")) {
    return undefined;
  }
  const call = openCodeFileTarget(args, directory);
  if (call === undefined) return undefined;
  const bytes = new TextEncoder().encode(content).length;
  return { call, hash: sha256Hex(content), totalLines: countLines(content), bytes };
}

const PATCH_HEADER = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/;

/**
 * The files an OpenCode `apply_patch` call changes: from the result's
 * `metadata.files` (`filePath`, `movePath`) when the call completed, else from
 * the `*** Add File:`, `*** Update File:`, `*** Delete File:` and
 * `*** Move to:` lines of `patchText`, each resolved against `directory`.
 *
 * @example
 * ```ts
 * import { applyPatchTargets } from "@readcache/core/opencode";
 * applyPatchTargets({ patchText: "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch" }, "/w")
 *   .map((c) => c.name); // ["/w/a.txt"]
 * ```
 */
export function applyPatchTargets(
  args: unknown,
  directory: string,
  metadata?: unknown,
): ReadCall[] {
  const names: string[] = [];
  const files = record(metadata).files;
  if (Array.isArray(files)) {
    for (const f of files) {
      const r = record(f);
      if (typeof r.filePath === "string") names.push(resolve(directory, r.filePath));
      if (typeof r.movePath === "string") names.push(resolve(directory, r.movePath));
    }
  }
  const text = record(args).patchText;
  if (typeof text === "string") {
    for (const line of text.split(/\r\n|\r|\n/)) {
      const m = PATCH_HEADER.exec(line);
      if (m) names.push(resolve(directory, m[1].trim()));
    }
  }
  return [...new Set(names)].map((name) => ({ name, pathKey: pathKeyOnDisk(name) }));
}

/**
 * Every file a call of an OpenCode file-changing tool (`write`, `edit`,
 * `apply_patch`) targets; none for any other tool.
 *
 * @example
 * ```ts
 * import { openCodeChangedFiles } from "@readcache/core/opencode";
 * openCodeChangedFiles("edit", { filePath: "/tmp/a.ts", oldString: "x", newString: "y" }, "/w")
 *   .map((c) => c.name); // ["/tmp/a.ts"]
 * openCodeChangedFiles("read", { filePath: "/tmp/a.ts" }, "/w"); // []
 * ```
 */
export function openCodeChangedFiles(
  tool: string,
  args: unknown,
  directory: string,
  metadata?: unknown,
): ReadCall[] {
  if (tool === "apply_patch") return applyPatchTargets(args, directory, metadata);
  if (tool !== "write" && tool !== "edit") return [];
  const call = openCodeFileTarget(args, directory);
  return call === undefined ? [] : [call];
}
