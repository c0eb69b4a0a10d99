// A saved replay (SPEC §6.5): knowledge restored from the state saved at any quiet point of any
// branch, then brought to any leaf of the session tree, knows exactly what a replay of the whole
// branch knows; a damaged or foreign state is never used.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import {
  activeBranch,
  BranchKnowledge,
  packReplayState,
  parseReplayState,
  REPLAY_STATE_FORMAT,
  ReplayCursor,
  type ReplayEntry,
  type ReplayState,
  unpackReplayState,
  validateReplayState,
} from "../replay.ts";

const hex = (c: string) => c.repeat(64);
const hashes = [hex("a"), hex("b"), hex("c")];
const ids = ["/a", "/b"];
const names = ["/a", "/b", "/link"];
const callIds = ["c1", "c2", "c3"];
const callArb = fc.record({ name: fc.constantFrom(...names), pathKey: fc.constantFrom(...ids) });
const readArb = fc.record({
  mode: fc.constantFrom("full", "unchanged", "unchanged_range", "diff", "baseline_fallback"),
  scope: fc.constantFrom("full", "r:1:3", "r:2:5"),
  served: fc.constantFrom(...hashes),
  base: fc.option(fc.constantFrom(...hashes), { nil: undefined }),
  call: callArb,
  callId: fc.constantFrom(...callIds),
}).map(({ mode, scope, served, base, call, callId }) => {
  const [start, end] = scope === "full" ? [1, 5] : scope.slice(2).split(":").map(Number);
  return {
    kind: "read" as const,
    meta: {
      v: 1,
      pathKey: call.pathKey,
      scopeKey: scope,
      servedHash: served,
      ...(base ? { baseHash: base } : {}),
      mode,
      totalLines: 5,
      rangeStart: start,
      rangeEnd: end,
      bytes: 1,
    },
    call,
    callId,
  };
});
const bodyArb = fc.oneof(
  { weight: 6, arbitrary: readArb },
  {
    weight: 2,
    arbitrary: fc.tuple(callArb, fc.constantFrom(...hashes), fc.constantFrom(...callIds))
      .map(([call, hash, callId]) => ({ kind: "wrote" as const, call, hash, callId })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(callArb, fc.constantFrom(...callIds)).map(([call, callId]) => ({
      kind: "other" as const,
      changes: [{ callId, call, tool: "write" as const }],
    })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom(...callIds), fc.boolean()).map(([callId, opaque]) => ({
      kind: "other" as const,
      ...(opaque ? { opaque: [callId] } : { shows: [callId] }),
    })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...callIds).map((callId) => ({
      kind: "tool" as const,
      tool: "bash",
      callId,
    })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...callIds).map((callId) => ({
      kind: "other" as const,
      toolResult: true,
      callId,
    })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom("full", "r:1:3").map((s) => ({
      kind: "invalidate" as const,
      data: { v: 1, kind: "invalidate", pathKey: "/a", scopeKey: s, at: 1 },
    })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "compaction" as const }) },
  { weight: 4, arbitrary: fc.constant({ kind: "other" as const }) },
);
const treeArb = fc.array(fc.tuple(bodyArb, fc.nat(), fc.nat(3)), { minLength: 1, maxLength: 50 })
  .map((items) =>
    items.map(([body, p, extendLast], i): ReplayEntry =>
      ({
        ...body,
        id: `e${i}`,
        parentId: i === 0 ? null : `e${extendLast > 0 ? i - 1 : p % i}`,
      }) as unknown as ReplayEntry
    )
  );

/** Everything a read decision asks of the knowledge. */
function seen(k: BranchKnowledge) {
  const snap = k.snapshot();
  return {
    trust: snap.trust,
    seq: snap.seq,
    windowSize: snap.windowSize,
    leafId: snap.leafId,
    modeCounts: snap.modeCounts,
    ignored: snap.ignoredReads,
    files: names.map((n) => ids.map((p) => k.file(p, n))),
    held: k.heldIdentities(),
    pending: k.pendingChanges(),
    opaque: k.opaqueInFlight(),
    turnOpaque: k.turnIsOpaque(),
    turnChanges: k.turnChanges(),
    shown: ids.flatMap((p) => [k.shownScope(p), k.shownScope(p, 1, 3)]),
  };
}

Deno.test("knowledge restored from a saved replay knows what a replay of the whole branch knows", () => {
  let restores = 0;
  fc.assert(
    fc.property(
      treeArb,
      fc.array(fc.tuple(fc.nat(), fc.boolean()), { minLength: 1, maxLength: 14 }),
      (tree, walk) => {
        const byId = new Map(tree.map((e) => [e.id, e] as const));
        let saved: ReplayState | undefined;
        let tip = new BranchKnowledge();
        for (const [w, restart] of walk) {
          const leaf = tree[w % tree.length].id;
          if (restart && saved !== undefined) {
            // as the pi extension saves it: packed, then read back from its JSON
            const state = unpackReplayState(JSON.parse(JSON.stringify(packReplayState(saved))));
            assert.ok(state !== undefined, "a saved state reads back");
            assert.deepEqual(state, parseReplayState(JSON.parse(JSON.stringify(saved))));
            tip = BranchKnowledge.restore(state);
            restores++;
          }
          tip.syncTip(leaf, (id) => byId.get(id));
          const full = new BranchKnowledge();
          full.sync(activeBranch(tree, leaf));
          assert.deepEqual(seen(tip), seen(full));
          saved = tip.saveState() ?? saved;
          if (saved !== undefined) {
            // saving is reading: it changes nothing the knowledge answers
            assert.deepEqual(seen(tip), seen(full));
          }
        }
      },
    ),
    { numRuns: 600 },
  );
  assert.ok(restores > 300, `${restores} restores`);
});

Deno.test("knowledge restored from a saved replay, moved back far along its own branch, knows what a replay of the whole branch knows", () => {
  // a long branch: a read of /a before the saved entry, hundreds of entries after it; the leaf
  // goes to the tip, then back to a point between the saved entry and the tip (further than the
  // walk goes before it indexes the synced branch)
  const entries: ReplayEntry[] = [];
  let parent: string | null = null;
  const add = (e: Omit<ReplayEntry, "id" | "parentId">): string => {
    const id = `e${entries.length}`;
    entries.push({ id, parentId: parent, ...e } as ReplayEntry);
    return parent = id;
  };
  add({ kind: "other" });
  add({
    kind: "read",
    callId: "c1",
    call: { name: "/a", pathKey: "/a" },
    meta: {
      v: 1,
      pathKey: "/a",
      scopeKey: "full",
      servedHash: hex("a"),
      mode: "full",
      totalLines: 3,
      rangeStart: 1,
      rangeEnd: 3,
      bytes: 6,
    },
  } as Omit<ReplayEntry, "id" | "parentId">);
  const saved = add({ kind: "other" });
  for (let i = 0; i < 900; i++) add({ kind: "other" });
  const byId = new Map(entries.map((e) => [e.id, e] as const));
  const first = new BranchKnowledge();
  first.syncTip(saved, (id) => byId.get(id));
  const k = BranchKnowledge.restore(
    unpackReplayState(JSON.parse(JSON.stringify(packReplayState(first.saveState()!))))!,
  );
  k.syncTip(entries.at(-1)!.id, (id) => byId.get(id));
  for (const back of ["e400", "e700", "e3"]) {
    k.syncTip(back, (id) => byId.get(id));
    const full = new BranchKnowledge();
    full.sync(activeBranch(entries, back));
    assert.deepEqual(seen(k), seen(full), back);
    assert.ok(k.file("/a", "/a").trust?.full !== undefined, `${back}: the read before the save`);
  }
});

Deno.test("a restored replay that two files' histories join is replayed whole, in-flight reads kept", () => {
  const read = (
    id: string,
    parentId: string | null,
    name: string,
    served: string,
  ): ReplayEntry => ({
    id,
    parentId,
    kind: "read",
    meta: {
      v: 1,
      pathKey: "/a",
      scopeKey: "full",
      servedHash: served,
      mode: "full",
      totalLines: 5,
      rangeStart: 1,
      rangeEnd: 5,
      bytes: 1,
    },
    call: { name, pathKey: "/a" },
  });
  const tree: ReplayEntry[] = [
    read("r1", null, "/a", hex("a")),
    { id: "u1", parentId: "r1", kind: "other" },
    // /link names /a from now on: its group (which held /b's history) joins /a's
    {
      id: "w1",
      parentId: "u1",
      kind: "wrote",
      call: { name: "/link", pathKey: "/b" },
      hash: hex("c"),
    },
    { id: "u2", parentId: "w1", kind: "other" },
  ];
  const byId = new Map(tree.map((e) => [e.id, e] as const));
  const before = new BranchKnowledge();
  before.syncTip("u2", (id) => byId.get(id));
  const state = before.saveState()!;
  assert.equal(state.leafId, "u2");
  const cursor = ReplayCursor.restore(state);
  const more = [...tree, read("r2", "u2", "/link", hex("b")), {
    id: "u3",
    parentId: "r2",
    kind: "other" as const,
  }];
  cursor.advance(["u2", ...more.slice(4)]);
  assert.equal(cursor.lost, true, "the join needs the events before the saved leaf");
  const byId2 = new Map(more.map((e) => [e.id, e] as const));
  const k = BranchKnowledge.restore(state);
  k.syncTip("u3", (id) => byId2.get(id));
  const full = new BranchKnowledge();
  full.sync(activeBranch(more, "u3"));
  assert.deepEqual(seen(k), seen(full));
  assert.equal(k.snapshot().windowSize, 6);
});

Deno.test("the turn a saved replay ends in goes on: a write after a read of it is unknown from the turn's start", () => {
  const meta = (served: string, scopeKey: string, end: number) => ({
    v: 1,
    pathKey: "/a",
    scopeKey,
    servedHash: served,
    mode: "full",
    totalLines: 5,
    rangeStart: 1,
    rangeEnd: end,
    bytes: 1,
  });
  const call = { name: "/a", pathKey: "/a" };
  const tree: ReplayEntry[] = [
    { id: "r0", parentId: null, kind: "read", meta: meta(hex("a"), "full", 5), call },
    { id: "u1", parentId: "r0", kind: "other" },
    // results with no message of their own after the saved leaf: the turn u1 started goes on
    { id: "r1", parentId: "u1", kind: "read", meta: meta(hex("a"), "r:1:3", 3), call },
    { id: "w1", parentId: "r1", kind: "wrote", call, hash: hex("c") },
  ];
  const byId = new Map(tree.map((e) => [e.id, e] as const));
  const saved = new BranchKnowledge();
  saved.syncTip("u1", (id) => byId.get(id));
  const k = BranchKnowledge.restore(
    parseReplayState(JSON.parse(JSON.stringify(saved.saveState())))!,
  );
  k.syncTip("w1", (id) => byId.get(id));
  const full = new BranchKnowledge();
  full.sync(activeBranch(tree, "w1"));
  assert.deepEqual(seen(k), seen(full));
  // lines 4-5 are unknown from the turn's start, after the full read that set the slot
  const unknown = full.file("/a").keyViews.find((v) => v.hash === null);
  assert.ok(unknown !== undefined && unknown.seq > 1, JSON.stringify(full.file("/a")));
});

Deno.test("a damaged, foreign or malformed saved replay is never used", () => {
  const k = new BranchKnowledge();
  k.sync([
    {
      id: "r1",
      parentId: null,
      kind: "read",
      meta: {
        v: 1,
        pathKey: "/a",
        scopeKey: "full",
        servedHash: hex("a"),
        mode: "full",
        totalLines: 5,
        rangeStart: 1,
        rangeEnd: 5,
        bytes: 1,
      },
    },
    { id: "u1", parentId: "r1", kind: "other" },
  ]);
  const good = JSON.parse(JSON.stringify(k.saveState()));
  assert.ok(parseReplayState(good) !== undefined);
  const bad: [string, unknown][] = [
    ["another format", { ...good, format: REPLAY_STATE_FORMAT + 1 }],
    ["a hash that is not SHA-256 hex", {
      ...good,
      groups: [{
        ...good.groups[0],
        keyViews: [["/a", [{ seq: 1, start: 1, end: 5, hash: "x" }]]],
      }],
    }],
    ["an identity in two groups", { ...good, groups: [good.groups[0], good.groups[0]] }],
    ["a field this format does not have", { ...good, extra: 1 }],
    ["a scope key that is not one", { ...good, shown: [["/a", [["", "r:3:1"]]]] }],
    ["not an object", "state"],
  ];
  for (const [why, v] of bad) assert.equal(parseReplayState(v), undefined, why);
});

Deno.test("the middle of a turn and a compaction are not quiet points: nothing is saved there", () => {
  const k = new BranchKnowledge();
  k.sync([
    { id: "u1", parentId: null, kind: "other" },
    {
      id: "a1",
      parentId: "u1",
      kind: "other",
      changes: [{ callId: "c1", call: { name: "/a", pathKey: "/a" }, tool: "write" }],
    },
  ]);
  assert.equal(k.saveState(), undefined, "a write is waiting for its result");
  k.sync([
    { id: "u1", parentId: null, kind: "other" },
    { id: "c0", parentId: "u1", kind: "compaction" },
  ]);
  assert.equal(k.saveState(), undefined, "a compaction is not a turn's end");
});

// The fast parser and the zod schema accept exactly the same values: saved states of random
// trees, each changed at one random place (a value replaced by an odd one, a key dropped or added).
const odd = fc.oneof(
  fc.constantFrom(undefined, null, "", 0, -1, 1.5, Number.NaN, Infinity, 2 ** 60, "x", "full"),
  fc.constantFrom("r:0:3", "r:5:2", "r:1:3", hex("a"), true, false, [], {}, [1, 2, 3], ["a", "b"]),
  fc.integer(),
  fc.string(),
);
/** Every place in a JSON value: the paths of its objects, arrays and leaves. */
function places(v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []) {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => places(x, [...at, i], out));
  else if (typeof v === "object" && v !== null) {
    for (const [k, x] of Object.entries(v)) places(x, [...at, k], out);
  }
  return out;
}
/** `v` with the place at `path` replaced (0), removed (1) or given a new key or element (2). */
function mutate(v: unknown, path: (string | number)[], to: unknown, how: number, key: string) {
  if (path.length === 0) {
    if (how === 2 && Array.isArray(v)) return [...v, to];
    if (how === 2 && typeof v === "object" && v !== null) return { ...v, [key]: to };
    return how === 0 ? to : v;
  }
  const [k, ...rest] = path;
  if (Array.isArray(v)) {
    const copy = [...v];
    if (rest.length === 0 && how === 1) copy.splice(k as number, 1);
    else copy[k as number] = mutate(copy[k as number], rest, to, how, key);
    return copy;
  }
  const copy = { ...(v as Record<string, unknown>) };
  if (rest.length === 0 && how === 1) delete copy[k];
  else copy[k] = mutate(copy[k], rest, to, how, key);
  return copy;
}

