// The OpenCode session mapping (src/adapters/opencode/branch.ts) on synthetic sessions shaped
// like what `client.session.messages` returns in OpenCode 1.18.33: the entries it makes, and
// what the core then derives from them (trust, views) for compaction, revert, pruning, dropped
// messages, writes, edits, patches and attachments.
import assert from "node:assert/strict";
import { BranchKnowledge } from "../../src/core/knowledge.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { ReadCacheMetaV1 } from "../../src/core/meta.ts";
import type { ReplayEntry } from "../../src/core/replay.ts";
import {
  droppedFromContext,
  messagesBeforeRevert,
  openCodeBranchToReplay,
  type OpenCodeMessageLike,
  type OpenCodePartLike,
} from "../../src/adapters/opencode/branch.ts";

const DIR = "/nonexistent-readcache-test/w";
const A = `${DIR}/a.txt`;
const H1 = sha256Hex("one\n");
const H2 = sha256Hex("two\n");

let n = 0;
const user = (...parts: OpenCodePartLike[]): OpenCodeMessageLike => ({
  info: { id: `msg_${++n}`, role: "user" },
  parts: [{ id: `prt_${++n}`, type: "text" }, ...parts],
});
const assistant = (
  parts: OpenCodePartLike[],
  info: Partial<OpenCodeMessageLike["info"]> = {},
): OpenCodeMessageLike => ({
  info: { id: `msg_${++n}`, role: "assistant", finish: "tool-calls", ...info },
  parts: [{ id: `prt_${++n}`, type: "step-start" }, ...parts],
});
const tool = (
  name: string,
  input: Record<string, unknown>,
  status = "completed",
  extra: { metadata?: unknown; compacted?: number; output?: string } = {},
): OpenCodePartLike => ({
  id: `prt_${++n}`,
  type: "tool",
  tool: name,
  callID: `call_${n}`,
  state: {
    status,
    input,
    output: extra.output ?? "...",
    metadata: extra.metadata ?? {},
    time: extra.compacted === undefined ? {} : { compacted: extra.compacted },
  },
});
const meta = (
  mode: ReadCacheMetaV1["mode"],
  hash: string,
  baseHash?: string,
): { readcache: ReadCacheMetaV1 } => ({
  readcache: {
    v: 1,
    pathKey: A,
    scopeKey: "full",
    servedHash: hash,
    mode,
    totalLines: 2,
    rangeStart: 1,
    rangeEnd: 2,
    bytes: 10,
    ...(baseHash === undefined ? {} : { baseHash }),
  },
});
const readA = (m: ReturnType<typeof meta>, extra: { compacted?: number } = {}) =>
  tool("read", { filePath: "a.txt" }, "completed", { metadata: m, ...extra });

/** What the core holds of a.txt after the branch. */
function held(messages: OpenCodeMessageLike[], currentCallId?: string) {
  const branch = openCodeBranchToReplay(messages, { directory: DIR, currentCallId });
  const k = new BranchKnowledge();
  k.sync(branch.entries);
  const f = k.file(A, A);
  return {
    branch,
    full: f.trust?.full?.hash,
    newest: f.keyViews.at(-1)?.hash,
  };
}
const kinds = (entries: readonly ReplayEntry[]) => entries.map((e) => e.kind);

Deno.test("a completed read is a read event with its metadata and call", () => {
  const r = readA(meta("full", H1));
  const { branch, full, newest } = held([user(), assistant([r])]);
  assert.deepEqual(kinds(branch.entries), ["other", "other", "read"]);
  const e = branch.entries[2] as Extract<ReplayEntry, { kind: "read" }>;
  assert.deepEqual(e.call, { name: A, pathKey: A });
  assert.equal(e.callId, r.callID);
  assert.equal(full, H1);
  assert.equal(newest, H1);
});

