// The Claude Code transcript mapping (SPEC §11.9), on transcripts shaped like Claude Code
// 2.1.332's: what the model saw, in the order it saw it.
import assert from "node:assert/strict";
import {
  claudeBranchToReplay,
  type ClaudeRowLike,
  claudeToolClass,
  ClaudeTranscriptIndex,
  parseClaudeTranscript,
} from "../../src/adapters/claude/transcript.ts";
import {
  claudeAnswerFile,
  claudeReadText,
  claudeShownLines,
} from "../../src/adapters/claude/host.ts";

const pathKey = (p: string) => p;
const user = (uuid: string, parentUuid: string | null, content: unknown): ClaudeRowLike => ({
  type: "user",
  uuid,
  parentUuid,
  message: { role: "user", content },
});
const call = (id: string, name: string, input: Record<string, unknown>) => ({
  type: "tool_use",
  id,
  name,
  input,
});
const assistant = (
  uuid: string,
  parentUuid: string,
  mid: string,
  block: unknown,
): ClaudeRowLike => ({
  type: "assistant",
  uuid,
  parentUuid,
  message: { id: mid, role: "assistant", content: [block] },
});
const result = (uuid: string, parentUuid: string, id: string, toolUseResult?: unknown) => ({
  ...user(uuid, parentUuid, [{ type: "tool_result", tool_use_id: id, content: "1\tx" }]),
  ...(toolUseResult === undefined ? {} : { toolUseResult }),
});
const META = { v: 1, pathKey: "/w/a.txt" };

Deno.test("parallel calls: one message, its results in call order though they are siblings", () => {
  const rows = [
    user("u1", null, "go"),
    assistant("a1", "u1", "m1", call("t1", "Read", { file_path: "/w/a.txt" })),
    assistant("a2", "a1", "m1", call("t2", "Read", { file_path: "/w/b.txt" })),
    // results: children of the row holding their call, written in finishing order
    result("r2", "a2", "t2", { type: "text", file: { readcache: META } }),
    result("r1", "a1", "t1", { type: "text", file: { readcache: META } }),
    user("u2", "r2", "next"),
  ];
  const b = claudeBranchToReplay(rows, { pathKey })!;
  assert.deepEqual(
    b.entries.map((e) => [e.id, e.kind, "callId" in e ? e.callId : undefined]),
    [
      ["u1", "other", undefined],
      ["a1#2", "other", undefined], // a message's head: its first row and how many calls it holds
      ["r1:t1", "read", "t1"],
      ["r2:t2", "read", "t2"],
      ["u2", "other", undefined],
    ],
  );
});

Deno.test("the message of the call being served ends the branch, with every call of it", () => {
  const rows = [
    user("u1", null, "go"),
    assistant("a1", "u1", "m1", call("t1", "Read", { file_path: "/w/a.txt" })),
    // written after the read: still the same message, so the read runs beside a command
    assistant("a2", "a1", "m1", call("t2", "Bash", { command: "make" })),
  ];
  const b = claudeBranchToReplay(rows, { currentCallId: "t1", pathKey })!;
  assert.deepEqual(b.current, { messageId: "a1", callIds: ["t1", "t2"] });
  assert.deepEqual(b.entries.at(-1), { id: "a1#2", parentId: "u1", kind: "other", opaque: ["t2"] });
  assert.equal(claudeBranchToReplay(rows, { currentCallId: "t9", pathKey }), undefined);
});

Deno.test("a compact boundary ends the chain; re-injected files are unknown lines", () => {
  const rows: ClaudeRowLike[] = [
    user("u1", null, "go"),
    assistant("a1", "u1", "m1", call("t1", "Read", { file_path: "/w/a.txt" })),
    result("r1", "a1", "t1", { type: "text", file: { readcache: META } }),
    { type: "system", subtype: "compact_boundary", uuid: "c1", parentUuid: null },
    user("s1", "c1", "This session is being continued ..."),
    {
      type: "attachment",
      uuid: "f1",
      parentUuid: "s1",
      attachment: { type: "file", filename: "/w/a.txt", content: {} },
    },
    assistant("a2", "f1", "m2", call("t2", "Read", { file_path: "/w/a.txt" })),
  ];
  const b = claudeBranchToReplay(rows, { currentCallId: "t2", pathKey })!;
  assert.deepEqual(b.entries.map((e) => [e.id, e.kind]), [
    ["c1", "compaction"],
    ["s1", "other"],
    ["f1", "read"],
    ["a2#1", "other"],
  ]);
  assert.equal((b.entries[2] as { meta?: unknown }).meta, undefined);
});

