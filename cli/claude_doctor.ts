// `readcache doctor --claude`: the Claude Code service as installed (SPEC §11.9), read-only. Are
// readcache's hooks in Claude Code's settings, does every file they run exist (a moved checkout, a
// cleared cache), is the service's directory private, is the socket's path short enough, do the
// hooks still reach a TCP port (an earlier version), is the service running. Each problem comes
// with its fix.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { privateDirProblem } from "../src/adapters/claude/private_dir.ts";
import {
  CLAUDE_SOCKET_NAME,
  claudeServiceRequest,
  claudeSocketPathProblem,
} from "../src/adapters/claude/service.ts";
import { claudeConfigDir, claudeServiceDir, readInstallRecord } from "./support/claude_dirs.ts";

/** One finding (the shape of doctor's). */
export interface ClaudeServiceFinding {
  severity: "problem" | "note";
  path: string;
  what: string;
  fix: string;
}

/** What `doctor --claude` says of the service (its `--json` `service` field). */
export interface ClaudeServiceReport {
  configDir: string;
  serviceDir: string;
  installed: boolean;
  running: boolean;
  pid: number | null;
  findings: ClaudeServiceFinding[];
}

type Hook = Record<string, unknown>;

/** readcache's hooks in a settings file, by event. */
function ourHooks(settingsPath: string): Map<string, Hook[]> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(settingsPath, "utf8"));
  } catch {
    return undefined;
  }
  const hooks = (value as { hooks?: unknown })?.hooks;
  const out = new Map<string, Hook[]>();
  if (typeof hooks !== "object" || hooks === null) return out;
  for (const [event, list] of Object.entries(hooks as Record<string, unknown>)) {
    if (!Array.isArray(list)) continue;
    for (const m of list) {
      const hs = (m as { hooks?: unknown })?.hooks;
      if (!Array.isArray(hs)) continue;
      for (const h of hs) {
        if ((h as Hook)?.readcache === true) out.set(event, [...out.get(event) ?? [], h as Hook]);
      }
    }
  }
  return out;
}

/** Checks the installed service; reads only. */
export async function claudeServiceCheck(): Promise<ClaudeServiceReport> {
  const configDir = claudeConfigDir();
  const serviceDir = claudeServiceDir(configDir);
  const record = readInstallRecord(serviceDir);
  const settingsPath = record?.settings ?? join(configDir, "settings.json");
  const findings: ClaudeServiceFinding[] = [];
  const problem = (path: string, what: string, fix: string) =>
    findings.push({ severity: "problem", path, what, fix });
  const reinstall = "readcache claude install";
  const hooks = existsSync(settingsPath) ? ourHooks(settingsPath) : new Map<string, Hook[]>();
  const installed = record !== undefined || (hooks !== undefined && hooks.size > 0);
  if (hooks === undefined) {
    problem(settingsPath, "is not valid JSON, so Claude Code runs none of its hooks", "fix it");
  } else if (installed) {
    for (const event of ["SessionStart", "PreToolUse", "PostToolUse"]) {
      if (!hooks.has(event)) {
        problem(settingsPath, `lacks readcache's ${event} hook`, reinstall);
      }
    }
    for (const [event, list] of hooks) {
      for (const h of list) {
        if (h.type === "http") {
          problem(
            settingsPath,
            `has readcache's ${event} hook of an earlier version, which reaches a TCP port on ` +
              "127.0.0.1 that another user of this machine could take first",
            reinstall,
          );
          continue;
        }
        const files = [h.command, ...(Array.isArray(h.args) ? h.args : [])]
          .filter((a): a is string =>
            typeof a === "string" && a.startsWith("/") && !a.includes("=")
          );
        for (const f of files) {
          if (f === serviceDir || f === configDir) continue;
          if (!existsSync(f)) {
            problem(
              f,
              `is missing, and readcache's ${event} hook runs it (was the checkout moved or a ` +
                "cache cleared?): reads are not cached until it is back",
              reinstall,
            );
          }
        }
      }
    }
  }
  let running = false;
  let pid: number | null = null;
  if (installed) {
    const long = claudeSocketPathProblem(serviceDir);
    if (long !== undefined) problem(serviceDir, long, "set CLAUDE_CONFIG_DIR, then " + reinstall);
    const open = existsSync(serviceDir) ? privateDirProblem(serviceDir) : undefined;
    if (open !== undefined) {
      problem(
        serviceDir,
        `is not private (${open}), so the service refuses to start there`,
        `chmod 700 '${serviceDir}' (and make the directories above it yours), then ${reinstall}`,
      );
    }
    const health = await claudeServiceRequest(serviceDir, "GET", "/health", "", 1000);
    if (health?.status === 200) {
      running = true;
      try {
        const p = JSON.parse(health.body).pid;
        pid = typeof p === "number" ? p : null;
      } catch {
        pid = null;
      }
    } else if (existsSync(join(serviceDir, CLAUDE_SOCKET_NAME))) {
      findings.push({
        severity: "note",
        path: join(serviceDir, CLAUDE_SOCKET_NAME),
        what: "is left by a service that stopped; the next one replaces it",
        fix: "nothing to do",
      });
    }
  }
  return { configDir, serviceDir, installed, running, pid, findings };
}

/** The report's lines for doctor's text output. */
export function claudeServiceLines(r: ClaudeServiceReport): string[] {
  if (!r.installed) {
    return [
      `Claude Code service: not installed for ${r.configDir} (readcache claude install adds it)`,
    ];
  }
  return [
    `Claude Code service: ${r.serviceDir}`,
    r.running
      ? `  running${r.pid === null ? "" : ` (pid ${r.pid})`}, on ${
        join(r.serviceDir, CLAUDE_SOCKET_NAME)
      }`
      : "  not running now; the next Claude Code session starts it",
  ];
}
