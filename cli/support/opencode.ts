/**
 * OpenCode sessions for the `readcache` CLI: a file `opencode export
 * <sessionID>` wrote, or OpenCode's own storage, read without writing to it.
 *
 * Where OpenCode 1.18.33 keeps sessions (verified with the real binary,
 * `scripts/opencode/capture_session.ts`): one SQLite database,
 * `$XDG_DATA_HOME/opencode/opencode.db` (`~/.local/share/opencode/opencode.db`
 * without `XDG_DATA_HOME`; `OPENCODE_DB` names another file, relative to
 * that directory unless absolute), in WAL mode. Sessions are rows of
 * `session` (`directory` is the project), messages of `message` and parts of
 * `part`, each with its JSON in `data`; `opencode export` prints the same.
 *
 * Reading never writes: a database without a write-ahead log (OpenCode not
 * running, or it checkpointed on exit) is opened with SQLite's `immutable=1`
 * (no locks, no `-shm`, nothing written); one with a log is copied, database
 * then log, into a private temporary directory and read there, because even a
 * read-only SQLite connection writes to the `-shm` index of a live database.
 * The copy is removed when done.
 *
 * @module
 */
import { copyFile, mkdtemp, realpath, rm, stat } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { pathToFileURL } from "node:url";
import { DatabaseSync } from "node:sqlite";
import {
  type OpenCodeMessageRow,
  type OpenCodePartRow,
  type OpenCodeSessionExport,
  openCodeSessionFromRows,
  type OpenCodeSessionInfoLike,
} from "../../src/adapters/opencode/export_file.ts";
import { CliError, EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, messageOf } from "./output.ts";
import type { OpenCodeSessionFile } from "./sessions.ts";
import { shellQuote } from "./store_scan.ts";

/**
 * Stable codes of {@linkcode OpenCodeStorageError}: `NO_DATABASE` (no
 * database where OpenCode keeps it), `NOT_OPENCODE_DB` (a file that is not
 * an OpenCode database, or of a version with other tables), `UNREADABLE`
 * (cannot be opened or copied), `NO_SESSION` (no such session, or none of the
 * project).
 *
 * @example
 * ```ts
 * import type { OpenCodeStorageErrorCode } from "./opencode.ts";
 * const code: OpenCodeStorageErrorCode = "NO_SESSION";
 * ```
 */
export type OpenCodeStorageErrorCode =
  | "NO_DATABASE"
  | "NOT_OPENCODE_DB"
  | "UNREADABLE"
  | "NO_SESSION";

/**
 * OpenCode's storage cannot be used; the message says where it looked and
 * what to do. A {@linkcode CliError} (exit code 2 by default).
 *
 * @example
 * ```ts
 * import { OpenCodeStorageError } from "./opencode.ts";
 * const e = new OpenCodeStorageError("NO_SESSION", "No OpenCode session of /w in /d/opencode.db.");
 * e.code; // "NO_SESSION"
 * ```
 */
export class OpenCodeStorageError extends CliError {
  /** Stable machine-readable code. */
  readonly code: OpenCodeStorageErrorCode;

  /** `exitCode` as for {@linkcode CliError}. */
  constructor(code: OpenCodeStorageErrorCode, message: string, exitCode: number = EXIT_USAGE) {
    super(message, exitCode);
    this.name = "OpenCodeStorageError";
    this.code = code;
  }
}

/**
 * OpenCode's data directory: `$XDG_DATA_HOME/opencode`, else
 * `~/.local/share/opencode` (also on macOS, as OpenCode does).
 *
 * @example
 * ```ts
 * import { openCodeDataDir } from "./opencode.ts";
 * openCodeDataDir(); // "/home/me/.local/share/opencode"
 * ```
 */
export function openCodeDataDir(): string {
  const xdg = Deno.env.get("XDG_DATA_HOME");
  return join(xdg ? xdg : join(homedir(), ".local", "share"), "opencode");
}

/**
 * The database OpenCode 1.18 keeps sessions in: `OPENCODE_DB` (absolute, or
 * relative to {@linkcode openCodeDataDir}), else `opencode.db` there.
 *
 * @example
 * ```ts
 * import { openCodeDatabasePath } from "./opencode.ts";
 * openCodeDatabasePath(); // "/home/me/.local/share/opencode/opencode.db"
 * ```
 */
