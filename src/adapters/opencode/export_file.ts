/**
 * An OpenCode session as a whole, read from outside OpenCode: the JSON
 * `opencode export <sessionID>` prints (`{info, messages}`: the session and
 * its messages with their parts, oldest first), or the rows OpenCode 1.18.33
 * keeps in its SQLite database (`session`, `message` and `part` tables, each
 * row's JSON `data` without the ids kept in columns). Pure: parsing and
 * checking only, no file or database access.
 *
 * The messages are what `OpenCodeBranchConverter` converts (the session's
 * `revert` point cuts the branch), so a session read from a file replays as
 * the plugin replays it while OpenCode runs.
 *
 * Specified by SPEC.md §11.8 (for OpenCode: docs/opencode-integration-notes.md).
 *
 * @module
 */
import type { OpenCodeMessageLike, OpenCodePartLike, OpenCodeRevertLike } from "./branch.ts";

/**
 * The fields of an OpenCode session (the export's `info`, a `session` row)
 * the CLI reads.
 *
 * @example
 * ```ts
 * import type { OpenCodeSessionInfoLike } from "./export_file.ts";
 * const info: OpenCodeSessionInfoLike = { id: "ses_1", directory: "/work/app" };
 * ```
 */
export interface OpenCodeSessionInfoLike {
  /** Session id (`ses_...`). */
  id: string;
  /** The project directory OpenCode ran in (relative tool paths resolve against it). */
  directory?: string;
  /** The session's title. */
  title?: string;
  /** The session it was forked from or started by (a subagent's parent). */
  parentID?: string;
  /** The revert point, when one is pending. */
  revert?: OpenCodeRevertLike | null;
  /** Creation and update times (ms since the epoch). */
  time?: { created?: number; updated?: number };
  /** The OpenCode version that created it. */
  version?: string;
}

/**
 * A whole OpenCode session: `info` and its messages, oldest first.
 *
 * @example
 * ```ts
 * import type { OpenCodeSessionExport } from "./export_file.ts";
 * const s: OpenCodeSessionExport = { info: { id: "ses_1" }, messages: [] };
 * ```
 */
export interface OpenCodeSessionExport {
  /** The session. */
  info: OpenCodeSessionInfoLike;
  /** Its messages with their parts. */
  messages: OpenCodeMessageLike[];
}

/**
 * Stable codes of {@linkcode OpenCodeExportError}: `NOT_JSON` (the text is
 * not JSON), `NOT_AN_EXPORT` (JSON, but not `{info, messages}`),
 * `BAD_MESSAGE` (a message or part without the fields every one has),
 * `BAD_ROW` (a database row whose `data` is not a JSON object).
 *
 * @example
 * ```ts
 * import type { OpenCodeExportErrorCode } from "./export_file.ts";
 * const code: OpenCodeExportErrorCode = "NOT_AN_EXPORT";
 * ```
 */
export type OpenCodeExportErrorCode = "NOT_JSON" | "NOT_AN_EXPORT" | "BAD_MESSAGE" | "BAD_ROW";

/**
 * What is wrong with a text or rows that should be an OpenCode session. The
 * message names the field or position and says what was expected.
 *
 * @example
 * ```ts
 * import { OpenCodeExportError, parseOpenCodeExport } from "./export_file.ts";
 * try {
 *   parseOpenCodeExport("[1, 2]");
 * } catch (e) {
 *   if (e instanceof OpenCodeExportError) console.log(e.code); // "NOT_AN_EXPORT"
 * }
 * ```
 */
export class OpenCodeExportError extends Error {
  /** Stable machine-readable code. */
  readonly code: OpenCodeExportErrorCode;

