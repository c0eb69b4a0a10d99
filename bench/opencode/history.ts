// A long OpenCode session for the per-read bench (per_read.ts): project files, and a history of
// messages shaped like OpenCode 1.18.33 stores them (tests/fixtures/opencode/export.json is a real
// one): turns of a user prompt, 2-6 assistant steps with 1-3 tool calls each (read, bash, grep,
// glob, edit, write) and a final answer, with OpenCode's outputs and metadata (a read's output is
// OpenCode's rendering of the file, its metadata the preview, the display copy of the text and the
// plugin's `readcache` record; a shell command's output is repeated in its metadata; an edit's
// metadata holds its diff twice), `step-start` / `step-finish` parts and the token counts. The
// reads' `readcache` records are what the plugin itself returned for these files (`captured`),
// so replaying the history is replaying real records.
import { join } from "node:path";
import { OpenCodeSessionStore } from "../../scripts/opencode/opencode_session_model.ts";
import { seededRandom as random } from "../../scripts/seeded_random.ts";
import { renderOpenCodeRead } from "../../src/adapters/opencode/baseline.ts";
import type { createReadcachePlugin, ToolAfterOutput } from "../../src/adapters/opencode/plugin.ts";

/** The plugin's factory (this working tree's, or a baseline revision's). */
export type PluginFactory = typeof createReadcachePlugin;

/** A message as `GET /session/{id}/message` returns it. */
export interface HistoryMessage {
  info: Record<string, unknown> & { id: string; sessionID: string; role: string };
  parts: (Record<string, unknown> & { id: string; type: string })[];
}

/** What the plugin returned for a whole-file read of a file: first read and a repeat. */
export interface CapturedRead {
  full: { output: string; metadata: Record<string, unknown> };
  unchanged: { output: string; metadata: Record<string, unknown> };
}

const WORDS = ("const value result handler request response session message cache store read " +
  "write config options buffer stream parse render update delete create index table user " +
  "error status return await async function import export default module").split(" ");

