// Behaviour of the pi extension a pi user sees, beyond the scenario vectors:
// registration, the kill switch, read-only status, refresh argument errors,
// abort, turn boundaries, reads in one assistant message, sessions written by
// the existing pi-readcache extension, and the branch mapping.
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { env } from "node:process";
import {
  createWriteToolDefinition,
  type ExtensionFactory,
  SessionManager,
} from "@mariozechner/pi-coding-agent";
import readcacheExtension, {
  createReadcacheExtension,
  type PiToolDefinition,
} from "../../src/adapters/pi/extension.ts";
import {
  parseSessionJsonl,
  PiBranchConverter,
  piEntryToReplay,
} from "../../src/adapters/pi/branch.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import { FakePiHost, newSession, ZERO_USAGE } from "../../scripts/pi/pi_host.ts";

// Compile-time: both forms are pi ExtensionFactory values.
const asFactory: ExtensionFactory[] = [readcacheExtension, createReadcacheExtension()];

const FILE = Array.from({ length: 30 }, (_, i) => `line ${i + 1} of a test file`).join("\n") + "\n";

function withCwd(fn: (cwd: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-pi-adapter-")));
    try {
      writeFileSync(join(cwd, "a.txt"), FILE);
      await fn(cwd);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  };
}

function started(cwd: string, session: SessionManager = newSession(cwd)): FakePiHost {
  const host = new FakePiHost(session, cwd);
  createReadcacheExtension({ home: () => cwd })(host);
  host.userMessage("start");
  return host;
}

async function mode(host: FakePiHost, args: Record<string, unknown>): Promise<string | null> {
  const out = await host.callTool("read", args);
  if (!out.ok) throw new Error(out.error);
  const d = out.result.details as { readcache?: { mode: string } } | undefined;
  return d?.readcache?.mode ?? null;
}

function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else out.push(`${p} ${st.size} ${st.mtimeMs}`);
    }
  };
  walk(dir);
  return out;
}

Deno.test("the extension registers read, readcache_refresh and both commands", () => {
  assert.equal(asFactory.length, 2);
  const host = new FakePiHost(newSession("/tmp"), "/tmp");
  readcacheExtension(host);
  assert.deepEqual([...host.tools.keys()].sort(), ["read", "readcache_refresh"]);
  assert.deepEqual([...host.commands.keys()].sort(), ["readcache-refresh", "readcache-status"]);
  const params = host.tools.get("read")!.parameters as { properties: Record<string, unknown> };
  assert.deepEqual(Object.keys(params.properties), ["path", "offset", "limit", "bypass_cache"]);
});

Deno.test("PI_READCACHE=off loads nothing, so pi's own read stays in place", () => {
  const before = env.PI_READCACHE;
  env.PI_READCACHE = "off";
  try {
    const host = new FakePiHost(newSession("/tmp"), "/tmp");
    readcacheExtension(host);
    assert.equal(host.tools.size, 0);
    assert.equal(host.commands.size, 0);
  } finally {
    if (before === undefined) delete env.PI_READCACHE;
    else env.PI_READCACHE = before;
  }
});

Deno.test(
  "/readcache-status reports the branch and writes nothing (no entry, no store directory)",
  withCwd(async (cwd) => {
    const host = started(cwd);
    await host.command("readcache-status", "");
    assert.equal(existsSync(join(cwd, ".pi")), false, "status must not create the store");
    assert.match(
      host.notifications[0].message,
      /The model holds no file content from earlier reads\./,
    );
    assert.match(host.notifications[0].message, /object store: .*: 0 stored copies/);

    assert.equal(await mode(host, { path: "a.txt" }), "full");
    assert.equal(await mode(host, { path: "a.txt" }), "unchanged");
    const entries = host.session.getEntries().length;
    const files = listing(cwd);
    await host.command("readcache-status", "");
    assert.equal(host.session.getEntries().length, entries);
    assert.deepEqual(listing(cwd), files);
    const text = host.notifications[1].message;
    assert.match(text, /2 reads: 1 sent in full, 1 answered "unchanged"/);
    assert.ok(text.includes("the whole of a.txt (31 lines)"), text);
    assert.match(text, /object store: .*: 1 stored copy/);
    assert.match(text, /about \d+ tokens saved/);
  }),
);

