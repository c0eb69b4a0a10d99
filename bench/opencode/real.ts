// The per-read bench (per_read.ts) with the real OpenCode binary: `opencode serve` on
// 127.0.0.1 (scripts/opencode/opencode_server.ts, the scripted mock model), the plugin as a user
// installs it (a copy of `src/` with `npm install`, or as committed in a baseline revision),
// loaded through a wrapper that times its `read` hook and the client calls inside it
// (`instrumentedPlugin` in scripts/opencode/opencode_server.ts), and a
// session of SIZE messages written into OpenCode's database (`message` and `part` rows, as
// OpenCode stores them) while the server is stopped. Then the model reads files it read before,
// two steps per prompt; each read's hook time, the time in `session.messages`/`session.get`
// (OpenCode's HTTP API, called back by the plugin) and the plugin's cache statistics are logged.
//
//   deno task bench:opencode [--sizes 100,1000,10000] [--reads 20] [--baseline REV]
//
// Each size runs OpenCode without the plugin (its own read, timed the same way) and with it, side
// by side: after each run's warm-up, the timed rounds take turns (paired measures: two runs one
// after the other on this machine differ by more than the plugin costs).
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { openCodeBinary, openCodeConfigHome } from "../../scripts/opencode/opencode_bin.ts";
import { startMockChat } from "../../scripts/opencode/mock_chat.ts";
import {
  installedPlugin,
  instrumentedPlugin,
  startOpenCode,
} from "../../scripts/opencode/opencode_server.ts";
import { generateHistory, makeProject, type PluginFactory } from "./history.ts";
import { seededRandom as random } from "../../scripts/seeded_random.ts";

/** One read as the wrapper logged it. */
export interface RealRead {
  session?: string;
  /** The plugin's `read` hook (0 without the plugin). */
  ms: number;
  /** The read as the model waits for it: OpenCode's read tool and both hooks. */
  totalMs?: number;
  fetchMs: number;
  mode?: string;
  stats?: { session: string; full: number; tail: number; fetched: number; replays: number }[];
  /**
   * Made after the first read while the plugin fetched the session in the background (a session
   * of more than 200 messages): not among the timed reads.
   */
  warmup?: boolean;
}

/** An id in OpenCode's form (`msg_` + 12 hex digits of time + 14 characters), ascending. */
function openCodeIds(start: number): (prefix: string) => string {
  let n = 0;
  const rnd = random(start % 100_000);
  const chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  return (prefix) => {
    const t = (start + n++) * 0x1000;
    const tail = Array.from({ length: 14 }, () => chars[Math.floor(rnd() * 62)]).join("");
    return `${prefix}_${t.toString(16).padStart(12, "0")}${tail}`;
  };
}

/** Writes the history into OpenCode's database as `message` and `part` rows of `sessionID`. */
function writeHistory(
  db: string,
  sessionID: string,
  history: ReturnType<typeof generateHistory>,
): void {
  const d = new DatabaseSync(db);
  try {
    const msg = d.prepare(
      "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)",
    );
    const part = d.prepare(
      "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) " +
        "VALUES (?, ?, ?, ?, ?, ?)",
    );
    d.exec("BEGIN");
    for (const m of history) {
      const { id, sessionID: _, ...info } = m.info;
      const created = (m.info.time as { created: number }).created;
      msg.run(id, sessionID, created, created, JSON.stringify(info));
      m.parts.forEach((p, i) => {
        const { id: pid, sessionID: _s, messageID: _m, ...data } = p;
        part.run(pid, id, sessionID, created + i, created + i, JSON.stringify(data));
      });
    }
    d.exec("COMMIT");
  } finally {
    d.close();
  }
}

/** A real OpenCode holding a session, ready for timed rounds of reads (see {@linkcode startReal}). */
export interface RealRun {
  /** One prompt: two reads of files read before, then the model's answer. */
  round(label: string): Promise<void>;
  /** Every read logged so far (the warm-up ones marked). */
  reads(): Promise<RealRead[]>;
  /** Stops the server and removes its directory. */
  close(): Promise<void>;
}

