#!/usr/bin/env -S deno run -A
/**
 * `readcache`: the command line of `@readcache/core`, over real pi session
 * files and the project's object store.
 *
 * ```sh
 * deno task cli status --latest            # from a checkout
 * deno install -g -A -n readcache cli/main.ts && readcache doctor
 * npx readcache savings                    # through cli/readcache.mjs (Node, fetches Deno)
 * ```
 *
 * Commands (one file each): `status` (cli/status.ts), `doctor`
 * (cli/doctor.ts), `gc` (cli/gc.ts), `savings` (cli/savings.ts). Only `gc`
 * writes. Exit codes: 0 ok, 1 a problem found (in the store, or in session
 * files found in a directory), 2 a usage error (including a file or
 * directory named on the command line that is missing, unreadable or not a
 * pi session), the same for every command.
 *
 * The argument parser is `commander` from npm: it is well kept (weekly
 * releases of one maintainer team for over a decade, no dependencies), has
 * subcommands with their own options, generates `--help` for each of them,
 * reports unknown options and bad values with a clear message, and comes
 * from the npm registry, so it installs where JSR is not reachable. Its
 * errors go through `exitOverride()` so a usage error exits 2, not 1.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { Command, CommanderError, InvalidArgumentError } from "commander";
import { claudeInstall, claudeServe, claudeStatusCommand, claudeUninstall } from "./claude.ts";
import { doctorCommand } from "./doctor.ts";
import { gcCommand } from "./gc.ts";
import { savingsCommand } from "./savings.ts";
import { statusCommand } from "./status.ts";
import { CliError, EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, messageOf } from "./support/output.ts";

const VERSION = "0.1.0";

const FOOTER = `
Exit codes, the same for every command: 0 it did its job, "nothing found" included (no session of
the project, no data of an agent yet: said in words, with what to pass); 1 it found problems and
reports each with its fix (in a store, in session files found in a directory, in the installed
Claude Code service); 2 the command line was wrong (an unknown option, a bad value) or an input
named on it is missing, cannot be read or is not what it should be. Every command takes --json.
Colour only when the output is a terminal, never with NO_COLOR set. pi's directories are found
like pi finds them: PI_CODING_AGENT_DIR, PI_CODING_AGENT_SESSION_DIR, sessionDir in settings.json.`;

/**
 * Parses a number of days (`--max-age`): a positive number.
 *
 * @example
 * ```ts
 * import { parseDays } from "./main.ts";
 * parseDays("30"); // 30
 * ```
 */
export function parseDays(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0) {
    throw new InvalidArgumentError(
      `'${value}' is not a number of days; give a positive number such as 30.`,
    );
  }
  return n;
}

/**
 * Parses a size (`--max-bytes`): bytes, or a number with `K`, `M` or `G`
 * (1024-based).
 *
 * @example
 * ```ts
 * import { parseSize } from "./main.ts";
 * parseSize("20M"); // 20971520
 * ```
 */
export function parseSize(value: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)[bB]?\s*$/.exec(value);
  if (!m) {
    throw new InvalidArgumentError(
      `'${value}' is not a size; give bytes (5000000) or a number with K, M or G (500K, 20M).`,
    );
  }
  const unit = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2].toLowerCase()] ?? 1;
  return Math.floor(Number(m[1]) * unit);
}

/**
 * Parses a count (`--top`): a positive whole number.
 *
 * @example
 * ```ts
 * import { parseCount } from "./main.ts";
 * parseCount("5"); // 5
 * ```
 */
export function parseCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) {
    throw new InvalidArgumentError(
      `'${value}' is not a positive whole number; give 1 or more, such as 10.`,
    );
  }
  return n;
}

/**
 * Runs the command line `args` (without the program name) and returns the
 * exit code. Usage errors (commander's and ours) give 2; help (`--help`,
 * `help [COMMAND]`, or no arguments at all) and version 0.
 *
 * @example
 * ```ts ignore
 * const code = await runCli(["status", "--latest", "--json"]);
 * ```
 */
