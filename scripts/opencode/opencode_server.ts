// A real `opencode serve` on 127.0.0.1 for tests and scripts: its own HOME (database, logs,
// config) in a directory of the caller's, the scripted mock (mock_chat.ts) as its only model
// provider, the read cache plugin of this checkout loaded by path, and the small HTTP client the
// tests drive it with (OpenCode's REST API: sessions, prompts, summarize, revert).
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { MockChat } from "./mock_chat.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");

/** `file://` URL of the plugin in this checkout, as `opencode.json`'s `plugin` takes it. */
export const PLUGIN_URL: string = pathToFileURL(join(REPO, "src/adapters/opencode/plugin.ts"))
  .href;

/**
 * The plugin as an OpenCode user installs it (README: Use in OpenCode): this checkout's `src/`
 * and `package.json` (the working tree's, or as committed in `rev`) in `dir`, then
 * `npm install --omit=peer` there for zod and diff (with `npmInstall: false`, the clone of a
 * user who skipped that step). Returns the plugin's `file://` URL. The checkout's own
 * `node_modules` is not used: npm owns a checkout's `node_modules`, and the test suites' Deno
 * configs write none there.
 */
export async function installedPlugin(
  dir: string,
  rev?: string,
  options: { npmInstall?: boolean } = {},
): Promise<string> {
  await Deno.mkdir(dir, { recursive: true });
  const run = async (cmd: string, args: string[], cwd: string) => {
    const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" })
      .output();
    if (!out.success) {
      const td = new TextDecoder();
      throw new Error(`${cmd} ${args.join(" ")}: ${td.decode(out.stdout)}${td.decode(out.stderr)}`);
    }
  };
  if (rev === undefined) {
    await run("cp", ["-R", join(REPO, "src"), join(REPO, "package.json"), dir], REPO);
  } else {
    await run("sh", [
      "-c",
      `git -C "${REPO}" archive "${rev}" src package.json | tar -x -C "${dir}"`,
    ], REPO);
  }
  if (options.npmInstall !== false) {
    await run("npm", [
      "install",
      "--omit=peer",
      "--no-package-lock",
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
    ], dir);
  }
  return pathToFileURL(join(dir, "src/adapters/opencode/plugin.ts")).href;
}

/**
 * Writes, next to an installed plugin (`checkout`, see {@linkcode installedPlugin}), a plugin
 * module that loads it with its hooks instrumented, and returns the module's `file://` URL:
 * after every `read` hook it appends one JSON line to `log`: the hook's wall time (`ms`), the
 * time a call of OpenCode's client was under way inside it (`fetchMs`: `session.messages`,
 * `session.get`), the answer's mode, the read as the model waits for it (`totalMs`: from
 * `tool.execute.before` to the end of `tool.execute.after`: OpenCode's read and both hooks) and
 * the statistics of the plugin's session caches (`OpenCodeSessionCache.stats`; none for a plugin
 * older than the cache). With `plain`, the plugin's hooks are left out (OpenCode's own read, timed
 * the same way).
 */
export async function instrumentedPlugin(
  checkout: string,
  log: string,
  options: { plain?: boolean } = {},
): Promise<string> {
  const file = join(checkout, options.plain ? "plain_plugin.ts" : "instrumented_plugin.ts");
  await Deno.writeTextFile(
    file,
    `import { appendFileSync } from "node:fs";
import * as plugin from "./src/adapters/opencode/plugin.ts";
const LOG = ${JSON.stringify(log)};
const PLAIN = ${options.plain === true};
export default {
  id: "readcache",
  server: async (input) => {
    // wall time with a client call under way (the plugin makes two at once)
    let fetchMs = 0;
    let active = 0;
    let since = 0;
    const timed = (f) => async (o) => {
      if (active++ === 0) since = performance.now();
      try { return await f(o); } finally { if (--active === 0) fetchMs += performance.now() - since; }
    };
    const client = { session: {
      messages: timed((o) => input.client.session.messages(o)),
      get: timed((o) => input.client.session.get(o)),
    } };
    const caches = [];
    const Cache = plugin.OpenCodeSessionCache;
    const options = Cache === undefined ? {} : {
      sessionCache: (id) => { const c = new Cache(); caches.push({ id, c }); return c; },
    };
    // PLAIN: OpenCode without the plugin (only the clock below)
    const hooks = PLAIN ? {} : await plugin.createReadcachePlugin(options)({ ...input, client });
    const noop = async () => {};
    const before = hooks["tool.execute.before"] ?? noop;
    const after = hooks["tool.execute.after"] ?? noop;
    // a read as the model waits for it: from the call's start (before any hook) to its output
    const started = new Map();
    hooks["tool.execute.before"] = async (call, output) => {
      if (call.tool === "read") started.set(call.callID, performance.now());
      return before(call, output);
    };
    hooks["tool.execute.after"] = async (call, output) => {
      if (call.tool !== "read") return after(call, output);
      fetchMs = 0;
      const t = performance.now();
      await after(call, output);
      const end = performance.now();
      const t0 = started.get(call.callID);
      started.delete(call.callID);
      appendFileSync(LOG, JSON.stringify({ ms: end - t, fetchMs, mode: output.metadata?.readcache?.mode,
        totalMs: t0 === undefined ? undefined : end - t0,
        session: call.sessionID,
        stats: caches.map(({ id, c }) => ({ session: id, ...structuredClone(c.stats) })) }) + "\\n");
    };
    return hooks;
  },
};
`,
  );
  return pathToFileURL(file).href;
}

