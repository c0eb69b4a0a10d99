/**
 * Finding and reading pi's session files the way pi 0.73 does: the agent
 * directory is `PI_CODING_AGENT_DIR` or `~/.pi/agent`; a project's sessions
 * are in `--session-dir` (here `--sessions`), `PI_CODING_AGENT_SESSION_DIR`,
 * `sessionDir` in the project's or the agent's `settings.json`, or by default
 * `<agent dir>/sessions/--<cwd without its leading slash, / replaced by ->--/`
 * (pi's `getDefaultSessionDir`); files are `<timestamp>_<uuid>.jsonl`, whose
 * first line is the header `{"type":"session","id",...,"cwd"}`. The newest is
 * the one with the latest modification time (pi's `findMostRecentSession`).
 * Everything here only reads.
 *
 * @module
 */
import { type ClaudeRowLike, parseClaudeTranscript } from "../../src/adapters/claude/transcript.ts";
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import {
  looksLikeOpenCodeExport,
  OpenCodeExportError,
  type OpenCodeSessionExport,
  parseOpenCodeExport,
} from "../../src/adapters/opencode/export_file.ts";
import { parseSessionJsonl, type PiEntryLike } from "../../src/adapters/pi/branch.ts";
import { HASH_PATTERN } from "../../src/core/hash.ts";
import { CliError, EXIT_USAGE, messageOf, NothingFound, plural } from "./output.ts";
import { shellQuote } from "./store_scan.ts";

/**
 * The header line of a pi session file.
 *
 * @example
 * ```ts
 * import type { SessionHeader } from "./sessions.ts";
 * const h: SessionHeader = { type: "session", id: "01a2", cwd: "/w", timestamp: "2026-01-01T00:00:00Z" };
 * ```
 */
export interface SessionHeader {
  /** Always `session`. */
  type: "session";
  /** Session id. */
  id: string;
  /** The directory pi ran in. */
  cwd?: string;
  /** When the session started (ISO 8601). */
  timestamp?: string;
}

/**
 * A parsed session file.
 *
 * @example
 * ```ts
 * import { readSessionFile } from "./sessions.ts";
 * const s = await readSessionFile("/home/me/.pi/agent/sessions/--w--/x.jsonl");
 * s.entries.length;
 * ```
 */
export interface SessionFile {
  /** Path of the file. */
  path: string;
  /** Its header, when the first line is one. */
  header: SessionHeader | undefined;
  /** Its entries in file order (the header excluded). */
  entries: PiEntryLike[];
  /** Modification time (ms since the epoch). */
  mtimeMs: number;
  /** Size in bytes. */
  bytes: number;
}

/**
 * Why a file could not be used as a pi session file: `missing` (no such
 * file), `unreadable` (it exists but cannot be read), `not_a_file` (a
 * directory or a device), `not_a_session` (its first line is not a pi
 * session header). A {@linkcode CliError}, so it ends the command with its
 * message when not caught.
 *
 * @example
 * ```ts
 * import { SessionFileError } from "./sessions.ts";
 * const e = new SessionFileError("not_a_session", "/x.jsonl is not a pi session file.", 2);
 * e.kind; // "not_a_session"
 * ```
 */
export class SessionFileError extends CliError {
  /** What is wrong with the file. */
  readonly kind: "missing" | "unreadable" | "not_a_file" | "not_a_session";
  /** The reason in a few words ("permission denied", "no such file"). */
  readonly why: string;

  /** `exitCode` as for {@linkcode CliError}. */
  constructor(kind: SessionFileError["kind"], message: string, exitCode: number, why?: string) {
    super(message, exitCode);
    this.name = "SessionFileError";
    this.kind = kind;
    this.why = why ?? kind.replaceAll("_", " ");
  }
}

function expandHome(p: string): string {
  if (p === "~") return homedir();
  return p.startsWith("~/") ? join(homedir(), p.slice(2)) : p;
}

/**
 * pi's agent directory: `PI_CODING_AGENT_DIR` (a leading `~` expanded), else
 * `~/.pi/agent`.
 *
 * @example
 * ```ts
 * import { agentDir } from "./sessions.ts";
 * agentDir(); // "/home/me/.pi/agent"
 * ```
 */
