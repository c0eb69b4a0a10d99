// The pure parts behind /readcache-refresh and /readcache-status.
import assert from "node:assert/strict";
import { RangeSyntaxError, ReadCacheError } from "../src/core/errors.ts";
import { invalidationRecord, invalidationScope, parseRefreshArgs } from "../src/core/refresh.ts";
import { branchStatus, formatBranchStatus } from "../src/core/status.ts";
import type { ReplayEntry } from "../src/core/replay.ts";

Deno.test("refresh arguments: path, optional range as the last word, quotes, spaces", () => {
  assert.deepEqual(parseRefreshArgs("a.txt"), { path: "a.txt" });
  assert.deepEqual(parseRefreshArgs("  src/app.ts   10-20 "), {
    path: "src/app.ts",
    offset: 10,
    limit: 11,
  });
  assert.deepEqual(parseRefreshArgs("a.txt 7"), { path: "a.txt", offset: 7 });
  assert.deepEqual(parseRefreshArgs("my notes.md"), { path: "my notes.md" });
  assert.deepEqual(parseRefreshArgs('"my notes.md" 2-3'), {
    path: "my notes.md",
    offset: 2,
    limit: 2,
  });
  assert.deepEqual(parseRefreshArgs("'it''s.md'"), { path: "it''s.md" });
  // shorthand stays in the path: read resolution handles it like a read
  assert.deepEqual(parseRefreshArgs("a.txt:5-7"), { path: "a.txt:5-7" });
  // a file literally named like a number is still a path when it is the only word
  assert.deepEqual(parseRefreshArgs("2024"), { path: "2024" });
});

Deno.test("refresh arguments: errors name the problem", () => {
  assert.throws(
    () => parseRefreshArgs("   "),
    (e: unknown) =>
      e instanceof ReadCacheError && e.code === "INVALID_ARGUMENT" &&
      e.message.includes("usage: /readcache-refresh <path> [start-end]"),
  );
  assert.throws(() => parseRefreshArgs("a.txt 9-3"), RangeSyntaxError);
  assert.throws(() => parseRefreshArgs("a.txt -3"), /a line number is missing/);
  assert.throws(() => parseRefreshArgs("a.txt 0-3"), /'0' is not a positive integer/);
});

Deno.test("invalidation scope is normalised like a read of the same range", () => {
  assert.equal(invalidationScope(undefined, undefined, undefined), "full");
  assert.equal(invalidationScope(5, 3, 40), "r:5:7");
  assert.equal(invalidationScope(38, 10, 40), "r:38:40", "clamped to the file");
  assert.equal(invalidationScope(1, 40, 40), "full", "the whole file is the full scope");
  assert.equal(invalidationScope(5, undefined, 40), "r:5:40");
  assert.throws(() => invalidationScope(41, 1, 40), /Offset 41 is beyond end of file/);
  assert.throws(() => invalidationScope(1, 2, undefined), /for a file that exists/);
  assert.deepEqual(invalidationRecord("/w/a", "r:1:2", 5), {
    v: 1,
    kind: "invalidate",
    pathKey: "/w/a",
    scopeKey: "r:1:2",
    at: 5,
  });
});

const H1 = "1".repeat(64);
const H2 = "2".repeat(64);
function read(id: string, meta: Record<string, unknown>): ReplayEntry {
  return { id, parentId: null, kind: "read", meta: { v: 1, pathKey: "/w/a", ...meta } };
}
const full = {
  scopeKey: "full",
  servedHash: H1,
  mode: "full",
  totalLines: 100,
  rangeStart: 1,
  rangeEnd: 100,
  bytes: 4000,
};

Deno.test("status: window, modes, tracked scopes and the savings estimate", () => {
  const s = branchStatus([
    read("r1", full),
    read("r2", { ...full, mode: "unchanged", baseHash: H1, bytes: 32 }),
    read("r3", {
      ...full,
      scopeKey: "r:11:20",
      mode: "unchanged_range",
      baseHash: H1,
      rangeStart: 11,
      rangeEnd: 20,
      bytes: 45,
    }),
    read("r4", { ...full, servedHash: H2, mode: "diff", baseHash: H1, bytes: 300 }),
    { id: "x", parentId: null, kind: "read", meta: { v: 1, mode: "full" } }, // invalid: ignored
  ]);
  assert.deepEqual(s.files, [{ pathKey: "/w/a", scopes: ["full", "r:11:20"] }]);
  assert.equal(s.windowSize, 5);
  assert.equal(s.compactionId, null);
  assert.deepEqual(s.modeCounts, {
    full: 1,
    unchanged: 1,
    unchanged_range: 1,
    diff: 1,
    baseline_fallback: 0,
    partial: 0,
  });
  // 40 bytes per line from the anchor: 4000 + 4000 + 400 + 4000 for 4000 + 32 + 45 + 300
  assert.equal(s.servedBytes, 4377);
  assert.equal(s.estimatedBaselineBytes, 12400);
  assert.equal(s.estimatedTokensSaved, Math.round((12400 - 4377) / 4));
});

Deno.test("status: only the window after the latest compaction counts", () => {
  const s = branchStatus([
    read("r1", full),
    { id: "c1", parentId: "r1", kind: "compaction", firstKeptEntryId: "r1" },
    read("r2", { ...full, bytes: 10 }),
  ]);
  assert.equal(s.compactionId, "c1");
  assert.equal(s.windowSize, 1);
  assert.equal(s.modeCounts.full, 1);
  assert.equal(s.servedBytes, 10);
  assert.equal(s.estimatedTokensSaved, 0);
  const text = formatBranchStatus({ ...s, inFlight: 2 }, "unavailable (EACCES)");
  assert.match(text, /replay window: 1 entries since compaction c1/);
  assert.match(text, /in flight \(not yet in the session\): 2/);
  assert.match(text, /object store: unavailable \(EACCES\)/);
  assert.ok(text.includes("\n  /w/a  [full]"), text);
});
