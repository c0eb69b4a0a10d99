// End to end with the real Claude Code binary (2.1.332, pinned; installed from npm into
// .scratch/claude-code/ by scripts/claude/claude_bin.ts), offline: a fake Messages API on
// loopback drives whole sessions, Claude Code's PostToolUse hook for Read reaches readcache's
// loopback service, and the tests assert on the tool_result texts the fake API receives: what the
// model saw (SPEC §11.9).
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { claudeBinary } from "../../scripts/claude/claude_bin.ts";
import { type ClaudeSandbox, startClaudeSandbox } from "../../scripts/claude/claude_session.ts";
import { startClaudeCodeService } from "../../src/adapters/claude/service.ts";
import { MemoryObjectStore } from "../../src/core/object_store.ts";
import type { ClaudeCodeHost } from "../../src/adapters/claude/host.ts";

const found = await claudeBinary();
const ignore = "skip" in found;
if (ignore) console.warn(`claude e2e skipped: ${found.skip}`);
const bin = "bin" in found ? found.bin : "";
const FILE = "alpha\nbeta\ngamma\n";
const FULL = "1\talpha\n2\tbeta\n3\tgamma\n4\t";

/**
 * A sandbox with readcache's hooks and its service on the sandbox's service directory (`answer`
 * stands in for the host; `down` starts no service at all).
 */
async function withSession(
  fn: (s: ClaudeSandbox, read: (input?: Record<string, unknown>) => void) => Promise<void>,
  service: "up" | "down" | ((input: unknown) => unknown) = "up",
  options: { sameMessageIds?: boolean } = {},
): Promise<void> {
  const s = await startClaudeSandbox(bin, "readcache", options);
  const running = service === "down" ? undefined : await startClaudeCodeService({
    dir: s.serviceDir,
    storeFor: () => new MemoryObjectStore(),
    ...(typeof service === "function"
      ? {
        host: { handle: (i: unknown) => Promise.resolve(service(i)) } as unknown as ClaudeCodeHost,
      }
      : {}),
  });
  try {
    await Deno.writeTextFile(join(s.work, "a.txt"), FILE);
    const read = (input: Record<string, unknown> = {}) =>
      s.api.queue.push({
        calls: [{ name: "Read", input: { file_path: join(s.work, "a.txt"), ...input } }],
      });
    await fn(s, read);
  } finally {
    await s.close();
    await running?.close();
  }
}

/** The tool results of the calls made so far, in call order. */
function results(s: ClaudeSandbox): string[] {
  const by = s.toolResults();
  return s.api.calls.map((c) => by.get(c.id) ?? "(no result)");
}

async function ok(s: ClaudeSandbox, args: string[]): Promise<void> {
  const r = await s.run(args);
  assert.equal(r.code, 0, `claude ${args.join(" ")} failed:\n${r.stderr}\n${r.stdout}`);
}

Deno.test({
  name: "claude e2e: a re-read is a marker at line 0; after a bash change the file, after the " +
    "model's own edit a marker",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await withSession(async (s, read) => {
      read();
      read();
      read({ offset: 2, limit: 1 });
      s.api.queue.push({ calls: [{ name: "Bash", input: { command: "echo delta >> a.txt" } }] });
      read();
      s.api.queue.push({
        calls: [{
          name: "Edit",
          input: { file_path: join(s.work, "a.txt"), old_string: "beta", new_string: "BETA" },
        }],
      });
      read();
      read();
      s.api.queue.push({ text: "done" });
      await ok(s, ["-p", "go"]);
      const r = results(s);
      assert.equal(r[0], FULL);
      assert.equal(r[1], "0\t[readcache: unchanged, 4 lines]");
      assert.equal(r[2], "0\t[readcache: unchanged in lines 2-2 of 4]");
      // after a command that may change any file: the whole file again
      assert.equal(r[4], "1\talpha\n2\tbeta\n3\tgamma\n4\tdelta\n5\t");
      // after its own edit the model holds what it believes it wrote (SPEC §5.9)
      assert.equal(r[6], "0\t[readcache: unchanged, 5 lines]");
      assert.equal(r[7], "0\t[readcache: unchanged, 5 lines]");
    });
  },
});

