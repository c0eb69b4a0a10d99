/**
 * The newest messages of a session as OpenCode's database holds them, read
 * synchronously: their ids, their parts' ids and the session's revert point,
 * without their content. The plugin checks the events it followed against
 * them at every read (`OpenCodeSessionCache.sync`): OpenCode's HTTP API would
 * answer the same from its own process, but serialising whole messages costs
 * the read tool tens of milliseconds of OpenCode's only thread, where these
 * few indexed queries cost a fraction of one.
 *
 * The database is OpenCode 1.18's (`OPENCODE_DB`, else `opencode.db` in
 * `$XDG_DATA_HOME/opencode`, as OpenCode's released builds name it), opened
 * read-only through the runtime's own SQLite (`bun:sqlite` in OpenCode,
 * `node:sqlite` elsewhere). Anything unexpected (no such module, no file, other
 * tables, a session it does not hold) makes it unavailable and the plugin
 * checks through the HTTP API instead.
 *
 * Specified by SPEC.md §11.8 (how the plugin follows a session).
 *
 * @module
 */
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { env } from "node:process";
import type { OpenCodeMessageLike, OpenCodeRevertLike } from "./branch.ts";

/**
 * The newest messages of one session (ids only), oldest first.
 *
 * @example
 * ```ts
 * import type { OpenCodeSessionTip } from "@readcache/core/opencode";
 * const tip: OpenCodeSessionTip = { messages: [], complete: true, revert: undefined };
 * ```
 */
export interface OpenCodeSessionTip {
  /** Each message as `{info: {id}, parts: [{id}]}`, parts by id. */
  messages: readonly OpenCodeMessageLike[];
  /** True when these are all the session's messages. */
  complete: boolean;
  /** The session's revert point, if any. */
  revert: OpenCodeRevertLike | undefined;
}

/**
 * Reads {@linkcode OpenCodeSessionTip}s from one OpenCode database.
 *
 * @example
 * ```ts ignore
 * const reader = await openCodeTipReader();
 * reader?.tip("ses_1", 8);
 * ```
 */
export interface OpenCodeTipReader {
  /** The newest `limit` messages; `undefined` when the database cannot say. */
  tip(sessionID: string, limit: number): OpenCodeSessionTip | undefined;
}

/** The part of a SQLite binding both `bun:sqlite` and `node:sqlite` have. */
interface SqliteLike {
  prepare(sql: string): { all(...params: unknown[]): unknown[] };
}

/**
 * OpenCode's database path as OpenCode computes it for its released builds.
 *
 * @example
 * ```ts
 * import { openCodeDatabaseFile } from "@readcache/core/opencode";
 * openCodeDatabaseFile({ XDG_DATA_HOME: "/d" }); // "/d/opencode/opencode.db"
 * ```
 */
export function openCodeDatabaseFile(
  vars: Record<string, string | undefined> = env,
): string | undefined {
  const data = join(vars.XDG_DATA_HOME || join(homedir(), ".local", "share"), "opencode");
  const named = vars.OPENCODE_DB;
  if (named === ":memory:") return undefined;
  if (named) return isAbsolute(named) ? named : join(data, named);
  return join(data, "opencode.db");
}

/**
 * Opens OpenCode's database read-only for {@linkcode OpenCodeTipReader.tip};
 * `undefined` when it cannot be (see the module documentation).
 *
 * @example
 * ```ts ignore
 * const reader = await openCodeTipReader("/home/me/.local/share/opencode/opencode.db");
 * ```
 */
export async function openCodeTipReader(
  file: string | undefined = openCodeDatabaseFile(),
): Promise<OpenCodeTipReader | undefined> {
  if (file === undefined) return undefined;
  const db = await openReadOnly(file);
  if (db === undefined) return undefined;
  try {
    const messages = db.prepare(
      "SELECT id FROM message WHERE session_id = ? ORDER BY time_created DESC, id DESC LIMIT ?",
    );
    const parts = db.prepare("SELECT id FROM part WHERE message_id = ? ORDER BY id");
    const session = db.prepare("SELECT revert FROM session WHERE id = ?");
    return {
      tip(sessionID, limit) {
        try {
          const row = session.all(sessionID)[0] as { revert?: unknown } | undefined;
          if (row === undefined) return undefined; // not this database's session
          const ids = (messages.all(sessionID, limit) as { id: string }[]).map((r) => r.id);
          return {
            messages: ids.reverse().map((id) => ({
              info: { id, role: "" },
              parts: (parts.all(id) as { id: string }[]).map((p) => ({ id: p.id, type: "" })),
            })),
            complete: ids.length < limit,
            revert: revertOf(row.revert),
          };
        } catch {
          return undefined;
        }
      },
    };
  } catch {
    return undefined; // not OpenCode's tables
  }
}

async function openReadOnly(file: string): Promise<SqliteLike | undefined> {
  try {
    // Bun's own module, through require (no other runtime has it)
    const { Database } = createRequire(import.meta.url)("bun:sqlite") as {
      Database: new (f: string, o: { readonly: boolean }) => SqliteLike;
    };
    return new Database(file, { readonly: true });
  } catch { /* not Bun */ }
  try {
    const { DatabaseSync } = await import("node:sqlite");
    return new DatabaseSync(file, { readOnly: true }) as unknown as SqliteLike;
  } catch {
    return undefined;
  }
}

function revertOf(column: unknown): OpenCodeRevertLike | undefined {
  if (typeof column !== "string") return undefined;
  try {
    const r = JSON.parse(column) as { messageID?: unknown; partID?: unknown } | null;
    if (typeof r?.messageID !== "string") return undefined;
    return typeof r.partID === "string"
      ? { messageID: r.messageID, partID: r.partID }
      : { messageID: r.messageID };
  } catch {
    return undefined;
  }
}
