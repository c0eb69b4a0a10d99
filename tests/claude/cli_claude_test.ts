// `readcache claude install|uninstall` and the service's door (SPEC §11.9): one step in, one step
// out, the user's settings back byte for byte; a socket only the user can reach, and answers that
// never grant, block or rewrite a call.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  claudeServiceRequest,
  claudeServiceUp,
  startClaudeCodeService,
} from "../../src/adapters/claude/service.ts";
import { ClaudeCodeHost } from "../../src/adapters/claude/host.ts";
import { MemoryObjectStore } from "../../src/core/object_store.ts";

async function cli(configDir: string, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", "cli/main.ts", "claude", ...args],
    env: { CLAUDE_CONFIG_DIR: configDir, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("claude install adds command hooks that reach a private socket; uninstall restores the settings byte for byte", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const mine = { type: "command", command: "echo mine" };
    // the user's own style: four spaces, no final line break, mode 644
    const before = JSON.stringify(
      { model: "x", hooks: { PostToolUse: [{ matcher: "Bash", hooks: [mine] }] } },
      null,
      4,
    );
    const settingsPath = join(dir, "settings.json");
    await Deno.writeTextFile(settingsPath, before);
    await Deno.chmod(settingsPath, 0o644);
    const r = await cli(dir, "install");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /readcache is installed for Claude Code/);
    const serviceDir = join(dir, "readcache");
    assert.equal((await Deno.stat(serviceDir)).mode! & 0o777, 0o700);
    assert.ok(!existsSync(join(serviceDir, "service.json")), "no port, no secret");
    const settings = JSON.parse(await Deno.readTextFile(settingsPath));
    assert.equal(settings.model, "x");
    assert.deepEqual(settings.hooks.PostToolUse[0], { matcher: "Bash", hooks: [mine] });
    const post = settings.hooks.PostToolUse[1];
    assert.equal(post.hooks[0].type, "command");
    assert.ok(post.hooks[0].args.includes(serviceDir), JSON.stringify(post));
    assert.ok(!JSON.stringify(settings).includes("http"), "no hook reaches a TCP port");
    // each event only for the tools that need it (Claude Code reads a matcher as a regex)
    const gets = (m: string) =>
      ["Read", "Edit", "Write", "Bash", "Grep", "Glob", "Agent", "mcp__x__y"].filter((t) =>
        new RegExp(m).test(t)
      );
    assert.deepEqual(gets(post.matcher), ["Read", "Edit", "Bash", "Grep", "Agent", "mcp__x__y"]);
    assert.deepEqual(gets(settings.hooks.PreToolUse[0].matcher), ["Bash", "Agent", "mcp__x__y"]);
    const start = settings.hooks.SessionStart[0].hooks[0];
    assert.ok(start.args.includes("--detach") && start.args.includes(serviceDir));
    assert.ok(existsSync(start.args.find((a: string) => a.endsWith("service.js"))));
    assert.ok(!start.command.includes("/_npx/"), "Deno outside npx's cache: " + start.command);
    assert.equal((await Deno.stat(settingsPath)).mode! & 0o777, 0o644, "mode kept");
    assert.match(await Deno.readTextFile(settingsPath), /^\{\n {4}"model"/, "indentation kept");
    // again: no second copy of the hooks
    assert.equal((await cli(dir, "install")).code, 0);
    const again = JSON.parse(await Deno.readTextFile(settingsPath));
    assert.equal(again.hooks.PostToolUse.length, 2);
    assert.equal(again.hooks.SessionStart.length, 1);

    const u = await cli(dir, "uninstall");
    assert.equal(u.code, 0, u.stderr);
    assert.match(u.stdout, /back as it was before install/);
    assert.equal(await Deno.readTextFile(settingsPath), before, "byte for byte");
    assert.equal((await Deno.stat(settingsPath)).mode! & 0o777, 0o644);
    assert.ok(!existsSync(serviceDir), "its files are gone");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("claude uninstall: no file made where there was none, only its hooks out of a changed file, a missing --settings refused", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const settingsPath = join(dir, "settings.json");
    assert.equal((await cli(dir, "install")).code, 0);
    assert.equal((await cli(dir, "uninstall")).code, 0);
    assert.ok(!existsSync(settingsPath), "install made it, uninstall removes it");

    assert.equal((await cli(dir, "install")).code, 0);
    // the user changed the file since: only readcache's hooks go, no empty `hooks` stays
    const changed = JSON.parse(await Deno.readTextFile(settingsPath));
    changed.model = "y";
    await Deno.writeTextFile(settingsPath, JSON.stringify(changed, null, 2) + "\n");
    const u = await cli(dir, "uninstall", "--json");
    assert.equal(u.code, 0, u.stderr);
    assert.equal(JSON.parse(u.stdout).settingsChange, "edited");
    assert.equal(await Deno.readTextFile(settingsPath), '{\n  "model": "y"\n}\n');

    const missing = await cli(dir, "uninstall", "--settings", join(dir, "nonexistent.json"));
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /nonexistent\.json does not exist/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("claude install refuses a service directory another user could reach, and says how to fix it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "open"), { mode: 0o777 });
    await Deno.chmod(join(dir, "open"), 0o777);
    const r = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", "cli/main.ts", "claude", "install"],
      env: { CLAUDE_CONFIG_DIR: join(dir, "open", "cfg"), NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(r.code, 2);
    const err = new TextDecoder().decode(r.stderr);
    assert.match(err, /open can be written by other users/);
    assert.match(err, /only you can open/);
    assert.ok(!existsSync(join(dir, "open", "cfg", "settings.json")), "nothing written");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readcache doctor --claude says what is wrong with the installed service, and how to fix it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const doctor = async () => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--quiet", "cli/main.ts", "doctor", "--claude", "--cwd", dir, "--json"],
        env: { CLAUDE_CONFIG_DIR: join(dir, "cfg"), NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      return { code: out.code, r: JSON.parse(new TextDecoder().decode(out.stdout)) };
    };
    const before = await doctor();
    assert.equal(before.code, 0);
    assert.equal(before.r.service.installed, false);
    assert.equal((await cli(join(dir, "cfg"), "install")).code, 0);
    const ok = await doctor();
    assert.equal(ok.code, 0, JSON.stringify(ok.r.problems));
    assert.equal(ok.r.service.installed, true);
    // what a moved checkout or a cleared cache leaves: a file the hooks run is gone
    await Deno.remove(join(dir, "cfg", "readcache", "service.js"));
    await Deno.chmod(join(dir, "cfg", "readcache"), 0o755);
    const bad = await doctor();
    assert.equal(bad.code, 1);
    const whats = bad.r.problems.map((p: { what: string; fix: string }) => `${p.what} / ${p.fix}`);
    assert.ok(
      whats.some((w: string) =>
        /is missing, and readcache's SessionStart hook runs it.*\/ readcache claude install/.test(w)
      ),
      whats.join("\n"),
    );
    assert.ok(whats.some((w: string) => /is not private .* chmod 700/.test(w)), whats.join("\n"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("claude install refuses a settings file that is not JSON, and changes nothing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(dir, "settings.json"), "{ not json");
    const r = await cli(dir, "install");
    assert.equal(r.code, 2);
    assert.match(r.stderr, /settings\.json is not valid JSON/);
    assert.equal(await Deno.readTextFile(join(dir, "settings.json")), "{ not json");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("claude install keeps a user's hooks value it cannot extend, and says so", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const text = JSON.stringify({ hooks: { PostToolUse: "not a list" } });
    await Deno.writeTextFile(join(dir, "settings.json"), text);
    const r = await cli(dir, "install");
    assert.equal(r.code, 2);
    assert.match(r.stderr, /hooks\.PostToolUse is not a list of matchers/);
    assert.equal(await Deno.readTextFile(join(dir, "settings.json")), text);
    assert.ok(!existsSync(join(dir, "readcache", "service.json")), "nothing written");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the service listens on a socket only its user can reach, answers {} to what it cannot use, and never a permission or a changed input", async () => {
  const dir = await Deno.makeTempDir();
  const serviceDir = join(dir, "readcache");
  // a host that tries every answer a hook could give
  const greedy = {
    handle: (input: unknown) =>
      Promise.resolve({
        continue: false,
        hookSpecificOutput: {
          hookEventName: (input as { hook_event_name?: string }).hook_event_name,
          permissionDecision: "allow",
          updatedInput: { command: "id" },
          updatedToolOutput: "X",
          additionalContext: "Y",
        },
      }),
  } as unknown as ClaudeCodeHost;
  const s = await startClaudeCodeService({ dir: serviceDir, host: greedy });
  try {
    assert.equal((await Deno.stat(serviceDir)).mode! & 0o777, 0o700);
    assert.equal((await Deno.lstat(s.socket)).mode! & 0o777, 0o600);
    assert.ok(await claudeServiceUp(serviceDir));
    const post = (body: string) => claudeServiceRequest(serviceDir, "POST", "/hook", body);
    assert.deepEqual(await post("not json"), { status: 200, body: "{}" });
    assert.equal((await claudeServiceRequest(serviceDir, "POST", "/other", "{}"))?.status, 404);
    assert.deepEqual(JSON.parse((await post('{"hook_event_name":"PreToolUse"}'))!.body), {});
    assert.deepEqual(JSON.parse((await post('{"hook_event_name":"PostToolUse"}'))!.body), {
      hookSpecificOutput: { hookEventName: "PostToolUse", updatedToolOutput: "X" },
    });
    await assert.rejects(
      () => startClaudeCodeService({ dir: serviceDir }),
      /already answers/,
    );
  } finally {
    await s.close();
  }
  assert.ok(!existsSync(join(serviceDir, "hook.sock")), "the socket goes with it");
  await Deno.chmod(serviceDir, 0o755);
  try {
    // tightened again: it is the user's own directory
    const again = await startClaudeCodeService({ dir: serviceDir });
    await again.close();
    assert.equal((await Deno.stat(serviceDir)).mode! & 0o777, 0o700);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readcache savings reads Claude Code transcripts, with and without readcache", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { ClaudeTranscriptWriter } = await import("../../scripts/claude/transcript_writer.ts");
    const { ClaudeCodeHost } = await import("../../src/adapters/claude/host.ts");
    const { MemoryObjectStore } = await import("../../src/core/object_store.ts");
    const on = await ClaudeTranscriptWriter.create(join(dir, "on"), 6);
    const host = new ClaudeCodeHost({ storeFor: () => new MemoryObjectStore() });
    for (let step = 0; step < 40; step++) await on.step(host, step);
    const off = await ClaudeTranscriptWriter.create(join(dir, "off"), 6);
    const none = { handle: () => Promise.resolve({}) } as unknown as typeof host;
    for (let step = 0; step < 40; step++) await off.step(none, step);

    const json = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", "cli/main.ts", "savings", "--json", on.path, off.path],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const r = JSON.parse(new TextDecoder().decode(json.stdout));
    const [a, b] = r.sessions.toSorted((x: { file: string }, y: { file: string }) =>
      x.file === on.path ? -1 : y.file === on.path ? 1 : 0
    );
    assert.equal(a.host, "claude");
    assert.equal(a.withReadcache, true);
    assert.equal(a.reads, 32);
    assert.ok(a.byMode.unchanged > 10, JSON.stringify(a.byMode));
    assert.ok(a.readcacheBytes < a.piBytes / 2, `${a.readcacheBytes} of ${a.piBytes}`);
    // recorded without readcache: replayed through the host, on files rebuilt from its reads
    assert.equal(b.withReadcache, false);
    assert.equal(b.estimate, "transcript");
    assert.equal(b.reads, 32);
    assert.equal(b.byMode.unchanged, a.byMode.unchanged, "the same re-reads answered unchanged");
    assert.ok(
      Math.abs(b.readcacheBytes - a.readcacheBytes) < a.piBytes / 20,
      `the replay finds what the host saved: ${b.readcacheBytes} against ${a.readcacheBytes}`,
    );

    const text = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", "cli/main.ts", "savings", "--no-replay", off.path],
      stdout: "piped",
    }).output();
    assert.match(
      new TextDecoder().decode(text.stdout),
      /1 Claude Code session without readcache \("off"\): not replayed/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the Claude Code estimate checks every short answer against what the transcript showed; a host that answers a first read with a marker is caught", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { ClaudeTranscriptWriter } = await import("../../scripts/claude/transcript_writer.ts");
    const { replayClaudeSession } = await import("../../cli/claude_savings.ts");
    const { readAnySessionFile } = await import("../../cli/support/sessions.ts");
    const off = await ClaudeTranscriptWriter.create(join(dir, "off"), 6);
    const none = { handle: () => Promise.resolve({}) } as unknown as ClaudeCodeHost;
    for (let step = 0; step < 40; step++) await off.step(none, step);
    const s = await readAnySessionFile(off.path);
    if (s.host !== "claude") throw new Error("not read as a Claude Code transcript");

    const honest = await replayClaudeSession(s.file);
    assert.ok(honest.safety!.checked > 10, JSON.stringify(honest.safety));
    assert.equal(honest.safety!.violations, 0);

    // the planted fault: the first read of each file answered "unchanged"
    const real = new ClaudeCodeHost({ storeFor: () => new MemoryObjectStore() });
    const firsts = new Set<string>();
    const planted = {
      async handle(input: unknown) {
        const out = await real.handle(input);
        const i = input as { hook_event_name: string; tool_name: string; tool_response?: unknown };
        if (i.hook_event_name !== "PostToolUse" || i.tool_name !== "Read") return out;
        const r = (out.hookSpecificOutput?.updatedToolOutput ?? i.tool_response) as {
          file: { filePath: string; totalLines: number; readcache?: Record<string, unknown> };
        };
        if (firsts.has(r.file.filePath)) return out;
        firsts.add(r.file.filePath);
        const text = `[readcache: unchanged, ${r.file.totalLines} lines]`;
        const file = {
          ...r.file,
          content: text,
          numLines: 1,
          startLine: 0,
          readcache: {
            ...r.file.readcache,
            mode: "unchanged",
            baseHash: r.file.readcache?.servedHash,
          },
        };
        return {
          hookSpecificOutput: {
            hookEventName: "PostToolUse" as const,
            updatedToolOutput: { ...r, file },
          },
        };
      },
    };
    const caught = await replayClaudeSession(s.file, { host: planted });
    assert.equal(caught.safety!.violations, 6, JSON.stringify(caught.safety));

    const text = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", "cli/main.ts", "savings", off.path],
      env: { NO_COLOR: "1" },
      stdout: "piped",
    }).output();
    assert.match(
      new TextDecoder().decode(text.stdout),
      new RegExp(
        `check: ${honest.safety!.checked} short answers checked against what the model had ` +
          "been shown: 0 wrong",
      ),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the Claude Code estimate's check follows one line of rows: after a rewind its short answers are not checked, never counted wrong", async () => {
  const { replayClaudeSession } = await import("../../cli/claude_savings.ts");
  const v1 = Array.from({ length: 30 }, (_, i) => `line ${i + 1} of the file`).join("\n") + "\n";
  const v2 = v1.replace("line 7 of the file", "line 7 changed");
  const text = (t: string) => ({ content: t, numLines: t.split("\n").length, startLine: 1 });
  const file = (t: string) => ({
    type: "text",
    file: { filePath: "/w/a.txt", ...text(t), totalLines: t.split("\n").length },
  });
  const use = (id: string, name: string, input: Record<string, unknown>) => ({
    role: "assistant",
    content: [{ type: "tool_use", id, name, input }],
  });
  const result = (id: string, content: string) => ({
    role: "user",
    content: [{ type: "tool_result", tool_use_id: id, content }],
  });
  /** A transcript row of session s1 in /w. */
  const row = (
    type: "user" | "assistant",
    uuid: string,
    parentUuid: string | null,
    message: { role: string; content: unknown },
    toolUseResult?: unknown,
  ) => ({
    sessionId: "s1",
    cwd: "/w",
    type,
    uuid,
    parentUuid,
    message,
    ...(toolUseResult === undefined ? {} : { toolUseResult }),
  });
  const rows = [
    row("user", "u1", null, { role: "user", content: "go" }),
    row("assistant", "a1", "u1", use("t1", "Read", { file_path: "/w/a.txt" })),
    row("user", "r1", "a1", result("t1", v1), file(v1)),
    row(
      "assistant",
      "a2",
      "r1",
      use("t2", "Edit", {
        file_path: "/w/a.txt",
        old_string: "line 7 of the file",
        new_string: "line 7 changed",
      }),
    ),
    row("user", "r2", "a2", result("t2", "The file has been updated."), {
      filePath: "/w/a.txt",
      originalFile: v1,
    }),
    // rewound to before the edit: the model holds the file as read, the disk has the edit
    row("user", "u2", "r1", { role: "user", content: "again" }),
    row("assistant", "a3", "u2", use("t3", "Read", { file_path: "/w/a.txt" })),
    row("user", "r3", "a3", result("t3", v2), file(v2)),
  ];
  const s = await replayClaudeSession({ path: "s1.jsonl", mtimeMs: 0, bytes: 0, rows });
  assert.equal(s.byMode.diff, 1, JSON.stringify(s.byMode));
  assert.deepEqual(s.safety, { checked: 0, violations: 0, notChecked: 1 });
});

Deno.test("readcache status reads a Claude Code transcript: what the model holds, next reads", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { ClaudeTranscriptWriter } = await import("../../scripts/claude/transcript_writer.ts");
    const { ClaudeCodeHost } = await import("../../src/adapters/claude/host.ts");
    const { FsObjectStore } = await import("../../src/store/fs_object_store.ts");
    const w = await ClaudeTranscriptWriter.create(dir, 3);
    const store = new FsObjectStore(join(w.work, ".claude", "readcache"), { projectRoot: w.work });
    const host = new ClaudeCodeHost({ storeFor: () => store });
    for (let step = 0; step < 6; step++) await w.step(host, step);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", "cli/main.ts", "status", "--cwd", w.work, w.path],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.match(text, /Claude Code session: s1/);
    assert.match(text, /The model holds now \(3 files\)/);
    assert.match(text, /next read: a short "unchanged" note/);

    // --claude: the newest transcript of the project in Claude Code's projects directory
    const config = join(dir, "config");
    const projects = join(config, "projects", w.work.replace(/[^A-Za-z0-9]/g, "-"));
    await Deno.mkdir(projects, { recursive: true });
    await Deno.copyFile(w.path, join(projects, "s1.jsonl"));
    const byFlag = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", "cli/main.ts", "status", "--claude", "--cwd", w.work],
      env: { CLAUDE_CONFIG_DIR: config },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(byFlag.code, 0, new TextDecoder().decode(byFlag.stderr));
    assert.equal(
      new TextDecoder().decode(byFlag.stdout),
      text.replace(w.path, join(projects, "s1.jsonl")),
      "the same report",
    );
    const none = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", "cli/main.ts", "status", "--claude", "--cwd", dir],
      env: { CLAUDE_CONFIG_DIR: config },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(none.code, 0, "nothing found is an answer");
    assert.match(new TextDecoder().decode(none.stdout), /No Claude Code session of .* in /);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readcache doctor and gc --claude look after the host's store, kept for the transcripts", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { ClaudeTranscriptWriter } = await import("../../scripts/claude/transcript_writer.ts");
    const { ClaudeCodeHost } = await import("../../src/adapters/claude/host.ts");
    const { FsObjectStore } = await import("../../src/store/fs_object_store.ts");
    const { sha256Hex } = await import("../../src/core/hash.ts");
    const w = await ClaudeTranscriptWriter.create(dir, 3);
    const store = new FsObjectStore(join(w.work, ".claude", "readcache"), { projectRoot: w.work });
    const host = new ClaudeCodeHost({ storeFor: () => store });
    for (let step = 0; step < 6; step++) await w.step(host, step);
    const stray = new TextEncoder().encode("a copy no transcript refers to\n");
    await store.put(sha256Hex(stray), stray);
    const sessions = join(dir, "home", ".claude", "projects", "-work");
    const run = async (...args: string[]) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--quiet", "cli/main.ts", ...args, "--claude", "--cwd", w.work],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const dec = new TextDecoder();
      return { code: out.code, text: dec.decode(out.stdout) + dec.decode(out.stderr) };
    };
    const doctor = await run("doctor", "--sessions", sessions);
    assert.match(doctor.text, /\.claude\/readcache/);
    assert.match(doctor.text, /1 stored copy .* no Claude Code session of this project refers to/);
    assert.match(doctor.text, /readcache gc --claude/);
    const gc = await run("gc", "--dry-run", "--sessions", sessions);
    assert.equal(gc.code, 0, gc.text);
    assert.match(gc.text, /1 Claude Code session of this project in /);
    assert.match(gc.text, /kept 4 copies/); // copies written in the last hour are kept in any case
    assert.ok(await store.has!(sha256Hex(stray)), "a dry run removes nothing");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the host derives nothing from a file the session did not read: a forged Read, a transcript elsewhere", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const projects = join(dir, "config", "projects", "-w");
    await Deno.mkdir(projects, { recursive: true });
    const secret = join(dir, "secret.txt");
    await Deno.writeTextFile(secret, "the guess\n");
    const transcript = join(projects, "s1.jsonl");
    // the session read another file; the hook input claims a Read of `secret` under that call id
    await Deno.writeTextFile(
      transcript,
      [
        { type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "go" } },
        {
          type: "assistant",
          uuid: "a1",
          parentUuid: "u1",
          message: {
            id: "m1",
            role: "assistant",
            content: [{
              type: "tool_use",
              id: "t1",
              name: "Read",
              input: { file_path: join(dir, "other.txt") },
            }],
          },
        },
      ].map((r) => JSON.stringify(r)).join("\n") + "\n",
    );
    const host = new ClaudeCodeHost({
      storeFor: () => new MemoryObjectStore(),
      transcriptRoot: join(dir, "config", "projects"),
    });
    const forged = (transcriptPath: string, id: string) => ({
      session_id: "s1",
      transcript_path: transcriptPath,
      cwd: dir,
      hook_event_name: "PostToolUse",
      tool_name: "Read",
      tool_input: { file_path: secret },
      tool_use_id: id,
      tool_response: {
        type: "text",
        file: {
          filePath: secret,
          content: "the guess\n",
          numLines: 2,
          startLine: 1,
          totalLines: 2,
        },
      },
    });
    // a call of the session that read another file, a call it never made, a transcript elsewhere
    assert.deepEqual(await host.handle(forged(transcript, "t1")), {});
    assert.deepEqual(await host.handle(forged(transcript, "t9")), {});
    const elsewhere = join(dir, "forged.jsonl");
    await Deno.copyFile(transcript, elsewhere);
    assert.deepEqual(await host.handle(forged(elsewhere, "t1")), {});
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("claude serve --detach --json says whether the service runs and whether it started it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    assert.equal((await cli(dir, "install")).code, 0);
    const first = await cli(dir, "serve", "--detach", "--json");
    assert.equal(first.code, 0, first.stderr);
    const started = JSON.parse(first.stdout);
    assert.equal(started.running, true);
    assert.equal(started.started, true);
    assert.equal(started.socket, join(dir, "readcache", "hook.sock"));
    const again = JSON.parse((await cli(dir, "serve", "--detach", "--json")).stdout);
    assert.deepEqual([again.running, again.started], [true, false]);
    // uninstall stops it
    assert.equal((await cli(dir, "uninstall")).code, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("claude install/uninstall: a linked settings file stays a link; a config directory install made goes", async () => {
  const top = await Deno.makeTempDir();
  try {
    // settings.json kept elsewhere and linked (as dotfile managers do)
    const dir = join(top, "config");
    await Deno.mkdir(dir);
    const real = join(top, "dotfiles-settings.json");
    const text = '{\n    "model": "x"\n}\n';
    await Deno.writeTextFile(real, text);
    await Deno.chmod(real, 0o644);
    await Deno.symlink(real, join(dir, "settings.json"));
    assert.equal((await cli(dir, "install")).code, 0);
    assert.ok((await Deno.lstat(join(dir, "settings.json"))).isSymlink, "still a link");
    assert.match(await Deno.readTextFile(real), /readcache/);
    assert.equal((await cli(dir, "uninstall")).code, 0);
    assert.ok((await Deno.lstat(join(dir, "settings.json"))).isSymlink, "still a link");
    assert.equal(await Deno.readTextFile(real), text, "byte for byte");
    assert.equal((await Deno.stat(real)).mode! & 0o777, 0o644);

    // a config directory that was not there: install makes it, uninstall takes it away again
    const fresh = join(top, "fresh", "claude");
    assert.equal((await cli(fresh, "install")).code, 0);
    assert.ok(existsSync(join(fresh, "settings.json")));
    assert.equal((await cli(fresh, "uninstall")).code, 0);
    assert.ok(!existsSync(fresh), "the directory install made is gone");
    assert.ok(existsSync(join(top, "fresh")), "what was there before stays");
  } finally {
    await Deno.remove(top, { recursive: true });
  }
});
