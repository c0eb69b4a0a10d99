// `readcache claude install|uninstall|serve`: the Claude Code host (SPEC §11.9) in one step.
//
// install: makes a secret and a port (kept in <config>/readcache/service.json, mode 0600) and
// adds three hooks to Claude Code's user settings (<config>/settings.json; <config> is
// CLAUDE_CONFIG_DIR or ~/.claude): a SessionStart command hook that starts the service when it is
// not running, and PreToolUse and PostToolUse HTTP hooks for every tool that reach it. uninstall
// removes exactly those hooks. serve runs the service (in the foreground, or with --detach in the
// background when it is not up yet).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import process from "node:process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startClaudeCodeService } from "../src/adapters/claude/service.ts";
import { CliError, EXIT_OK } from "./support/output.ts";

/** The port the service listens on unless install is told another. */
export const DEFAULT_CLAUDE_PORT = 47411;

/** What install keeps for the service: its port and the secret of the hook URL. */
export interface ClaudeServiceConfig {
  port: number;
  secret: string;
}

/** Claude Code's configuration directory: CLAUDE_CONFIG_DIR, else ~/.claude. */
export function claudeConfigDir(): string {
  return Deno.env.get("CLAUDE_CONFIG_DIR") || join(homedir(), ".claude");
}

function serviceFile(configDir: string): string {
  return join(configDir, "readcache", "service.json");
}

function pidFile(configDir: string): string {
  return join(configDir, "readcache", "service.pid");
}

/** The service's port and secret as install wrote them, or `undefined`. */
export function readServiceConfig(configDir: string): ClaudeServiceConfig | undefined {
  try {
    const v = JSON.parse(readFileSync(serviceFile(configDir), "utf8"));
    if (typeof v?.port === "number" && typeof v?.secret === "string") return v;
  } catch {
    // not installed
  }
  return undefined;
}

/** Marks the hooks install adds, so that uninstall removes those and nothing else. */
const MARK = "readcache";

/** This CLI's `claude serve`: Deno and its arguments. */
function serveArgs(): string[] {
  const main = fileURLToPath(new URL("./main.ts", import.meta.url));
  const config = fileURLToPath(new URL("../deno.json", import.meta.url));
  return [Deno.execPath(), "run", "-A", "--quiet", "--config", config, main, "claude", "serve"];
}

/** Deno's cache directory now (where this CLI's npm packages are), or `undefined`. */
function denoDir(): string | undefined {
  try {
    const out = new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stderr: "null" })
      .outputSync();
    const dir = JSON.parse(new TextDecoder().decode(out.stdout)).denoDir;
    return typeof dir === "string" ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The command Claude Code runs at session start: this CLI's `claude serve --detach`, with the
 * Deno cache it runs from now (its npm packages are there: a hook must not need the network).
 */
function serveCommand(): string {
  const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  const cache = denoDir();
  return (cache === undefined ? "" : `DENO_DIR=${q(cache)} `) + serveArgs().map(q).join(" ") +
    " --detach";
}

type Hook = Record<string, unknown>;
type Matcher = { matcher?: string; hooks?: Hook[] } & Record<string, unknown>;

/**
 * An event's hook matchers without readcache's own hooks; a value that is not a list is the user's
 * and is not overwritten: a usage error naming it.
 */
function withoutOurs(list: unknown, event: string, path: string): Matcher[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    throw new CliError(
      `${path}: hooks.${event} is not a list of matchers, so readcache cannot add its hook ` +
        "beside it. Fix it (Claude Code's settings take a list), then run this again.",
    );
  }
  return list
    .map((m) => {
      const matcher = m as Matcher;
      const hooks = Array.isArray(matcher.hooks)
        ? matcher.hooks.filter((h) => h?.[MARK] !== true)
        : matcher.hooks;
      return { ...matcher, hooks };
    })
    .filter((m) => !Array.isArray(m.hooks) || m.hooks.length > 0);
}

function readSettings(path: string): Record<string, unknown> {
  if (!existsSync(path)) return {};
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new CliError(
      `${path} is not valid JSON (${(e as Error).message}); fix it or move it away, then run ` +
        "this again.",
    );
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new CliError(`${path} does not hold a JSON object; fix it, then run this again.`);
  }
  return v as Record<string, unknown>;
}

