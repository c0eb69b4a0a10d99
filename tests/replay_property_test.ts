// Properties of replay that vectors cannot enumerate: incremental replay over
// any sequence of leaves equals replay from scratch, and the pure trust
// functions never modify their inputs.
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  activeBranch,
  BranchKnowledge,
  replayBranch,
  ReplayCursor,
  type ReplayEntry,
} from "../replay.ts";
import {
  applyInvalidation,
  applyReadMeta,
  type ReadCacheMetaV1,
  type TrustState,
} from "../rules.ts";

const hashes = ["h0", "h1", "h2"];
const scopes = ["full", "r:1:3", "r:2:5"] as const;
const metaArb = fc.record({
  mode: fc.constantFrom("full", "unchanged", "unchanged_range", "diff", "baseline_fallback"),
  scope: fc.constantFrom(...scopes),
  served: fc.constantFrom(...hashes),
  base: fc.option(fc.constantFrom(...hashes), { nil: undefined }),
  path: fc.constantFrom("/a", "/b"),
}).map(({ mode, scope, served, base, path }) => ({
  v: 1,
  pathKey: path,
  scopeKey: scope,
  servedHash: served,
  ...(base ? { baseHash: base } : {}),
  mode,
  totalLines: 5,
  rangeStart: 1,
  rangeEnd: 5,
  bytes: 1,
}));
const kindArb = fc.oneof(
  { weight: 6, arbitrary: metaArb.map((meta) => ({ kind: "read" as const, meta })) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...scopes).map((s) => ({
      kind: "invalidate" as const,
      data: { v: 1, kind: "invalidate", pathKey: "/a", scopeKey: s, at: 1 },
    })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "compaction" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "other" as const }) },
);
// A random tree of entry bodies: each entry picks a parent among earlier entries (or extends the
// last).
function treeOf<T extends object>(body: fc.Arbitrary<T>): fc.Arbitrary<ReplayEntry[]> {
  return fc.array(fc.tuple(body, fc.nat(), fc.boolean()), { minLength: 1, maxLength: 40 })
    .map((items) =>
      items.map(([k, p, extendLast], i): ReplayEntry =>
        ({
          ...k,
          id: `e${i}`,
          parentId: i === 0 ? null : `e${extendLast ? i - 1 : p % i}`,
        }) as unknown as ReplayEntry
      )
    );
}
const treeArb = treeOf(kindArb);

Deno.test("incremental replay over any walk of leaves equals replay from scratch", () => {
  fc.assert(
    fc.property(treeArb, fc.array(fc.nat(), { minLength: 1, maxLength: 12 }), (tree, walk) => {
      const cursor = new ReplayCursor();
      for (const w of walk) {
        const branch = activeBranch(tree, tree[w % tree.length].id);
        cursor.advance(branch);
        assert.deepEqual(cursor.snapshot(), replayBranch(branch));
      }
    }),
    { numRuns: 300 },
  );
});

Deno.test("walking up from the leaf (syncTip) gives the same trust and views as a full sync", () => {
  fc.assert(
    fc.property(treeArb, fc.array(fc.nat(), { minLength: 1, maxLength: 12 }), (tree, walk) => {
      const byId = new Map(tree.map((e) => [e.id, e] as const));
      const tip = new BranchKnowledge();
      for (const w of walk) {
        const leaf = tree[w % tree.length].id;
        const branch = activeBranch(tree, leaf);
        tip.syncTip(leaf, (id) => byId.get(id));
        const full = new BranchKnowledge();
        full.sync(branch);
        const a = tip.snapshot();
        const b = full.snapshot();
        assert.deepEqual(
          { trust: a.trust, seq: a.seq, windowSize: a.windowSize, leaf: a.leafId },
          { trust: b.trust, seq: b.seq, windowSize: b.windowSize, leaf: b.leafId },
        );
        for (const p of ["/a", "/b"]) assert.deepEqual(tip.file(p), full.file(p));
      }
    }),
    { numRuns: 300 },
  );
});