Deno.test(
  "/readcache-refresh with bad arguments says what is wrong and appends nothing",
  withCwd(async (cwd) => {
    const host = started(cwd);
    // a FIFO: counting its lines for a range would never end; refused at once
    new Deno.Command("mkfifo", { args: [`${cwd}/pipe`] }).outputSync();
    const cases: [string, RegExp][] = [
      ["pipe 1-2", /only be refreshed for a file that exists/],
      ["", /No path given\. usage: \/readcache-refresh <path> \[start-end\]/],
      ["a.txt 9-3", /end 3 is before start 9/],
      ["a.txt 5-", /a line number is missing/],
      ["missing.txt 1-2", /Nothing to refresh: missing\.txt does not exist/],
      ["missing.txt", /Nothing to refresh: missing\.txt does not exist \(no such file\)/],
      [".", /Nothing to refresh: \. is a directory; name a file inside it/],
      ["a.txt 99-100", /Offset 99 is beyond end of file \(31 lines total\)/],
    ];
    for (const [args, message] of cases) {
      const entries = host.session.getEntries().length;
      const before = host.notifications.length;
      await host.command("readcache-refresh", args);
      const note = host.notifications[before];
      assert.equal(note.type, "error", `'${args}' must be rejected`);
      assert.match(note.message, message);
      assert.equal(host.session.getEntries().length, entries, `'${args}' appended an entry`);
    }
  }),
);

Deno.test(
  "/readcache-refresh <path> <start-end> appends the range invalidation pi-readcache entry",
  withCwd(async (cwd) => {
    const host = started(cwd);
    await host.command("readcache-refresh", "a.txt 5-7");
    const last = host.session.getLeafEntry();
    assert.equal(last?.type, "custom");
    const data = last?.type === "custom" ? last.data as Record<string, unknown> : {};
    assert.equal(last?.type === "custom" ? last.customType : "", "pi-readcache");
    assert.deepEqual({ ...data, at: 0 }, {
      v: 1,
      kind: "invalidate",
      pathKey: join(cwd, "a.txt"),
      scopeKey: "r:5:7",
      at: 0,
    });
    assert.match(host.notifications[0].message, /refreshed lines 5-7 of a\.txt/);
  }),
);

Deno.test(
  "an aborted read fails like pi's (Operation aborted) and leaves no trust behind",
  withCwd(async (cwd) => {
    const host = started(cwd);
    const ac = new AbortController();
    ac.abort();
    const out = await host.callTool("read", { path: "a.txt" }, { signal: ac.signal });
    assert.deepEqual(out, { ok: false, error: "Operation aborted" });
    assert.equal(await mode(host, { path: "a.txt" }), "full");
  }),
);

Deno.test(
  "a read served but never persisted stops counting at the next turn",
  withCwd(async (cwd) => {
    const host = started(cwd);
    const args = { path: "a.txt" };
    const [c1, c2] = host.assistantToolCalls([{ name: "read", args }, { name: "read", args }]);
    await host.runTool(c1, "read", args, { persist: false });
    const second = await host.runTool(c2, "read", args, { persist: false });
    assert.ok(second.ok && second.text.startsWith("[readcache: unchanged"), "same turn: overlay");
    assert.equal(await mode(host, args), "full", "a new assistant message: that turn is over");
    const h2 = started(cwd);
    await h2.callTool("read", { path: "a.txt" }, { persist: false });
    h2.emit("turn_start");
    assert.equal(await mode(h2, { path: "a.txt" }), "full", "the result never reached the session");
  }),
);

Deno.test(
  "two reads of one file in one assistant message run in call order: the second is unchanged",
  withCwd(async (cwd) => {
    const host = started(cwd);
    const read = host.tools.get("read")!;
    const ctx = host.context();
    const [first, second] = await Promise.all([
      read.execute("c1", { path: "a.txt" }, undefined, undefined, ctx),
      read.execute("c2", { path: "a.txt" }, undefined, undefined, ctx),
    ]);
    assert.equal(first.content[0].type === "text" && first.content[0].text, FILE);
    assert.deepEqual(second.content, [{ type: "text", text: "[readcache: unchanged, 31 lines]" }]);
  }),
);

