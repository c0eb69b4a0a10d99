/**
 * The long-lived loopback service Claude Code's HTTP hooks reach (SPEC
 * §11.9): `POST /hook/<secret>` with the hook's input, answered with the
 * hook's output by a {@linkcode ClaudeCodeHost}; `GET /hook/<secret>` says it
 * is up. It listens on 127.0.0.1
 * only; a request without the secret (another local user, a web page) gets
 * 404 and learns nothing. A request it cannot answer gets `{}`, so Claude
 * Code's own output stands; a service that is down fails open in Claude Code
 * itself.
 *
 * @module
 */
import { timingSafeEqual } from "node:crypto";
import { ClaudeCodeHost, type ClaudeCodeHostOptions } from "./host.ts";

/**
 * Options of {@linkcode startClaudeCodeService}.
 *
 * @example
 * ```ts
 * import type { ClaudeCodeServiceOptions } from "@readcache/core/claude-code";
 * const o: ClaudeCodeServiceOptions = { port: 0, secret: "0123456789abcdef0123456789abcdef" };
 * ```
 */
export interface ClaudeCodeServiceOptions extends ClaudeCodeHostOptions {
  /** TCP port on 127.0.0.1 (0: any free port). */
  port: number;
  /** The secret in the hook URL: at least 32 characters of `[A-Za-z0-9_-]`. */
  secret: string;
  /** The host to serve (default: a new one with the options above). */
  host?: ClaudeCodeHost;
}

/**
 * A running service.
 *
 * @example
 * ```ts ignore
 * const s = startClaudeCodeService({ port: 0, secret });
 * console.log(s.url); await s.close();
 * ```
 */
export interface ClaudeCodeService {
  /** The port it listens on. */
  port: number;
  /** The hook URL (`http://127.0.0.1:<port>/hook/<secret>`). */
  url: string;
  /** Hook calls answered so far, and how many of them replaced a result. */
  stats: { calls: number; replaced: number };
  /** Stops listening. */
  close(): Promise<void>;
}

/** Largest hook input accepted (bytes): a `Read` result carries the file's text. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/**
 * Thrown for a secret that is too short or has characters a URL path would
 * need escaped.
 *
 * @example
 * ```ts
 * import { ClaudeCodeServiceError } from "@readcache/core/claude-code";
 * new ClaudeCodeServiceError("x").code; // "claude_service_config"
 * ```
 */
export class ClaudeCodeServiceError extends Error {
  /** Stable code. */
  readonly code = "claude_service_config";
  /** An error with this message (what to do). */
  constructor(message: string) {
    super(message);
    this.name = "ClaudeCodeServiceError";
  }
}

function sameSecret(given: string, secret: string): boolean {
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function readBody(req: Request): Promise<unknown> {
  if (req.body === null) return undefined;
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of req.body) {
    total += chunk.length;
    if (total > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined;
  }
}

/**
 * Starts the service on 127.0.0.1.
 *
 * @example
 * ```ts ignore
 * import { startClaudeCodeService } from "@readcache/core/claude-code";
 * const service = startClaudeCodeService({ port: 7411, secret: crypto.randomUUID() + crypto.randomUUID() });
 * ```
 */
export function startClaudeCodeService(options: ClaudeCodeServiceOptions): ClaudeCodeService {
  if (!/^[A-Za-z0-9_-]{32,256}$/.test(options.secret)) {
    throw new ClaudeCodeServiceError(
      "The hook secret must be 32 to 256 characters of A-Z, a-z, 0-9, _ and -; " +
        "run `readcache claude install` to make one.",
    );
  }
  const host = options.host ?? new ClaudeCodeHost(options);
  const stats = { calls: 0, replaced: 0 };
  const prefix = "/hook/";
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: options.port, onListen() {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      if (!path.startsWith(prefix) || !sameSecret(path.slice(prefix.length), options.secret)) {
        return new Response("not found\n", { status: 404 });
      }
      // the health check `readcache claude serve --detach` makes before starting another one
      if (req.method === "GET") return Response.json({ service: "readcache", ...stats });
      if (req.method !== "POST") return new Response("not found\n", { status: 404 });
      stats.calls++;
      const body = await readBody(req).catch(() => undefined);
      const out = body === undefined ? {} : await host.handle(body);
      if (out.hookSpecificOutput !== undefined) stats.replaced++;
      return Response.json(out);
    },
  );
  const port = (server.addr as Deno.NetAddr).port;
  return {
    port,
    url: `http://127.0.0.1:${port}${prefix}${options.secret}`,
    stats,
    close: () => server.shutdown(),
  };
}
