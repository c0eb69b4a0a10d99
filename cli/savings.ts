/**
 * `readcache savings [DIR|FILE ...]` (default: pi's sessions directory): over many sessions of pi,
 * OpenCode and Claude Code, what was read, what the agent sent and what the read cache sent or
 * would have sent. This file finds the session files and hands each to its host's reader
 * (cli/pi_savings.ts, cli/opencode_savings.ts, cli/claude_savings.ts; pi sessions recorded
 * without the cache go through bench:real's replay, cli/savings_replay.ts); the figures are
 * cli/savings_figures.ts, the text report cli/savings_report.ts, the page cli/savings_html.ts.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { savingsHtml } from "./savings_html.ts";
import { sessionLabel, type SessionSavings, topFiles, totalsOf } from "./savings_figures.ts";

import {
  CliError,
  colorAllowed,
  EXIT_OK,
  EXIT_PROBLEM,
  EXIT_USAGE,
  NothingFound,
  plural,
  printJson,
  Progress,
  slowStage,
  stdoutStyle,
} from "./support/output.ts";
import { claudeConfigDir } from "./support/claude_dirs.ts";
import { claudeSessionSavings } from "./claude_savings.ts";
import { analyseOpenCodeSession } from "./opencode_savings.ts";
import { openCodeSessionsFromStorage } from "./support/opencode.ts";
import {
  agentDir,
  type AnySessionFile,
  type ClaudeSessionFile,
  permissionWords,
  projectDir,
  readAnySessionFile,
  type SessionFile,
  SessionFileError,
} from "./support/sessions.ts";
import { shellQuote } from "./support/store_scan.ts";
import { replayThroughPi, savingsFromReplay } from "./savings_replay.ts";
import { analyseSession } from "./pi_savings.ts";
import { formatSavings, type SavingsReport } from "./savings_report.ts";

export { formatSavings, type SavingsReport };

/**
 * Options of {@linkcode savingsCommand}.
 *
 * @example
 * ```ts
 * import type { SavingsOptions } from "./savings.ts";
 * const o: SavingsOptions = { top: 10, json: true };
 * ```
 */
export interface SavingsOptions {
  /** How many files to list. */
  top: number;
  /** Also write a self-contained HTML page here. */
  html?: string;
  /** Print JSON. */
  json?: boolean;
  /** Also read the sessions in OpenCode's database (without writing to it). */
  opencode?: boolean;
  /** Also read Claude Code's transcripts (`$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`). */
  claude?: boolean;
  /** With `opencode`: only the sessions of this project directory. */
  cwd?: string;
  /**
   * Estimate pi sessions without the read cache by bench:real's replay through pi (default
   * true); false: from their own read results only.
   */
  replay?: boolean;
}

/** A file to read as a session: named on the command line, or found in a directory. */
interface Candidate {
  path: string;
  named: boolean;
  /** A `.json` file found in a directory: counted only when it is an OpenCode export. */
  sniff?: boolean;
}

/** Something that stops a session file or directory found in a directory from being read. */
interface SavingsProblem {
  path: string;
  what: string;
  fix: string;
}

/**
 * The files to read under `path`: the file itself when it is one (read as a
 * session whatever its name), else the `.jsonl` files of the directory and
 * its subdirectories, and its `.json` files (kept only when they are OpenCode
 * exports), sorted. A path named on the command line (`named`)
 * that is missing, unreadable or neither a file nor a directory is a usage
 * error; a subdirectory that cannot be read is added to `problems`.
 */
async function candidates(
  path: string,
  named: boolean,
  problems: SavingsProblem[],
): Promise<Candidate[]> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (e) {
    throw new CliError(
      `Cannot read ${path}: ${
        e instanceof Deno.errors.NotFound ? "no such file or directory" : permissionWords(e)
      }. Pass pi session files or directories that hold them (default: pi's sessions directory).`,
      EXIT_USAGE,
    );
  }
  if (info.isFile) return [{ path, named }];
  if (!info.isDirectory) {
    throw new CliError(
      `${path} is neither a file nor a directory. Pass pi session files or directories that ` +
        "hold them.",
      EXIT_USAGE,
    );
  }
  const out: Candidate[] = [];
  const walk = async (dir: string, top: boolean) => {
    const entries: Deno.DirEntry[] = [];
    try {
      for await (const e of Deno.readDir(dir)) entries.push(e);
    } catch (e) {
      if (top && named) {
        throw new CliError(
          `Cannot read the directory ${dir}: ${permissionWords(e)}. Make it readable ` +
            `(chmod u+rx ${shellQuote(dir)}) or pass another directory.`,
          EXIT_USAGE,
        );
      }
      problems.push({
        path: dir,
        what: `is a directory that cannot be read (${permissionWords(e)}): ` +
          "the sessions in it were not counted",
        fix: `chmod u+rx ${shellQuote(dir)}`,
      });
      return;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory) await walk(p, false);
      else if (e.isFile && e.name.endsWith(".jsonl")) out.push({ path: p, named: false });
      else if (e.isFile && e.name.endsWith(".json")) {
        out.push({ path: p, named: false, sniff: true });
      }
    }
  };
  await walk(path, true);
  return out.sort((x, y) => x.path < y.path ? -1 : x.path > y.path ? 1 : 0);
}