  /** Creates an error with a stable code and a message that says what was wrong. */
  constructor(code: OpenCodeExportErrorCode, message: string) {
    super(message);
    this.name = "OpenCodeExportError";
    this.code = code;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function kindOf(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "an array" : `a ${typeof v}`;
}

/** `opencode export` prints `Exporting session: <id>` on stderr; a `2>&1` capture starts with it. */
const EXPORT_NOTICE = /^Exporting session: [^\n]*\n/;

/**
 * True when `text` looks like an OpenCode export at a glance: after optional
 * whitespace (and the `Exporting session:` line `opencode export` writes to
 * stderr) it starts with `{` and mentions `"messages"`. Use
 * {@linkcode parseOpenCodeExport} to be sure.
 *
 * @example
 * ```ts
 * import { looksLikeOpenCodeExport } from "./export_file.ts";
 * looksLikeOpenCodeExport('{"info": {"id": "ses_1"}, "messages": []}'); // true
 * looksLikeOpenCodeExport('{"type":"session","id":"x"}\n'); // false
 * ```
 */
export function looksLikeOpenCodeExport(text: string): boolean {
  const body = text.replace(EXPORT_NOTICE, "").trimStart();
  return body.startsWith("{") && body.includes('"messages"');
}

function checkMessage(m: unknown, i: number): OpenCodeMessageLike {
  const at = `messages[${i}]`;
  if (!isRecord(m) || !isRecord(m.info) || !Array.isArray(m.parts)) {
    throw new OpenCodeExportError(
      "BAD_MESSAGE",
      `${at} is not a message: each message is {"info": {...}, "parts": [...]}, got ${
        isRecord(m) ? `an object with ${Object.keys(m).join(", ") || "no fields"}` : kindOf(m)
      }`,
    );
  }
  if (typeof m.info.id !== "string" || typeof m.info.role !== "string") {
    throw new OpenCodeExportError(
      "BAD_MESSAGE",
      `${at}.info has no string "id" and "role" (every OpenCode message has both)`,
    );
  }
  m.parts.forEach((p, k) => {
    if (!isRecord(p) || typeof p.id !== "string" || typeof p.type !== "string") {
      throw new OpenCodeExportError(
        "BAD_MESSAGE",
        `${at}.parts[${k}] has no string "id" and "type" (every OpenCode part has both)`,
      );
    }
  });
  return m as unknown as OpenCodeMessageLike;
}

/**
 * Checks a parsed value as an OpenCode session export and returns it typed;
 * messages are sorted by id (OpenCode's ids ascend in creation order, the
 * order the export prints them in). Throws {@linkcode OpenCodeExportError}.
 *
 * @example
 * ```ts
 * import { openCodeExportOf } from "./export_file.ts";
 * openCodeExportOf({ info: { id: "ses_1", directory: "/w" }, messages: [] }).info.id; // "ses_1"
 * ```
 */
export function openCodeExportOf(value: unknown): OpenCodeSessionExport {
  if (!isRecord(value)) {
    throw new OpenCodeExportError(
      "NOT_AN_EXPORT",
      `the JSON is ${kindOf(value)}, not an object with "info" and "messages"`,
    );
  }
  if (!Array.isArray(value.messages)) {
    throw new OpenCodeExportError(
      "NOT_AN_EXPORT",
      `the JSON object has no "messages" array (its fields: ${
        Object.keys(value).join(", ") || "none"
      })`,
    );
  }
  if (!isRecord(value.info) || typeof value.info.id !== "string") {
    throw new OpenCodeExportError(
      "NOT_AN_EXPORT",
      'the JSON object has no "info" object with the session\'s "id"',
    );
  }
  const messages = value.messages.map(checkMessage);
  return { info: value.info as unknown as OpenCodeSessionInfoLike, messages };
}

/**
 * Parses the text `opencode export <sessionID>` prints (a leading
 * `Exporting session: ...` line, from a `2>&1` capture, is skipped). Throws
 * {@linkcode OpenCodeExportError}: `NOT_JSON` with the parser's reason,
 * `NOT_AN_EXPORT` or `BAD_MESSAGE` naming what is missing.
 *
 * @example
 * ```ts
 * import { parseOpenCodeExport } from "./export_file.ts";
 * const s = parseOpenCodeExport('{"info": {"id": "ses_1"}, "messages": []}');
 * s.messages.length; // 0
 * ```
 */
export function parseOpenCodeExport(text: string): OpenCodeSessionExport {
  let value: unknown;
  try {
    value = JSON.parse(text.replace(EXPORT_NOTICE, ""));
  } catch (e) {
    throw new OpenCodeExportError(
      "NOT_JSON",
      `it is not JSON (${e instanceof Error ? e.message : String(e)})`,
    );
  }
  return openCodeExportOf(value);
}

/**
 * One row of OpenCode's `message` table (the columns the CLI reads).
 *
 * @example
 * ```ts
 * import type { OpenCodeMessageRow } from "./export_file.ts";
 * const r: OpenCodeMessageRow = { id: "msg_1", session_id: "ses_1", data: '{"role":"user"}' };
 * ```
 */
export interface OpenCodeMessageRow {
  /** Message id. */
  id: string;
  /** Its session. */
  session_id: string;
  /** The message as JSON, without `id` and `sessionID`. */
  data: string;
}

/**
 * One row of OpenCode's `part` table (the columns the CLI reads).
 *
 * @example
 * ```ts
 * import type { OpenCodePartRow } from "./export_file.ts";
 * const r: OpenCodePartRow = { id: "prt_1", message_id: "msg_1", session_id: "ses_1",
 *   data: '{"type":"text","text":"hi"}' };
 * ```
 */
export interface OpenCodePartRow {
  /** Part id. */
  id: string;
  /** Its message. */
  message_id: string;
  /** Its session. */
  session_id: string;
  /** The part as JSON, without `id`, `sessionID` and `messageID`. */
  data: string;
}

function rowData(table: string, id: string, data: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch {
    v = undefined;
  }
  if (!isRecord(v)) {
    throw new OpenCodeExportError(
      "BAD_ROW",
      `the ${table} row ${id} holds no JSON object in its data column`,
    );
  }
  return v;
}

/**
 * Assembles a session from OpenCode's database rows as `opencode export`
 * prints it: each message's `data` with its `id` and `sessionID`, each part's
 * with `id`, `sessionID` and `messageID`, messages and parts sorted by id.
 * Parts of messages not among `messages` are left out. Throws
 * {@linkcode OpenCodeExportError} (`BAD_ROW`, `BAD_MESSAGE`).
 *
 * @example
 * ```ts
 * import { openCodeSessionFromRows } from "./export_file.ts";
 * const s = openCodeSessionFromRows({ id: "ses_1", directory: "/w" },
 *   [{ id: "msg_1", session_id: "ses_1", data: '{"role":"user"}' }],
 *   [{ id: "prt_1", message_id: "msg_1", session_id: "ses_1", data: '{"type":"text","text":"hi"}' }]);
 * s.messages[0].parts[0].id; // "prt_1"
 * ```
 */
export function openCodeSessionFromRows(
  info: OpenCodeSessionInfoLike,
  messages: readonly OpenCodeMessageRow[],
  parts: readonly OpenCodePartRow[],
): OpenCodeSessionExport {
  const byMessage = new Map<string, OpenCodePartLike[]>();
  for (const r of [...parts].sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) {
    const part = {
      ...rowData("part", r.id, r.data),
      id: r.id,
      sessionID: r.session_id,
      messageID: r.message_id,
    } as unknown as OpenCodePartLike;
    const list = byMessage.get(r.message_id) ?? [];
    list.push(part);
    byMessage.set(r.message_id, list);
  }
  const sorted = [...messages].sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  return openCodeExportOf({
    info,
    messages: sorted.map((r) => ({
      info: { ...rowData("message", r.id, r.data), id: r.id, sessionID: r.session_id },
      parts: byMessage.get(r.id) ?? [],
    })),
  });
}