function sentence(rnd: () => number, words: number): string {
  return Array.from({ length: words }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(" ");
}

/** Writes `count` source files (30-250 lines of code-like text) under `dir`; returns their names. */
export function writeProject(dir: string, count: number, seed = 1): string[] {
  const rnd = random(seed);
  const names: string[] = [];
  Deno.mkdirSync(join(dir, "src"), { recursive: true });
  for (let i = 0; i < count; i++) {
    const name = `src/module_${String(i).padStart(3, "0")}.ts`;
    const lines = 30 + Math.floor(rnd() * 220);
    const text = Array.from({ length: lines }, (_, k) => {
      const indent = "  ".repeat(Math.floor(rnd() * 3));
      return k % 9 === 0
        ? `export function ${WORDS[k % WORDS.length]}${i}_${k}(input: string): string {`
        : `${indent}const ${WORDS[(k * 7) % WORDS.length]}${k} = ${sentence(rnd, 3 + (k % 4))};`;
    }).join("\n") + "\n";
    Deno.writeTextFileSync(join(dir, name), text);
    names.push(name);
  }
  return names;
}

/** OpenCode's metadata of a whole-file read of `text` (without the plugin's record). */
export function readMetadata(path: string, text: string): Record<string, unknown> {
  const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
  return {
    preview: lines.slice(0, 20).join("\n"),
    truncated: false,
    loaded: [],
    display: {
      type: "file",
      path,
      text: lines.join("\n"),
      lineStart: 1,
      lineEnd: lines.length,
      totalLines: lines.length,
      truncated: false,
    },
  };
}

/** Options of {@linkcode generateHistory}. */
export interface HistoryOptions {
  /** Messages to generate (the last turn is cut there). */
  messages: number;
  /** Session id the messages carry. */
  sessionID: string;
  /** The project directory. */
  directory: string;
  /** Its files (names relative to `directory`). */
  files: string[];
  /** What the plugin returned for reads of each file (by name). */
  captured: Map<string, CapturedRead>;
  /** A fresh id, ascending (`msg`, `prt`, `call`). */
  id(prefix: string): string;
  /** Creation time of the first message (ms); one second per message after it. */
  start: number;
  /** Random seed. */
  seed?: number;
}

const TOKENS = {
  total: 4200,
  input: 4000,
  output: 200,
  reasoning: 0,
  cache: { write: 0, read: 0 },
};

/** Generates the history (see the module documentation). */
export function generateHistory(o: HistoryOptions): HistoryMessage[] {
  const rnd = random(o.seed ?? 7);
  const out: HistoryMessage[] = [];
  let clock = o.start;
  const tick = () => (clock += 1000);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  /** Files the model read and did not change since (its next read is answered "unchanged"). */
  const held = new Set<string>();
  let calls = 0;

  const part = (m: HistoryMessage, p: Record<string, unknown> & { type: string }) => {
    m.parts.push({ ...p, id: o.id("prt"), sessionID: o.sessionID, messageID: m.info.id });
  };
  const tool = (m: HistoryMessage): void => {
    // providers' call ids are unique strings (OpenAI: `call_` and 24 characters)
    const callID = `call_${(++calls).toString(36)}${
      Array.from(
        { length: 16 },
        () => "abcdefghijklmnopqrstuvwxyz0123456789"[Math.floor(rnd() * 36)],
      )
        .join("")
    }`;
    const t0 = tick();
    const time = { start: t0, end: t0 + 40 };
    const r = rnd();
    const file = pick(o.files);
    const path = join(o.directory, file);
    const done = (
      name: string,
      input: Record<string, unknown>,
      output: string,
      metadata: Record<string, unknown>,
      title = "",
    ) =>
      part(m, {
        type: "tool",
        tool: name,
        callID,
        state: { status: "completed", input, output, metadata, title, time },
      });
    if (r < 0.5) {
      const c = o.captured.get(file)!;
      const got = held.has(file) ? c.unchanged : c.full;
      held.add(file);
      return done("read", { filePath: path }, got.output, structuredClone(got.metadata), file);
    }
    const record = { readcache: { v: 1, kind: "tool", changed: [] } };
    if (r < 0.65) {
      const output = Array.from(
        { length: 20 + Math.floor(rnd() * 60) },
        (_, i) => `  ${i % 5 === 0 ? "PASS" : "ok"} ${sentence(rnd, 6)} (${i} ms)`,
      ).join("\n");
      const description = "Run the tests";
      return done("bash", { command: "npm test", description }, output, {
        output,
        exit: 0,
        description,
        truncated: false,
        ...record,
      }, description);
    }
    if (r < 0.75) {
      const hits = 3 + Math.floor(rnd() * 15);
      const output = `Found ${hits} matches\n${path}:\n` +
        Array.from({ length: hits }, (_, i) => `  Line ${i * 7 + 1}: ${sentence(rnd, 8)}`).join(
          "\n",
        );
      return done("grep", { pattern: pick(WORDS), path: "src" }, output, {
        matches: hits,
        truncated: false,
        ...record,
      }, pick(WORDS));
    }
    if (r < 0.8) {
      const list = Array.from({ length: 25 }, () => join(o.directory, pick(o.files)));
      return done("glob", { pattern: "src/**/*.ts" }, list.join("\n"), {
        count: list.length,
        truncated: false,
        ...record,
      }, "src");
    }
    if (r < 0.95) {
      held.delete(file);
      const oldString = sentence(rnd, 5);
      const newString = sentence(rnd, 6);
      const diff =
        `Index: ${path}\n${"=".repeat(67)}\n--- ${path}\n+++ ${path}\n@@ -10,9 +10,9 @@\n` +
        Array.from(
          { length: 9 },
          (_, i) => (i === 4 ? `-${oldString}\n+${newString}` : ` ${sentence(rnd, 6)}`),
        )
          .join("\n") +
        "\n";
      return done("edit", { filePath: path, oldString, newString }, "Edit applied successfully.", {
        diagnostics: {},
        diff,
        filediff: { file: path, patch: diff, additions: 1, deletions: 1 },
        truncated: false,
      }, file);
    }
    const target = join(o.directory, `src/generated_${calls}.ts`);
    const content = Array.from({ length: 40 }, () => sentence(rnd, 7)).join("\n") + "\n";
    return done("write", { filePath: target, content }, "Wrote file successfully.", {
      diagnostics: {},
      filepath: target,
      exists: false,
      truncated: false,
    }, target);
  };

  while (out.length < o.messages) {
    const user: HistoryMessage = {
      info: {
        id: o.id("msg"),
        sessionID: o.sessionID,
        role: "user",
        time: { created: tick() },
        agent: "build",
        model: { providerID: "mock", modelID: "mock-model" },
        summary: { diffs: [] },
      },
      parts: [],
    };
    part(user, { type: "text", text: sentence(rnd, 30) });
    out.push(user);
    const steps = 2 + Math.floor(rnd() * 5);
    for (let s = 0; s <= steps && out.length < o.messages; s++) {
      const last = s === steps;
      const created = tick();
      const m: HistoryMessage = {
        info: {
          id: o.id("msg"),
          sessionID: o.sessionID,
          role: "assistant",
          parentID: user.info.id,
          mode: "build",
          agent: "build",
          path: { cwd: o.directory, root: o.directory },
          cost: 0,
          tokens: TOKENS,
          modelID: "mock-model",
          providerID: "mock",
          time: { created, completed: created + 900 },
          finish: last ? "stop" : "tool-calls",
        },
        parts: [],
      };
      part(m, { type: "step-start" });
      if (last || rnd() < 0.4) part(m, { type: "text", text: sentence(rnd, last ? 80 : 25) });
      if (!last) { for (let k = 1 + Math.floor(rnd() * 3); k > 0; k--) tool(m); }
      part(m, { type: "step-finish", reason: m.info.finish, tokens: TOKENS, cost: 0 });
      out.push(m);
    }
  }
  return out;
}

/** OpenCode's output of a whole-file read (its own `read` tool). */
export function openCodeReadOutput(directory: string, file: string): string {
  const path = join(directory, file);
  return renderOpenCodeRead({ path, text: Deno.readTextFileSync(path) })!.text;
}

/** A project: its files and what the plugin returned for reads of each. */
export interface Project {
  dir: string;
  files: string[];
  captured: Map<string, CapturedRead>;
}

/**
 * Writes the project's files and captures, with `plugin` on a scratch session, its answers to a
 * first and a repeated read of each (the bases land in the project's store, as in a real session).
 */
export async function makeProject(
  plugin: PluginFactory,
  fileCount = 60,
  at?: string,
): Promise<Project> {
  const dir = at ?? await Deno.makeTempDir({ prefix: "readcache-bench-opencode-" });
  const files = writeProject(dir, fileCount);
  const store = new OpenCodeSessionStore(dir);
  const hooks = await plugin({})({ client: store.client, directory: dir });
  const session = store.createSession();
  store.userMessage(session.id, "read them all");
  const captured = new Map<string, CapturedRead>();
  const read = async (file: string) => {
    const m = store.assistantMessage(session.id);
    const args = { filePath: join(dir, file) };
    const part = store.toolPart(m.info.id, "read", args);
    store.run(part);
    const out: ToolAfterOutput = {
      title: file,
      output: openCodeReadOutput(dir, file),
      metadata: readMetadata(join(dir, file), Deno.readTextFileSync(join(dir, file))),
    };
    await hooks["tool.execute.after"]!(
      { tool: "read", sessionID: session.id, callID: part.callID, args },
      out,
    );
    store.complete(part, out.output, out.metadata, out.title);
    return { output: out.output, metadata: out.metadata as Record<string, unknown> };
  };
  for (const f of files) {
    const full = await read(f);
    const unchanged = await read(f);
    if ((unchanged.metadata.readcache as { mode?: string } | undefined)?.mode !== "unchanged") {
      throw new Error(`capture: the second read of ${f} was not answered "unchanged"`);
    }
    captured.set(f, { full, unchanged });
  }
  return { dir, files, captured };
}