/**
 * Runs `readcache savings`; returns the exit code: 0 when it reported, "no
 * session found" included (thrown as `NothingFound`: said in words, with
 * where to look), 1 when a file or directory found in a directory cannot be
 * read. A file or directory named on the command line that is missing,
 * cannot be read or is no session file is a usage error (exit code 2, thrown
 * as `CliError`), as for `readcache status`.
 *
 * @example
 * ```ts ignore
 * const code = await savingsCommand([], { top: 10 });
 * ```
 */
export async function savingsCommand(paths: string[], options: SavingsOptions): Promise<number> {
  const envDir = Deno.env.get("PI_CODING_AGENT_SESSION_DIR");
  const named = paths.length > 0;
  if (options.cwd !== undefined && !options.opencode) {
    throw new CliError(
      "--cwd chooses the project of OpenCode's sessions and goes with --opencode. For pi, pass " +
        "the project's sessions directory instead (readcache savings ~/.pi/agent/sessions/--work-app--).",
      EXIT_USAGE,
    );
  }
  // without paths: pi's sessions directory, unless only OpenCode's sessions were asked for
  const roots = named
    ? [...paths]
    : options.opencode || options.claude
    ? []
    : [envDir ? resolve(envDir) : join(agentDir(), "sessions")];
  if (options.claude) {
    const projects = join(claudeConfigDir(), "projects");
    try {
      await Deno.stat(projects);
      roots.push(projects);
    } catch {
      throw new NothingFound(
        `No Claude Code transcripts at ${projects}: Claude Code has saved no session there. ` +
          "Set CLAUDE_CONFIG_DIR when Claude Code keeps its data elsewhere.",
      );
    }
  }
  if (!named && !options.opencode && !options.claude) {
    try {
      await Deno.stat(roots[0]);
    } catch {
      throw new NothingFound(
        `No pi sessions directory at ${roots[0]}: pi has saved no session there. Pass session ` +
          "files or directories, or set PI_CODING_AGENT_DIR (or PI_CODING_AGENT_SESSION_DIR) " +
          "when pi keeps its data elsewhere.",
      );
    }
  }
  const problems: SavingsProblem[] = [];
  const files: Candidate[] = [];
  for (const p of roots) files.push(...await candidates(p, named, problems));
  const sessions: SessionSavings[] = [];
  const piFiles = new Map<string, SessionFile>();
  const claudeFiles: ClaudeSessionFile[] = [];
  let skipped = 0;
  const progress = new Progress("session files", files.length, options.json === true);
  for (const f of files) {
    progress.tick();
    let s: AnySessionFile;
    try {
      // named on the command line: any reason it cannot be used ends the command (exit code 2)
      s = await readAnySessionFile(f.path, f.named ? EXIT_USAGE : EXIT_PROBLEM);
    } catch (e) {
      if (f.named || !(e instanceof SessionFileError)) throw e;
      if (e.kind === "unreadable") {
        problems.push({
          path: f.path,
          what: `cannot be read (${e.why}): it was not counted`,
          fix: `chmod u+r ${shellQuote(f.path)}`,
        });
      } else if (!f.sniff) skipped++;
      continue;
    }
    if (s.host === "pi") piFiles.set(s.file.path, s.file);
    if (s.host === "claude") {
      claudeFiles.push(s.file);
      continue;
    }
    sessions.push(s.host === "pi" ? analyseSession(s.file) : analyseOpenCodeSession(s.file));
  }
  progress.done();
  // a subagent's transcript (<session>/subagents/agent-<id>.jsonl) counts within its session
  const byPath = new Map(claudeFiles.map((f) => [resolve(f.path), f]));
  const subagentsOf = new Map<string, ClaudeSessionFile[]>();
  const parents: ClaudeSessionFile[] = [];
  for (const f of claudeFiles) {
    const m = /^(.*)\/([^/]+)\/subagents\/agent-[^/]+\.jsonl$/.exec(resolve(f.path));
    const parent = m === null ? undefined : `${m[1]}/${m[2]}.jsonl`;
    if (parent !== undefined && byPath.has(parent)) {
      subagentsOf.set(parent, [...subagentsOf.get(parent) ?? [], f]);
    } else parents.push(f);
  }
  const claudeStage = slowStage(
    `reading ${plural(parents.length, "Claude Code session")} (those recorded without readcache ` +
      "are replayed through the Claude Code host)",
    options.json === true || parents.length === 0,
  );
  for (const f of parents) {
    sessions.push(
      await claudeSessionSavings(
        f,
        subagentsOf.get(resolve(f.path)) ?? await subagentsBeside(f.path),
        options.replay !== false,
      ),
    );
  }
  claudeStage.done();
  if (options.replay !== false) await estimateByReplay(sessions, piFiles, options.json === true);
  else {
    for (const s of sessions) {
      if (s.estimate === "session") s.replaySkipped = "--no-replay was given";
    }
  }
  if (options.opencode) {
    const cwd = options.cwd === undefined ? undefined : await projectDir(options.cwd, Deno.cwd());
    const found = await openCodeSessionsFromStorage(cwd);
    roots.push(cwd === undefined ? found.database : `${found.database} (sessions of ${cwd})`);
    sessions.push(...found.sessions.map(analyseOpenCodeSession));
  }
  sessions.sort((a, b) =>
    (a.started ?? "") < (b.started ?? "") ? -1 : (a.started ?? "") > (b.started ?? "") ? 1 : 0
  );
  const totals = totalsOf(sessions);
  const top = topFiles(sessions, options.top);
  // no session found is an answer (said in words): only problems found make the exit code 1
  const code = problems.length > 0 ? EXIT_PROBLEM : EXIT_OK;
  if (options.html !== undefined) {
    try {
      await Deno.writeTextFile(options.html, savingsHtml(sessions, totals, top));
    } catch (e) {
      throw new CliError(
        `Cannot write ${options.html}: ${
          e instanceof Deno.errors.NotFound ? "its directory does not exist" : permissionWords(e)
        }. Pass --html a file path in a directory you can write to.`,
        EXIT_USAGE,
      );
    }
  }
  if (options.json) {
    printJson({
      sessions: sessions.map(({ files: _files, ...s }) => ({ ...s, label: sessionLabel(s) })),
      totals,
      topFiles: top,
      skipped,
      problems,
      html: options.html ?? null,
    });
    return code;
  }
  console.log(
    formatSavings(
      {
        sessions,
        totals,
        top,
        roots,
        fromFiles: files.some((f) => f.named),
        skipped,
        problems,
        html: options.html,
      },
      stdoutStyle(),
      colorAllowed(Deno.stdout),
    ),
  );
  return code;
}