export function agentDir(): string {
  const env = Deno.env.get("PI_CODING_AGENT_DIR");
  return env ? expandHome(env) : join(homedir(), ".pi", "agent");
}

/**
 * pi's default session directory of a working directory (its
 * `getDefaultSessionDir`, without creating it).
 *
 * @example
 * ```ts
 * import { defaultSessionDir } from "./sessions.ts";
 * defaultSessionDir("/work/my-app", "/home/me/.pi/agent");
 * // "/home/me/.pi/agent/sessions/--work-my-app--"
 * ```
 */
export function defaultSessionDir(cwd: string, agent: string = agentDir()): string {
  const safe = `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
  return join(agent, "sessions", safe);
}

async function settingsSessionDir(file: string, base: string): Promise<string | undefined> {
  try {
    const v = JSON.parse(await readFile(file, "utf8")) as { sessionDir?: unknown };
    if (typeof v.sessionDir !== "string" || v.sessionDir === "") return undefined;
    const dir = expandHome(v.sessionDir);
    return isAbsolute(dir) ? dir : resolve(base, dir);
  } catch {
    return undefined;
  }
}

/**
 * Where pi keeps the sessions of `cwd`, in pi's order of precedence:
 * `override` (the `--sessions` option), `PI_CODING_AGENT_SESSION_DIR`,
 * `sessionDir` in `<cwd>/.pi/settings.json` then in the agent's
 * `settings.json`, else {@linkcode defaultSessionDir}. `shared` is true when
 * the directory may hold sessions of other projects too.
 *
 * @example
 * ```ts
 * import { sessionDirFor } from "./sessions.ts";
 * const { dir } = await sessionDirFor("/work/my-app");
 * ```
 */
export async function sessionDirFor(
  cwd: string,
  override?: string,
): Promise<{ dir: string; shared: boolean }> {
  if (override !== undefined) {
    const dir = resolve(override);
    let isDir = false;
    try {
      isDir = (await stat(dir)).isDirectory();
    } catch {
      // missing: said below
    }
    if (!isDir) {
      throw new CliError(
        `The sessions directory ${dir} (--sessions) does not exist or is not a directory. ` +
          "Pass the directory that holds pi's session files (.jsonl), or leave --sessions out " +
          "to use pi's own.",
        EXIT_USAGE,
      );
    }
    return { dir, shared: true };
  }
  const env = Deno.env.get("PI_CODING_AGENT_SESSION_DIR");
  if (env) return { dir: resolve(expandHome(env)), shared: true };
  const fromSettings = await settingsSessionDir(join(cwd, ".pi", "settings.json"), cwd) ??
    await settingsSessionDir(join(agentDir(), "settings.json"), cwd);
  if (fromSettings !== undefined) return { dir: fromSettings, shared: true };
  return { dir: defaultSessionDir(cwd), shared: false };
}

/**
 * Parses one session file. Throws {@linkcode CliError} (exit code
 * `exitCode`) when it cannot be read or has no session header.
 *
 * @example
 * ```ts
 * import { readSessionFile } from "./sessions.ts";
 * const s = await readSessionFile("session.jsonl");
 * console.log(s.header?.cwd);
 * ```
 */
export async function readSessionFile(
  path: string,
  exitCode: number = EXIT_USAGE,
): Promise<SessionFile> {
  const { text, info } = await readSessionText(path, exitCode);
  const header = headerOf(text);
  if (header === undefined) {
    throw new SessionFileError(
      "not_a_session",
      `${path} is not a pi session file: its first line is not a session header ` +
        '({"type":"session","id":...}). Pass a file from pi\'s sessions directory.',
      exitCode,
    );
  }
  return {
    path,
    header,
    entries: parseSessionJsonl(text),
    mtimeMs: info.mtime?.getTime() ?? 0,
    bytes: info.size,
  };
}

/** The text of a file named as a session, with the errors of {@linkcode readSessionFile}. */
async function readSessionText(
  path: string,
  exitCode: number,
): Promise<{ text: string; info: Deno.FileInfo }> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
    if (!info.isFile) {
      throw new SessionFileError(
        "not_a_file",
        `${path} is not a file. Pass a session file (pi's or Claude Code's .jsonl) or an ` +
          "OpenCode export (.json)" +
          (info.isDirectory ? ", not a directory." : "."),
        exitCode,
      );
    }
    return { text: await Deno.readTextFile(path), info };
  } catch (e) {
    if (e instanceof CliError) throw e;
    if (e instanceof Deno.errors.NotFound) {
      throw new SessionFileError(
        "missing",
        `Cannot read the session file ${path}: no such file. ` +
          "Pass the path of a session file (pi's or Claude Code's .jsonl, or an OpenCode export), " +
          "or --latest for the newest of this project.",
        exitCode,
        "no such file",
      );
    }
    const fix = e instanceof Deno.errors.PermissionDenied
      ? `Make it readable (chmod u+r ${shellQuote(path)}) or pass another session file.`
      : "Pass the path of a readable session file.";
    throw new SessionFileError(
      "unreadable",
      `Cannot read the session file ${path}: ${permissionWords(e)}. ${fix}`,
      exitCode,
      permissionWords(e),
    );
  }
}

/**
 * An OpenCode session read from a file `opencode export <sessionID>` wrote,
 * or from OpenCode's database (`path` is then `<database>#<sessionID>`).
 *
 * @example
 * ```ts
 * import type { OpenCodeSessionFile } from "./sessions.ts";
 * const f: OpenCodeSessionFile = { path: "s.json", session: { info: { id: "ses_1" }, messages: [] },
 *   mtimeMs: 0, bytes: 2 };
 * ```
 */
export interface OpenCodeSessionFile {
  /** The file (or `<database>#<sessionID>`). */
  path: string;
  /** The session and its messages. */
  session: OpenCodeSessionExport;
  /** Modification time (ms since the epoch; the session's last update when from the database). */
  mtimeMs: number;
  /** Size in bytes (0 when from the database). */
  bytes: number;
}

/**
 * A session file of either host: pi's JSONL or an OpenCode export.
 *
 * @example
 * ```ts
 * import type { AnySessionFile } from "./sessions.ts";
 * function idOf(s: AnySessionFile): string | undefined {
 *   return s.host === "pi" ? s.file.header?.id : s.file.session.info.id;
 * }
 * ```
 */
export type AnySessionFile =
  | { host: "pi"; file: SessionFile }
  | { host: "opencode"; file: OpenCodeSessionFile }
  | { host: "claude"; file: ClaudeSessionFile };

/** A Claude Code transcript (`~/.claude/projects/<project>/<session>.jsonl`), parsed. */
export interface ClaudeSessionFile {
  /** The file. */
  path: string;
  /** Its rows, in file order. */
  rows: ClaudeRowLike[];
  /** Modification time (ms since the epoch). */
  mtimeMs: number;
  /** Size in bytes. */
  bytes: number;
}

/**
 * True when the text is a Claude Code transcript: JSON lines among whose first
 * 50 one has a `sessionId` and a `uuid` (conversation rows) or is one of
 * Claude Code's bookkeeping rows (`queue-operation`, `summary`).
 */
export function looksLikeClaudeTranscript(text: string): boolean {
  let seen = 0;
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    if (++seen > 50) break;
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(line);
    } catch {
      return false;
    }
    if (typeof row !== "object" || row === null || Array.isArray(row)) return false;
    if (typeof row.sessionId === "string" && typeof row.uuid === "string") return true;
  }
  return false;
}