Deno.test(
  "a session file written by the existing pi-readcache extension replays (extra meta fields tolerated)",
  withCwd(async (cwd) => {
    const sessions = join(cwd, "sessions");
    mkdirSync(sessions);
    const hash = sha256Hex(FILE);
    const pathKey = join(cwd, "a.txt");
    const ts = "2026-01-01T00:00:00.000Z";
    const lines = [
      { type: "session", version: 3, id: "0199-legacy", timestamp: ts, cwd },
      {
        type: "message",
        id: "u1",
        parentId: null,
        timestamp: ts,
        message: { role: "user", content: [{ type: "text", text: "read a.txt" }], timestamp: 1 },
      },
      {
        type: "message",
        id: "a1",
        parentId: "u1",
        timestamp: ts,
        message: {
          role: "assistant",
          content: [{ type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.txt" } }],
          api: "openai-completions",
          provider: "x",
          model: "y",
          usage: ZERO_USAGE,
          stopReason: "toolUse",
          timestamp: 2,
        },
      },
      {
        type: "message",
        id: "t1",
        parentId: "a1",
        timestamp: ts,
        message: {
          role: "toolResult",
          toolCallId: "call_1",
          toolName: "read",
          content: [{ type: "text", text: FILE }],
          details: {
            readcache: {
              v: 1,
              pathKey,
              scopeKey: "full",
              servedHash: hash,
              mode: "full",
              totalLines: 31,
              rangeStart: 1,
              rangeEnd: 31,
              bytes: FILE.length,
              debug: { reason: "first read", tookMs: 3 },
            },
          },
          isError: false,
          timestamp: 3,
        },
      },
    ];
    const file = join(sessions, "legacy.jsonl");
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const host = started(cwd, SessionManager.open(file, sessions));
    assert.equal(await mode(host, { path: "a.txt" }), "unchanged");

    // and its invalidation entry (same custom type and data) is honoured
    host.session.appendCustomEntry("pi-readcache", {
      v: 1,
      kind: "invalidate",
      pathKey,
      scopeKey: "full",
      at: 1_700_000_000_000,
    });
    assert.equal(await mode(host, { path: "a.txt" }), "full");
  }),
);

Deno.test("branch mapping: only successful read results carry trust", () => {
  const meta = { v: 1, mode: "full" };
  const msg = (m: Record<string, unknown>) => ({
    type: "message",
    id: "x",
    parentId: null,
    message: {
      role: "toolResult",
      toolCallId: "c",
      toolName: "read",
      details: { readcache: meta },
      ...m,
    },
  });
  assert.deepEqual(piEntryToReplay(msg({})), {
    id: "x",
    parentId: null,
    kind: "read",
    meta,
    callId: "c",
  });
  assert.equal(piEntryToReplay(msg({ isError: true })).kind, "other");
  // a shell command's result is checked against the model's view (SPEC §5.10)
  assert.equal(piEntryToReplay(msg({ toolName: "bash" })).kind, "tool");
  assert.equal(piEntryToReplay(msg({ toolName: "ls" })).kind, "other");
  assert.equal(piEntryToReplay(msg({ role: "user" })).kind, "other");
  assert.equal(
    piEntryToReplay({ type: "custom", id: "x", parentId: null, customType: "other-ext", data: {} })
      .kind,
    "other",
  );
  assert.deepEqual(
    piEntryToReplay({ type: "compaction", id: "c", parentId: "p", firstKeptEntryId: "k" }),
    { id: "c", parentId: "p", kind: "compaction", firstKeptEntryId: "k" },
  );
  assert.equal(piEntryToReplay({ type: "branch_summary", id: "b", parentId: "p" }).kind, "other");
});

Deno.test("session JSONL parsing skips the header and malformed lines", () => {
  const text = [
    '{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/w"}',
    '{"type":"message","id":"a","parentId":null,"message":{"role":"user"}}',
    "{not json",
    '{"type":"custom","id":"b","parentId":"a","customType":"pi-readcache","data":{}}',
    '{"type":"message","parentId":"b"}',
    "",
  ].join("\n");
  assert.deepEqual(parseSessionJsonl(text).map((e) => e.id), ["a", "b"]);
});

Deno.test(
  "a broken object store never breaks a read: a base it cannot load gives the baseline",
  withCwd(async (cwd) => {
    const broken = {
      get: (): Promise<Uint8Array | undefined> => Promise.reject(new Error("store offline")),
      put: (): Promise<void> => Promise.reject(new Error("store offline")),
      stats: () => Promise.reject(new Error("store offline")),
    };
    const host = new FakePiHost(newSession(cwd), cwd);
    createReadcacheExtension({ home: () => cwd, storeFor: () => broken })(host);
    host.userMessage("start");
    assert.equal(await mode(host, { path: "a.txt" }), "full");
    assert.equal(await mode(host, { path: "a.txt" }), "unchanged", "no base content needed");
    const changed = FILE.replace("line 3 ", "line three ");
    writeFileSync(join(cwd, "a.txt"), changed);
    const out = await host.callTool("read", { path: "a.txt" });
    assert.ok(out.ok, out.ok ? "" : out.error);
    assert.equal(out.text, changed);
    const meta = (out.result.details as { readcache?: { mode: string } }).readcache;
    assert.equal(meta?.mode, "baseline_fallback");
    await host.command("readcache-status", "");
    assert.match(host.notifications.at(-1)!.message, /object store: unavailable \(store offline\)/);
  }),
);

Deno.test("branch mapping: write results and assistant messages that change files", () => {
  const call = { name: "/w/n.ts", pathKey: "/w/n.ts" };
  const convert = new PiBranchConverter({
    read: () => undefined,
    write: (args) => {
      const a = args as { content?: unknown };
      return typeof a.content === "string" ? { call, hash: sha256Hex(a.content) } : undefined;
    },
    target: () => call,
  });
  const assistant = {
    type: "message",
    id: "m",
    parentId: null,
    message: {
      role: "assistant",
      content: [
        { type: "toolCall", id: "w1", name: "write", arguments: { path: "n.ts", content: "x\n" } },
        { type: "toolCall", id: "e1", name: "edit", arguments: { path: "n.ts", edits: [] } },
        { type: "toolCall", id: "r1", name: "read", arguments: { path: "n.ts" } },
      ],
    },
  };
  const result = (id: string, toolCallId: string, isError = false, details?: unknown) => ({
    type: "message",
    id,
    parentId: "m",
    message: {
      role: "toolResult",
      toolCallId,
      toolName: toolCallId[0] === "w" ? "write" : "edit",
      isError,
      details,
    },
  });
  const [m, w, e, bad, eMeta, eFailed] = convert.branch([
    assistant,
    result("t1", "w1"),
    result("t2", "e1"),
    { ...result("t3", "w1", true), id: "t3" },
    result("t4", "e1", false, { diff: "", readcache: { v: 1, kind: "edit" } }),
    result("t5", "e1", true, { readcache: { v: 1, kind: "edit" } }),
  ]);
  assert.deepEqual(m, {
    id: "m",
    parentId: null,
    kind: "other",
    changes: [{ callId: "w1", call, tool: "write" }, { callId: "e1", call, tool: "edit" }],
  });
  assert.deepEqual(w, {
    id: "t1",
    parentId: "m",
    kind: "wrote",
    call,
    hash: sha256Hex("x\n"),
    callId: "w1",
  });
  // an edit's result is a change of its file, with the belief its metadata carries when it
  // succeeded (SPEC §5.9); a failed write is no proof, and a write that is not proof still
  // changed the file as far as replay knows (SPEC §5.8), as on every host
  assert.deepEqual(e, { id: "t2", parentId: "m", kind: "changed", call, callId: "e1" });
  assert.deepEqual(bad, { id: "t3", parentId: "m", kind: "changed", call, callId: "w1" });
  assert.deepEqual(eMeta, {
    id: "t4",
    parentId: "m",
    kind: "changed",
    call,
    callId: "e1",
    meta: { v: 1, kind: "edit" },
  });
  assert.deepEqual(eFailed, { id: "t5", parentId: "m", kind: "changed", call, callId: "e1" });
  // pi never runs the calls of an aborted (or failed) message, and the model never sees it
  for (const stopReason of ["aborted", "error"]) {
    const [gone] = convert.branch([
      { ...assistant, id: "m2", message: { ...assistant.message, stopReason } },
    ]);
    assert.deepEqual(gone, { id: "m2", parentId: null, kind: "other" });
  }
});

Deno.test(
  "pi's write tool: the next read of what the model wrote is unchanged",
  withCwd(async (cwd) => {
    const host = started(cwd);
    host.registerTool(createWriteToolDefinition(cwd) as unknown as PiToolDefinition);
    const out = await host.callTool("write", { path: "src/n.ts", content: FILE });
    assert.ok(out.ok);
    assert.equal(await mode(host, { path: "src/n.ts" }), "unchanged");
    assert.equal(await mode(host, { path: "src/n.ts", offset: 3, limit: 2 }), "unchanged_range");
  }),
);

Deno.test(
  "pi's write tool: a read of the file earlier in the same turn is newer than the write",
  withCwd(async (cwd) => {
    const host = started(cwd);
    host.registerTool(createWriteToolDefinition(cwd) as unknown as PiToolDefinition);
    const next = FILE.replace("line 9 of", "line nine of");
    const [read, write] = host.assistantToolCalls([
      { name: "read", args: { path: "a.txt" } },
      { name: "write", args: { path: "a.txt", content: next } },
    ]);
    // the write is pending while the read runs: the read is served in full
    const r = await host.runTool(read, "read", { path: "a.txt" });
    assert.ok(r.ok);
    assert.equal(r.text, FILE);
    assert.ok((await host.runTool(write, "write", { path: "a.txt", content: next })).ok);
    // the model's newest view of a.txt is the read result (after the call in its context):
    // the next read is a diff against it, not "unchanged" against the write
    assert.equal(await mode(host, { path: "a.txt" }), "diff");
  }),
);

Deno.test(
  "/readcache-status lists a file the model wrote, before any read of it",
  withCwd(async (cwd) => {
    const host = started(cwd);
    host.registerTool(createWriteToolDefinition(cwd) as unknown as PiToolDefinition);
    assert.ok((await host.callTool("write", { path: "src/n.ts", content: FILE })).ok);
    await host.command("readcache-status", "");
    const text = host.notifications.at(-1)?.message ?? "";
    assert.ok(text.includes("the whole of src/n.ts (31 lines)"), text);
  }),
);
