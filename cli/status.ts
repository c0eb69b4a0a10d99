/**
 * `readcache status [SESSION.jsonl | --latest] [--cwd DIR]`: what the model
 * holds now on the active branch of a pi session file, what the next read of
 * each part would be, how reads were answered on that branch and in the whole
 * file, and the store. Read-only: it reads the session, the project's files
 * and the store, and writes nothing anywhere. An OpenCode session (a file
 * `opencode export` wrote, told apart by content, or `--opencode` for
 * OpenCode's database) is reported by `cli/opencode_status.ts`.
 *
 * - The active branch ends at the last entry in file order (pi's leaf when it
 *   opens the file). Entries are converted like the pi extension does
 *   (`PiBranchConverter` with the read service's `resolveCall`).
 * - The next read of each part is the read decision itself (`planRead` /
 *   `decidePlan`) over the file as it is now and the objects loaded from the
 *   store, with nothing stored afterwards.
 *
 * @module
 */
import { claudeStatus } from "./claude_status.ts";
import { claudeConfigDir } from "./support/claude_dirs.ts";
import { claudeProjectDir } from "./support/store_target.ts";
import { join } from "node:path";
import { homedir } from "node:os";
import { PiBranchConverter, readCallsOf } from "../src/adapters/pi/branch.ts";
import { decidePlan, DEFAULT_DECISION_CONFIG, planRead } from "../src/core/decision.ts";
import { BranchKnowledge } from "../src/core/knowledge.ts";
import { activeBranch } from "../src/core/replay.ts";
import { renderBaselineRead } from "../src/core/baseline.ts";
import {
  describeNextRead,
  formatStatusReport,
  type HeldPart,
  heldParts,
  type NextRead,
  shownPath,
  type StatusReport,
} from "../src/core/status.ts";
import {
  callResolvers,
  detectImageMimeType,
  isInsideProject,
  locateRead,
  readRegularFile,
} from "../src/shell/read_service.ts";
import { FsObjectStore } from "../src/store/fs_object_store.ts";
import {
  CliError,
  EXIT_OK,
  EXIT_PROBLEM,
  EXIT_USAGE,
  messageOf,
  NothingFound,
  printJson,
  stdoutStyle,
} from "./support/output.ts";
import { openCodeStatus } from "./opencode_status.ts";
import { statusJson, statusReport } from "./support/status_report.ts";
import { openCodeSessionFromStorage } from "./support/opencode.ts";
import {
  latestSession,
  projectDir,
  readAnySessionFile,
  readSessionFile,
  type SessionFile,
} from "./support/sessions.ts";

/**
 * Options of {@linkcode statusCommand}.
 *
 * @example
 * ```ts
 * import type { StatusOptions } from "./status.ts";
 * const o: StatusOptions = { latest: true, cwd: "/work/my-app", json: false };
 * ```
 */
export interface StatusOptions {
  /** Use the newest session of the project. */
  latest?: boolean;
  /** The project directory (default: the session's own, else the current directory). */
  cwd?: string;
  /** Where pi keeps sessions, when not in its default place. */
  sessions?: string;
  /** Print JSON instead of words. */
  json?: boolean;
  /**
   * Read the session from OpenCode's database: the `file` argument is then a
   * session id (`ses_...`), or absent for the newest session of the project.
   */
  opencode?: boolean;
  /**
   * Read a Claude Code transcript of the project (`<config>/projects/...`):
   * the `file` argument is then a session id, or absent for the newest one.
   */
  claude?: boolean;
}

/**
 * The transcript `--claude` names: the session id's file, else the newest transcript of the
 * project in Claude Code's projects directory; a usage error saying where it looked.
 */
