/**
 * The long-lived service Claude Code's hooks reach (SPEC §11.9): an HTTP
 * server on a Unix socket, `hook.sock`, in a directory only the user can
 * open ({@linkcode ensurePrivateDir}). `POST /hook` takes a hook's input and
 * answers with the hook's output from a {@linkcode ClaudeCodeHost};
 * `GET /health` says it is up. No other local user can connect to it, bind
 * its address first or stand in for it (the directory keeps them out; there
 * is no port to take and no secret to learn); a web page cannot reach a
 * socket. It answers a hook only with `{}` or a `PostToolUse` replacement of
 * the tool's output: never a permission decision, never a changed input.
 * A request it cannot use gets `{}`, so Claude Code's own output stands; a
 * service that is down or slow fails open in the hook client.
 *
 * @module
 */
import { chmodSync, lstatSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { ClaudeCodeHost, type ClaudeCodeHostOptions, type ClaudeHookOutput } from "./host.ts";
import { ensurePrivateDir, privateDirProblem } from "./private_dir.ts";

/** The socket's file name in the service's directory. */
export const CLAUDE_SOCKET_NAME = "hook.sock";

/**
 * Options of {@linkcode startClaudeCodeService}.
 *
 * @example
 * ```ts
 * import type { ClaudeCodeServiceOptions } from "@readcache/core/claude-code";
 * const o: ClaudeCodeServiceOptions = { dir: "/home/me/.claude/readcache" };
 * ```
 */
export interface ClaudeCodeServiceOptions extends ClaudeCodeHostOptions {
  /**
   * The private directory the socket is made in (created with mode 0700 when
   * missing; refused when another user could reach it).
   */
  dir: string;
  /** The host to serve (default: a new one with the options above). */
  host?: ClaudeCodeHost;
}

/**
 * A running service.
 *
 * @example
 * ```ts ignore
 * const s = startClaudeCodeService({ dir });
 * console.log(s.socket); await s.close();
 * ```
 */
export interface ClaudeCodeService {
  /** The socket's path. */
  socket: string;
  /** Hook calls answered so far, and how many of them replaced a result. */
  stats: { calls: number; replaced: number };
  /** Resolves when the service stops (closed, or its socket was taken away). */
  finished: Promise<void>;
  /** Stops listening and removes the socket. */
  close(): Promise<void>;
}

/**
 * Thrown when another service already answers on the directory's socket.
 *
 * @example
 * ```ts
 * import { ClaudeServiceRunningError } from "@readcache/core/claude-code";
 * new ClaudeServiceRunningError("/d/hook.sock").code; // "claude_service_running"
 * ```
 */
export class ClaudeServiceRunningError extends Error {
  /** Stable code. */
  readonly code = "claude_service_running";
  /** An error naming the socket that is in use. */
  constructor(socket: string) {
    super(`a readcache service already answers on ${socket}`);
    this.name = "ClaudeServiceRunningError";
  }
}

/**
 * Thrown for a socket path too long for a socket address (macOS keeps 104
 * bytes, Linux 108).
 *
 * @example
 * ```ts
 * import { ClaudeServiceError } from "@readcache/core/claude-code";
 * new ClaudeServiceError("x").code; // "claude_service_config"
 * ```
 */
export class ClaudeServiceError extends Error {
  /** Stable code. */
  readonly code = "claude_service_config";
  /** An error with this message (what to do). */
  constructor(message: string) {
    super(message);
    this.name = "ClaudeServiceError";
  }
}

/** Longest socket path accepted (bytes; macOS keeps 103 and a NUL). */
const MAX_SOCKET_PATH_BYTES = 103;

/**
 * What keeps the socket in `dir` from being made, in words (its path is
 * longer than a socket address holds), or `undefined`.
 *
 * @example
 * ```ts
 * import { claudeSocketPathProblem } from "@readcache/core/claude-code";
 * claudeSocketPathProblem("/home/me/.claude/readcache"); // undefined
 * ```
 */
export function claudeSocketPathProblem(dir: string): string | undefined {
  const socket = join(dir, CLAUDE_SOCKET_NAME);
  if (new TextEncoder().encode(socket).length <= MAX_SOCKET_PATH_BYTES) return undefined;
  return `${socket} is longer than the ${MAX_SOCKET_PATH_BYTES} bytes a socket address holds; ` +
    "set CLAUDE_CONFIG_DIR to a shorter directory, then run `readcache claude install` again";
}

/** Largest hook input accepted (bytes): a `Read` result carries the file's text. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** How often the service checks that its socket is still its own (ms). */
const SOCKET_CHECK_MS = 5000;

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
 * What the service may send back for a hook input: `{}`, or, for a
 * `PostToolUse` input, exactly the replacement of the tool's output. Any
 * other field (a permission decision, `updatedInput`, `continue`, a
 * context to add) is dropped: the service never grants, blocks or rewrites
 * a call.
 *
 * @example
 * ```ts
 * import { claudeSafeHookOutput } from "@readcache/core/claude-code";
 * claudeSafeHookOutput({ hook_event_name: "PreToolUse" },
 *   { hookSpecificOutput: { hookEventName: "PostToolUse", updatedToolOutput: 1 } }); // {}
 * ```
 */
export function claudeSafeHookOutput(input: unknown, out: unknown): ClaudeHookOutput {
  const event = (input as { hook_event_name?: unknown } | null)?.hook_event_name;
  const specific = (out as { hookSpecificOutput?: Record<string, unknown> } | null)
    ?.hookSpecificOutput;
  if (
    event !== "PostToolUse" || typeof specific !== "object" || specific === null ||
    specific.hookEventName !== "PostToolUse" || !("updatedToolOutput" in specific)
  ) return {};
  return {
    hookSpecificOutput: {
      hookEventName: "PostToolUse",
      updatedToolOutput: specific.updatedToolOutput,
    },
  };
}

/**
 * Sends one HTTP request to the service's socket in `dir` and gives the
 * status and body, or `undefined` when nothing answers within `timeoutMs`.
 *
 * @example
 * ```ts ignore
 * import { claudeServiceRequest } from "@readcache/core/claude-code";
 * await claudeServiceRequest("/home/me/.claude/readcache", "GET", "/health");
 * ```
 */
export async function claudeServiceRequest(
  dir: string,
  method: "GET" | "POST",
  path: string,
  body = "",
  timeoutMs = 2000,
): Promise<{ status: number; body: string } | undefined> {
  let conn: Deno.UnixConn | undefined;
  let connectTimer: ReturnType<typeof setTimeout> | undefined;
  const timer = setTimeout(() => conn?.close(), timeoutMs);
  try {
    const connecting = Deno.connect({ transport: "unix", path: join(dir, CLAUDE_SOCKET_NAME) });
    conn = await Promise.race([
      connecting,
      new Promise<never>((_, reject) => {
        connectTimer = setTimeout(() => reject(new Error("timeout")), timeoutMs);
      }),
    ]);
    const payload = new TextEncoder().encode(body);
    const head = new TextEncoder().encode(
      `${method} ${path} HTTP/1.0\r\nHost: readcache\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${payload.length}\r\n\r\n`,
    );
    const all = new Uint8Array(head.length + payload.length);
    all.set(head);
    all.set(payload, head.length);
    for (let at = 0; at < all.length;) at += await conn.write(all.subarray(at));
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(65536);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
    }
    const text = new TextDecoder().decode(
      chunks.reduce((a, c) => {
        const x = new Uint8Array(a.length + c.length);
        x.set(a);
        x.set(c, a.length);
        return x;
      }, new Uint8Array(0)),
    );
    const m = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n/.exec(text);
    if (m === null) return undefined;
    return { status: Number(m[1]), body: text.slice(m[0].length) };
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
    clearTimeout(connectTimer);
    try {
      conn?.close();
    } catch {
      // closed by the timer
    }
  }
}