Deno.test({
  name: "claude e2e: a command that only reads, or changes another file, keeps the cache; one " +
    "that changes the file is seen",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await withSession(async (s, read) => {
      read();
      s.api.queue.push({ calls: [{ name: "Bash", input: { command: "cat a.txt" } }] });
      s.api.queue.push({ calls: [{ name: "Grep", input: { pattern: "beta", path: s.work } }] });
      s.api.queue.push({ calls: [{ name: "Bash", input: { command: "echo other > b.txt" } }] });
      read();
      s.api.queue.push({ calls: [{ name: "Bash", input: { command: "echo delta >> a.txt" } }] });
      read();
      s.api.queue.push({ text: "done" });
      await ok(s, ["-p", "go"]);
      const r = results(s);
      assert.equal(r[0], FULL);
      assert.equal(r[4], "0\t[readcache: unchanged, 4 lines]");
      assert.ok(!r[6].includes("[readcache: unchanged"), r[6]);
      assert.ok(r[6].includes("delta"), r[6]);
    });
  },
});

Deno.test({
  name: "claude e2e: what Grep showed is the model's newest view of those lines",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await withSession(async (s, read) => {
      const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1} of the file`);
      await Deno.writeTextFile(join(s.work, "a.txt"), lines.join("\n") + "\n");
      read();
      await ok(s, ["-p", "go"]);
      lines[29] = "line 30 CHANGED";
      await Deno.writeTextFile(join(s.work, "a.txt"), lines.join("\n") + "\n");
      s.api.queue.push({
        calls: [{
          name: "Grep",
          input: { pattern: "CHANGED", output_mode: "content", "-n": true },
        }],
      });
      read({ offset: 30, limit: 1 });
      await ok(s, ["--continue", "-p", "again"]);
      const r = results(s);
      assert.equal(r[1], "a.txt:30:line 30 CHANGED", "the model saw the new line through Grep");
      // the line Grep showed is held as the file has it now
      assert.equal(r[2], "0\t[readcache: unchanged in lines 30-30 of 41]");
    });
  },
});

Deno.test({
  name: "claude e2e: a command that prints a file and puts it back leaves no marker",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await withSession(async (s, read) => {
      read();
      s.api.queue.push({
        calls: [{
          name: "Bash",
          input: { command: "cp a.txt a.keep && echo B > a.txt && cat a.txt && cp a.keep a.txt" },
        }],
      });
      read();
      s.api.queue.push({ text: "done" });
      await ok(s, ["-p", "go"]);
      const r = results(s);
      assert.equal(r[1], "B", "the model saw B");
      assert.equal(r[2], FULL, "the file is A again: the model must be shown it");
    });
  },
});

Deno.test({
  name: "claude e2e: a change by another process is a diff, numbered up to 0",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await withSession(async (s, read) => {
      const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1} of the file`);
      await Deno.writeTextFile(join(s.work, "a.txt"), lines.join("\n") + "\n");
      read();
      await ok(s, ["-p", "go"]);
      lines[19] = "line twenty, changed";
      await Deno.writeTextFile(join(s.work, "a.txt"), lines.join("\n") + "\n");
      read();
      await ok(s, ["--continue", "-p", "again"]);
      const shown = results(s)[1].split("\n");
      assert.match(shown[0], /^-\d+\t\[readcache: 2 lines changed of 31\]$/);
      assert.equal(shown.at(-1)!.split("\t")[0], "0", "the last line is numbered 0");
      assert.ok(
        shown.every((l) => Number(l.split("\t")[0]) <= 0),
        "no line numbered as the file's",
      );
      assert.ok(shown.some((l) => l.endsWith("\t+line twenty, changed")));
      assert.ok(shown.some((l) => l.endsWith("\t-line 20 of the file")));
    });
  },
});

/** read, read, /compact, read, read, a fork, --resume: what each read shows. */
async function compactAndResume(sameMessageIds: boolean): Promise<void> {
  await withSession(
    async (s, read) => {
      read();
      read();
      await ok(s, ["-p", "go"]);
      await ok(s, ["--continue", "-p", "/compact"]);
      read();
      await ok(s, ["--continue", "-p", "after compact"]);
      read();
      await ok(s, ["--continue", "-p", "again"]);
      read();
      await ok(s, ["--continue", "--fork-session", "-p", "fork"]);
      const projects = join(s.configDir, "projects");
      const sessions: string[] = [];
      for await (const d of Deno.readDir(projects)) {
        for await (const f of Deno.readDir(join(projects, d.name))) {
          if (f.name.endsWith(".jsonl")) sessions.push(f.name.slice(0, -".jsonl".length));
        }
      }
      assert.equal(sessions.length, 2, "the fork wrote a session file of its own");
      read();
      // the original session (the fork copied its rows from the boundary on, not its first call)
      const first = sessions.find((id) =>
        Deno.readTextFileSync(
          join(projects, [...Deno.readDirSync(projects)][0].name, `${id}.jsonl`),
        )
          .includes(`"${s.api.calls[0].id}"`)
      )!;
      await ok(s, ["--resume", first, "-p", "resumed"]);
      const r = results(s);
      assert.equal(r[0], FULL);
      assert.equal(r[1], "0\t[readcache: unchanged, 4 lines]");
      assert.equal(r[2], FULL, "the first read after /compact shows the file");
      assert.equal(r[3], "0\t[readcache: unchanged, 4 lines]");
      assert.equal(r[4], "0\t[readcache: unchanged, 4 lines]", "a fork holds what it copied");
      assert.equal(r[5], "0\t[readcache: unchanged, 4 lines]", "--resume holds the branch");
    },
    "up",
    { sameMessageIds },
  );
}