Deno.test("writes are proof, edits leave the file unknown, a task notification is a tool", () => {
  const rows = [
    user("u1", null, "go"),
    assistant("a1", "u1", "m1", call("t1", "Write", { file_path: "/w/c.txt", content: "new\n" })),
    result("r1", "a1", "t1", { type: "create" }),
    assistant("a2", "r1", "m2", call("t2", "Edit", { file_path: "/w/c.txt", old_string: "n" })),
    result("r2", "a2", "t2", {}),
    user("n1", "r2", "<task-notification>\n<task-id>x</task-id>"),
  ];
  const b = claudeBranchToReplay(rows, { pathKey })!;
  assert.deepEqual(b.entries.map((e) => e.kind), [
    "other",
    "other",
    "wrote",
    "other",
    "changed",
    "tool",
  ]);
  assert.deepEqual(
    (b.entries[1] as { changes?: unknown }).changes,
    [{ callId: "t1", call: { name: "/w/c.txt", pathKey: "/w/c.txt" }, tool: "write" }],
  );
});

Deno.test("a subagent's reads take the host's record only where the model got that text", () => {
  const rows = [
    user("u1", null, "go"),
    assistant("a1", "u1", "m1", call("t1", "Read", { file_path: "/w/a.txt" })),
    result("r1", "a1", "t1"), // subagent transcripts keep no toolUseResult
  ];
  const meta = (shown: string) =>
    claudeBranchToReplay(rows, {
      pathKey,
      servedMeta: (id, text) => id === "t1" && text === shown ? META : undefined,
    })!.entries.find((e) => e.kind === "read") as { meta?: unknown };
  assert.deepEqual(meta("1\tx").meta, META);
  assert.equal(meta("1\ty").meta, undefined);
});

Deno.test("tool classes: Grep and read-only commands view, anything else may change files", () => {
  assert.equal(claudeToolClass("Grep", {}), "viewing");
  assert.equal(claudeToolClass("Bash", { command: "cat a.txt" }), "viewing");
  assert.equal(claudeToolClass("Bash", { command: "rm a.txt" }), "opaque");
  assert.equal(claudeToolClass("Agent", {}), "opaque");
  assert.equal(claudeToolClass("Glob", {}), "followed");
  assert.equal(claudeToolClass("MultiEdit", {}), "write");
});

Deno.test("a partial last line of a transcript is skipped", () => {
  assert.equal(parseClaudeTranscript('{"uuid":"a"}\n{"uuid":"b"}\n{"uu').length, 2);
});

Deno.test("answers are numbered up to 0; shown lines must be the file's, from where asked", () => {
  const f = claudeAnswerFile("[readcache: 2 lines changed of 31]\n@@ -1 +1 @@\n-a\n+b", 31);
  assert.equal(claudeReadText(f).split("\n").at(-1), "0\t+b");
  assert.equal(claudeReadText(f).split("\n")[0], "-3\t[readcache: 2 lines changed of 31]");
  const bytes = new TextEncoder().encode("a\nb\nc\n");
  const shown = (content: string, startLine: number, numLines: number, totalLines = 4) =>
    claudeShownLines({ content, startLine, numLines, totalLines }, bytes);
  assert.deepEqual(shown("a\nb\nc\n", 1, 4), { end: 4 });
  assert.deepEqual(shown("b", 2, 1), { offset: 2, limit: 1, end: 2 });
  assert.equal(shown("B", 2, 1), undefined, "the file changed since Claude Code read it");
  assert.equal(shown("b", 2, 1, 3), undefined, "another line count");
  const crlf = new TextEncoder().encode("a\r\nb\r\n");
  assert.equal(
    claudeShownLines({ content: "a\nb\n", startLine: 1, numLines: 3, totalLines: 3 }, crlf),
    undefined,
  );
});

Deno.test("a microcompaction or a summary replacing a span is a barrier too", () => {
  for (
    const barrier of [
      { type: "system", subtype: "microcompact_boundary", uuid: "b", parentUuid: "r1" },
      { ...user("b", "r1", "summary of the span"), replacesSpan: true },
    ] as ClaudeRowLike[]
  ) {
    const rows = [
      user("u1", null, "go"),
      assistant("a1", "u1", "m1", call("t1", "Read", { file_path: "/w/a.txt" })),
      result("r1", "a1", "t1", { type: "text", file: { readcache: META } }),
      barrier,
      assistant("a2", "b", "m2", call("t2", "Read", { file_path: "/w/a.txt" })),
    ];
    const b = claudeBranchToReplay(rows, { currentCallId: "t2", pathKey })!;
    assert.deepEqual(b.entries.map((e) => [e.id, e.kind]), [["b", "compaction"], [
      "a2#1",
      "other",
    ]]);
  }
});