/** Writes a file through a temporary one and a rename, with the given mode. */
function writeAtomic(path: string, text: string, mode: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.readcache-${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

/** `readcache claude install`. */
export function claudeInstall(options: { port?: number; settings?: string }): number {
  const configDir = claudeConfigDir();
  const settingsPath = options.settings ?? join(configDir, "settings.json");
  const settings = readSettings(settingsPath);
  const old = readServiceConfig(configDir);
  const service: ClaudeServiceConfig = {
    port: options.port ?? old?.port ?? DEFAULT_CLAUDE_PORT,
    secret: old?.secret ?? randomBytes(32).toString("base64url"),
  };
  const hooks = typeof settings.hooks === "object" && settings.hooks !== null
    ? { ...settings.hooks as Record<string, unknown> }
    : {};
  hooks.SessionStart = [
    ...withoutOurs(hooks.SessionStart, "SessionStart", settingsPath),
    { hooks: [{ type: "command", command: serveCommand(), timeout: 30, [MARK]: true }] },
  ];
  hooks.PreToolUse = [
    ...withoutOurs(hooks.PreToolUse, "PreToolUse", settingsPath),
    {
      matcher: "*",
      hooks: [{
        type: "http",
        url: `http://127.0.0.1:${service.port}/hook/${service.secret}`,
        timeout: 10,
        [MARK]: true,
      }],
    },
  ];
  hooks.PostToolUse = [
    ...withoutOurs(hooks.PostToolUse, "PostToolUse", settingsPath),
    {
      matcher: "*",
      hooks: [{
        type: "http",
        url: `http://127.0.0.1:${service.port}/hook/${service.secret}`,
        timeout: 10,
        [MARK]: true,
      }],
    },
  ];
  // the settings are checked before anything is written
  writeAtomic(serviceFile(configDir), JSON.stringify(service, null, 2) + "\n", 0o600);
  writeAtomic(settingsPath, JSON.stringify({ ...settings, hooks }, null, 2) + "\n", 0o600);
  console.log(
    `readcache is installed for Claude Code: ${settingsPath} has its hooks, and the service ` +
      `(127.0.0.1:${service.port}) starts with the next session. Remove it with ` +
      "`readcache claude uninstall`.",
  );
  return EXIT_OK;
}

/** `readcache claude uninstall`. */
export async function claudeUninstall(options: { settings?: string }): Promise<number> {
  const configDir = claudeConfigDir();
  const settingsPath = options.settings ?? join(configDir, "settings.json");
  const settings = readSettings(settingsPath);
  if (typeof settings.hooks === "object" && settings.hooks !== null) {
    const hooks: Record<string, unknown> = { ...settings.hooks as Record<string, unknown> };
    for (const event of ["SessionStart", "PreToolUse", "PostToolUse"]) {
      if (!(event in hooks)) continue;
      const kept = withoutOurs(hooks[event], event, settingsPath);
      if (kept.length > 0) hooks[event] = kept;
      else delete hooks[event];
    }
    writeAtomic(settingsPath, JSON.stringify({ ...settings, hooks }, null, 2) + "\n", 0o600);
  }
  const service = readServiceConfig(configDir);
  let stopped = false;
  if (service !== undefined && await isUp(service)) {
    try {
      Deno.kill(Number(readFileSync(pidFile(configDir), "utf8").trim()), "SIGTERM");
      stopped = true;
    } catch {
      // no pid file, or not ours: it stops at the next reboot
    }
  }
  console.log(
    `readcache's hooks are gone from ${settingsPath}` +
      (stopped ? " and the service is stopped" : "") +
      ". Stored copies stay in each project's .claude/readcache (delete that folder to drop them).",
  );
  return EXIT_OK;
}

async function isUp(service: ClaudeServiceConfig): Promise<boolean> {
  try {
    const r = await fetch(`http://127.0.0.1:${service.port}/hook/${service.secret}`, {
      signal: AbortSignal.timeout(1000),
    });
    const body = await r.json().catch(() => undefined);
    return r.ok && body?.service === "readcache";
  } catch {
    return false;
  }
}

/** `readcache claude serve`. */
export async function claudeServe(options: { detach?: boolean }): Promise<number> {
  const configDir = claudeConfigDir();
  const service = readServiceConfig(configDir);
  if (service === undefined) {
    throw new CliError(
      `${serviceFile(configDir)} is missing or unreadable; run \`readcache claude install\` first.`,
    );
  }
  if (await isUp(service)) return EXIT_OK;
  if (options.detach) {
    const [deno, ...args] = serveArgs();
    const child = spawn(deno, args, {
      detached: true,
      stdio: "ignore",
    });
    child.unref();
    // return once it answers, so the session's first Read is served
    for (let i = 0; i < 100 && !await isUp(service); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    return EXIT_OK;
  }
  let running;
  try {
    running = startClaudeCodeService({ port: service.port, secret: service.secret });
  } catch (e) {
    // another service took the port first
    if (e instanceof Deno.errors.AddrInUse) return EXIT_OK;
    throw e;
  }
  writeAtomic(pidFile(configDir), `${Deno.pid}\n`, 0o600);
  console.error(`readcache: serving Claude Code's hooks on 127.0.0.1:${running.port}`);
  await new Promise(() => {}); // until killed
  return EXIT_OK;
}