async function claudeTranscriptPath(id: string | undefined, cwd: string): Promise<string> {
  const dir = claudeProjectDir(cwd, claudeConfigDir());
  if (id !== undefined) {
    if (!/^[A-Za-z0-9_-]+$/.test(id)) {
      throw new CliError(
        `${id} is not a Claude Code session id; pass an id (the name of a transcript in ${dir} ` +
          "without .jsonl) or a transcript file without --claude.",
        EXIT_USAGE,
      );
    }
    return join(dir, `${id}.jsonl`);
  }
  let newest: { path: string; mtime: number } | undefined;
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!e.isFile || !e.name.endsWith(".jsonl")) continue;
      const path = join(dir, e.name);
      const mtime = (await Deno.stat(path)).mtime?.getTime() ?? 0;
      if (newest === undefined || mtime > newest.mtime) newest = { path, mtime };
    }
  } catch {
    // no directory: said below
  }
  if (newest === undefined) {
    throw new NothingFound(
      `No Claude Code session of ${cwd} in ${dir}. Pass the project with --cwd DIR, or a ` +
        "transcript file.",
    );
  }
  return newest.path;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const DIFF_HEADER = /^\[readcache: (\d+) lines? changed of \d+\]/;

/**
 * How the next read of `part` would be answered now, computed read-only: the
 * file is read once, the objects the decision needs are loaded from `store`
 * (for files inside the project; a new pi process has no copy of files
 * outside it), and nothing is written.
 *
 * @example
 * ```ts ignore
 * const next = await predictNextRead(knowledge, part, { name: "/w/a.ts", display: "a.ts" }, store, "/w");
 * next.mode; // "unchanged"
 * ```
 */
export async function predictNextRead(
  knowledge: BranchKnowledge,
  part: HeldPart,
  call: { name: string; display: string },
  store: FsObjectStore,
  cwd: string,
): Promise<NextRead> {
  const ranged = part.scope !== "full";
  const offset = ranged ? part.start : undefined;
  const limit = ranged ? part.end - part.start + 1 : undefined;
  let read;
  try {
    read = await readRegularFile(call.name, DEFAULT_DECISION_CONFIG.maxFileBytes);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || (e as { code?: string }).code === "ENOENT") {
      return { mode: null, reason: "missing" };
    }
    return { mode: null, reason: "error", error: `it cannot be read (${messageOf(e)})` };
  }
  if (read.kind !== "ok") return { mode: null, reason: read.kind };
  if (detectImageMimeType(read.bytes) !== undefined) return { mode: null, reason: "image" };
  const plainBytes = (): number | undefined => {
    try {
      const text = decoder.decode(read.bytes);
      return encoder.encode(
        renderBaselineRead({ text, displayPath: call.display, offset, limit }).text,
      )
        .length;
    } catch {
      return undefined;
    }
  };
  try {
    const plan = planRead({
      displayPath: call.display,
      pathKey: part.pathKey,
      offset,
      limit,
      bytes: read.bytes,
      knowledge: knowledge.file(part.pathKey, call.name),
    });
    const inside = isInsideProject(part.pathKey, cwd);
    const objects = new Map<string, Uint8Array | undefined>();
    for (const hash of plan.needs) objects.set(hash, inside ? await store.get(hash) : undefined);
    const d = decidePlan(plan, objects);
    const next: NextRead = {
      mode: d.mode,
      reason: d.reason,
      bytes: encoder.encode(d.text).length,
    };
    const plain = plainBytes();
    if (plain !== undefined) next.plainBytes = plain;
    const m = d.mode === "diff" ? DIFF_HEADER.exec(d.text) : null;
    if (m) next.changedLines = Number(m[1]);
    return next;
  } catch (e) {
    return { mode: null, reason: "error", error: messageOf(e) };
  }
}

/**
 * Runs `readcache status`; returns the exit code (0, or 1 when the store has
 * a problem). Throws `CliError` for usage errors.
 *
 * @example
 * ```ts ignore
 * const code = await statusCommand(undefined, { latest: true });
 * ```
 */
