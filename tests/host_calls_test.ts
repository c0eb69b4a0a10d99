// The host-neutral mapping of tool calls and results onto replay entries (SPEC §11.10), and the
// three hosts' converters giving the same entries for the same calls through it.
import assert from "node:assert/strict";
import { callEffect, type HostCall, messageEntry, resultEntries } from "../src/core/host_calls.ts";
import { PiBranchConverter } from "../src/adapters/pi/branch.ts";
import type { ReplayEntry } from "../src/core/replay.ts";
import { claudeBranchToReplay } from "../src/adapters/claude/transcript.ts";
import { openCodeBranchToReplay } from "../src/adapters/opencode/branch.ts";

const a = { name: "/w/a.ts", pathKey: "/w/a.ts" };
const b = { name: "/w/b.ts", pathKey: "/w/b.ts" };

Deno.test("host calls: what each role means for its turn (SPEC §5.10)", () => {
  const effect = (c: Omit<HostCall, "id">) => callEffect({ id: "c", ...c });
  assert.equal(effect({ role: "read" }), "read");
  assert.equal(effect({ role: "change", targets: [a] }), "change");
  assert.equal(effect({ role: "change" }), "none", "a change naming no file records nothing");
  assert.equal(effect({ role: "followed" }), "none");
  assert.equal(effect({ role: "search" }), "shows");
  assert.equal(effect({ role: "shell", command: "cat a.ts" }), "shows");
  assert.equal(effect({ role: "shell", command: "ls -la" }), "none");
  assert.equal(effect({ role: "shell", command: "make" }), "opaque");
  assert.equal(effect({ role: "shell" }), "opaque", "a command it cannot read may change any file");
  assert.equal(effect({ role: "opaque" }), "opaque");
});

Deno.test("host calls: a message lists its changes, opaque calls and views", () => {
  assert.deepEqual(messageEntry("m", null, [{ id: "r", role: "read" }]), {
    id: "m",
    parentId: null,
    kind: "other",
  });
  assert.deepEqual(
    messageEntry("m", "p", [
      { id: "w", role: "change", targets: [a] },
      { id: "e", role: "change", targets: [a], edit: true },
      { id: "patch", role: "change", targets: [a, b] },
      { id: "s", role: "shell", command: "cat a.ts" },
      { id: "x", role: "opaque" },
    ]),
    {
      id: "m",
      parentId: "p",
      kind: "other",
      changes: [
        { callId: "w", call: a, tool: "write" },
        { callId: "e", call: a, tool: "edit" },
        { callId: "patch", call: a, tool: "write" },
        { callId: "patch#1", call: b, tool: "write" },
      ],
      opaque: ["x"],
      shows: ["s"],
    },
  );
});

Deno.test("host calls: how a finished call ends (SPEC §5.6, §5.8-§5.10)", () => {
  const base = { id: "r", parentId: "m", callId: "c", tool: "t" };
  const proof = { call: a, hash: "h", totalLines: 2, bytes: 4 };
  assert.deepEqual(
    resultEntries({ ...base, call: { role: "read" }, ok: true, read: a, meta: { v: 1 } }),
    [{ id: "r", parentId: "m", kind: "read", meta: { v: 1 }, callId: "c", call: a }],
  );
  assert.deepEqual(
    resultEntries({ ...base, call: { role: "read" }, ok: false, read: a, meta: { v: 1 } }),
    [{ id: "r", parentId: "m", kind: "other", toolResult: true, callId: "c" }],
    "a failed read is another tool result",
  );
  const write = { role: "change" as const, targets: [a] };
  assert.deepEqual(resultEntries({ ...base, call: write, ok: true, proof }), [
    {
      id: "r",
      parentId: "m",
      kind: "wrote",
      call: a,
      hash: "h",
      callId: "c",
      totalLines: 2,
      bytes: 4,
    },
  ]);
  assert.deepEqual(
    resultEntries({ ...base, call: write, ok: false, proof }),
    [{ id: "r", parentId: "m", kind: "changed", call: a, callId: "c" }],
    "a failed write is no proof: its file is unknown",
  );
  const edit = { role: "change" as const, targets: [a, b] };
  assert.deepEqual(resultEntries({ ...base, call: edit, ok: true, meta: { belief: 1 } }), [
    { id: "r", parentId: "m", kind: "changed", call: a, callId: "c", meta: { belief: 1 } },
    { id: "r#1", parentId: "m", kind: "changed", call: b, callId: "c#1" },
  ]);
  assert.deepEqual(
    resultEntries({ ...base, call: edit, ok: false, meta: { belief: 1 } })[0],
    { id: "r", parentId: "m", kind: "changed", call: a, callId: "c" },
    "a failed edit carries no belief",
  );
  assert.deepEqual(resultEntries({ ...base, call: { role: "shell" }, ok: false, meta: { m: 1 } }), [
    { id: "r", parentId: "m", kind: "tool", tool: "t", callId: "c", meta: { m: 1 } },
  ]);
  assert.deepEqual(resultEntries({ ...base, call: { role: "followed" }, ok: true }), [
    { id: "r", parentId: "m", kind: "other", toolResult: true, callId: "c" },
  ]);
});