Deno.test("extending a branch does not re-replay it", () => {
  const entries: ReplayEntry[] = [];
  const cursor = new ReplayCursor();
  for (let i = 0; i < 50; i++) {
    entries.push({ id: `e${i}`, parentId: i === 0 ? null : `e${i - 1}`, kind: "other" });
    cursor.advance(entries);
    assert.equal(cursor.lastAdvance, "extended");
  }
  cursor.advance(entries);
  assert.equal(cursor.lastAdvance, "unchanged");
  cursor.advance(entries.slice(0, 10));
  assert.equal(cursor.lastAdvance, "replayed");
});

Deno.test("trust functions do not modify their input state", () => {
  fc.assert(
    fc.property(fc.array(metaArb, { maxLength: 20 }), (metas) => {
      let state: TrustState = {};
      metas.forEach((m, i) => {
        const before = structuredClone(state);
        const next = applyReadMeta(state, m as ReadCacheMetaV1, i + 1);
        assert.deepEqual(state, before);
        const inv = applyInvalidation(next, {
          v: 1,
          kind: "invalidate",
          pathKey: "/a",
          scopeKey: "r:1:3",
          at: 1,
        });
        assert.ok(inv !== undefined);
        state = next;
      });
    }),
  );
});

// Entries that name files under several identities (a name that is a symlink to /a or /b), write
// results, assistant messages with file changes: events join identities into groups, which the
// cursor folds when first asked (SPEC §6.4).
const ids = ["/a", "/b"];
const names = ["/a", "/b", "/link"];
const callArb = fc.record({ name: fc.constantFrom(...names), pathKey: fc.constantFrom(...ids) });
const linkedArb = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.tuple(metaArb, callArb, fc.constantFrom("c1", "c2", "c3")).map((
      [meta, call, callId],
    ) => ({ kind: "read" as const, meta: { ...meta, pathKey: call.pathKey }, call, callId })),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(callArb, fc.constantFrom("h0", "h1"), fc.constantFrom("c1", "c2", "c3"))
      .map(([call, hash, callId]) => ({
        kind: "wrote" as const,
        call,
        hash: hash === "h0" ? "a".repeat(64) : "b".repeat(64),
        callId,
      })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(callArb, fc.constantFrom("c1", "c2", "c3")).map(([call, callId]) => ({
      kind: "other" as const,
      changes: [{ callId, call }],
    })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom("c1", "c2", "c3").map((callId) => ({
      kind: "other" as const,
      toolResult: true,
      callId,
    })),
  },
  { weight: 1, arbitrary: kindArb },
);
const linkedTreeArb = treeOf(linkedArb);

Deno.test("asking about files at any moment of a walk gives what one replay at the end gives", () => {
  const ask = (c: ReplayCursor, id: string) => ({
    trust: c.pathTrust(id),
    keyViews: c.keyViews(id),
    nameViews: c.nameViews(id),
  });
  fc.assert(
    fc.property(
      linkedTreeArb,
      fc.array(fc.tuple(fc.nat(), fc.constantFrom(...names)), { minLength: 1, maxLength: 12 }),
      (tree, walk) => {
        const cursor = new ReplayCursor();
        for (const [w, asked] of walk) {
          const branch = activeBranch(tree, tree[w % tree.length].id);
          cursor.advance(branch);
          ask(cursor, asked); // folds this file's group now, before later events join groups
          const fresh = new ReplayCursor();
          fresh.advance(branch);
          for (const id of [...names].reverse()) assert.deepEqual(ask(cursor, id), ask(fresh, id));
          assert.deepEqual(cursor.snapshot(), fresh.snapshot());
          assert.deepEqual(cursor.pendingChanges(), fresh.pendingChanges());
        }
      },
    ),
    { numRuns: 400 },
  );
});