Deno.test("the message of the current call ends the branch; its calls are listed in order", () => {
  const done = readA(meta("full", H1));
  const mine = tool("read", { filePath: "a.txt" }, "running");
  const other = tool("read", { filePath: "b.txt" }, "completed");
  const w = tool("write", { filePath: "c.txt", content: "x" }, "completed");
  const msgs = [
    user(),
    assistant([done]),
    user(),
    assistant([mine, other, w], { finish: undefined }),
  ];
  const { branch } = held(msgs, mine.callID);
  assert.deepEqual(kinds(branch.entries), ["other", "other", "read", "other", "other"]);
  assert.deepEqual(branch.current?.callIds, [mine.callID, other.callID, w.callID]);
  const last = branch.entries.at(-1) as Extract<ReplayEntry, { kind: "other" }>;
  assert.deepEqual(last.changes, [{
    callId: w.callID,
    call: { name: `${DIR}/c.txt`, pathKey: `${DIR}/c.txt` },
    tool: "write",
  }]);
  assert.equal(
    openCodeBranchToReplay(msgs, { directory: DIR, currentCallId: "nope" }).current,
    undefined,
  );
});

Deno.test("the latest finished compaction summary is the barrier", () => {
  const before = [user(), assistant([readA(meta("full", H1))])];
  const compactUser = user({ id: "prt_c", type: "compaction" });
  const summary = assistant([], { parentID: compactUser.info.id, summary: true, finish: "stop" });
  const after = held([...before, compactUser, summary, user()]);
  assert.ok(kinds(after.branch.entries).includes("compaction"));
  assert.equal(after.full, undefined, "nothing read before the summary counts");
  // a summary still running, failed, or not answering a compaction request is no barrier
  for (
    const s of [
      assistant([], { parentID: compactUser.info.id, summary: true, finish: undefined }),
      assistant([], {
        parentID: compactUser.info.id,
        summary: true,
        finish: "error",
        error: { name: "ContextOverflowError" },
      }),
      assistant([], { parentID: before[0].info.id, summary: true, finish: "stop" }),
    ]
  ) {
    const r = held([...before, compactUser, s, user()]);
    assert.ok(!kinds(r.branch.entries).includes("compaction"));
    assert.equal(r.full, H1);
  }
});

Deno.test("messages from the revert point on are not on the branch", () => {
  const r1 = readA(meta("full", H1));
  const m = [user(), assistant([r1])];
  assert.equal(messagesBeforeRevert(m, { messageID: m[0].info.id }).length, 0);
  assert.equal(
    held(messagesBeforeRevert(m, { messageID: m[1].info.id }) as OpenCodeMessageLike[]).full,
    undefined,
  );
  const kept = messagesBeforeRevert(m, { messageID: m[1].info.id, partID: r1.id });
  assert.equal(kept.length, 2);
  assert.equal(kept[1].parts.length, 1, "the parts before partID stay");
  assert.equal(messagesBeforeRevert(m, { messageID: "gone" }).length, 2);
  const branch = openCodeBranchToReplay(m, { directory: DIR, revert: { messageID: m[1].info.id } });
  assert.deepEqual(kinds(branch.entries), ["other"]);
});

Deno.test("a pruned read no longer counts, and its lines are unknown", () => {
  const anchor = readA(meta("full", H1), { compacted: 1 });
  const chained = readA(meta("unchanged", H1, H1));
  const r = held([user(), assistant([anchor]), user(), assistant([chained])]);
  assert.equal(r.full, undefined, "an unchanged answer whose anchor was pruned is no anchor");
  assert.equal(r.newest, null);
  assert.ok(r.branch.entries.some((e) => e.id.endsWith("~pruned")));
});

Deno.test("an assistant message OpenCode drops (an error) counts for nothing", () => {
  const failed = assistant([readA(meta("full", H1))], { error: { name: "APIError" } });
  assert.equal(droppedFromContext(failed), true);
  assert.equal(held([user(), failed]).full, undefined);
  const aborted = assistant([readA(meta("full", H1))], { error: { name: "MessageAbortedError" } });
  assert.equal(droppedFromContext(aborted), false, "aborted with output: kept");
  assert.equal(held([user(), aborted]).full, H1);
  const abortedEmpty = assistant([], { error: { name: "MessageAbortedError" } });
  assert.equal(droppedFromContext(abortedEmpty), true);
});