/**
 * Replaces the figures of pi sessions without the read cache by those of bench:real's replay
 * (cli/savings_replay.ts); a session the replay skips, or all of them when it cannot run, keep the
 * estimate from their own reads, with the reason.
 */
/**
 * The transcripts of a Claude Code session's subagents, beside its own
 * (`<session>/subagents/agent-<id>.jsonl`), for a transcript named on its own; any that cannot be
 * read are left out.
 */
async function subagentsBeside(path: string): Promise<ClaudeSessionFile[]> {
  if (!path.endsWith(".jsonl")) return [];
  const dir = join(path.slice(0, -".jsonl".length), "subagents");
  const out: ClaudeSessionFile[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!e.isFile || !/^agent-[^/]+\.jsonl$/.test(e.name)) continue;
      const s = await readAnySessionFile(join(dir, e.name), EXIT_PROBLEM).catch(() => undefined);
      if (s?.host === "claude") out.push(s.file);
    }
  } catch {
    return out;
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

async function estimateByReplay(
  sessions: SessionSavings[],
  piFiles: ReadonlyMap<string, SessionFile>,
  quiet: boolean,
): Promise<void> {
  const todo = new Set(sessions.filter((s) => s.estimate === "session" && piFiles.has(s.file)));
  if (todo.size === 0) return;
  const stage = slowStage(
    `replaying ${plural(todo.size, "pi session")} recorded without readcache through pi and the ` +
      "extension (the first run fetches pi from npm, about 212 MB, once)",
    quiet,
  );
  const replay = await replayThroughPi([...todo].map((s) => s.file));
  stage.done();
  for (const [i, s] of sessions.entries()) {
    if (!todo.has(s)) continue;
    if ("error" in replay) {
      s.replaySkipped = replay.error;
      continue;
    }
    const r = replay.results.get(s.file);
    const by = r === undefined ? undefined : savingsFromReplay(piFiles.get(s.file)!, r);
    if (by !== undefined) sessions[i] = by;
    else {
      s.replaySkipped = r !== undefined && "skipped" in r
        ? r.skipped.replace(`${s.file}: `, "")
        : "the replay gave no result";
    }
  }
}