Deno.test("host calls: pi, OpenCode and Claude Code map one message's calls alike", () => {
  // one assistant message: a write, a read-only command that prints a file, a command that may
  // change anything, a search; then a failed write's result
  const pi = new PiBranchConverter({ read: () => undefined, target: () => a }).branch([
    {
      type: "message",
      id: "m",
      parentId: null,
      message: {
        role: "assistant",
        content: [
          { type: "toolCall", id: "w", name: "write", arguments: { path: "a.ts", content: "x" } },
          { type: "toolCall", id: "s", name: "bash", arguments: { command: "cat a.ts" } },
          { type: "toolCall", id: "x", name: "bash", arguments: { command: "make" } },
          { type: "toolCall", id: "g", name: "grep", arguments: { pattern: "x" } },
        ],
      },
    },
    {
      type: "message",
      id: "t",
      parentId: "m",
      message: { role: "toolResult", toolCallId: "w", toolName: "write", isError: true },
    },
  ]);
  const oc = openCodeBranchToReplay([
    { info: { id: "u", role: "user" }, parts: [] },
    {
      info: { id: "m", role: "assistant", parentID: "u" },
      parts: [
        {
          id: "pw",
          type: "tool",
          tool: "write",
          callID: "w",
          state: { status: "error", input: { filePath: "/w/a.ts", content: "x" } },
        },
        {
          id: "ps",
          type: "tool",
          tool: "bash",
          callID: "s",
          state: { status: "running", input: { command: "cat a.ts" } },
        },
        {
          id: "px",
          type: "tool",
          tool: "bash",
          callID: "x",
          state: { status: "running", input: { command: "make" } },
        },
        { id: "pg", type: "tool", tool: "grep", callID: "g", state: { status: "running" } },
      ],
    },
  ], { directory: "/w" }).entries;
  const cc = claudeBranchToReplay([
    { type: "user", uuid: "u", parentUuid: null, message: { role: "user", content: "go" } },
    {
      type: "assistant",
      uuid: "m",
      parentUuid: "u",
      message: {
        id: "msg",
        role: "assistant",
        content: [
          {
            type: "tool_use",
            id: "w",
            name: "Write",
            input: { file_path: "/w/a.ts", content: "x" },
          },
          { type: "tool_use", id: "s", name: "Bash", input: { command: "cat a.ts" } },
          { type: "tool_use", id: "x", name: "Bash", input: { command: "make" } },
          { type: "tool_use", id: "g", name: "Grep", input: { pattern: "x" } },
        ],
      },
    },
    {
      type: "user",
      uuid: "t",
      parentUuid: "m",
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "w", content: "EACCES", is_error: true }],
      },
    },
    {
      type: "assistant",
      uuid: "n",
      parentUuid: "t",
      message: {
        id: "msg2",
        role: "assistant",
        content: [{ type: "tool_use", id: "r", name: "Read", input: { file_path: "/w/b.ts" } }],
      },
    },
  ], { currentCallId: "r", pathKey: (p) => p })!.entries;
  const shape = (entries: readonly ReplayEntry[]) => {
    const h = entries.find((e) => e.kind === "other" && e.changes !== undefined);
    if (h?.kind !== "other") throw new Error(`no message head: ${JSON.stringify(entries)}`);
    return { changes: h.changes, opaque: h.opaque, shows: h.shows };
  };
  const expected = {
    changes: [{ callId: "w", call: { name: "/w/a.ts", pathKey: "/w/a.ts" }, tool: "write" }],
    opaque: ["x"],
    shows: ["s", "g"],
  };
  assert.deepEqual(shape(pi), { ...expected, changes: [{ ...expected.changes[0], call: a }] });
  assert.deepEqual(shape(oc), expected);
  assert.deepEqual(shape(cc), expected);
  // the failed write's result: its file is unknown on every host
  for (const entries of [pi, oc, cc]) {
    assert.ok(
      entries.some((e) => e.kind === "changed" && e.call.pathKey.endsWith("/a.ts")),
      JSON.stringify(entries),
    );
  }
});
