/**
 * The file pi loads (`package.json`'s `pi.extensions`): it imports nothing
 * but `node:` modules, so pi always loads it, and it loads the extension
 * (`extension.ts`, which needs zod and diff from `npm install`) when pi
 * starts it. When that import fails (a checkout without `npm install`, a
 * broken copy), pi's own `read` stays as it is and the user is told why and
 * what to run: a line on stderr at once (in print and RPC mode too) and a
 * notification when the session starts.
 *
 * `PI_READCACHE=off` loads nothing, as with `extension.ts`.
 *
 * @module
 */
import { dirname, resolve } from "node:path";
import { env } from "node:process";
import { fileURLToPath } from "node:url";
import type { PiExtensionHost } from "./extension.ts";

/**
 * What the loader tells the user when `extension.ts` could not be imported:
 * what failed and the command that fixes it (`npm install --omit=peer` in
 * the checkout when a package is missing).
 *
 * @example
 * ```ts
 * import { piLoadFailureMessage } from "./load.ts";
 * piLoadFailureMessage(new Error("Cannot find module 'zod'"), "/r");
 * // "readcache: the pi extension is not loaded (Cannot find module 'zod'), so reads are not
 * //  cached. Run `npm install --omit=peer` in /r, then start pi again."
 * ```
 */
export function piLoadFailureMessage(error: unknown, checkout: string): string {
  const raw = error instanceof Error ? error.message : String(error);
  const first = raw.split("\n")[0].trim();
  const why = first.length > 300 ? `${first.slice(0, 300)}...` : first;
  const missing = /cannot find (package|module)|could not resolve|module not found/i.test(raw);
  const fix = missing
    ? `Run \`npm install --omit=peer\` in ${checkout}, then start pi again.`
    : `Check the checkout at ${checkout} (\`npm install --omit=peer\` there), then start pi ` +
      "again; PI_READCACHE=off stops this message.";
  return `readcache: the pi extension is not loaded (${why}), so reads are not cached. ${fix}`;
}

/** pi's `on("session_start")` with the context pi passes. */
interface SessionStartHost {
  on(
    event: "session_start",
    handler: (
      event: unknown,
      ctx: { ui?: { notify?(message: string, type?: "error"): void } } | undefined,
    ) => void,
  ): void;
}

/** The checkout this file is in (`src/adapters/pi/` three levels down). */
const CHECKOUT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/**
 * Starts the extension in pi: imports `importExtension()` (by default
 * `./extension.ts`) and runs it; when the import fails, tells the user
 * ({@linkcode piLoadFailureMessage}: stderr now, a notification at session
 * start) and leaves pi's tools as they are. Never throws.
 *
 * @example
 * ```ts
 * import { startExtension } from "./load.ts";
 * const shown: string[] = [];
 * await startExtension(
 *   { on: (_e: string, f: (e: unknown, c: unknown) => void) =>
 *     f({}, { ui: { notify: (m: string) => shown.push(m) } }) } as never,
 *   () => Promise.reject(new Error("Cannot find module 'zod'")),
 * );
 * shown.length; // 1
 * ```
 */
export async function startExtension(
  pi: PiExtensionHost,
  importExtension: () => Promise<{ default: (pi: PiExtensionHost) => void }> = () =>
    import("./extension.ts"),
): Promise<void> {
  if (env.PI_READCACHE === "off") return;
  let extension;
  try {
    extension = await importExtension();
  } catch (e) {
    const message = piLoadFailureMessage(e, CHECKOUT);
    console.error(message);
    try {
      // pi hands a context to every handler: its `ui.notify` reaches the user in the TUI
      (pi as unknown as SessionStartHost).on(
        "session_start",
        (_event, ctx) => ctx?.ui?.notify?.(message, "error"),
      );
    } catch {
      // telling the user is best-effort: pi goes on either way
    }
    return;
  }
  extension.default(pi);
}

/** pi's entry point: {@linkcode startExtension} with the extension beside this file. */
export default function readcacheLoader(pi: PiExtensionHost): Promise<void> {
  return startExtension(pi);
}
