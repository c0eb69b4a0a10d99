// A sandbox for driving the real Claude Code binary offline: a fake Messages API on loopback, a
// temporary HOME (Claude Code's config and transcripts) and working directory, and settings with
// readcache's hooks (as `readcache claude install` writes them: command hooks running the hook
// client, which reaches the service socket in `serviceDir`), or any other hooks given. `run`
// starts `claude` with the arguments given plus the sandbox's settings; `toolResults` is what the
// model received for each tool call, as the fake API saw it.
import { join } from "node:path";
import {
  claudeHookRuntime,
  claudeHookSettings,
  writeClaudeHookClient,
} from "../../src/adapters/claude/hook_client.ts";
import { ensurePrivateDir } from "../../src/adapters/claude/private_dir.ts";
import { contentText, type FakeMessagesApi, startFakeMessagesApi } from "./fake_messages_api.ts";

/** The outcome of one `claude` run. */
export interface ClaudeRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The sandbox. */
export interface ClaudeSandbox {
  /** The working directory (the project). */
  work: string;
  /** Claude Code's configuration directory (transcripts under `projects/`). */
  configDir: string;
  /** The service's directory the hooks reach (`<configDir>/readcache`), when they are readcache's. */
  serviceDir: string;
  /** The settings file `run` passes. */
  settingsFile: string;
  /** The fake Messages API. */
  api: FakeMessagesApi;
  /** Runs `claude` with these arguments (and the sandbox's settings). */
  run(args: string[]): Promise<ClaudeRun>;
  /** What the model received for each tool call id (the newest request that holds it). */
  toolResults(): Map<string, string>;
  /** Stops the fake API and removes the sandbox. */
  close(): Promise<void>;
}

/**
 * Starts a sandbox: `hooks` `"readcache"` gives readcache's hooks (the service is started by the
 * caller on `serviceDir`), an object gives those hooks as they are, none gives no hooks.
 */
export async function startClaudeSandbox(
  bin: string,
  hooks?: "readcache" | Record<string, unknown>,
  options: { sameMessageIds?: boolean } = {},
): Promise<ClaudeSandbox> {
  const api = startFakeMessagesApi({ sameIds: options.sameMessageIds });
  const root = await Deno.makeTempDir({ prefix: "readcache-claude-" });
  const home = join(root, "home");
  const work = join(root, "work");
  const configDir = join(home, ".claude");
  await Deno.mkdir(configDir, { recursive: true });
  await Deno.mkdir(work);
  const serviceDir = join(configDir, "readcache");
  let settings = {};
  if (hooks === "readcache") {
    ensurePrivateDir(serviceDir);
    const client = writeClaudeHookClient(serviceDir, claudeHookRuntime());
    settings = { hooks: claudeHookSettings(client) };
  } else if (hooks !== undefined) {
    settings = { hooks };
  }
  const settingsFile = join(root, "settings.json");
  await Deno.writeTextFile(settingsFile, JSON.stringify(settings));
  const env: Record<string, string> = {
    ANTHROPIC_BASE_URL: api.baseURL,
    ANTHROPIC_API_KEY: "dummy",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    HOME: home,
    CLAUDE_CONFIG_DIR: configDir,
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
  };
  return {
    work,
    configDir,
    serviceDir,
    settingsFile,
    api,
    async run(args) {
      const out = await new Deno.Command(bin, {
        args: [
          ...args,
          "--settings",
          settingsFile,
          "--allowedTools",
          "Read Bash Grep Glob Edit Write Agent",
        ],
        cwd: work,
        env,
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const dec = new TextDecoder();
      return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
    },
    toolResults() {
      const out = new Map<string, string>();
      for (const req of api.requests) {
        for (const m of req.messages ?? []) {
          if (!Array.isArray(m.content)) continue;
          for (const b of m.content as Record<string, unknown>[]) {
            if (b.type !== "tool_result" || typeof b.tool_use_id !== "string") continue;
            out.set(b.tool_use_id, contentText(b.content));
          }
        }
      }
      return out;
    },
    async close() {
      await api.close();
      await Deno.remove(root, { recursive: true }).catch(() => {});
    },
  };
}