Deno.test("a request that lets the server clear tool results is noticed", () => {
  const index = new ClaudeTranscriptIndex();
  index.add({
    type: "api-request",
    params: { context_management: { edits: [{ type: "clear_thinking_20251015" }] } },
  });
  assert.equal(index.clearsToolResults, false);
  index.add({
    type: "api-request",
    params: { context_management: { edits: [{ type: "clear_tool_uses_20250919" }] } },
  });
  assert.equal(index.clearsToolResults, true);
});

Deno.test("a request that did not extend the one before starts a new window", () => {
  const rows = (second: Record<string, unknown>): ClaudeRowLike[] => [
    { type: "api-request", id: "q1", keep: 0, tail: ["x", "y"] },
    user("u1", null, "go"),
    assistant("a1", "u1", "m1", call("t1", "Read", { file_path: "/w/a.txt" })),
    result("r1", "a1", "t1", { type: "text", file: { readcache: META } }),
    second,
    assistant("a2", "r1", "m2", call("t2", "Read", { file_path: "/w/a.txt" })),
  ];
  const kinds = (second: Record<string, unknown>) =>
    claudeBranchToReplay(rows(second), { currentCallId: "t2", pathKey })!.entries.map((e) =>
      e.kind
    );
  // extends q1 (keeps its 2 messages): one window
  assert.deepEqual(kinds({ type: "api-request", id: "q2", base: "q1", keep: 2, tail: ["z"] }), [
    "other",
    "other",
    "read",
    "other",
  ]);
  // keeps 1 of q1's 2 messages: rewritten, a new window
  assert.deepEqual(kinds({ type: "api-request", id: "q2", base: "q1", keep: 1, tail: ["z"] }), [
    "compaction",
    "other",
  ]);
  // a message sent with a result cut from it
  const cut = {
    type: "api-request-blob",
    message: {
      role: "user",
      content: [{
        type: "tool_result",
        tool_use_id: "t1",
        content: "[Old tool result content cleared]",
      }],
    },
  };
  assert.deepEqual(kinds(cut), ["compaction", "other"]);
  // Claude Code's own record of a cut
  assert.deepEqual(
    kinds({
      type: "attachment",
      uuid: "x",
      parentUuid: "r1",
      attachment: { type: "tool_results_cut" },
    })
      .length,
    4,
    "an attachment off the chain changes nothing",
  );
});

Deno.test("Claude Code's record of results it cut is a barrier", () => {
  const rows: ClaudeRowLike[] = [
    user("u1", null, "go"),
    assistant("a1", "u1", "m1", call("t1", "Read", { file_path: "/w/a.txt" })),
    result("r1", "a1", "t1", { type: "text", file: { readcache: META } }),
    { type: "attachment", uuid: "x", parentUuid: "r1", attachment: { type: "tool_results_cut" } },
    assistant("a2", "x", "m2", call("t2", "Read", { file_path: "/w/a.txt" })),
  ];
  const b = claudeBranchToReplay(rows, { currentCallId: "t2", pathKey })!;
  assert.deepEqual(b.entries.map((e) => e.kind), ["compaction", "other"]);
});