export function openCodeDatabasePath(): string {
  const env = Deno.env.get("OPENCODE_DB");
  if (env && env !== ":memory:") return isAbsolute(env) ? env : join(openCodeDataDir(), env);
  return join(openCodeDataDir(), "opencode.db");
}

/**
 * One session listed from OpenCode's database.
 *
 * @example
 * ```ts
 * import type { OpenCodeSessionSummary } from "./opencode.ts";
 * const s: OpenCodeSessionSummary = { id: "ses_1", directory: "/w", title: "fix", parentID: null,
 *   created: 0, updated: 0, archived: false };
 * ```
 */
export interface OpenCodeSessionSummary {
  /** Session id. */
  id: string;
  /** The directory OpenCode ran in. */
  directory: string;
  /** Its title. */
  title: string;
  /** The parent session (subagent sessions have one), or `null`. */
  parentID: string | null;
  /** Created (ms since the epoch). */
  created: number;
  /** Last updated (ms since the epoch). */
  updated: number;
  /** Archived in OpenCode. */
  archived: boolean;
}

interface SessionRow {
  id: string;
  directory: string;
  title: string;
  parent_id: string | null;
  version: string;
  revert: string | null;
  time_created: number;
  time_updated: number;
  time_archived: number | null;
}

const SESSION_COLUMNS =
  "id, directory, title, parent_id, version, revert, time_created, time_updated, time_archived";

/**
 * OpenCode's database, opened without writing to it (see the module
 * documentation). Close it when done: that removes the private copy, if one
 * was made.
 *
 * @example
 * ```ts ignore
 * const db = await OpenCodeDatabase.open("/home/me/.local/share/opencode/opencode.db");
 * try {
 *   const [newest] = db.sessions();
 *   const session = db.session(newest.id);
 * } finally {
 *   await db.close();
 * }
 * ```
 */
export class OpenCodeDatabase {
  /** The database file (OpenCode's, not the copy). */
  readonly path: string;
  /** True when it was read from a private copy (OpenCode had a write-ahead log open). */
  readonly copied: boolean;
  readonly #db: DatabaseSync;
  readonly #tmp: string | undefined;

  private constructor(path: string, db: DatabaseSync, tmp: string | undefined) {
    this.path = path;
    this.#db = db;
    this.#tmp = tmp;
    this.copied = tmp !== undefined;
  }

  /**
   * Opens the database at `path` read-only (immutable, or a private copy
   * when it has a write-ahead log). Throws {@linkcode OpenCodeStorageError}.
   */
  static async open(path: string): Promise<OpenCodeDatabase> {
    try {
      const st = await stat(path);
      if (!st.isFile()) throw Object.assign(new Error("not a file"), { code: "ENOTFILE" });
    } catch (e) {
      const missing = (e as { code?: string }).code === "ENOENT";
      throw new OpenCodeStorageError(
        missing ? "NO_DATABASE" : "UNREADABLE",
        missing
          ? `No OpenCode database at ${path}: OpenCode 1.18 keeps its sessions there ` +
            "($XDG_DATA_HOME/opencode/opencode.db, or OPENCODE_DB). Set XDG_DATA_HOME or " +
            "OPENCODE_DB as OpenCode runs with, or pass a file written by " +
            "`opencode export <sessionID> > session.json`."
          : `Cannot use the OpenCode database ${path}: ${messageOf(e)}. Pass a file written by ` +
            "`opencode export <sessionID> > session.json` instead.",
        // no database: OpenCode has kept nothing here yet (nothing found, exit 0)
        missing ? EXIT_OK : EXIT_USAGE,
      );
    }
    let wal = 0;
    try {
      wal = (await stat(`${path}-wal`)).size;
    } catch {
      // no log: nothing OpenCode wrote is outside the database file
    }
    let tmp: string | undefined;
    let db: DatabaseSync;
    try {
      if (wal === 0) {
        const url = pathToFileURL(path);
        url.search = "?immutable=1";
        db = new DatabaseSync(url, { readOnly: true });
      } else {
        tmp = await mkdtemp(join(tmpdir(), "readcache-opencode-"));
        // the database first, then its log: frames the log still holds win over the file
        await copyFile(path, join(tmp, "opencode.db"));
        await copyFile(`${path}-wal`, join(tmp, "opencode.db-wal")).catch(() => {});
        db = new DatabaseSync(join(tmp, "opencode.db"));
      }
    } catch (e) {
      if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
      throw new OpenCodeStorageError(
        "UNREADABLE",
        `Cannot read the OpenCode database ${path}: ${messageOf(e)}. Make it readable, or pass ` +
          "a file written by `opencode export <sessionID> > session.json`.",
      );
    }
    const out = new OpenCodeDatabase(path, db, tmp);
    try {
      out.#db.prepare(`SELECT ${SESSION_COLUMNS} FROM session LIMIT 0`).all();
      out.#db.prepare("SELECT id, session_id, data FROM message LIMIT 0").all();
      out.#db.prepare("SELECT id, message_id, session_id, data FROM part LIMIT 0").all();
    } catch (e) {
      await out.close();
      throw new OpenCodeStorageError(
        "NOT_OPENCODE_DB",
        `${path} is not an OpenCode 1.18 database (${messageOf(e)}). readcache reads the ` +
          "session, message and part tables of OpenCode 1.18; for another version pass a file " +
          "written by `opencode export <sessionID> > session.json`.",
      );
    }
    return out;
  }