export async function statusCommand(
  file: string | undefined,
  options: StatusOptions,
): Promise<number> {
  if (file !== undefined && options.latest) {
    throw new CliError(
      `Pass either a session ${
        options.opencode ? "id" : "file"
      } or --latest, not both. Example: readcache status --latest`,
      EXIT_USAGE,
    );
  }
  if (options.claude) {
    if (options.opencode || options.sessions !== undefined) {
      throw new CliError(
        "--claude reads Claude Code's transcripts; it takes neither --opencode nor --sessions.",
        EXIT_USAGE,
      );
    }
    const cwd = await projectDir(options.cwd, Deno.cwd());
    const any = await readAnySessionFile(await claudeTranscriptPath(file, cwd));
    if (any.host !== "claude") {
      throw new CliError(`${any.file.path} is not a Claude Code transcript.`, EXIT_USAGE);
    }
    return await claudeStatus(any.file, { cwd, json: options.json });
  }
  if (options.opencode) {
    if (options.sessions !== undefined) {
      throw new CliError(
        "--sessions is pi's sessions directory; with --opencode the sessions come from " +
          "OpenCode's database (set XDG_DATA_HOME or OPENCODE_DB as OpenCode runs with).",
        EXIT_USAGE,
      );
    }
    const cwd = file === undefined ? await projectDir(options.cwd, Deno.cwd()) : undefined;
    return await openCodeStatus(await openCodeSessionFromStorage(file, cwd ?? ""), {
      cwd: options.cwd,
      json: options.json,
    });
  }
  let cwd: string;
  let session: SessionFile;
  if (file === undefined) {
    cwd = await projectDir(options.cwd, Deno.cwd());
    session = await readSessionFile(await latestSession(cwd, options.sessions));
  } else {
    const any = await readAnySessionFile(file);
    if (any.host === "opencode") {
      return await openCodeStatus(any.file, { cwd: options.cwd, json: options.json });
    }
    if (any.host === "claude") {
      return await claudeStatus(any.file, { cwd: options.cwd, json: options.json });
    }
    session = any.file;
    const header = session.header;
    let fallback = Deno.cwd();
    if (header?.cwd !== undefined && options.cwd === undefined) {
      let there = false;
      try {
        there = (await Deno.stat(header.cwd)).isDirectory;
      } catch {
        there = false;
      }
      // the session's project is gone (moved, deleted): its paths would be read against another
      // directory without a word, so ask where it is now
      if (!there) {
        throw new CliError(
          `The project directory of ${session.path}, ${header.cwd}, is not there (moved or ` +
            "deleted). Pass where the project is now with --cwd DIR.",
          EXIT_USAGE,
        );
      }
      fallback = header.cwd;
    }
    cwd = await projectDir(options.cwd, fallback);
  }
  const sessionPath = session.path;
  const home = homedir();
  const deps = { cwd, home };
  // the same conversion as the extension's: reads, writes and the files pending changes target
  const all = new PiBranchConverter(callResolvers(deps)).branch(session.entries);
  const leafId = all.at(-1)?.id ?? null;
  const branch = activeBranch(all, leafId);

  // the name and the typed path of the latest read of each file on the branch
  const args = new Map<string, unknown>();
  for (const e of session.entries) for (const [id, a] of readCallsOf(e)) args.set(id, a);
  const calls = new Map<string, { name: string; display: string }>();
  for (const e of branch) {
    if (e.kind !== "read" || e.call === undefined) continue;
    let display = shownPath(e.call.pathKey, cwd);
    const a = e.callId === undefined ? undefined : args.get(e.callId) as { path?: unknown };
    if (typeof a?.path === "string") {
      try {
        display = locateRead({ path: a.path }, deps).target.displayPath;
      } catch {
        display = a.path;
      }
    }
    calls.set(e.call.pathKey, { name: e.call.name, display });
  }

  const knowledge = new BranchKnowledge();
  knowledge.sync(branch);
  const store = FsObjectStore.forCwd(cwd);
  const held: StatusReport["held"] = [];
  for (const part of heldParts(branch)) {
    const call = calls.get(part.pathKey) ??
      { name: part.pathKey, display: shownPath(part.pathKey, cwd) };
    held.push({ ...part, next: await predictNextRead(knowledge, part, call, store, cwd) });
  }
  const { report, problem } = await statusReport({
    sessionFile: sessionPath,
    cwd,
    branch,
    all,
    held,
    store,
  });
  if (options.json) {
    printJson({
      sessionFile: sessionPath,
      cwd,
      leafId,
      ...statusJson(report, all, describeNextRead),
    });
  } else {
    console.log(formatStatusReport(report, stdoutStyle()));
  }
  return problem ? EXIT_PROBLEM : EXIT_OK;
}