/**
 * Reads a session file of either host, told apart by content, not by name:
 * a first line that is a pi session header makes a pi session; JSON of the
 * form `opencode export` prints (`{"info": ..., "messages": [...]}`) an
 * OpenCode session. Anything else is a {@linkcode SessionFileError}
 * (`not_a_session`) whose message says what was wrong. Errors reading the
 * file are those of {@linkcode readSessionFile}.
 *
 * @example
 * ```ts ignore
 * import { readAnySessionFile } from "./sessions.ts";
 * const s = await readAnySessionFile("session.json");
 * s.host; // "opencode"
 * ```
 */
export async function readAnySessionFile(
  path: string,
  exitCode: number = EXIT_USAGE,
): Promise<AnySessionFile> {
  const { text, info } = await readSessionText(path, exitCode);
  const header = headerOf(text);
  if (header !== undefined) {
    return {
      host: "pi",
      file: {
        path,
        header,
        entries: parseSessionJsonl(text),
        mtimeMs: info.mtime?.getTime() ?? 0,
        bytes: info.size,
      },
    };
  }
  if (looksLikeClaudeTranscript(text)) {
    return {
      host: "claude",
      file: {
        path,
        rows: parseClaudeTranscript(text),
        mtimeMs: info.mtime?.getTime() ?? 0,
        bytes: info.size,
      },
    };
  }
  const looks = looksLikeOpenCodeExport(text);
  try {
    return {
      host: "opencode",
      file: {
        path,
        session: parseOpenCodeExport(text),
        mtimeMs: info.mtime?.getTime() ?? 0,
        bytes: info.size,
      },
    };
  } catch (e) {
    if (!(e instanceof OpenCodeExportError)) throw e;
    throw new SessionFileError(
      "not_a_session",
      looks
        ? `${path} is not an OpenCode export: ${e.message}. Pass the JSON that ` +
          "`opencode export <sessionID>` prints (its standard output), unchanged."
        : `${path} is not a pi session file (its first line is not a session header ` +
          '{"type":"session","id":...}) nor an OpenCode export (JSON with "info" and ' +
          `"messages"; ${e.message}). Pass a file from pi's sessions directory, or the output ` +
          "of `opencode export <sessionID>`.",
      exitCode,
    );
  }
}