/**
 * Saved states of random trees, each with a damage: a change of a JSON value at one random place
 * (a value replaced by an odd one, a key dropped or added).
 */
function forDamagedStates(
  numRuns: number,
  check: (state: ReplayState, damage: (json: unknown) => unknown) => void,
): void {
  fc.assert(
    fc.property(
      treeArb,
      fc.nat(),
      fc.nat(),
      odd,
      fc.nat(2),
      fc.constantFrom("vacant", "full", "extra"),
      (tree, at, where, to, how, key) => {
        const byId = new Map(tree.map((e) => [e.id, e] as const));
        const k = new BranchKnowledge();
        k.syncTip(tree[at % tree.length].id, (id) => byId.get(id));
        const state = k.saveState();
        if (state === undefined) return;
        check(state, (json) => {
          const all = places(json);
          return mutate(json, all[where % all.length], to, how, key);
        });
      },
    ),
    { numRuns },
  );
}

Deno.test("the fast parser of a saved replay accepts exactly what its zod schema accepts", () => {
  let accepted = 0;
  forDamagedStates(30000, (state, damage) => {
    const v = damage(JSON.parse(JSON.stringify(state)));
    const fast = parseReplayState(v) !== undefined;
    assert.equal(fast, validateReplayState(v) !== undefined, JSON.stringify(v));
    if (fast) accepted++;
  });
  assert.ok(accepted > 100, `${accepted} accepted`);
});