/**
 * Starts a real OpenCode holding a session of `size` messages, with the plugin of this working
 * tree (`rev` undefined) or as committed in `rev`, or with none (`plain`), and makes its first read
 * and (with the plugin) the reads until the plugin has fetched the session: the warm-up. Then
 * `round` runs timed reads; runs of several variants can take turns (paired measures).
 */
export async function startReal(
  plugin: PluginFactory,
  size: number,
  rev?: string,
  options: { plain?: boolean } = {},
): Promise<RealRun | { skip: string }> {
  const found = await openCodeBinary();
  if ("skip" in found) return { skip: found.skip };
  const root = await Deno.makeTempDir({ prefix: "readcache-bench-real-" });
  const cwd = join(root, "project");
  const home = join(root, "home");
  await Deno.mkdir(cwd, { recursive: true });
  await Deno.mkdir(home, { recursive: true });
  const project = await makeProject(plugin, 60, cwd);
  const checkout = join(root, "checkout");
  await installedPlugin(checkout, rev);
  const log = join(root, "reads.jsonl");
  const pluginUrl = await instrumentedPlugin(checkout, log, options);
  const mock = startMockChat();
  const start = () =>
    startOpenCode({
      bin: found.bin,
      cwd,
      home,
      configHome: openCodeConfigHome(),
      mock,
      pluginUrl,
    });
  const cleanup = async () => {
    await mock.close();
    await Deno.remove(root, { recursive: true }).catch(() => undefined);
  };
  let server: Awaited<ReturnType<typeof start>> | undefined;
  try {
    server = await start();
    const sid = (await server.api("POST", "/session", {}) as { id: string }).id;
    await server.stop();
    const first = Date.now() - (size * 6 + 600) * 1000;
    const history = generateHistory({
      messages: size,
      sessionID: sid,
      directory: cwd,
      files: project.files,
      captured: project.captured,
      id: openCodeIds(first),
      start: first,
    });
    writeHistory(join(home, ".local/share/opencode/opencode.db"), sid, history);
    server = await start();
    const up = server;
    const listed = await up.api("GET", `/session/${sid}/message?limit=1`) as unknown[];
    if (listed.length !== 1) throw new Error("the session's messages did not load");
    const rnd = random(size);
    const held = project.files.filter((f) => history.some((m) => JSON.stringify(m).includes(f)));
    const read = () => ({
      name: "read",
      args: { filePath: join(cwd, held[Math.floor(rnd() * held.length)]) },
    });
    // prompts run in the background (a slow one outlasts the server's idle timeout of a
    // waiting request); each is done when the session is idle again with its answer given
    const idle = async () => {
      for (;;) {
        await new Promise((r) => setTimeout(r, 200));
        const status = await up.api("GET", "/session/status") as Record<
          string,
          { type?: string }
        >;
        if (mock.queue.length === 0 && (status[sid]?.type ?? "idle") === "idle") return;
      }
    };
    const round = async (label: string) => {
      mock.queue.push({ calls: [read()] }, { calls: [read()] }, { text: "done" });
      await up.api("POST", `/session/${sid}/prompt_async`, {
        parts: [{ type: "text", text: `read ${label}` }],
      });
      await idle();
    };
    const logged = async () =>
      (await Deno.readTextFile(log)).trim().split("\n").map((l) => JSON.parse(l) as RealRead);
    await round("first");
    // with the plugin: reads go on until one finds the session fetched (its cache counts a
    // full fetch); those are the warm-up, the timed reads come after
    const fetchedOnce = (r: RealRead) => (r.stats?.find((s) => s.session === sid)?.full ?? 0) >= 1;
    for (let i = 0; !options.plain && i < 500; i++) {
      if (fetchedOnce((await logged()).at(-1)!)) break;
      await round(`warm-up ${i}`);
    }
    return {
      round,
      async reads() {
        const all = await logged();
        for (let i = 1; !options.plain && i < all.length; i++) {
          if (!fetchedOnce(all[i])) all[i].warmup = true;
        }
        return all;
      },
      async close() {
        await up.stop();
        await cleanup();
      },
    };
  } catch (e) {
    await server?.stop().catch(() => undefined);
    await cleanup();
    throw e;
  }
}