/**
 * A system error in words: "permission denied" for EACCES, else its message.
 *
 * @example
 * ```ts
 * import { permissionWords } from "./sessions.ts";
 * permissionWords(new Deno.errors.PermissionDenied("EACCES")); // "permission denied"
 * ```
 */
export function permissionWords(e: unknown): string {
  return e instanceof Deno.errors.PermissionDenied ||
      (e as { code?: string } | undefined)?.code === "EACCES"
    ? "permission denied"
    : messageOf(e);
}

function headerOf(text: string): SessionHeader | undefined {
  const first = text.slice(0, text.indexOf("\n") === -1 ? undefined : text.indexOf("\n"));
  try {
    const h = JSON.parse(first) as Partial<SessionHeader>;
    return h.type === "session" && typeof h.id === "string" ? h as SessionHeader : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The `.jsonl` files in `dir` and in the folders under it (pi keeps one
 * folder per project under its sessions directory, so `--sessions` may name
 * the top one), sorted by path; `[]` when `dir` does not exist. Links to
 * folders are not followed; a folder under `dir` that cannot be read is
 * added to `unreadable`, when given (its sessions are not known).
 *
 * @example
 * ```ts
 * import { sessionFilesIn } from "./sessions.ts";
 * await sessionFilesIn("/home/me/.pi/agent/sessions/--w--"); // ["/home/.../2026-..._id.jsonl"]
 * ```
 */
export async function sessionFilesIn(
  dir: string,
  unreadable?: { path: string; why: string }[],
): Promise<string[]> {
  const out: string[] = [];
  const walk = async (at: string, top: boolean): Promise<void> => {
    let entries;
    try {
      entries = await readdir(at, { withFileTypes: true });
    } catch (e) {
      if (!top) unreadable?.push({ path: at, why: permissionWords(e) });
      return;
    }
    for (const e of entries) {
      const p = join(at, e.name);
      if (e.isFile() && e.name.endsWith(".jsonl")) out.push(p);
      else if (e.isDirectory()) await walk(p, false);
    }
  };
  await walk(dir, true);
  return out.sort();
}

/** True when two directory names are the same directory. */
async function sameDir(a: string, b: string): Promise<boolean> {
  if (resolve(a) === resolve(b)) return true;
  const [ra, rb] = await Promise.all([realpath(a).catch(() => a), realpath(b).catch(() => b)]);
  return ra === rb;
}

/**
 * The session files of a project: those in its session directory
 * ({@linkcode sessionDirFor}) whose header names `cwd`. Files of other
 * projects (a shared directory) and files without a session header are
 * skipped and counted; files that cannot be read are listed in `unreadable`
 * (which project they belong to is not known). `onFile` is called once per
 * file looked at (progress).
 *
 * @example
 * ```ts
 * import { sessionsOf } from "./sessions.ts";
 * const { files } = await sessionsOf("/work/my-app");
 * ```
 */
export async function sessionsOf(
  cwd: string,
  override?: string,
  onFile?: (done: number, total: number) => void,
): Promise<{
  dir: string;
  files: SessionFile[];
  skipped: number;
  unreadable: { path: string; why: string }[];
}> {
  const { dir } = await sessionDirFor(cwd, override);
  const unreadable: { path: string; why: string }[] = [];
  const paths = await sessionFilesIn(dir, unreadable);
  const files: SessionFile[] = [];
  let skipped = 0;
  for (const [i, p] of paths.entries()) {
    try {
      // another project's session (a shared or top directory): only its header is read
      const other = (await headerOfFile(p))?.cwd;
      if (other !== undefined && !(await sameDir(other, cwd))) {
        skipped++;
        onFile?.(i + 1, paths.length);
        continue;
      }
      const s = await readSessionFile(p);
      if (s.header?.cwd !== undefined && await sameDir(s.header.cwd, cwd)) files.push(s);
      else skipped++;
    } catch (e) {
      if (e instanceof SessionFileError && e.kind === "unreadable") {
        unreadable.push({ path: p, why: e.why });
      } else skipped++;
    }
    onFile?.(i + 1, paths.length);
  }
  return { dir, files, skipped, unreadable };
}

/**
 * The files of a sessions directory that are not sessions of this project, in
 * words (empty for none).
 *
 * @example
 * ```ts
 * import { skippedWords } from "./sessions.ts";
 * skippedWords(1); // " (1 other file skipped: of another project or not a pi session)"
 * ```
 */
export function skippedWords(n: number): string {
  if (n === 0) return "";
  return ` (${plural(n, "other file")} skipped: ${
    n === 1 ? "of another project or not a pi session" : "of other projects or not pi sessions"
  })`;
}

/**
 * The newest session file of a project (latest modification time among the
 * files with a session header naming `cwd`), as pi's `--continue` picks it.
 * Only the headers are read.
 * Throws {@linkcode CliError} (usage) when there is none.
 *
 * @example
 * ```ts
 * import { latestSession } from "./sessions.ts";
 * const file = await latestSession("/work/my-app");
 * ```
 */
export async function latestSession(cwd: string, override?: string): Promise<string> {
  const { dir } = await sessionDirFor(cwd, override);
  // newest first, then the first whose header names this project: only headers are read
  const files: { path: string; mtimeMs: number }[] = [];
  for (const path of await sessionFilesIn(dir)) {
    try {
      files.push({ path, mtimeMs: (await stat(path)).mtimeMs });
    } catch {
      // removed meanwhile
    }
  }
  files.sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const f of files) {
    const cwdOf = (await headerOfFile(f.path))?.cwd;
    if (cwdOf !== undefined && await sameDir(cwdOf, cwd)) return f.path;
  }
  const other = await newestOtherProject(cwd, dir);
  const hint = other === undefined
    ? ""
    : ` (pi's newest session is of ${other}: readcache status --cwd ${shellQuote(other)})`;
  throw new NothingFound(
    `No pi session of ${cwd} in ${dir}. Run readcache in the project directory pi ran in, ` +
      `or pass that directory with --cwd DIR${hint}, or pass --sessions DIR when pi keeps its ` +
      "sessions elsewhere, or pass a session file.",
  );
}

/**
 * The project of the newest session file pi keeps for another directory than
 * `cwd`: in `dir` itself (a shared directory) and in the other project
 * directories of `<agent dir>/sessions`. Only headers are read.
 */
async function newestOtherProject(cwd: string, dir: string): Promise<string | undefined> {
  const root = join(agentDir(), "sessions");
  const dirs = new Set([dir]);
  try {
    for (const e of await readdir(root, { withFileTypes: true })) {
      if (e.isDirectory()) dirs.add(join(root, e.name));
    }
  } catch {
    // no sessions at all
  }
  const files: { path: string; mtimeMs: number }[] = [];
  for (const d of dirs) {
    for (const path of await sessionFilesIn(d)) {
      try {
        files.push({ path, mtimeMs: (await stat(path)).mtimeMs });
      } catch {
        // removed meanwhile
      }
    }
  }
  files.sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const f of files) {
    const other = (await headerOfFile(f.path))?.cwd;
    if (other !== undefined && !(await sameDir(other, cwd))) return other;
  }
  return undefined;
}

