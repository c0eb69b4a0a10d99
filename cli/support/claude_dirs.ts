/**
 * Where the Claude Code host lives: Claude Code's configuration directory, the service's directory
 * in it, and the record `readcache claude install` keeps there. Read by install and uninstall,
 * `doctor --claude`, `status --claude` and `savings --claude`, so none of them imports another.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * Claude Code's configuration directory: CLAUDE_CONFIG_DIR, else ~/.claude.
 *
 * @example
 * ```ts ignore
 * claudeConfigDir(); // "/home/me/.claude"
 * ```
 */
export function claudeConfigDir(): string {
  return Deno.env.get("CLAUDE_CONFIG_DIR") || join(homedir(), ".claude");
}

/**
 * The service's directory: `<config>/readcache`.
 *
 * @example
 * ```ts
 * import { claudeServiceDir } from "./claude_dirs.ts";
 * claudeServiceDir("/home/me/.claude"); // "/home/me/.claude/readcache"
 * ```
 */
export function claudeServiceDir(configDir: string): string {
  return join(configDir, "readcache");
}

/**
 * What install remembers for uninstall (`<service dir>/install.json`, mode 0600).
 *
 * @example
 * ```ts
 * import type { ClaudeInstallRecord } from "./claude_dirs.ts";
 * const r: ClaudeInstallRecord = { v: 1, settings: "/h/.claude/settings.json", before: null,
 *   after: "{}\n", deno: "/usr/bin/deno", client: { command: "/usr/bin/perl", args: [] } };
 * ```
 */
export interface ClaudeInstallRecord {
  v: 1;
  /** The settings file changed. */
  settings: string;
  /** The file as it was before the first install: its text and mode, or none. */
  before: { text: string; mode: number } | null;
  /** The text install wrote last. */
  after: string;
  /** The Deno the hooks run, and the hook client's command. */
  deno: string;
  client: { command: string; args: string[] };
  /** Claude Code's config directory did not exist before the first install: install made it. */
  madeConfigDir?: true;
}

/**
 * The install record's file name in the service's directory.
 *
 * @example
 * ```ts
 * import { INSTALL_RECORD } from "./claude_dirs.ts";
 * INSTALL_RECORD; // "install.json"
 * ```
 */
export const INSTALL_RECORD = "install.json";

/**
 * The install record of `dir`, or `undefined`.
 *
 * @example
 * ```ts ignore
 * readInstallRecord("/home/me/.claude/readcache")?.settings; // "/home/me/.claude/settings.json"
 * ```
 */
export function readInstallRecord(serviceDir: string): ClaudeInstallRecord | undefined {
  try {
    const v = JSON.parse(readFileSync(join(serviceDir, INSTALL_RECORD), "utf8"));
    if (v?.v === 1 && typeof v.settings === "string" && typeof v.after === "string") return v;
  } catch {
    // not installed
  }
  return undefined;
}