Deno.test("responses that share an API id stay apart: before and after a compaction, across a resume, chained to a call with no result", () => {
  // every response carries the id "m" (a gateway, a scripted API restarting its ids)
  const rows: ClaudeRowLike[] = [
    user("u1", null, "go"),
    assistant("a1", "u1", "m", call("t1", "Read", { file_path: "/w/a.txt" })),
    result("r1", "a1", "t1", { type: "text", file: { readcache: META } }),
    { type: "system", subtype: "compact_boundary", uuid: "c", parentUuid: null },
    { ...user("s", "c", "summary"), isCompactSummary: true },
    assistant("a2", "s", "m", call("t2", "Read", { file_path: "/w/a.txt" })),
  ];
  const b = claudeBranchToReplay(rows, { currentCallId: "t2", pathKey })!;
  assert.deepEqual(b.entries.map((e) => [e.id, e.kind]), [["s", "compaction"], ["a2#1", "other"]]);
  assert.deepEqual(b.current, { messageId: "a2", callIds: ["t2"] });

  // a resumed session's next response, with the id of the last one
  const resumed = [
    user("u1", null, "go"),
    assistant("a1", "u1", "m", call("t1", "Read", { file_path: "/w/a.txt" })),
    result("r1", "a1", "t1", { type: "text", file: { readcache: META } }),
    user("u2", "r1", "again"),
    assistant("a2", "u2", "m", call("t2", "Read", { file_path: "/w/a.txt" })),
  ];
  const r = claudeBranchToReplay(resumed, { currentCallId: "t2", pathKey })!;
  assert.deepEqual(r.current, { messageId: "a2", callIds: ["t2"] });
  assert.deepEqual(r.entries.map((e) => e.kind), ["other", "other", "read", "other", "other"]);

  // a response chained to a call that never got a result: Claude Code's request id tells them
  // apart where the API's does not
  const ref = (row: ClaudeRowLike, requestRef: string): ClaudeRowLike => ({ ...row, requestRef });
  const chained = [
    user("u1", null, "go"),
    ref(assistant("a1", "u1", "m", call("t1", "Read", { file_path: "/w/a.txt" })), "q1"),
    ref(assistant("a1b", "a1", "m", call("t1b", "Bash", { command: "make" })), "q1"),
    ref(assistant("a2", "a1b", "m", call("t2", "Read", { file_path: "/w/a.txt" })), "q2"),
  ];
  const c = claudeBranchToReplay(chained, { currentCallId: "t2", pathKey })!;
  assert.deepEqual(c.current, { messageId: "a2", callIds: ["t2"] });
  const d = claudeBranchToReplay(chained, { currentCallId: "t1b", pathKey })!;
  assert.deepEqual(
    d.current,
    { messageId: "a1", callIds: ["t1", "t1b"] },
    "one request: one message",
  );
});

Deno.test("a hook input's call must be the transcript's: same tool, same arguments", () => {
  const index = new ClaudeTranscriptIndex();
  for (
    const row of [
      user("u1", null, "go"),
      assistant("a1", "u1", "m1", call("t1", "Read", { file_path: "/w/a.txt", offset: 2 })),
      assistant("a2", "a1", "m1", call("t2", "Bash", { command: "ls", description: "list" })),
    ]
  ) index.add(row);
  assert.ok(index.callMatches("t1", "Read", { file_path: "/w/a.txt", offset: 2 }));
  assert.ok(!index.callMatches("t1", "Read", { file_path: "/etc/shadow", offset: 2 }));
  assert.ok(!index.callMatches("t1", "Read", { file_path: "/w/a.txt" }));
  assert.ok(!index.callMatches("t1", "Bash", { file_path: "/w/a.txt", offset: 2 }));
  assert.ok(index.callMatches("t2", "Bash", { command: "ls" }), "only the arguments it uses");
  assert.ok(!index.callMatches("t2", "Bash", { command: "cat /etc/shadow" }));
  assert.ok(!index.callMatches("t9", "Read", { file_path: "/w/a.txt" }));
});

Deno.test("without Claude Code's request id, a message the API's id joins after it held calls is not proven one response", () => {
  const index = (rows: ClaudeRowLike[]) => {
    const i = new ClaudeTranscriptIndex();
    for (const row of rows) i.add(row);
    return i;
  };
  // a response chained to calls that never got results, with the same API id: it could be one
  // response with two calls, or two; the host answers neither from what the message would hold
  const chained = index([
    user("u1", null, "go"),
    assistant("a1", "u1", "m", call("t1", "Read", { file_path: "/w/a.txt" })),
    assistant("a2", "a1", "m", call("t2", "Read", { file_path: "/w/a.txt" })),
  ]);
  assert.equal(chained.unproven("t2"), true);
  assert.equal(chained.unproven("t1"), true);
  // a text block, then the call: nothing is joined to a message with calls
  const plain = index([
    user("u1", null, "go"),
    assistant("a0", "u1", "m", { type: "text", text: "reading" }),
    assistant("a1", "a0", "m", call("t1", "Read", { file_path: "/w/a.txt" })),
  ]);
  assert.equal(plain.unproven("t1"), false);
  // with the request id (Claude Code 2.1.332 writes it on every row of a logged request), the
  // same rows are one response, proven
  const ref = (row: ClaudeRowLike): ClaudeRowLike => ({ ...row, requestRef: "q1" });
  const proven = index([
    user("u1", null, "go"),
    ref(assistant("a1", "u1", "m", call("t1", "Read", { file_path: "/w/a.txt" }))),
    ref(assistant("a2", "a1", "m", call("t2", "Read", { file_path: "/w/a.txt" }))),
  ]);
  assert.equal(proven.unproven("t2"), false);
});