/** The header of a session file from its first line (at most 64 KiB read), if it has one. */
async function headerOfFile(path: string): Promise<SessionHeader | undefined> {
  let fh: Deno.FsFile | undefined;
  try {
    fh = await Deno.open(path, { read: true });
    const buf = new Uint8Array(64 * 1024);
    const n = await fh.read(buf);
    return n === null ? undefined : headerOf(new TextDecoder().decode(buf.subarray(0, n)));
  } catch {
    return undefined;
  } finally {
    fh?.close();
  }
}

/**
 * The stored objects a session refers to: every `servedHash` and `baseHash`
 * in a `details.readcache` of any entry (every branch), each with the time of
 * its newest reference (the entry's `timestamp`, else `fallbackMs`). Adds to
 * `into` and returns it.
 *
 * @example
 * ```ts
 * import { objectReferences } from "./sessions.ts";
 * const refs = objectReferences([], 0); // Map {}
 * ```
 */
export function objectReferences(
  entries: readonly PiEntryLike[],
  fallbackMs: number,
  into: Map<string, number> = new Map(),
): Map<string, number> {
  for (const e of entries) {
    const msg = e.message as { details?: { readcache?: unknown }; timestamp?: unknown } | undefined;
    const rc = msg?.details?.readcache as Record<string, unknown> | undefined;
    if (typeof rc !== "object" || rc === null) continue;
    const ts = Date.parse(String((e as { timestamp?: unknown }).timestamp ?? ""));
    const when = Number.isFinite(ts)
      ? ts
      : typeof msg?.timestamp === "number"
      ? msg.timestamp
      : fallbackMs;
    metaReferences(rc, when, into);
  }
  return into;
}