  /** Every session, newest update first. */
  sessions(): OpenCodeSessionSummary[] {
    const rows = this.#db.prepare(
      `SELECT ${SESSION_COLUMNS} FROM session ORDER BY time_updated DESC, id DESC`,
    ).all() as unknown as SessionRow[];
    return rows.map((r) => ({
      id: r.id,
      directory: r.directory,
      title: r.title,
      parentID: r.parent_id,
      created: r.time_created,
      updated: r.time_updated,
      archived: r.time_archived !== null,
    }));
  }

  /**
   * One session with its messages and parts, as `opencode export` prints it;
   * `undefined` when there is no such session. Throws
   * `OpenCodeExportError` for rows that are not JSON objects.
   */
  session(id: string): OpenCodeSessionExport | undefined {
    const row = this.#db.prepare(`SELECT ${SESSION_COLUMNS} FROM session WHERE id = ?`).get(id) as
      | SessionRow
      | undefined;
    if (row === undefined) return undefined;
    let revert: unknown = null;
    try {
      revert = row.revert === null ? null : JSON.parse(row.revert);
    } catch {
      revert = null;
    }
    const info: OpenCodeSessionInfoLike = {
      id: row.id,
      directory: row.directory,
      title: row.title,
      version: row.version,
      time: { created: row.time_created, updated: row.time_updated },
      revert: revert as OpenCodeSessionInfoLike["revert"],
    };
    if (row.parent_id !== null) info.parentID = row.parent_id;
    const messages = this.#db.prepare(
      "SELECT id, session_id, data FROM message WHERE session_id = ? ORDER BY id",
    ).all(id) as unknown as OpenCodeMessageRow[];
    const parts = this.#db.prepare(
      "SELECT id, message_id, session_id, data FROM part WHERE session_id = ? ORDER BY id",
    ).all(id) as unknown as OpenCodePartRow[];
    return openCodeSessionFromRows(info, messages, parts);
  }

  /** Closes the database and removes the private copy, if any. */
  async close(): Promise<void> {
    try {
      this.#db.close();
    } catch {
      // already closed
    }
    if (this.#tmp !== undefined) await rm(this.#tmp, { recursive: true, force: true });
  }
}

/** True when two directory names are the same directory (by real path when they exist). */
export async function sameDirectory(a: string, b: string): Promise<boolean> {
  if (a === b) return true;
  const [ra, rb] = await Promise.all([realpath(a).catch(() => a), realpath(b).catch(() => b)]);
  return ra === rb;
}

/**
 * The sessions of a project in OpenCode's database, newest update first:
 * those whose directory is `cwd`. Subagent sessions (with a parent) and
 * archived ones are left out unless `all`.
 *
 * @example
 * ```ts ignore
 * const mine = await sessionsOfProject(db, "/work/app");
 * ```
 */
