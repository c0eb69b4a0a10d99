// The Claude Code service's own entry point (SPEC §11.9): what `readcache claude install` bundles
// into <config>/readcache/service.js (one file, no checkout, no cache, no network needed), what the
// SessionStart hook runs with --detach, and what `readcache claude serve` runs from a checkout.
//
//   service.js --dir <service dir> --config-dir <Claude Code's config dir> [--detach]
//
// --detach starts the service in the background unless one answers already, waits until it
// answers, and returns; it prints nothing on stdout when all is well (a SessionStart hook's output
// reaches the model) and, when the service cannot run, one line of JSON with a `systemMessage`
// that Claude Code shows the user (never the model), saying what is wrong and what to do.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  CLAUDE_SOCKET_NAME,
  ClaudeServiceRunningError,
  claudeServiceUp,
  claudeSocketPathProblem,
  startClaudeCodeService,
} from "../src/adapters/claude/service.ts";
import { privateDirProblem } from "../src/adapters/claude/private_dir.ts";

/** How long `--detach` waits for the service it started to answer (ms). */
const START_WAIT_MS = 10_000;

/**
 * The arguments a service in the background is started with: the bundled service `entry`, else
 * this file, by Deno.
 */
function selfArgs(dir: string, configDir: string, entry?: string): string[] {
  const self = entry ?? fileURLToPath(import.meta.url);
  // from a checkout this is TypeScript that needs the checkout's deno.json; bundled, nothing
  const config = self.endsWith(".ts")
    ? ["--config", fileURLToPath(new URL("../deno.json", import.meta.url))]
    : ["--no-config"];
  return ["run", "-A", "--quiet", ...config, self, "--dir", dir, "--config-dir", configDir];
}

/** The message a SessionStart hook shows the user (not the model) when the service cannot run. */
function tellUser(problem: string): void {
  console.log(JSON.stringify({ systemMessage: `readcache: ${problem}` }));
}

/**
 * Runs the service on `dir` (foreground) or makes sure one runs (`detach`); the exit code.
 */
export async function claudeServe(
  options: {
    dir: string;
    configDir: string;
    detach?: boolean;
    quiet?: boolean;
    entry?: string;
    json?: boolean;
  },
): Promise<number> {
  const { dir, configDir } = options;
  // `--detach --json` (the command line's, not the hook's): whether one answers, as JSON
  const said = (running: boolean, started: boolean, message?: string) => {
    if (!options.json) return;
    const socket = join(dir, CLAUDE_SOCKET_NAME);
    console.log(JSON.stringify({ running, started, socket, ...(message ? { message } : {}) }));
  };
  if (await claudeServiceUp(dir)) {
    if (options.detach) said(true, false);
    return 0;
  }
  if (options.detach) {
    const problem = claudeSocketPathProblem(dir) ?? privateDirProblem(dir);
    if (problem !== undefined) {
      said(false, false, problem);
      if (options.json) return 1; // the command line's: a problem it reports
      tellUser(
        `the read cache is off: ${problem}. Run \`readcache doctor --claude\` to see what to fix.`,
      );
      return 0;
    }
    const child = spawn(Deno.execPath(), selfArgs(dir, configDir, options.entry), {
      detached: true,
      stdio: "ignore",
    });
    child.unref();
    // return once it answers, so the session's first Read is served
    for (const end = Date.now() + START_WAIT_MS; Date.now() < end;) {
      if (await claudeServiceUp(dir, 500)) {
        said(true, true);
        return 0;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    said(false, true, "the service did not answer; run `readcache doctor --claude` to see why");
    if (options.json) return 1;
    tellUser(
      "the read cache service did not start, so reads are not cached in this session. Run " +
        "`readcache doctor --claude` to see why.",
    );
    return 0;
  }
  let running;
  try {
    running = await startClaudeCodeService({ dir, transcriptRoot: join(configDir, "projects") });
  } catch (e) {
    if (e instanceof ClaudeServiceRunningError) return 0;
    throw e;
  }
  if (options.json) console.log(JSON.stringify({ socket: running.socket, pid: Deno.pid }));
  else if (!options.quiet) {
    console.error(`readcache: serving Claude Code's hooks on ${running.socket}`);
  }
  const stop = () => running.close();
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
  await running.finished;
  Deno.removeSignalListener("SIGTERM", stop);
  Deno.removeSignalListener("SIGINT", stop);
  return 0;
}

if (import.meta.main) {
  const args = Deno.args;
  const value = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const dir = value("--dir");
  const configDir = value("--config-dir");
  if (dir === undefined || configDir === undefined) {
    console.error("usage: service.js --dir <service dir> --config-dir <config dir> [--detach]");
    Deno.exit(2);
  }
  try {
    Deno.exit(
      await claudeServe({ dir, configDir, detach: args.includes("--detach"), quiet: true }),
    );
  } catch (e) {
    if (args.includes("--detach")) {
      tellUser(`the read cache is off: ${e instanceof Error ? e.message : String(e)}`);
      Deno.exit(0);
    }
    console.error(`readcache: ${e instanceof Error ? e.message : String(e)}`);
    Deno.exit(1);
  }
}
