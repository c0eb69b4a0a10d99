// The model's belief after its own edit (SPEC §5.9): which lines it touched, which it holds
// afterwards and how they are renumbered (src/core/edit.ts, pure).
import assert from "node:assert/strict";
import { editBelief, planEditMeta } from "../src/core/edit.ts";
import { sha256Hex } from "../src/core/hash.ts";
import { type LineView, TO_END } from "../src/core/view.ts";

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
const A = lines(40);
const HA = sha256Hex(A);

function plan(views: LineView[], oldText: string, newText: string) {
  return planEditMeta({
    pathKey: "/w/a",
    base: { hash: HA, text: A },
    keyViews: views,
    nameViews: views,
    edits: [{ oldText, newText }],
  });
}

Deno.test("edit belief: the whole file held, a line added", () => {
  const p = plan([{ seq: 1, start: 1, end: TO_END, hash: HA }], "line 5\n", "line 5\nline 5b\n");
  assert.ok(p);
  assert.equal(p.text, A.replace("line 5\n", "line 5\nline 5b\n"));
  assert.deepEqual(p.meta, {
    v: 1,
    kind: "edit",
    pathKey: "/w/a",
    baseHash: HA,
    servedHash: sha256Hex(p.text),
    totalLines: 42,
    from: 5,
    held: [{ start: 1 }],
    shown: [{ start: 1 }],
  });
});

Deno.test("edit belief: a range held, renumbered; stretches before the edit are left alone", () => {
  const views: LineView[] = [
    { seq: 1, start: 1, end: 3, hash: HA },
    { seq: 2, start: 10, end: 19, hash: HA },
    { seq: 3, start: 30, end: TO_END, hash: HA },
  ];
  const p = plan(views, "line 12\n", "line 12\nline 12b\nline 12c\n");
  assert.ok(p);
  assert.equal(p.meta.from, 12);
  assert.deepEqual(p.meta.held, [{ start: 10, end: 19 }, { start: 30 }]);
  assert.deepEqual(p.meta.shown, [{ start: 10, end: 21 }, { start: 32 }]);
});

Deno.test("edit belief: only lines held under the identity AND the name, with the base's content", () => {
  const key: LineView[] = [{ seq: 1, start: 1, end: TO_END, hash: HA }];
  const name: LineView[] = [
    { seq: 1, start: 1, end: TO_END, hash: HA },
    { seq: 2, start: 4, end: 6, hash: null }, // a plain read of lines 4-6 under this name
  ];
  const edit = [{ oldText: "line 5", newText: "five" }];
  const base = { hash: HA, text: A };
  // line 5 is not held under the name: no belief, and only lines 1-3 (held) stay known
  const p5 = planEditMeta({ pathKey: "/w/a", base, keyViews: key, nameViews: name, edits: edit });
  assert.deepEqual([p5?.meta.held, p5?.meta.from], [[], 4]);
  const p = planEditMeta({
    pathKey: "/w/a",
    base,
    keyViews: key,
    nameViews: name,
    edits: [{ oldText: "line 8", newText: "eight" }],
  });
  // lines 4-6, which the model holds under the name as a content the cache does not know, could
  // hold "line 8" too: no belief, and only lines 1-3 stay known
  assert.deepEqual([p?.meta.held, p?.meta.from], [[], 4]);
});

Deno.test("edit belief: a match ending with a line break touches the next line", () => {
  assert.deepEqual(editBelief("a\nb\nc", [{ oldText: "a\n", newText: "x" }])?.touched, [
    { start: 1, end: 2, newEnd: 1 },
  ]);
  // so an edit joining line 3 to a line the model never saw is not a belief: lines 1-2 stay
  const views: LineView[] = [{ seq: 1, start: 1, end: 3, hash: HA }];
  const p = plan(views, "line 3\n", "line 3 ");
  assert.deepEqual([p?.meta.held, p?.meta.from], [[], 3]);
  assert.ok(plan(views, "line 2\n", "line 2 "));
});

Deno.test("edit belief: not determined where pi would rewrite more than the model sent", () => {
  const ok = [{ oldText: "b", newText: "B" }];
  assert.equal(editBelief("a\r\nb\nc\n", ok), undefined); // mixed line endings
  assert.equal(editBelief("a\rb\nc\n", ok), undefined); // a lone CR
  assert.equal(editBelief("a\nb\n", [{ oldText: "b", newText: "B\r\n" }]), undefined);
  assert.equal(editBelief("a\u2019b\n", [{ oldText: "a'b", newText: "x" }]), undefined); // fuzzy
  assert.equal(editBelief("b\nb\n", ok), undefined); // twice
  assert.equal(editBelief("a\n", ok), undefined); // missing
  assert.equal(editBelief("a\n", [{ oldText: "a", newText: "a" }]), undefined); // no change
  assert.deepEqual(editBelief("\uFEFFa\r\nb\r\n", ok)?.text, "\uFEFFa\r\nB\r\n");
});

Deno.test("edit belief: the text must be once in everything the model holds, of any content", () => {
  // the model holds line 3 from an older content that reads "line 30": it could mean either
  const older = A.replace("line 3\n", "line 30\n");
  const views: LineView[] = [
    { seq: 1, start: 1, end: TO_END, hash: HA },
    { seq: 2, start: 3, end: 3, hash: sha256Hex(older) },
  ];
  const p = planEditMeta({
    pathKey: "/w/a",
    base: { hash: HA, text: A },
    keyViews: views,
    nameViews: views,
    edits: [{ oldText: "line 30", newText: "thirty" }],
    contents: new Map([[sha256Hex(older), older.split("\n")]]),
  });
  assert.deepEqual([p?.meta.held, p?.meta.from], [[], 3]);
});

Deno.test("edit belief: lines held as another content that reads the same are held, and named", () => {
  // the model read the whole file (older content: line 30 differed), then lines 28-32 of A
  const older = A.replace("line 30\n", "line thirty\n").replace("line 35\n", "line 35 old\n");
  const HO = sha256Hex(older);
  const views: LineView[] = [
    { seq: 1, start: 1, end: TO_END, hash: HO },
    { seq: 2, start: 28, end: 32, hash: HA },
  ];
  const p = planEditMeta({
    pathKey: "/w/a",
    base: { hash: HA, text: A },
    keyViews: views,
    nameViews: views,
    edits: [{ oldText: "line 5\n", newText: "line 5\nline 5b\n" }],
    contents: new Map([[HO, older.split("\n")]]),
  });
  assert.ok(p);
  // line 35 reads otherwise in the older content: not held
  assert.deepEqual(p.meta.held, [
    { start: 1, end: 27, hash: HO },
    { start: 28, end: 32 },
    { start: 33, end: 34, hash: HO },
    { start: 36, hash: HO },
  ]);
  assert.deepEqual(p.meta.shown, [
    { start: 1, end: 28 },
    { start: 29, end: 33 },
    { start: 34, end: 35 },
    { start: 37 },
  ]);
  // a content the store lost (held from line 1) could hold the text anywhere: no belief, and no
  // line before it stays known
  const lost = planEditMeta({
    pathKey: "/w/a",
    base: { hash: HA, text: A },
    keyViews: views,
    nameViews: views,
    edits: [{ oldText: "line 29\n", newText: "twenty-nine\n" }],
  });
  assert.equal(lost, undefined);
});