export async function runCli(args: string[]): Promise<number> {
  let code = EXIT_OK;
  const program = new Command("readcache")
    .description(
      "Look into the read cache of coding agents (pi, OpenCode, Claude Code): what the model " +
        "holds, what was saved, and the health of the store; install it in Claude Code.",
    )
    .version(VERSION, "-V, --version", "print the version")
    .helpOption("-h, --help", "show help")
    .exitOverride()
    .showHelpAfterError("(add --help for usage)")
    .addHelpText(
      "after",
      `
Examples:
  $ readcache status --latest          what the model holds in the newest session here
  $ readcache savings                  what readcache saved (or would save) over all sessions
  $ readcache doctor                   check the store of this project
  $ readcache gc --dry-run             what gc would remove
${FOOTER}`,
    );

  program.command("status")
    .description(
      "What the model holds now on the active branch of a session (pi, OpenCode, Claude Code), " +
        "what the next read of each part would be, and what was saved. Read-only.",
    )
    .argument(
      "[session]",
      "a pi session file or a Claude Code transcript (.jsonl), or an OpenCode export (the JSON " +
        "`opencode export <id>` prints), told apart by content; with --opencode or --claude a " +
        "session id; default: the newest session of the project",
    )
    .option("--latest", "use the newest session of the project (the default without a file)")
    .option(
      "--opencode",
      "read the session from OpenCode's database ($XDG_DATA_HOME/opencode/opencode.db, or " +
        "OPENCODE_DB) instead of pi's sessions, without writing to it",
    )
    .option(
      "--claude",
      "read a Claude Code transcript of the project ($CLAUDE_CONFIG_DIR/projects, else " +
        "~/.claude/projects): the session given by id, else the newest",
    )
    .option("--cwd <dir>", "the project directory (default: the session's, else the current one)")
    .option("--sessions <dir>", "where pi keeps the sessions, when not in its default place")
    .option("--json", "print JSON")
    .addHelpText(
      "after",
      `
Reads pi sessions, OpenCode sessions (an export file, or --opencode) and Claude Code transcripts
(a .jsonl file, or --claude). Exits 0 when no session of the project is found (the message says
where it looked; pass --cwd DIR or a session file); 1 when the store has a problem (printed with
its fix); 2 when the session file cannot be read or is none of those. For OpenCode the store is
<project>/.opencode/readcache, for Claude Code <project>/.claude/readcache; the next reads are
what that host would answer.

Examples:
  $ readcache status --latest
  $ readcache status --latest --cwd ~/work/app
  $ readcache status ~/.pi/agent/sessions/--work-app--/2026-01-05T10-00-00-000Z_0193.jsonl --json
  $ readcache status --opencode                  the newest OpenCode session of this project
  $ opencode export ses_8d2f... > s.json && readcache status s.json
  $ readcache status --claude                    the newest Claude Code session of this project
${FOOTER}`,
    )
    .action(async (session: string | undefined, o: Record<string, unknown>) => {
      code = await statusCommand(session, {
        latest: o.latest === true,
        cwd: o.cwd as string | undefined,
        sessions: o.sessions as string | undefined,
        json: o.json === true,
        opencode: o.opencode === true,
        claude: o.claude === true,
      });
    });

  program.command("doctor")
    .description(
      "Check the object store of a project (pi's; OpenCode's or Claude Code's with --opencode or " +
        "--claude): every stored copy re-hashed, file types, permissions, temporary leftovers, " +
        "copies no session refers to. Changes nothing.",
    )
    .option("--cwd <dir>", "the project directory (default: the current one)")
    .option("--sessions <dir>", "where pi keeps the sessions, when not in its default place")
    .option(
      "--claude",
      "the Claude Code host's store (<project>/.claude/readcache), with the project's " +
        "transcripts in Claude Code's projects directory",
    )
    .option(
      "--opencode",
      "the OpenCode plugin's store (<project>/.opencode/readcache), with the project's sessions " +
        "in OpenCode's database ($XDG_DATA_HOME/opencode/opencode.db, or OPENCODE_DB)",
    )
    .option("--json", "print JSON")
    .addHelpText(
      "after",
      `
Exits 1 when the store has a problem, or a session file in pi's sessions directory (with
--opencode: OpenCode's database) cannot be read (each is printed with its fix); copies no session
refers to and leftovers are not problems: readcache gc removes them.

Examples:
  $ readcache doctor
  $ readcache doctor --cwd ~/work/app --json
  $ readcache doctor --opencode        the store of the OpenCode plugin
  $ readcache doctor --claude          the store of the Claude Code host
${FOOTER}`,
    )
    .action(async (o: Record<string, unknown>) => {
      code = await doctorCommand({
        claude: o.claude === true,
        cwd: o.cwd as string | undefined,
        sessions: o.sessions as string | undefined,
        opencode: o.opencode === true,
        json: o.json === true,
      });
    });

  program.command("gc")
    .description(
      "Remove stored copies no session of the project refers to (pi's; OpenCode's or Claude " +
        "Code's with --opencode or --claude), damaged copies, and " +
        "temporary files older than an hour. The only command that writes. Safe while pi runs: " +
        "a read whose copy is gone is sent in full.",
    )
    .option("--dry-run", "only print what would be removed")
    .option(
      "--max-age <days>",
      "references older than this many days no longer keep a copy",
      parseDays,
    )
    .option(
      "--max-bytes <size>",
      "then keep at most this much, most recently referenced first (e.g. 20M)",
      parseSize,
    )
    .option("--cwd <dir>", "the project directory (default: the current one)")
    .option("--sessions <dir>", "where pi keeps the sessions, when not in its default place")
    .option(
      "--claude",
      "the Claude Code host's store (<project>/.claude/readcache), with the project's " +
        "transcripts in Claude Code's projects directory",
    )
    .option(
      "--opencode",
      "the OpenCode plugin's store (<project>/.opencode/readcache), kept for the project's " +
        "sessions in OpenCode's database ($XDG_DATA_HOME/opencode/opencode.db, or OPENCODE_DB)",
    )
    .option("--json", "print JSON")
    .addHelpText(
      "after",
      `
Copies written in the last hour are always kept (a running pi may not have saved the read that
uses them yet). Links are never followed; only regular files named like the store's own are
removed. Exits 1 when the store cannot be used, a removal failed, or a session file in pi's
sessions directory (with --opencode: OpenCode's database) cannot be read while the store holds
copies (then no copy is removed for being unreferenced; with no copy nothing is at stake: 0).

Examples:
  $ readcache gc --dry-run
  $ readcache gc --max-age 30 --max-bytes 50M
  $ readcache gc --opencode --dry-run  the store of the OpenCode plugin
  $ readcache gc --claude              the store of the Claude Code host
${FOOTER}`,
    )
    .action(async (o: Record<string, unknown>) => {
      code = await gcCommand({
        claude: o.claude === true,
        dryRun: o.dryRun === true,
        maxAgeDays: o.maxAge as number | undefined,
        maxBytes: o.maxBytes as number | undefined,
        cwd: o.cwd as string | undefined,
        sessions: o.sessions as string | undefined,
        opencode: o.opencode === true,
        json: o.json === true,
      });
    });

  program.command("savings")
    .description(
      "Over many sessions of pi, OpenCode and Claude Code: reads, bytes the agent sent, bytes " +
        "readcache sent or would have sent (pi and Claude Code sessions without readcache: an " +
        "estimate, replayed through the host as deno task bench:real does), repeats by file.",
    )
    .argument(
      "[paths...]",
      "session files or directories: pi's JSONL, OpenCode exports (`opencode export <id>` " +
        "JSON) and Claude Code transcripts, told apart by content (default: pi's sessions " +
        "directory)",
    )
    .option(
      "--opencode",
      "also every session in OpenCode's database ($XDG_DATA_HOME/opencode/opencode.db, or " +
        "OPENCODE_DB), read without writing to it; alone, only those",
    )
    .option(
      "--claude",
      "also read Claude Code's transcripts ($CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects)",
    )
    .option("--cwd <dir>", "with --opencode: only the OpenCode sessions of this project")
    .option("--top <n>", "how many files to list", parseCount, 10)
    .option("--html <file>", "also write a self-contained HTML page with a chart")
    .option("--json", "print JSON")
    .option(
      "--no-replay",
      "estimate sessions without readcache from their own read results only (no pi needed; " +
        "faster, a lower figure)",
    )
    .addHelpText(
      "after",
      `
The replay of pi sessions without readcache needs pi: it runs in a child process with the pi
suite's config, and its first run fetches pi from npm (about 212 MB, into Deno's cache; the line
"replaying ..." says so while it runs). Reads it cannot judge are counted apart, with the reason,
and left out of both sides. Where it cannot run (or with --no-replay), the read decision is
replayed over the session's own read results, and a read of part of a file no output showed whole
counts as sent in full on both sides; the output says which was done and why.

Exits 0 when no session file is found (said in words, with what to pass); 1 when a file or
directory found in a directory cannot be read (each is printed with its fix; the others are
counted); 2 when a file or directory named
on the command line is missing or cannot be read, or a file named on it is neither a pi session
file nor an OpenCode export, as for readcache status. Files found in a directory that are not pi
sessions are skipped; .json files found in one count only when they are OpenCode exports.
OpenCode sessions without readcache are not replayed (OpenCode's read output does not show the
file exactly): their reads count as sent in full on both sides, and the report says so. Claude
Code transcripts without readcache are replayed through the Claude Code host, on files rebuilt
from what the transcript showed (reads it cannot judge counted apart, with the reason). Every
short answer of a replay (pi's or Claude Code's) is checked against what the session's outputs
had shown the model, and the report says how many were wrong (in a Claude Code session rewound in
its own file, those after the rewind are not checked, and counted apart). A subagent's transcript
(<session>/subagents/agent-<id>.jsonl) counts within its session, also when the session's
transcript is named on its own.

Examples:
  $ readcache savings
  $ readcache savings ~/.pi/agent/sessions/--work-app-- --top 5
  $ readcache savings --html savings.html
  $ readcache savings --opencode --cwd ~/work/app   the OpenCode sessions of a project
  $ readcache savings session.json                  a file written by opencode export <id>
  $ readcache savings --claude                      Claude Code's transcripts (~/.claude/projects)
${FOOTER}`,
    )
    .action(async (paths: string[], o: Record<string, unknown>) => {
      code = await savingsCommand(paths, {
        top: o.top as number,
        html: o.html as string | undefined,
        json: o.json === true,
        opencode: o.opencode === true,
        claude: o.claude === true,
        cwd: o.cwd as string | undefined,
        replay: o.replay !== false,
      });
    });

  const claude = program.command("claude")
    .description(
      "Claude Code: install the read cache behind its hooks (one step), remove it, or run the " +
        "local service the hooks reach (SPEC §11.9).",
    )
    .addHelpText(
      "after",
      `
Examples:
  $ readcache claude install       add its hooks to ~/.claude/settings.json (CLAUDE_CONFIG_DIR)
  $ readcache claude status        is it installed and running, and is anything wrong
  $ readcache claude uninstall     remove them again
  $ readcache claude serve         run the service in the foreground (install starts it for you)`,
    );
  claude.command("install")
    .description(
      "Add readcache's hooks to Claude Code's user settings: a SessionStart hook that starts the " +
        "service, and PreToolUse and PostToolUse hooks that reach it through a Unix socket in " +
        "<config>/readcache, a directory only you can open.",
    )
    .option("--settings <file>", "the settings file to change (default <config>/settings.json)")
    .option("--json", "what was installed, as JSON")
    .addHelpText(
      "after",
      `
Examples:
  $ readcache claude install
  $ CLAUDE_CONFIG_DIR=~/.claude-work readcache claude install --json`,
    )
    .action(async (o: Record<string, unknown>) => {
      code = await claudeInstall({
        settings: o.settings as string | undefined,
        json: o.json === true,
      });
    });
  claude.command("uninstall")
    .description(
      "Put Claude Code's settings back as they were before install (byte for byte when nothing " +
        "else changed them; else only readcache's hooks are taken out), stop the service and " +
        "remove its files.",
    )
    .option("--settings <file>", "the settings file to change (default: the one install changed)")
    .option("--json", "what was removed, as JSON")
    .addHelpText(
      "after",
      `
Examples:
  $ readcache claude uninstall
  $ readcache claude uninstall --json`,
    )
    .action(async (o: Record<string, unknown>) => {
      code = await claudeUninstall({
        settings: o.settings as string | undefined,
        json: o.json === true,
      });
    });
  claude.command("status")
    .description(
      "The Claude Code service as installed, read-only: its hooks in the settings, the files " +
        "they run, its private directory, whether it runs (what `doctor --claude` checks).",
    )
    .option("--json", "print JSON")
    .addHelpText(
      "after",
      `
Exits 1 when it finds a problem (each printed with its fix), else 0 (not installed included).

Examples:
  $ readcache claude status
  $ readcache claude status --json`,
    )
    .action(async (o: Record<string, unknown>) => {
      code = await claudeStatusCommand({ json: o.json === true });
    });
  claude.command("serve")
    .description("Run the service the hooks reach (what the SessionStart hook starts).")
    .option("--detach", "start it in the background unless it is already up, then return")
    .option("--json", "say where it serves as JSON (a line on stdout once it answers)")
    .addHelpText(
      "after",
      `
Examples:
  $ readcache claude serve             in the foreground, until stopped
  $ readcache claude serve --detach    in the background, unless one runs already
  $ readcache claude serve --json      in the foreground; {"socket": ..., "pid": ...} once it answers
  $ readcache claude serve --detach --json
                                       {"running": true, "started": ..., "socket": ...}; exit 1
                                       with a "message" when it cannot run`,
    )
    .action(async (o: Record<string, unknown>) => {
      code = await claudeServe({ detach: o.detach === true, json: o.json === true });
    });

  try {
    if (args.length === 0) {
      // nothing asked: what there is to ask (a help, not a usage error)
      program.outputHelp();
      return EXIT_OK;
    }
    await program.parseAsync(args, { from: "user" });
    return code;
  } catch (e) {
    if (e instanceof CommanderError) {
      // `--help`, `help` and `help COMMAND` show help; `--version` the version
      return ["commander.helpDisplayed", "commander.help", "commander.version"].includes(e.code)
        ? EXIT_OK
        : EXIT_USAGE;
    }
    if (e instanceof CliError) {
      // nothing found is an answer (stdout, exit 0); anything else goes to stderr; with --json,
      // stdout holds JSON either way
      const json = args.includes("--json");
      const code = typeof (e as { code?: unknown }).code === "string"
        ? (e as { code?: string }).code
        : undefined;
      if (e.exitCode === EXIT_OK) {
        console.log(
          json
            ? JSON.stringify({ nothingFound: true, message: e.message }, null, 2)
            : `readcache: ${e.message}`,
        );
      } else {
        console.error(`readcache: ${e.message}`);
        if (json) {
          const error = { ...(code ? { code } : {}), message: e.message, exitCode: e.exitCode };
          console.log(JSON.stringify({ error }, null, 2));
        }
      }
      return e.exitCode;
    }
    console.error(
      `readcache: unexpected error: ${messageOf(e)}. ` +
        "This is a bug; please report it with the command you ran.",
    );
    if (e instanceof Error && e.stack) console.error(e.stack);
    return EXIT_PROBLEM;
  }
}

if (import.meta.main) {
  // `deno task cli ...` runs in the checkout (the directory of deno.json); INIT_CWD is where it
  // was started, which is the directory the user means (and relative paths are relative to it)
  const initCwd = Deno.env.get("INIT_CWD");
  const checkout = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
  if (initCwd && Deno.cwd() === checkout) {
    try {
      Deno.chdir(initCwd);
    } catch {
      // gone or not a directory: stay where we are
    }
  }
  Deno.exit(await runCli(Deno.args));
}