Deno.test("a completed write of well-formed content is proof; anything else makes the file unknown", () => {
  const proof = tool("write", { filePath: A, content: "two\n" });
  const w = held([user(), assistant([readA(meta("full", H1))]), user(), assistant([proof])]);
  assert.deepEqual(kinds(w.branch.entries).slice(-1), ["wrote"]);
  assert.equal(w.full, H2);
  for (
    const bad of [
      tool("write", { filePath: A, content: "\uFEFFtwo\n" }), // OpenCode decides the BOM
      tool("write", { filePath: A, content: "two\n" }, "error"),
      tool("write", { filePath: A, content: "two\n" }, "completed", { compacted: 1 }),
      tool("edit", { filePath: A, oldString: "one", newString: "two" }),
      tool("edit", { filePath: A, oldString: "one", newString: "two" }, "error"),
      tool("apply_patch", {
        patchText: "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch",
      }),
    ]
  ) {
    const r = held([user(), assistant([readA(meta("full", H1))]), user(), assistant([bad])]);
    assert.equal(kinds(r.branch.entries).at(-1), "changed", `${bad.tool} ${bad.state?.status}`);
    assert.equal(r.newest, null, `${bad.tool}: unknown after the change`);
  }
});

Deno.test("a change that never got a result leaves its file unknown", () => {
  const pending = tool("edit", { filePath: A, oldString: "one", newString: "two" }, "running");
  const r = held([
    user(),
    assistant([readA(meta("full", H1))]),
    user(),
    assistant([pending]),
    user(),
  ]);
  assert.equal(r.newest, null);
});

Deno.test("apply_patch: one change per file, each with its own call id", () => {
  const p = tool("apply_patch", {
    patchText: "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-x\n+y\n" +
      "*** Add File: c.txt\n+z\n*** End Patch",
  });
  const { branch } = held([user(), assistant([p])]);
  const changed = branch.entries.filter((e) => e.kind === "changed") as Extract<
    ReplayEntry,
    { kind: "changed" }
  >[];
  assert.deepEqual(changed.map((e) => e.call.name), [A, `${DIR}/b.txt`, `${DIR}/c.txt`]);
  assert.deepEqual(changed.map((e) => e.callId), [p.callID, `${p.callID}#1`, `${p.callID}#2`]);
});

Deno.test("a snapshot patch part makes files no call of the message targets unknown", () => {
  const w = tool("write", { filePath: A, content: "two\n" });
  const patch = { id: `prt_${++n}`, type: "patch", files: [A, `${DIR}/other.txt`] };
  const { branch } = held([user(), assistant([w, patch])]);
  const changed = branch.entries.filter((e) => e.kind === "changed") as Extract<
    ReplayEntry,
    { kind: "changed" }
  >[];
  assert.deepEqual(changed.map((e) => e.call.name), [`${DIR}/other.txt`]);
  const viaBash = held([
    user(),
    assistant([readA(meta("full", H1))]),
    user(),
    assistant([
      tool("bash", { command: "sed -i s/one/two/ a.txt" }),
      { id: `prt_${++n}`, type: "patch", files: [A] },
    ]),
  ]);
  assert.equal(viaBash.newest, null, "a file bash changed is unknown");
});

Deno.test("a file the user attached is text the model saw that we did not serve", () => {
  const attach = { id: `prt_${++n}`, type: "file", url: `file://${A}?start=1&end=2` };
  const r = held([user(), assistant([readA(meta("full", H1))]), user(attach)]);
  assert.equal(r.newest, null);
});

Deno.test("reads in the order of their parts; failed and running reads are not reads", () => {
  const failed = tool("read", { filePath: "a.txt" }, "error");
  const running = tool("read", { filePath: "a.txt" }, "running");
  const { branch } = held([user(), assistant([failed, running]), user()]);
  assert.deepEqual(kinds(branch.entries), ["other", "other", "other", "other"]);
  assert.equal((branch.entries[2] as { toolResult?: boolean }).toolResult, true);
});
