// The newest-view rule (SPEC §5.5) on hand-made views, and the in-flight overlay ordering
// (SPEC §6.3) through BranchKnowledge.
import assert from "node:assert/strict";
import { BranchKnowledge } from "../src/core/knowledge.ts";
import type { ReadCacheMetaV1 } from "../src/core/meta.ts";
import type { ReplayEntry } from "../src/core/replay.ts";
import {
  addView,
  type LineView,
  newestViewConflict,
  newestViewNeeds,
  TO_END,
} from "../src/core/view.ts";

const TEXT: Record<string, string[]> = {
  A: ["a1", "a2", "a3", "a4", "a5"],
  B: ["a1", "B2", "a3", "a4", "a5"],
  C: ["a1", "a2", "a3", "a4", "a5", "c6"],
};
const lines = (h: string) => TEXT[h];
const whole = (seq: number, hash: string | null): LineView => ({
  seq,
  start: 1,
  end: TO_END,
  hash,
});
const range = (seq: number, start: number, end: number, hash: string | null): LineView => ({
  seq,
  start,
  end,
  hash,
});

function check(base: string, baseSeq: number, start: number, end: number, views: LineView[]) {
  return newestViewConflict(
    { base: { hash: base, seq: baseSeq }, start, end, keyViews: views, nameViews: views },
    TEXT[base],
    lines,
  );
}

Deno.test("the base itself is the newest view: no conflict", () => {
  assert.equal(check("A", 1, 1, TO_END, [whole(1, "A")]), undefined);
});

Deno.test("a fresher range that showed other text for a covered line blocks the base", () => {
  const views = [whole(1, "A"), range(2, 1, 3, "B")];
  assert.equal(check("A", 1, 1, TO_END, views), "newer_view_differs");
  assert.equal(check("A", 1, 2, 2, views), "newer_view_differs");
  assert.equal(check("A", 1, 3, 5, views), undefined, "line 3 is the same in A and B");
  assert.deepEqual(
    newestViewNeeds({
      base: { hash: "A", seq: 1 },
      start: 4,
      end: 5,
      keyViews: views,
      nameViews: [],
    }),
    [],
    "no fresher view overlaps lines 4-5 under the key",
  );
});

Deno.test("a fresher view hidden by an even fresher agreeing one does not block", () => {
  const views = [whole(1, "A"), range(2, 2, 2, "B"), range(3, 1, 5, "A")];
  assert.equal(check("A", 1, 1, TO_END, views), undefined);
});

Deno.test("unknown lines (hash null) and contents that cannot be loaded block", () => {
  assert.equal(check("A", 1, 1, 5, [whole(1, "A"), range(1.5, 4, 4, null)]), "newer_view_differs");
  const missing = newestViewConflict(
    {
      base: { hash: "A", seq: 1 },
      start: 1,
      end: TO_END,
      keyViews: [whole(1, "A"), range(2, 1, 1, "Z")],
      nameViews: [whole(1, "A")],
    },
    TEXT.A,
    lines,
  );
  assert.equal(missing, "newer_view_differs");
});

Deno.test("a whole-file view of another length disagrees on a whole-file answer", () => {
  assert.equal(
    check("A", 1, 1, TO_END, [whole(1, "A"), range(2, 6, 6, "C")]),
    "newer_view_differs",
  );
  assert.equal(check("A", 1, 1, 5, [whole(1, "A"), whole(2, "C")]), undefined, "lines 1-5 agree");
});

Deno.test("under the name, every line of the answer needs a view", () => {
  const q = {
    base: { hash: "A", seq: 2 },
    start: 1,
    end: TO_END,
    keyViews: [whole(2, "A")],
    nameViews: [range(1, 1, 3, "A")],
  };
  assert.equal(newestViewConflict(q, TEXT.A, lines), "name_not_seen");
  assert.equal(newestViewConflict({ ...q, end: 3 }, TEXT.A, lines), undefined);
  assert.equal(newestViewConflict({ ...q, nameViews: [] }, TEXT.A, lines), "name_not_seen");
});

Deno.test("addView drops only views the new one hides completely", () => {
  const v = addView([range(1, 1, 3, "A"), range(2, 4, 9, "A")], range(3, 1, 5, "B"));
  assert.deepEqual(v.map((x) => x.seq), [2, 3]);
});

const meta = (mode: ReadCacheMetaV1["mode"], hash: string, base?: string): ReadCacheMetaV1 => ({
  v: 1,
  pathKey: "/w/a",
  scopeKey: "full",
  servedHash: hash,
  mode,
  totalLines: 5,
  rangeStart: 1,
  rangeEnd: 5,
  bytes: 10,
  ...(base === undefined ? {} : { baseHash: base }),
});
const call = { name: "/w/a", pathKey: "/w/a" };

Deno.test("an in-flight read overtaken by a later-served read that is already persisted counts as unknown", () => {
  const k = new BranchKnowledge();
  const turn: ReplayEntry[] = [{ id: "a1", parentId: null, kind: "other" }];
  k.sync(turn);
  k.recordServed({ meta: meta("full", "A"), call, callId: "x" });
  k.recordServed({ meta: meta("full", "B"), call, callId: "y" });
  k.sync([...turn, {
    id: "t",
    parentId: "a1",
    kind: "read",
    callId: "y",
    meta: meta("full", "B"),
    call,
  }]);
  const f = k.file("/w/a");
  assert.equal(f.trust?.full?.hash, "B", "the persisted, later read is the trusted one");
  assert.equal(f.keyViews.at(-1)?.hash, null, "the overtaken read's lines are unknown");
});

Deno.test("an in-flight read followed by the persisted result of an earlier-served read stays on top", () => {
  const k = new BranchKnowledge();
  const turn: ReplayEntry[] = [{ id: "a1", parentId: null, kind: "other" }];
  k.sync(turn);
  k.recordServed({ meta: meta("full", "A"), call, callId: "y" });
  k.recordServed({ meta: meta("diff", "B", "A"), call, callId: "x" });
  k.sync([...turn, {
    id: "t",
    parentId: "a1",
    kind: "read",
    callId: "y",
    meta: meta("full", "A"),
    call,
  }]);
  const f = k.file("/w/a");
  assert.equal(f.trust?.full?.hash, "B");
  assert.equal(f.keyViews.at(-1)?.hash, "B");
});

Deno.test("an in-flight read ends when an entry that is not a tool result follows its anchor", () => {
  const k = new BranchKnowledge();
  const turn: ReplayEntry[] = [{ id: "a1", parentId: null, kind: "other" }];
  k.sync(turn);
  k.recordServed({ meta: meta("full", "A"), call, callId: "x" });
  k.sync([...turn, { id: "r", parentId: "a1", kind: "other", toolResult: true }]);
  assert.equal(k.file("/w/a").trust?.full?.hash, "A", "another tool's result: same turn");
  k.sync([...turn, { id: "r", parentId: "a1", kind: "other", toolResult: true }, {
    id: "u",
    parentId: "r",
    kind: "other",
  }]);
  assert.equal(k.file("/w/a").trust, undefined);
});