/**
 * Adds the stored contents one read, edit or partial answer metadata
 * (`details.readcache`, `metadata.readcache`) refers to, at time `when`: its
 * `servedHash`, `baseHash` and the `hash` of each `held` stretch (a content
 * the model holds lines of, which a later answer compares lines with).
 *
 * @example
 * ```ts
 * import { metaReferences } from "./sessions.ts";
 * metaReferences({ servedHash: "a".repeat(64) }, 5).get("a".repeat(64)); // 5
 * ```
 */
export function metaReferences(
  rc: Record<string, unknown>,
  when: number,
  into: Map<string, number> = new Map(),
): Map<string, number> {
  const held = Array.isArray(rc.held) ? rc.held : [];
  const hashes = [rc.servedHash, rc.baseHash, ...held.map((h) => (h as { hash?: unknown })?.hash)];
  for (const h of hashes) {
    if (typeof h !== "string" || !HASH_PATTERN.test(h)) continue;
    into.set(h, Math.max(into.get(h) ?? 0, when));
  }
  return into;
}

/**
 * The project directory to work in: `--cwd` when given (it must be a
 * directory), else `fallback`, resolved to its real path (the read cache's
 * file identities are real paths).
 *
 * @example
 * ```ts
 * import { projectDir } from "./sessions.ts";
 * await projectDir(undefined, Deno.cwd());
 * ```
 */
export async function projectDir(option: string | undefined, fallback: string): Promise<string> {
  const dir = resolve(option ?? fallback);
  try {
    const st = await stat(dir);
    if (!st.isDirectory()) throw new Error("not a directory");
    return await realpath(dir);
  } catch (e) {
    throw new CliError(
      `The project directory ${dir} cannot be used (${
        e instanceof Error && "code" in e && e.code === "ENOENT"
          ? "it does not exist"
          : messageOf(e)
      }). Pass an existing directory with --cwd DIR.`,
      EXIT_USAGE,
    );
  }
}