Deno.test({
  name: "claude e2e: after /compact the next read is the file; --resume and --fork-session " +
    "keep what the branch holds",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () => compactAndResume(false),
});

Deno.test({
  name: "claude e2e: the same when every response has one API id (before and after /compact, " +
    "across --continue and --resume)",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () => compactAndResume(true),
});

Deno.test({
  name: "claude e2e: a subagent's first read of a file the main agent holds is the file",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await withSession(async (s, read) => {
      read();
      s.api.queue.push({
        calls: [{
          name: "Agent",
          input: {
            description: "look",
            prompt: "SUBTASK-7 read a.txt",
            subagent_type: "general-purpose",
            run_in_background: false,
          },
        }],
      });
      s.api.agents.set("SUBTASK-7", [
        { calls: [{ name: "Read", input: { file_path: join(s.work, "a.txt") } }] },
        { calls: [{ name: "Read", input: { file_path: join(s.work, "a.txt") } }] },
        { text: "sub done" },
      ]);
      read();
      s.api.queue.push({ text: "done" });
      await ok(s, ["-p", "go"]);
      // let a background agent finish
      for (let i = 0; i < 50 && s.api.calls.filter((c) => c.name === "Read").length < 4; i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const by = s.toolResults();
      const reads = s.api.calls.filter((c) => c.name === "Read").map((c) => by.get(c.id));
      assert.equal(reads.length, 4, JSON.stringify(reads));
      // main: the file; the subagent: the file (it never saw it), then a marker; main again: the
      // file (the agent may have changed any file)
      assert.deepEqual(reads, [FULL, FULL, "0\t[readcache: unchanged, 4 lines]", FULL]);
      // readcache savings counts the subagent's transcript within its session, its marker too
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--quiet", "cli/main.ts", "savings", "--json", "--claude"],
        env: { CLAUDE_CONFIG_DIR: s.configDir },
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      const sessions = JSON.parse(new TextDecoder().decode(out.stdout)).sessions;
      assert.equal(
        sessions.length,
        1,
        JSON.stringify(sessions.map((x: { file: string }) => x.file)),
      );
      assert.equal(sessions[0].withReadcache, true);
      assert.equal(sessions[0].reads, 4);
      assert.equal(sessions[0].byMode.unchanged, 1);
      const sent = reads.reduce((n, r) => n + new TextEncoder().encode(r!).length, 0);
      assert.equal(sessions[0].readcacheBytes, sent, "what the API got");
    });
  },
});

Deno.test({
  name: "claude e2e: a service that is down leaves Claude Code's own output",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await withSession(async (s, read) => {
      read();
      read();
      await ok(s, ["-p", "go"]);
      assert.deepEqual(results(s), [FULL, FULL]);
    }, "down");
  },
});

Deno.test({
  name: "claude e2e: Claude Code applies a replacement only in Read's own shape",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    // a service answering the first Read with a plain string, the second in Read's shape
    let n = 0;
    const answer = (input: unknown) => {
      const body = input as { hook_event_name: string; tool_response: { file: unknown } };
      if (body.hook_event_name !== "PostToolUse") return {};
      n++;
      return {
        hookSpecificOutput: {
          hookEventName: "PostToolUse",
          updatedToolOutput: n === 1 ? "[readcache: unchanged]" : {
            type: "text",
            file: {
              ...body.tool_response.file as object,
              content: "X",
              numLines: 1,
              startLine: 0,
            },
          },
        },
      };
    };
    await withSession(async (s, read) => {
      read();
      read();
      await ok(s, ["-p", "go"]);
      assert.deepEqual(results(s), [FULL, "0\tX"]);
    }, answer);
  },
});

