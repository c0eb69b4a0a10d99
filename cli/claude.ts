// `readcache claude install|uninstall|serve`: the Claude Code host (SPEC §11.9) in one step.
//
// install: makes the service's directory <config>/readcache (mode 0700; <config> is
// CLAUDE_CONFIG_DIR or ~/.claude), puts there what the hooks run (the service bundled into one
// file, the hook client, and a Deno outside any cache), and adds to Claude Code's user settings
// (<config>/settings.json) a SessionStart command hook that starts the service when it is not
// running, and PreToolUse/PostToolUse command hooks that run the client for the tools that need
// them. The service listens on a Unix socket in that directory: no port, no secret, nothing another
// local user can reach or take first. uninstall puts the settings back as they were (byte for
// byte when nothing else changed them), stops the service and removes the directory's files.
// serve runs the service (in the foreground, or with --detach in the background).
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import process from "node:process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  claudeHookRuntime,
  claudeHookSettings,
  writeClaudeHookClient,
} from "../src/adapters/claude/hook_client.ts";
import {
  ClaudePrivateDirError,
  ensurePrivateDir,
  privateDirProblem,
} from "../src/adapters/claude/private_dir.ts";
import {
  CLAUDE_SOCKET_NAME,
  claudeServiceRequest,
  claudeSocketPathProblem,
} from "../src/adapters/claude/service.ts";
import { claudeServe as serve } from "./claude_service.ts";
import { CliError, EXIT_OK, EXIT_PROBLEM } from "./support/output.ts";
import { claudeServiceCheck, claudeServiceLines } from "./claude_doctor.ts";
import {
  claudeConfigDir,
  type ClaudeInstallRecord,
  claudeServiceDir,
  INSTALL_RECORD,
  readInstallRecord,
} from "./support/claude_dirs.ts";

export { claudeConfigDir, claudeServiceDir };

/** Marks the hooks install adds, so that uninstall removes those and nothing else. */
const MARK = "readcache";

const SERVICE_BUNDLE = "service.js";
const DENO_COPY = "deno";
/** Files a version before this one kept in the directory (a port and a secret; a pid). */
const OLD_FILES = ["service.json", "service.pid"];

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

/** A settings file: its text and mode as found, and what it holds (`{}` when missing). */
interface SettingsFile {
  path: string;
  text: string | null;
  mode: number | null;
  value: Record<string, unknown>;
}

function readSettings(path: string): SettingsFile {
  if (!existsSync(path)) return { path, text: null, mode: null, value: {} };
  const text = readFileSync(path, "utf8");
  const mode = statSync(path).mode & 0o7777;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new CliError(
      `${path} is not valid JSON (${(e as Error).message}); fix it or move it away, then run ` +
        "this again.",
    );
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new CliError(`${path} does not hold a JSON object; fix it, then run this again.`);
  }
  return { path, text, mode, value: v as Record<string, unknown> };
}

/** The indentation a JSON text uses (its first indented line), else two spaces. */
function indentOf(text: string | null): string | number {
  const m = text === null ? null : /\n([ \t]+)"/.exec(text);
  return m === null ? 2 : m[1];
}

/** `value` as JSON in the style of `like` (its indentation, its final line break). */
function jsonLike(value: unknown, like: string | null): string {
  const out = JSON.stringify(value, null, indentOf(like));
  return like === null || like.endsWith("\n") ? out + "\n" : out;
}