Deno.test("a packed saved replay reads back as the state it packs, and a damaged one never as one the schema rejects", () => {
  let accepted = 0;
  let rejected = 0;
  forDamagedStates(20000, (state, damage) => {
    const plain = JSON.parse(JSON.stringify(state));
    const packed = JSON.parse(JSON.stringify(packReplayState(state)));
    assert.deepEqual(unpackReplayState(packed), plain);
    const v = damage(packed);
    const back = unpackReplayState(v);
    if (back === undefined) rejected++;
    else {
      assert.ok(validateReplayState(back) !== undefined, JSON.stringify(v));
      accepted++;
    }
  });
  assert.ok(accepted > 100 && rejected > 100, `${accepted} accepted, ${rejected} rejected`);
});

// The rules a saved replay depends on live in these files: changing one without a new format
// would let a state saved by the old rules be continued by the new ones.
const RULE_FILES = [
  "src/core/replay.ts",
  "src/core/replay_state.ts",
  "src/core/knowledge.ts",
  "src/core/trust.ts",
  "src/core/view.ts",
  "src/core/edit.ts",
  "src/core/meta.ts",
  "src/core/scope.ts",
  "src/core/shell_view.ts",
  "src/adapters/pi/branch.ts",
  "src/core/host_calls.ts",
  "src/shell/read_service.ts",
];
// Re-pinned without a new format when the change cannot alter a saved state: the CRLF rule of
// §5.9(2) lives in planEditMeta, which runs when an edit is called; replay folds the metadata it
// recorded in the session as before. Likewise "printed while changing" of §5.10 (issue 37): it
// decides a tool result's record when the result comes back; classifyShellCommand, which replay
// uses, answers as before (checked on every command of the real sessions and the vectors); the
// turn's opaque call ids replay now keeps are empty at every point a state is saved (a quiet point);
// the views recognised in more command forms are decided when a result comes back (its record);
// placesInView (§5.9) finds the same places in linear time (20,000 random views compared);
// isInsideProject reads through isAtOrUnder, the same comparison; resolveInvalidation counts the
// lines of a regular file only and refuses a missing path or a directory (a refresh's record,
// decided when it is asked for, never by replay).
// Format 2: pi's branch goes through the host-neutral call mapping (src/core/host_calls.ts); a
// failed write is no proof and now leaves its file unknown like any write that is not proof (SPEC
// §5.8), as on OpenCode and Claude Code. Still format 2 (issue 41): grepToolLines skips rows of
// pi's grep over 500 characters and grepShownLines is unchanged; both decide a grep result's
// record when it comes back, never replay. Still format 2 (issue 39): readRegularFile shares its
// reads with readRegularFileSync (the OpenCode plugin's), the same bytes, and exports its result
// type RegularFileRead; reading files is no rule of replay. Still format 2 (issue 39): serveRead
// reads the file with readRegularFileSync (the same bytes, no wait on the thread pool); the
// packed layout (packReplayState, unpackReplayState) writes the same state in fewer bytes, and a
// file of the layout before it is not read at all (no header line). Still format 2 (issue 39):
// knowledge restored from a state and moved back along its own branch restores the state again
// instead of replaying from the saved entry with nothing before it; states are read as before.
// Still format 2 (issue 39): a walk takes the identities of files it asks many of in a directory
// from one listing of it (WalkIdentities): the same realpaths (tests/walk_identities_test.ts).
// Format 3 (issue 39): the packed layout writes each group as one flat run of numbers and every
// range's scope key once (`scopes`); a file of format 2 is not read (its header says 2). Still
// format 3: the tables of names, hashes and scopes share one helper each way (the same layout).
// Still format 3: the in-flight overlay keeps the views of every name its reads use (the overlay
// is never saved; the saved cursor is the same).
// Format 4: edit metadata whose stretches are out of order or overlap is not valid (a state saved
// by rules that took such metadata as a belief must not be continued); the layout is format 3's.
// Still format 4: partial and edit metadata share one check of their stretches' order (the same rule).
const PINNED: Record<number, string> = {
  1: "3278955fee1383a2fabde5572ba69970f83f1a9be2e45725b096cc5367377b27",
  2: "f554eff120f548d439c332b7e70baf77d46b1ccf53d809864d53271c3b806de2",
  3: "3151c6f20f580f7c9283f14400abd43101b2e2e10177b5a1f6fd06059019210f",
  4: "2faf01db23d6e7ae74211075cbfb3cd21efe42485c2b3880d1d54bbd65b9e72b",
};

Deno.test("the saved replay's format changes with the rules it depends on", () => {
  const h = createHash("sha256");
  for (const f of RULE_FILES) {
    h.update(f);
    h.update(readFileSync(new URL(`../${f}`, import.meta.url)));
  }
  const digest = h.digest("hex");
  assert.equal(
    PINNED[REPLAY_STATE_FORMAT],
    digest,
    `The files replay's rules live in changed (${RULE_FILES.join(", ")}). A state saved by ` +
      `other rules must not be continued: bump REPLAY_STATE_FORMAT in src/core/replay_state.ts ` +
      `and pin the new digest here (${digest}); a comment-only change may keep the format and ` +
      `pin the digest.`,
  );
});
