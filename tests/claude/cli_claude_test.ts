// `readcache claude install|uninstall` and the service's door (SPEC §11.9): one step in, one step
// out, nothing of the user's touched; no answer without the secret.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startClaudeCodeService } from "../../src/adapters/claude/service.ts";

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

Deno.test("claude install adds its hooks with a secret; uninstall removes only them", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const mine = { type: "command", command: "echo mine" };
    await Deno.writeTextFile(
      join(dir, "settings.json"),
      JSON.stringify({ model: "x", hooks: { PostToolUse: [{ matcher: "Bash", hooks: [mine] }] } }),
    );
    const r = await cli(dir, "install", "--port", "45678");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /readcache is installed for Claude Code/);
    const service = JSON.parse(await Deno.readTextFile(join(dir, "readcache", "service.json")));
    assert.equal(service.port, 45678);
    assert.match(service.secret, /^[A-Za-z0-9_-]{43}$/);
    assert.equal((await Deno.stat(join(dir, "readcache", "service.json"))).mode! & 0o777, 0o600);
    const settings = JSON.parse(await Deno.readTextFile(join(dir, "settings.json")));
    assert.equal(settings.model, "x");
    assert.deepEqual(settings.hooks.PostToolUse[0], { matcher: "Bash", hooks: [mine] });
    assert.equal(
      settings.hooks.PostToolUse[1].hooks[0].url,
      `http://127.0.0.1:45678/hook/${service.secret}`,
    );
    assert.match(settings.hooks.SessionStart[0].hooks[0].command, /claude' 'serve' --detach$/);
    assert.equal(
      settings.hooks.PreToolUse[0].hooks[0].url,
      settings.hooks.PostToolUse[1].hooks[0].url,
    );
    // again: the same secret, no second copy of the hooks
    assert.equal((await cli(dir, "install")).code, 0);
    const again = JSON.parse(await Deno.readTextFile(join(dir, "settings.json")));
    assert.equal(again.hooks.PostToolUse.length, 2);
    assert.equal(again.hooks.SessionStart.length, 1);
    assert.equal(
      again.hooks.PostToolUse[1].hooks[0].url,
      settings.hooks.PostToolUse[1].hooks[0].url,
    );

    assert.equal((await cli(dir, "uninstall")).code, 0);
    const after = JSON.parse(await Deno.readTextFile(join(dir, "settings.json")));
    assert.deepEqual(after, {
      model: "x",
      hooks: { PostToolUse: [{ matcher: "Bash", hooks: [mine] }] },
    });
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

Deno.test("the service answers only with its secret, on 127.0.0.1, and {} to what it cannot use", async () => {
  const secret = "s".repeat(40);
  const s = startClaudeCodeService({ port: 0, secret });
  try {
    const at = (path: string, init?: RequestInit) =>
      fetch(`http://127.0.0.1:${s.port}${path}`, init).then(async (r) => ({
        status: r.status,
        body: await r.text(),
      }));
    assert.equal((await at(`/hook/${"t".repeat(40)}`, { method: "POST", body: "{}" })).status, 404);
    assert.equal((await at("/hook/", { method: "POST", body: "{}" })).status, 404);
    assert.deepEqual(await at(`/hook/${secret}`, { method: "POST", body: "not json" }), {
      status: 200,
      body: "{}",
    });
    const health = await at(`/hook/${secret}`);
    assert.equal(JSON.parse(health.body).service, "readcache");
    assert.throws(() => startClaudeCodeService({ port: 0, secret: "short" }), /32 to 256/);
  } finally {
    await s.close();
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