export async function sessionsOfProject(
  db: OpenCodeDatabase,
  cwd: string,
  all = false,
): Promise<OpenCodeSessionSummary[]> {
  const out: OpenCodeSessionSummary[] = [];
  for (const s of db.sessions()) {
    if (!all && (s.parentID !== null || s.archived)) continue;
    if (await sameDirectory(s.directory, cwd)) out.push(s);
  }
  return out;
}

/**
 * One OpenCode session from OpenCode's database ({@linkcode openCodeDatabasePath}):
 * the session `id`, or without one the newest session of the project `cwd`
 * (subagent and archived sessions left out). Throws
 * {@linkcode OpenCodeStorageError} saying where it looked.
 *
 * @example
 * ```ts ignore
 * const s = await openCodeSessionFromStorage(undefined, "/work/app");
 * s.path; // "/home/me/.local/share/opencode/opencode.db#ses_..."
 * ```
 */
export async function openCodeSessionFromStorage(
  id: string | undefined,
  cwd: string,
): Promise<OpenCodeSessionFile> {
  const path = openCodeDatabasePath();
  const db = await OpenCodeDatabase.open(path);
  try {
    let sid = id;
    if (sid === undefined) {
      const mine = await sessionsOfProject(db, cwd);
      if (mine.length === 0) {
        const other = db.sessions().find((s) => s.parentID === null && !s.archived);
        throw new OpenCodeStorageError(
          "NO_SESSION",
          `No OpenCode session of ${cwd} in ${path}. Run readcache in the directory OpenCode ran ` +
            "in, or pass it with --cwd DIR" +
            (other === undefined
              ? ""
              : ` (OpenCode's newest session is of ${other.directory}: readcache status ` +
                `--opencode --cwd ${shellQuote(other.directory)})`) +
            ", or pass a session id, or a file written by `opencode export <sessionID>`.",
          EXIT_OK, // nothing found: an answer, not a usage error
        );
      }
      sid = mine[0].id;
    }
    let session: OpenCodeSessionExport | undefined;
    try {
      session = db.session(sid);
    } catch (e) {
      throw new OpenCodeStorageError(
        "NOT_OPENCODE_DB",
        `The OpenCode session ${sid} in ${path} cannot be read: ${messageOf(e)}.`,
        EXIT_PROBLEM,
      );
    }
    if (session === undefined) {
      throw new OpenCodeStorageError(
        "NO_SESSION",
        `No OpenCode session ${sid} in ${path}. Pass the id of a session (ses_...), as ` +
          "`readcache savings --opencode --json` lists them, or leave it out for the newest " +
          "session of the project.",
      );
    }
    return {
      path: `${path}#${sid}`,
      session,
      mtimeMs: session.info.time?.updated ?? 0,
      bytes: 0,
    };
  } finally {
    await db.close();
  }
}

/**
 * Every OpenCode session in OpenCode's database, or those of the project
 * `cwd` when given (subagent sessions included: what they read was sent
 * too), oldest first. Throws {@linkcode OpenCodeStorageError}.
 *
 * @example
 * ```ts ignore
 * const all = await openCodeSessionsFromStorage(undefined);
 * ```
 */
export async function openCodeSessionsFromStorage(
  cwd: string | undefined,
): Promise<{ database: string; sessions: OpenCodeSessionFile[] }> {
  const path = openCodeDatabasePath();
  const db = await OpenCodeDatabase.open(path);
  try {
    const list = cwd === undefined ? db.sessions() : await sessionsOfProject(db, cwd, true);
    const sessions: OpenCodeSessionFile[] = [];
    for (const s of list.reverse()) {
      let session: OpenCodeSessionExport | undefined;
      try {
        session = db.session(s.id);
      } catch (e) {
        throw new OpenCodeStorageError(
          "NOT_OPENCODE_DB",
          `The OpenCode session ${s.id} in ${path} cannot be read: ${messageOf(e)}.`,
          EXIT_PROBLEM,
        );
      }
      if (session === undefined) continue;
      sessions.push({ path: `${path}#${s.id}`, session, mtimeMs: s.updated, bytes: 0 });
    }
    return { database: path, sessions };
  } finally {
    await db.close();
  }
}