/**
 * True when a readcache service answers on the socket in `dir`.
 *
 * @example
 * ```ts ignore
 * import { claudeServiceUp } from "@readcache/core/claude-code";
 * await claudeServiceUp("/home/me/.claude/readcache"); // false when none runs
 * ```
 */
export async function claudeServiceUp(dir: string, timeoutMs = 1000): Promise<boolean> {
  const r = await claudeServiceRequest(dir, "GET", "/health", "", timeoutMs);
  if (r?.status !== 200) return false;
  try {
    return JSON.parse(r.body)?.service === "readcache";
  } catch {
    return false;
  }
}

/**
 * Starts the service on the socket `hook.sock` in `options.dir`, a
 * directory only the user can open (made with mode 0700 when missing). A
 * socket file that nothing answers on is replaced; one a service answers on
 * is not ({@linkcode ClaudeServiceRunningError}). A directory another user
 * could reach is refused ({@linkcode ClaudePrivateDirError}). The service
 * stops by itself when its socket is removed or replaced (another service
 * took the directory over).
 *
 * @example
 * ```ts ignore
 * import { startClaudeCodeService } from "@readcache/core/claude-code";
 * const service = await startClaudeCodeService({ dir: "/home/me/.claude/readcache" });
 * ```
 */
export async function startClaudeCodeService(
  options: ClaudeCodeServiceOptions,
): Promise<ClaudeCodeService> {
  const socket = join(options.dir, CLAUDE_SOCKET_NAME);
  const tooLong = claudeSocketPathProblem(options.dir);
  if (tooLong !== undefined) throw new ClaudeServiceError(tooLong);
  ensurePrivateDir(options.dir);
  if (await claudeServiceUp(options.dir)) throw new ClaudeServiceRunningError(socket);
  try {
    if (lstatSync(socket).isSocket()) unlinkSync(socket);
  } catch {
    // none there
  }
  const host = options.host ?? new ClaudeCodeHost(options);
  const stats = { calls: 0, replaced: 0 };
  const server = Deno.serve(
    { transport: "unix", path: socket, onListen() {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      if (req.method === "GET" && path === "/health") {
        return Response.json({ service: "readcache", pid: Deno.pid, ...stats });
      }
      if (req.method !== "POST" || path !== "/hook") {
        return new Response("not found\n", { status: 404 });
      }
      stats.calls++;
      const body = await readBody(req).catch(() => undefined);
      const out = body === undefined
        ? {}
        : claudeSafeHookOutput(body, await host.handle(body).catch(() => ({})));
      if (out.hookSpecificOutput !== undefined) stats.replaced++;
      return Response.json(out);
    },
  );
  chmodSync(socket, 0o600);
  const ino = lstatSync(socket).ino;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    clearInterval(watch);
    await server.shutdown();
    try {
      if (lstatSync(socket).ino === ino) unlinkSync(socket);
    } catch {
      // gone already
    }
  };
  // the directory was taken over (or the socket removed): this one is not reachable any more
  const watch = setInterval(() => {
    let mine = false;
    try {
      mine = lstatSync(socket).ino === ino && privateDirProblem(options.dir) === undefined;
    } catch {
      mine = false;
    }
    if (!mine) close().catch(() => {});
  }, SOCKET_CHECK_MS);
  Deno.unrefTimer(watch);
  return {
    socket,
    stats,
    finished: server.finished,
    close,
  };
}