Deno.test({
  name: "claude e2e: `readcache claude install` is the one step: the session starts the " +
    "service and its reads are cached; uninstall stops it",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const s = await startClaudeSandbox(bin);
    const cli = (...args: string[]) =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--quiet", "cli/main.ts", "claude", ...args],
        env: { CLAUDE_CONFIG_DIR: s.configDir },
        stdout: "piped",
        stderr: "piped",
      }).output();
    try {
      assert.equal((await cli("install")).code, 0);
      await Deno.writeTextFile(join(s.work, "a.txt"), FILE);
      for (let i = 0; i < 2; i++) {
        s.api.queue.push({
          calls: [{ name: "Read", input: { file_path: join(s.work, "a.txt") } }],
        });
      }
      // the sandbox passes its own (empty) settings too; the user settings hold the hooks
      await ok(s, ["-p", "go"]);
      assert.deepEqual(results(s), [FULL, "0\t[readcache: unchanged, 4 lines]"]);
      assert.ok(
        (await Deno.stat(join(s.work, ".claude", "readcache"))).isDirectory,
        "bases are kept in the project's .claude/readcache",
      );
      const out = await cli("uninstall");
      assert.match(new TextDecoder().decode(out.stdout), /the service is stopped/);
      assert.ok(!existsSync(join(s.configDir, "settings.json")), "no settings file left behind");
      assert.ok(!existsSync(s.serviceDir), "the service's directory is gone");
    } finally {
      await s.close();
    }
  },
});

Deno.test({
  name: "claude e2e: readcache savings replays a real transcript recorded without readcache",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const s = await startClaudeSandbox(bin);
    try {
      const big = Array.from({ length: 60 }, (_, k) => `line ${k + 1} of a file worth caching`);
      await Deno.writeTextFile(join(s.work, "a.txt"), big.join("\n") + "\n");
      const read = () =>
        s.api.queue.push({
          calls: [{ name: "Read", input: { file_path: join(s.work, "a.txt") } }],
        });
      read();
      read();
      s.api.queue.push({ calls: [{ name: "Bash", input: { command: "cat a.txt" } }] });
      read();
      s.api.queue.push({ text: "done" });
      await ok(s, ["-p", "go"]);
      const projects = join(s.configDir, "projects");
      const dir = join(projects, [...Deno.readDirSync(projects)][0].name);
      const transcript = join(dir, [...Deno.readDirSync(dir)].find((f) => f.isFile)!.name);
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--quiet", "cli/main.ts", "savings", "--json", transcript],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const r = JSON.parse(new TextDecoder().decode(out.stdout));
      const session = r.sessions[0];
      assert.equal(session.host, "claude");
      assert.equal(session.estimate, "transcript");
      assert.equal(session.reads, 3);
      assert.equal(session.byMode.unchanged, 2, JSON.stringify(session.byMode));
      assert.ok(session.readcacheBytes < session.piBytes);
    } finally {
      await s.close();
    }
  },
});

/**
 * One scripted session: files, reads and re-reads, an edit, a sed, a cat, a Grep, a subagent,
 * /compact, --resume.
 */
