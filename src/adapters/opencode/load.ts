/**
 * The file to name in OpenCode's `plugin` list: it imports nothing but
 * `node:` modules, so OpenCode always loads it, and it loads the plugin
 * (`plugin.ts`, which needs zod and diff from `npm install`) when OpenCode
 * starts it. When that import fails (no `npm install` in the checkout, a
 * broken copy), OpenCode's reads stay exactly as OpenCode makes them and the
 * user is told why and what to run: an error in OpenCode's log (service
 * `readcache`) at once, and a toast in the TUI at the first `read`.
 *
 * ```json
 * { "plugin": ["file:///home/me/readcache/src/adapters/opencode/load.ts"] }
 * ```
 *
 * `OPENCODE_READCACHE=off` loads nothing, as with `plugin.ts`.
 *
 * @module
 */
import { dirname, resolve } from "node:path";
import { env } from "node:process";
import { fileURLToPath } from "node:url";
import type { OpenCodePluginInputLike, ReadcacheHooks } from "./plugin.ts";

/**
 * The parts of OpenCode's SDK client the loader uses to tell the user about
 * a plugin it could not load (both optional: a missing one is skipped).
 *
 * @example
 * ```ts
 * import type { LoaderClient } from "./load.ts";
 * const client: LoaderClient = { app: { log: () => Promise.resolve({}) } };
 * ```
 */
export interface LoaderClient {
  /** `client.app.log`: a line in OpenCode's log. */
  app?: {
    log?(options: {
      body: { service: string; level: "error"; message: string };
    }): Promise<unknown>;
  };
  /** `client.tui.showToast`: a toast in the TUI. */
  tui?: {
    showToast?(options: {
      body: { title: string; message: string; variant: "error"; duration: number };
    }): Promise<unknown>;
  };
}

/**
 * What the loader tells the user when `plugin.ts` could not be imported:
 * what failed and the command that fixes it (`npm install --omit=peer` in
 * the checkout when a package is missing).
 *
 * @example
 * ```ts
 * import { loadFailureMessage } from "./load.ts";
 * loadFailureMessage(new Error("Cannot find package 'zod' from '/r/src/x.ts'"), "/r");
 * // "readcache: the OpenCode plugin is not loaded (Cannot find package 'zod' from
 * //  '/r/src/x.ts'), so reads are not cached. Run `npm install --omit=peer` in /r, then
 * //  restart OpenCode."
 * ```
 */
export function loadFailureMessage(error: unknown, checkout: string): string {
  const raw = error instanceof Error ? error.message : String(error);
  const first = raw.split("\n")[0].trim();
  const why = first.length > 300 ? `${first.slice(0, 300)}...` : first;
  const missing = /cannot find (package|module)|could not resolve|module not found/i.test(raw);
  const fix = missing
    ? `Run \`npm install --omit=peer\` in ${checkout}, then restart OpenCode.`
    : `Check the checkout at ${checkout} (\`npm install --omit=peer\` there), then restart OpenCode; OPENCODE_READCACHE=off stops this message.`;
  return `readcache: the OpenCode plugin is not loaded (${why}), so reads are not cached. ${fix}`;
}

/**
 * Starts the plugin for OpenCode: imports `importPlugin()` (by default
 * `./plugin.ts`) and returns its hooks; when the import fails, reports
 * {@linkcode loadFailureMessage} through `input.client` (log now, a toast at
 * the first `read`) and returns hooks that change nothing. Never throws.
 *
 * @example
 * ```ts
 * import { startPlugin } from "./load.ts";
 * const hooks = await startPlugin(
 *   { directory: "/w", client: { session: { messages: async () => ({}), get: async () => ({}) } } },
 *   () => Promise.reject(new Error("Cannot find package 'zod'")),
 * );
 * Object.keys(hooks); // ["tool.execute.after"]: it shows the toast, and changes no output
 * ```
 */
export async function startPlugin(
  input: OpenCodePluginInputLike,
  importPlugin: () => Promise<{
    readcachePlugin(input: OpenCodePluginInputLike): Promise<ReadcacheHooks>;
  }> = () => import("./plugin.ts"),
): Promise<ReadcacheHooks> {
  if (env.OPENCODE_READCACHE === "off") return {};
  let plugin;
  try {
    plugin = await importPlugin();
  } catch (e) {
    return reportFailure(input, loadFailureMessage(e, CHECKOUT));
  }
  return plugin.readcachePlugin(input);
}

/** The checkout this file is in (`src/adapters/opencode/` three levels down). */
const CHECKOUT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/** Logs `message` now and shows it as a toast at the first `read`; hooks that change nothing. */
function reportFailure(input: OpenCodePluginInputLike, message: string): ReadcacheHooks {
  const client = input.client as unknown as LoaderClient;
  const quietly = async (f: () => Promise<unknown> | undefined) => {
    try {
      await f();
    } catch {
      // telling the user is best-effort: OpenCode goes on either way
    }
  };
  void quietly(() =>
    client.app?.log?.({ body: { service: "readcache", level: "error", message } })
  );
  let shown = false;
  return {
    "tool.execute.after": async (call) => {
      if (shown || call.tool !== "read") return;
      shown = true;
      await quietly(() =>
        client.tui?.showToast?.({
          body: { title: "readcache", message, variant: "error", duration: 15_000 },
        })
      );
    },
  };
}

/**
 * The module OpenCode loads: `{ id, server }`, as `plugin.ts`'s own.
 *
 * @example
 * ```ts
 * import plugin from "./load.ts";
 * plugin.id; // "readcache"
 * ```
 */
const loaderModule: {
  id: string;
  server: (input: OpenCodePluginInputLike) => Promise<ReadcacheHooks>;
} = { id: "readcache", server: (input) => startPlugin(input) };
export default loaderModule;