const START_TIMEOUT_MS = 60_000;
const REQUEST_TIMEOUT_MS = 60_000;

/** A running `opencode serve`. */
export interface OpenCodeServer {
  /** Base URL of its HTTP API. */
  url: string;
  /** Everything it printed so far (for failure messages). */
  log(): string;
  /** Calls its HTTP API; throws with the server's log on a status other than 2xx. */
  api(method: string, path: string, body?: unknown): Promise<unknown>;
  /** Stops it and waits for it to exit. */
  stop(): Promise<void>;
}

/** Options of {@linkcode startOpenCode}. */
export interface StartOptions {
  /** The `opencode` binary. */
  bin: string;
  /** The project directory it serves. */
  cwd: string;
  /** Its HOME (and XDG directories below it). */
  home: string;
  /**
   * Its XDG_CONFIG_HOME (default `<home>/.config`). OpenCode installs `@opencode-ai/plugin` into
   * `<config>/opencode/node_modules` (about 30 MB from npm, several seconds) before it loads any
   * plugin; a directory kept between runs makes that a one-time cost.
   */
  configHome?: string;
  /** The model it talks to. */
  mock: MockChat;
  /** Load the plugin of this checkout (default true). */
  plugin?: boolean;
  /** Where to load it from (default {@linkcode PLUGIN_URL}; see {@linkcode installedPlugin}). */
  pluginUrl?: string;
  /** More `opencode.json` settings (merged at the top level). */
  config?: Record<string, unknown>;
}

/** Starts `opencode serve --port 0` and waits until it listens. */
export async function startOpenCode(o: StartOptions): Promise<OpenCodeServer> {
  const config = {
    $schema: "https://opencode.ai/config.json",
    model: "mock/mock-model",
    small_model: "mock/mock-model",
    autoupdate: false,
    share: "disabled",
    plugin: o.plugin === false ? [] : [o.pluginUrl ?? PLUGIN_URL],
    permission: { edit: "allow", bash: "allow", external_directory: "allow" },
    provider: {
      mock: {
        npm: "@ai-sdk/openai-compatible",
        name: "Mock",
        options: { baseURL: o.mock.baseURL, apiKey: "x" },
        models: {
          "mock-model": {
            name: "Mock model",
            tool_call: true,
            limit: { context: 1_000_000, output: 8192 },
          },
        },
      },
    },
    ...o.config,
  };
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: o.home,
    XDG_CONFIG_HOME: o.configHome ?? join(o.home, ".config"),
    XDG_DATA_HOME: join(o.home, ".local/share"),
    XDG_CACHE_HOME: join(o.home, ".cache"),
    XDG_STATE_HOME: join(o.home, ".local/state"),
    OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    NO_COLOR: "1",
  };
  const child = new Deno.Command(o.bin, {
    args: ["serve", "--port", "0", "--hostname", "127.0.0.1"],
    cwd: o.cwd,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let log = "";
  let found: (url: string) => void = () => {};
  const listening = new Promise<string>((resolve) => found = resolve);
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of stream) {
      log += dec.decode(chunk, { stream: true });
      const m = /listening on (http:\/\/[^\s]+)/.exec(log);
      if (m) found(m[1].replace(/\/$/, ""));
    }
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // already gone
    }
    await child.status;
    await pumps;
  };
  let url: string;
  try {
    url = await Promise.race([
      listening,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`opencode serve did not start:\n${log}`)),
          START_TIMEOUT_MS,
        );
      }),
      child.status.then((s) => {
        throw new Error(`opencode serve exited (${s.code}):\n${log}`);
      }),
    ]);
  } catch (e) {
    await stop();
    throw e;
  } finally {
    clearTimeout(timer);
  }
  return {
    url,
    log: () => log,
    async api(method, path, body) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}\n${log}`);
      return text === "" ? undefined : JSON.parse(text);
    },
    stop,
  };
}