async function recordScripted(withCache: boolean) {
  const s = await startClaudeSandbox(bin, withCache ? "readcache" : undefined);
  const service = withCache
    ? await startClaudeCodeService({ dir: s.serviceDir, storeFor: () => new MemoryObjectStore() })
    : undefined;
  try {
    const lines = (n: number, tag: string) =>
      Array.from({ length: n }, (_, i) => `${tag} line ${i + 1}: some code here`).join("\n") + "\n";
    await Deno.writeTextFile(join(s.work, "a.txt"), lines(60, "a"));
    await Deno.writeTextFile(join(s.work, "b.txt"), lines(40, "b"));
    await Deno.writeTextFile(join(s.work, "c.txt"), lines(30, "c"));
    const read = (f: string, extra: Record<string, unknown> = {}) => ({
      calls: [{ name: "Read", input: { file_path: join(s.work, f), ...extra } }],
    });
    const edit = {
      calls: [{
        name: "Edit",
        input: {
          file_path: join(s.work, "a.txt"),
          old_string: "a line 10: some code here",
          new_string: "a line 10: changed",
        },
      }],
    };
    const sed = {
      calls: [{ name: "Bash", input: { command: "sed -i 's/b line 5:/b 5:/' b.txt" } }],
    };
    const cat = { calls: [{ name: "Bash", input: { command: "cat c.txt" } }] };
    const grep = {
      calls: [{
        name: "Grep",
        input: { pattern: "line 2[0-9]:", output_mode: "content", "-n": true },
      }],
    };
    const agent = {
      calls: [{
        name: "Agent",
        input: {
          description: "look",
          prompt: "SUBTASK-9 read c.txt",
          subagent_type: "general-purpose",
          run_in_background: false,
        },
      }],
    };
    s.api.agents.set("SUBTASK-9", [read("c.txt"), { text: "sub done" }]);
    s.api.queue.push(
      read("a.txt"),
      read("b.txt"),
      read("a.txt"),
      edit,
      read("a.txt"),
      sed,
      read("b.txt"),
      cat,
      read("c.txt"),
      grep,
      read("a.txt", { offset: 20, limit: 10 }),
      read("b.txt"),
      agent,
      read("c.txt"),
      read("c.txt"),
      { text: "done" },
    );
    await ok(s, ["-p", "go"]);
    await ok(s, ["--continue", "-p", "/compact"]);
    s.api.queue.push(read("a.txt"), read("a.txt"), { text: "done" });
    await ok(s, ["--continue", "-p", "after"]);
    const projects = join(s.configDir, "projects");
    const dir = join(projects, [...Deno.readDirSync(projects)][0].name);
    const file = [...Deno.readDirSync(dir)].find((f) => f.name.endsWith(".jsonl"))!.name;
    s.api.queue.push(read("b.txt"), read("b.txt", { offset: 5, limit: 10 }), { text: "done" });
    await ok(s, ["--resume", file.slice(0, -".jsonl".length), "-p", "resumed"]);
    // the session as `readcache savings` finds it: its transcript and its subagents' beside it
    const copy = await Deno.makeTempDir();
    const transcript = join(copy, file);
    await Deno.copyFile(join(dir, file), transcript);
    const subagents = join(dir, file.slice(0, -".jsonl".length), "subagents");
    await Deno.mkdir(join(copy, file.slice(0, -".jsonl".length), "subagents"), { recursive: true });
    for (const f of Deno.readDirSync(subagents)) {
      await Deno.copyFile(
        join(subagents, f.name),
        join(copy, file.slice(0, -".jsonl".length), "subagents", f.name),
      );
    }
    const by = s.toolResults();
    const sent = s.api.calls.filter((c) => c.name === "Read")
      .reduce((n, c) => n + new TextEncoder().encode(by.get(c.id) ?? "").length, 0);
    return { transcript, copy, sent };
  } finally {
    await s.close();
    await service?.close();
  }
}

Deno.test({
  name: "claude e2e: readcache savings' estimate for a session recorded without readcache is " +
    "what the host sends when it runs (within 1%), what it cannot know not judged",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const truth = await recordScripted(true);
    const input = await recordScripted(false);
    try {
      const figures = async (f: string) => {
        const out = await new Deno.Command(Deno.execPath(), {
          args: ["run", "-A", "--quiet", "cli/main.ts", "savings", "--json", f],
          stdout: "piped",
          stderr: "piped",
        }).output();
        assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
        return JSON.parse(new TextDecoder().decode(out.stdout)).sessions[0];
      };
      const measured = await figures(truth.transcript);
      const estimated = await figures(input.transcript);
      assert.equal(measured.readcacheBytes, truth.sent, "with readcache: what the API got");
      assert.equal(estimated.estimate, "transcript");
      assert.equal(estimated.reads, measured.reads);
      const off = Math.abs(estimated.readcacheBytes - truth.sent) / truth.sent;
      console.log(
        `estimate ${estimated.readcacheBytes} bytes, the host sent ${truth.sent} ` +
          `(${(off * 100).toFixed(2)}% apart); Claude Code alone ${estimated.piBytes}; ` +
          `${estimated.safety.checked} short answers checked, ${estimated.safety.violations} wrong`,
      );
      assert.ok(
        off <= 0.01,
        `estimate ${estimated.readcacheBytes} against ${truth.sent} sent (${
          (off * 100).toFixed(1)
        }%)`,
      );
      // the read after `sed -i` the replay cannot apply: not judged, with its reason; the
      // subagent's read too (its transcript keeps no results to rebuild files from)
      assert.equal(estimated.notJudged?.unapplied?.reads, 1, JSON.stringify(estimated.notJudged));
      assert.equal(estimated.notJudged?.subagent?.reads, 1, JSON.stringify(estimated.notJudged));
      // every short answer checked against what the transcript showed the model
      assert.ok(estimated.safety.checked >= 5, JSON.stringify(estimated.safety));
      assert.equal(estimated.safety.violations, 0);
    } finally {
      await Deno.remove(truth.copy, { recursive: true });
      await Deno.remove(input.copy, { recursive: true });
    }
  },
});
