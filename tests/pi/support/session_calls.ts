// What the cold-start tests of the pi extension share: pi's session manager
// behind a proxy that counts the calls of each method (a cold start must not
// ask for the whole branch), and a temporary project directory with files.
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionManager } from "@mariozechner/pi-coding-agent";

/** `session` behind a proxy; `calls` counts each method called through it, by name. */
export function counted(
  session: SessionManager,
): { session: SessionManager; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(session, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        if (typeof prop === "string") calls.set(prop, (calls.get(prop) ?? 0) + 1);
        return v.apply(target, args);
      };
    },
  });
  return { session: proxy, calls };
}

/**
 * A test body run in a new temporary directory (its real path) holding
 * `files` (name to content), removed afterwards.
 */
export function withProject(
  prefix: string,
  files: Record<string, string>,
  fn: (cwd: string) => Promise<void>,
): () => Promise<void> {
  return async () => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
    try {
      for (const [name, content] of Object.entries(files)) {
        writeFileSync(join(cwd, name), content);
      }
      await fn(cwd);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  };
}