/** Writes a file through a temporary one and a rename, with the given mode. */
function writeAtomic(path: string, text: string, mode: number): void {
  path = throughLinks(path);
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.readcache-${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

/**
 * The file a path names, through symbolic links (a settings file kept elsewhere and linked, as
 * dotfile managers do, stays a link: its target is what is written).
 */
function throughLinks(path: string): string {
  for (let i = 0; i < 40; i++) {
    try {
      if (!lstatSync(path).isSymbolicLink()) return path;
    } catch {
      return path; // not there: written where named
    }
    try {
      return realpathSync(path);
    } catch {
      path = resolve(dirname(path), readlinkSync(path)); // a link to a file not there yet
    }
  }
  return path;
}

/** True when `path` lies in a cache a cleanup may empty (npm's, npx's, Deno's, the OS's). */
function inCache(path: string): boolean {
  const denoDir = Deno.env.get("DENO_DIR");
  return /\/(_npx|\.npm|\.cache|Library\/Caches)\//.test(path) ||
    (denoDir !== undefined && denoDir !== "" && path.startsWith(resolve(denoDir) + "/"));
}

/**
 * The Deno the hooks run: this one, or, when it lies in a cache, a hard link to it (a copy where
 * no link can be made) in the service's directory, which a cleared cache leaves in place.
 */
function stableDeno(serviceDir: string): string {
  const exe = Deno.execPath();
  if (!inCache(exe)) return exe;
  const target = join(serviceDir, DENO_COPY);
  try {
    if (statSync(target).ino === statSync(exe).ino) return target;
  } catch {
    // none yet
  }
  const tmp = `${target}.${process.pid}.tmp`;
  try {
    linkSync(exe, tmp);
  } catch {
    copyFileSync(exe, tmp);
    chmodSync(tmp, 0o700);
  }
  renameSync(tmp, target);
  return target;
}

/**
 * The service as one file (`<service dir>/service.js`): a prebuilt bundle shipped beside this CLI
 * when there is one, else bundled now from the checkout by Deno.
 */
function writeServiceBundle(serviceDir: string): string {
  const target = join(serviceDir, SERVICE_BUNDLE);
  const tmp = `${target}.${process.pid}.tmp`;
  const prebuilt = fileURLToPath(new URL("./claude_service.bundle.js", import.meta.url));
  if (existsSync(prebuilt)) {
    copyFileSync(prebuilt, tmp);
  } else {
    const out = spawnSync(Deno.execPath(), [
      "bundle",
      "--quiet",
      "--platform",
      "deno",
      "--config",
      fileURLToPath(new URL("../deno.json", import.meta.url)),
      "-o",
      tmp,
      fileURLToPath(new URL("./claude_service.ts", import.meta.url)),
    ], { encoding: "utf8" });
    if (out.status !== 0 || !existsSync(tmp)) {
      throw new CliError(
        `could not build the service into ${target} (deno bundle: ` +
          `${(out.stderr || out.error?.message || "failed").trim().slice(0, 400)}). Nothing was ` +
          "changed in Claude Code's settings.",
      );
    }
  }
  chmodSync(tmp, 0o600);
  renameSync(tmp, target);
  return target;
}

/** Removes the old version's files (a port, a secret, a pid) and says whether there were any. */
function removeOldFiles(serviceDir: string): boolean {
  let found = false;
  for (const f of OLD_FILES) {
    try {
      unlinkSync(join(serviceDir, f));
      found = true;
    } catch {
      // none
    }
  }
  return found;
}

/** Stops the service answering in `dir` (the pid it reports); true when one was stopped. */
async function stopService(serviceDir: string): Promise<boolean> {
  const health = await claudeServiceRequest(serviceDir, "GET", "/health", "", 1000);
  let pid: unknown;
  try {
    pid = health?.status === 200 ? JSON.parse(health.body).pid : undefined;
  } catch {
    pid = undefined;
  }
  if (typeof pid !== "number" || !Number.isSafeInteger(pid) || pid <= 1) return false;
  try {
    Deno.kill(pid, "SIGTERM");
  } catch {
    return false;
  }
  for (let i = 0; i < 40 && existsSync(join(serviceDir, CLAUDE_SOCKET_NAME)); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

function privateOrUsage(serviceDir: string): void {
  const long = claudeSocketPathProblem(serviceDir);
  if (long !== undefined) throw new CliError(`${long}.`);
  try {
    ensurePrivateDir(serviceDir);
  } catch (e) {
    if (e instanceof ClaudePrivateDirError) throw new CliError(e.message);
    throw e;
  }
}

/** What `readcache claude install` did (its `--json` output). */
export interface ClaudeInstallReport {
  installed: true;
  settings: string;
  serviceDir: string;
  socket: string;
  client: string;
  deno: string;
  olderServiceFiles: boolean;
}

/** `readcache claude install`. */
export async function claudeInstall(
  options: { settings?: string; json?: boolean },
): Promise<number> {
  const configDir = claudeConfigDir();
  const serviceDir = claudeServiceDir(configDir);
  const settingsPath = resolve(options.settings ?? join(configDir, "settings.json"));
  const settings = readSettings(settingsPath);
  const hooks = typeof settings.value.hooks === "object" && settings.value.hooks !== null &&
      !Array.isArray(settings.value.hooks)
    ? { ...settings.value.hooks as Record<string, unknown> }
    : {};
  // the settings are checked before anything is written
  const events = ["SessionStart", "PreToolUse", "PostToolUse"];
  const kept = Object.fromEntries(events.map((e) => [e, withoutOurs(hooks[e], e, settingsPath)]));
  const madeConfigDir = !existsSync(configDir);
  privateOrUsage(serviceDir);
  const record = readInstallRecord(serviceDir);
  await stopService(serviceDir); // a service of an earlier install runs its own copy of the code
  const olderServiceFiles = removeOldFiles(serviceDir);
  const bundle = writeServiceBundle(serviceDir);
  const deno = stableDeno(serviceDir);
  const runtime = claudeHookRuntime();
  const client = writeClaudeHookClient(serviceDir, "perl" in runtime ? runtime : { deno });
  const ours = claudeHookSettings(client, MARK);
  hooks.SessionStart = [
    ...kept.SessionStart,
    {
      hooks: [{
        type: "command",
        command: deno,
        args: [
          "run",
          "-A",
          "--no-config",
          "--quiet",
          bundle,
          "--dir",
          serviceDir,
          "--config-dir",
          configDir,
          "--detach",
        ],
        timeout: 30,
        [MARK]: true,
      }],
    },
  ];
  hooks.PreToolUse = [...kept.PreToolUse, ...ours.PreToolUse];
  hooks.PostToolUse = [...kept.PostToolUse, ...ours.PostToolUse];
  const after = jsonLike({ ...settings.value, hooks }, settings.text);
  // the settings as they were before the first install (a reinstall keeps them)
  const before = record?.settings === settingsPath
    ? record.before
    : settings.text === null
    ? null
    : { text: settings.text, mode: settings.mode ?? 0o600 };
  const next: ClaudeInstallRecord = {
    v: 1,
    settings: settingsPath,
    before,
    after,
    deno,
    client,
    ...(madeConfigDir || record?.madeConfigDir ? { madeConfigDir: true as const } : {}),
  };
  writeAtomic(join(serviceDir, INSTALL_RECORD), JSON.stringify(next, null, 2) + "\n", 0o600);
  writeAtomic(settingsPath, after, settings.mode ?? 0o600);
  const report: ClaudeInstallReport = {
    installed: true,
    settings: settingsPath,
    serviceDir,
    socket: join(serviceDir, CLAUDE_SOCKET_NAME),
    client: client.command,
    deno,
    olderServiceFiles,
  };
  if (options.json) {
    console.log(JSON.stringify(report, null, 2));
    return EXIT_OK;
  }
  console.log(
    `readcache is installed for Claude Code: ${settingsPath} has its hooks, and the service ` +
      `starts with the next session (socket ${report.socket}, in a directory only you can ` +
      `open; hook client: ${"perl" in runtime ? "Perl" : "Deno"}). Remove it with ` +
      "`readcache claude uninstall`.",
  );
  if (olderServiceFiles) {
    console.log(
      "An earlier version's port and secret were removed; a service it started may still " +
        "listen on 127.0.0.1 until you log out or reboot. Nothing sends to it any more.",
    );
  }
  return EXIT_OK;
}

/** What `readcache claude uninstall` did (its `--json` output). */
export interface ClaudeUninstallReport {
  settings: string;
  /** `restored`: put back byte for byte; `edited`: readcache's hooks taken out; `untouched`. */
  settingsChange: "restored" | "removed" | "edited" | "untouched";
  serviceStopped: boolean;
  removed: string[];
}

/** `readcache claude uninstall`. */
export async function claudeUninstall(
  options: { settings?: string; json?: boolean },
): Promise<number> {
  const configDir = claudeConfigDir();
  const serviceDir = claudeServiceDir(configDir);
  const record = readInstallRecord(serviceDir);
  const settingsPath = resolve(
    options.settings ?? record?.settings ?? join(configDir, "settings.json"),
  );
  if (options.settings !== undefined && !existsSync(settingsPath)) {
    throw new CliError(
      `${settingsPath} does not exist, so there are no hooks to remove from it. Give the ` +
        "settings file `readcache claude install` changed (by default <config>/settings.json).",
    );
  }
  let settingsChange: ClaudeUninstallReport["settingsChange"] = "untouched";
  if (existsSync(settingsPath)) {
    const settings = readSettings(settingsPath);
    if (record?.settings === settingsPath && settings.text === record.after) {
      // nothing else changed it since install: back to what it was
      if (record.before === null) {
        unlinkSync(throughLinks(settingsPath)); // a link to where install wrote stays a link
        settingsChange = "removed";
      } else {
        writeAtomic(settingsPath, record.before.text, record.before.mode);
        settingsChange = "restored";
      }
    } else if (
      typeof settings.value.hooks === "object" && settings.value.hooks !== null &&
      !Array.isArray(settings.value.hooks)
    ) {
      const hooks: Record<string, unknown> = { ...settings.value.hooks as Record<string, unknown> };
      let changed = false;
      for (const event of Object.keys(hooks)) {
        if (!Array.isArray(hooks[event])) continue;
        const kept = withoutOurs(hooks[event], event, settingsPath);
        if (JSON.stringify(kept) === JSON.stringify(hooks[event])) continue;
        changed = true;
        if (kept.length > 0) hooks[event] = kept;
        else delete hooks[event];
      }
      if (changed) {
        const { hooks: _, ...rest } = settings.value;
        // no empty `hooks` left where readcache's were the only ones
        const value = Object.keys(hooks).length > 0 ? { ...settings.value, hooks } : rest;
        writeAtomic(settingsPath, jsonLike(value, settings.text), settings.mode ?? 0o600);
        settingsChange = "edited";
      }
    }
  }
  const serviceStopped = await stopService(serviceDir);
  const removed: string[] = [];
  for (
    const f of [
      INSTALL_RECORD,
      SERVICE_BUNDLE,
      DENO_COPY,
      "hook-client.pl",
      "hook-client.js",
      CLAUDE_SOCKET_NAME,
      ...OLD_FILES,
    ]
  ) {
    try {
      lstatSync(join(serviceDir, f));
      unlinkSync(join(serviceDir, f));
      removed.push(f);
    } catch {
      // not there
    }
  }
  for (const dir of record?.madeConfigDir ? [serviceDir, configDir] : [serviceDir]) {
    try {
      if (readdirSync(dir).length === 0) rmdirSync(dir);
    } catch {
      // not there, or holds something else
    }
  }
  const report: ClaudeUninstallReport = {
    settings: settingsPath,
    settingsChange,
    serviceStopped,
    removed,
  };
  if (options.json) {
    console.log(JSON.stringify(report, null, 2));
    return EXIT_OK;
  }
  const what = {
    restored: `${settingsPath} is back as it was before install`,
    removed: `${settingsPath} is removed again (install made it)`,
    edited: `readcache's hooks are gone from ${settingsPath}`,
    untouched: `${settingsPath} holds no readcache hooks`,
  }[settingsChange];
  console.log(
    `${what}` + (serviceStopped ? " and the service is stopped" : "") +
      ". Stored copies stay in each project's .claude/readcache (delete that folder to drop them).",
  );
  return EXIT_OK;
}

/** `readcache claude status`: the service as installed (read-only); 1 when something is wrong. */
export async function claudeStatusCommand(options: { json?: boolean }): Promise<number> {
  const r = await claudeServiceCheck();
  const problems = r.findings.filter((f) => f.severity === "problem");
  if (options.json) {
    console.log(JSON.stringify(r, null, 2));
  } else {
    const out = claudeServiceLines(r);
    for (const f of r.findings) out.push(`  ${f.path} ${f.what}`, `    fix: ${f.fix}`);
    if (problems.length === 0) out.push("no problems found.");
    console.log(out.join("\n"));
  }
  return problems.length > 0 ? EXIT_PROBLEM : EXIT_OK;
}

/** `readcache claude serve`. */
export async function claudeServe(options: { detach?: boolean; json?: boolean }): Promise<number> {
  const configDir = claudeConfigDir();
  const serviceDir = claudeServiceDir(configDir);
  const problem = claudeSocketPathProblem(serviceDir) ??
    (existsSync(serviceDir) ? privateDirProblem(serviceDir) : undefined);
  if (problem !== undefined) {
    throw new CliError(`${problem}. Run \`readcache doctor --claude\` for what to do.`);
  }
  // in the background: the service install bundled, else this checkout's entry point
  const bundled = join(serviceDir, SERVICE_BUNDLE);
  const fromCheckout = fileURLToPath(new URL("./claude_service.ts", import.meta.url));
  const entry = existsSync(bundled) ? bundled : existsSync(fromCheckout) ? undefined : null;
  if (options.detach && entry === null) {
    throw new CliError(
      "readcache is not installed for Claude Code here; run `readcache claude install` (the " +
        "SessionStart hook then starts the service), or `readcache claude serve` in the foreground.",
    );
  }
  return await serve({
    dir: serviceDir,
    configDir,
    detach: options.detach,
    entry: entry ?? undefined,
    json: options.json,
  });
}
