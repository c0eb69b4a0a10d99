// The output-level safety oracle (tests/pi/support/oracle/): unit tests of its
// parser, its view of edits, its file model (pi's edit tool) and its checker
// on hand-written outputs, a fixed-seed run of generated
// sessions through the reference and the pi adapter (events on and off), the
// checked-in scenario vectors through the oracle, and the planted-bug harness
// (every planted bug must give unsafe answers the unmodified code does not).
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import type { ScenarioOutput, StepResult } from "../../src/conformance/session_simulator.ts";
import { type Scenario, ScenarioSchema } from "../../src/conformance/vector_schema.ts";
import { createEditToolDefinition } from "@mariozechner/pi-coding-agent";
import { checkScenario } from "./support/oracle/checker.ts";
import {
  bytesContent,
  contentBytes,
  editToolArgs,
  FsModel,
  READ_ONLY_COMMAND,
  writeNameOf,
} from "./support/oracle/fs_model.ts";
import { bashShown, grepShown, namedIn, readBash } from "./support/oracle/commands.ts";
import { compileSession, sanitizeScenario, sessionArb } from "./support/oracle/generator.ts";
import { PLANTED_BUGS, runMutant } from "./support/oracle/mutants.ts";
import { applyHunks, parseCached, parseShown, parseUnifiedDiff } from "./support/oracle/parse.ts";
import { type PortName, PORTS } from "./support/oracle/ports.ts";
import { applyEdit, foldView } from "./support/oracle/view.ts";
import { dropUnusedFiles, type OracleResult, runOracle, runSession } from "./support/oracle/run.ts";
import fc from "fast-check";

const SEED = 20_251_123;

// ------------------------------------------------------------------ parser

Deno.test("oracle parser: pi's read output, every notice", () => {
  assert.deepEqual(parseShown("a\nb", 1), {
    kind: "lines",
    start: 1,
    lines: ["a", "b"],
    total: 2,
    notice: "none",
  });
  assert.deepEqual(parseShown("b\n\n[3 more lines in file. Use offset=3 to continue.]", 2), {
    kind: "lines",
    start: 2,
    lines: ["b"],
    total: 5,
    notice: "more",
  });
  assert.deepEqual(
    parseShown("x\ny\n\n[Showing lines 4-5 of 9. Use offset=6 to continue.]", 4),
    { kind: "lines", start: 4, lines: ["x", "y"], total: 9, notice: "showing" },
  );
  assert.deepEqual(
    parseShown("x\n\n[Showing lines 1-1 of 9 (50.0KB limit). Use offset=2 to continue.]", 1),
    { kind: "lines", start: 1, lines: ["x"], total: 9, notice: "showing-bytes" },
  );
  assert.deepEqual(
    parseShown(
      "[Line 1 is 51.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' a.txt | head -c 51200]",
      1,
    ),
    { kind: "first-line-too-large", line: 1 },
  );
  // notices whose numbers do not add up are not pi's output
  assert.equal(
    parseShown("x\n\n[Showing lines 1-3 of 9. Use offset=4 to continue.]", 1),
    undefined,
  );
  assert.equal(parseShown("x\n\n[2 more lines in file. Use offset=5 to continue.]", 1), undefined);
  assert.equal(
    parseShown("x\n\n[Showing lines 2-2 of 9. Use offset=3 to continue.]", 1),
    undefined,
  );
});

Deno.test("oracle parser: markers and diffs", () => {
  assert.deepEqual(parseCached("[readcache: unchanged, 41 lines]"), {
    kind: "unchanged",
    total: 41,
  });
  assert.deepEqual(parseCached("[readcache: unchanged in lines 5-7 of 41]"), {
    kind: "unchanged_range",
    start: 5,
    end: 7,
    total: 41,
  });
  assert.deepEqual(
    parseCached("[readcache: unchanged in lines 5-7; changes exist outside this range]"),
    { kind: "unchanged_outside", start: 5, end: 7 },
  );
  const d = parseCached(
    "[readcache: 2 lines changed of 3]\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n+z",
  );
  assert.equal(d?.kind, "diff");
  assert.equal(parseCached("[readcache: unchanged, 4 lines] and more"), undefined);
  assert.equal(parseCached("[readcache: 1 lines changed of 3]\n@@ -1 +1 @@\n-a\n+b"), undefined);
  // hunk counts that do not match the hunk body
  assert.equal(parseUnifiedDiff(["--- a/f", "+++ b/f", "@@ -1,3 +1,2 @@", " x", "-y"]), undefined);
});

Deno.test("oracle parser: partial answers", () => {
  assert.deepEqual(
    parseCached(
      "[readcache: unchanged in lines 1-2, 4, 6-7 of 9; the other lines follow]\n" +
        "[line 3]\nc\n[line 5]\n\n\n[2 more lines in file. Use offset=8 to continue.]",
    ),
    {
      kind: "partial",
      total: 9,
      held: [{ start: 1, end: 2 }, { start: 4, end: 4 }, { start: 6, end: 7 }],
      shown: [{ start: 3, lines: ["c"] }, { start: 5, lines: [""] }],
      notice: { kind: "more", more: 2, next: 8 },
    },
  );
  // lines that look like headers or notices are text when the header counts them
  assert.deepEqual(
    parseCached(
      "[readcache: unchanged in lines 1 of 4; the other lines follow]\n[lines 2-4]\n" +
        "[line 9]\n\n[Showing lines 1-4 of 9. Use offset=5 to continue.]",
    ),
    {
      kind: "partial",
      total: 4,
      held: [{ start: 1, end: 1 }],
      shown: [{
        start: 2,
        lines: ["[line 9]", "", "[Showing lines 1-4 of 9. Use offset=5 to continue.]"],
      }],
      notice: null,
    },
  );
  assert.deepEqual(
    parseCached(
      "[readcache: unchanged in lines 1-3 of 9; the other lines follow]\n[lines 4-5]\nd\ne\n\n" +
        "[Showing lines 1-5 of 9 (50.0KB limit). Use offset=6 to continue.]",
    ),
    {
      kind: "partial",
      total: 9,
      held: [{ start: 1, end: 3 }],
      shown: [{ start: 4, lines: ["d", "e"] }],
      notice: { kind: "showing-bytes", from: 1, to: 5, total: 9, next: 6 },
    },
  );
  for (
    const bad of [
      "[readcache: unchanged in lines 1-2 of 9; the other lines follow]\n[lines 3-4]\nc", // short
      "[readcache: unchanged in lines 1-2 of 9; the other lines follow]\n[line 3]\nc\nd",
      "[readcache: unchanged in lines 1-2 of 9; the other lines follow]\n[lines 3-3]\nc",
      "[readcache: unchanged in lines 2-2 of 9; the other lines follow]\n[line 3]\nc",
      "[readcache: unchanged in lines 1-2 of 9; the other lines follow]\n[line 3]\nc\n\nmore",
      "[readcache: unchanged in lines 1-2 of 9; the other lines follow]\n[line 3]\nc\n",
      "[readcache: unchanged in lines 1-2 of 9; the other lines follow]\nc",
      "[readcache: unchanged in lines 1-2,4 of 9; the other lines follow]\n[line 3]\nc",
      "[readcache: unchanged in lines 0-2 of 9; the other lines follow]\n[line 3]\nc",
    ]
  ) assert.equal(parseCached(bad), undefined, bad);
});

Deno.test("oracle parser: hunks apply strictly, line terminators included", () => {
  const hunks = parseUnifiedDiff([
    "--- a/f",
    "+++ b/f",
    "@@ -1,2 +1,3 @@",
    " a",
    "-b",
    "\\ No newline at end of file",
    "+b",
    "+c",
    "\\ No newline at end of file",
  ])!;
  assert.deepEqual(applyHunks("a\nb", hunks), { text: "a\nb\nc" });
  assert.ok("error" in applyHunks("a\nb\n", hunks), "b has a newline: the hunk does not apply");
  assert.ok("error" in applyHunks("a\nB", hunks));
  const insert = parseUnifiedDiff(["--- a/f", "+++ b/f", "@@ -0,0 +1 @@", "+a"])!;
  assert.deepEqual(applyHunks("", insert), { text: "a\n" });
});

// ----------------------------------------------------------------- checker

const A = "l1\nl2\nl3\nl4\nl5\n"; // 6 lines as pi counts them
const B = "l1\nX\nl3\nl4\nl5\n"; // line 2 changed
const DIFF_AB = "[readcache: 2 lines changed of 6]\n--- a/a.txt\n+++ b/a.txt\n" +
  "@@ -1,5 +1,5 @@\n l1\n-l2\n+X\n l3\n l4\n l5";

type Out = { mode: string | null; text: string } | { error: string } | null;

/** A vector (steps as plain objects) and the port output: `null` for non-read steps. */
function session(
  steps: [Record<string, unknown>, Out][],
  files: Record<string, string> = { "a.txt": A },
): { vector: Scenario; output: ScenarioOutput } {
  const vector = ScenarioSchema.parse({
    id: "oracle-unit",
    title: "hand-written",
    refs: ["tests/pi/oracle_test.ts"],
    files,
    steps: steps.map(([s]) => s.op === "read" ? { expect: {}, ...s } : s),
  });
  const results: StepResult[] = [];
  steps.forEach(([, o], step) => {
    if (o !== null) results.push({ step, ...o });
  });
  return { vector, output: { id: vector.id, results } };
}

function unsafeOf(s: { vector: Scenario; output: ScenarioOutput }): string[] {
  return checkScenario(s.vector, s.output).unsafe.map((u) => `${u.step} ${u.category}`);
}

const read = (extra: Record<string, unknown> = {}) => ({ op: "read", path: "a.txt", ...extra });
const full = (text: string) => ({ mode: "full", text });
const unchanged = (total: number) => ({
  mode: "unchanged",
  text: `[readcache: unchanged, ${total} lines]`,
});

Deno.test("oracle checker: correct answers pass", () => {
  const C = "l1\nX\nl3\nl4\nZ\n";
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [read(), unchanged(6)],
      [read({ offset: 2, limit: 2 }), {
        mode: "unchanged_range",
        text: "[readcache: unchanged in lines 2-3 of 6]",
      }],
      [{ op: "write", path: "a.txt", content: B }, null],
      [read(), { mode: "diff", text: DIFF_AB }],
      [{ op: "write", path: "a.txt", content: C }, null],
      [read({ offset: 1, limit: 1 }), {
        mode: "unchanged_range",
        text: "[readcache: unchanged in lines 1-1; changes exist outside this range]",
      }],
      [read({ offset: 9 }), { error: "Offset 9 is beyond end of file (6 lines total)" }],
      [read({ offset: 4, limit: 1 }), {
        mode: "baseline_fallback",
        text: "l4\n\n[2 more lines in file. Use offset=5 to continue.]",
      }],
    ])),
    [],
  );
});

Deno.test("oracle checker: a diff applied twice is caught", () => {
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [{ op: "write", path: "a.txt", content: B }, null],
      [read(), { mode: "diff", text: DIFF_AB }],
      [read(), { mode: "diff", text: DIFF_AB }],
    ])),
    ["3 diff:does-not-apply"],
  );
});

Deno.test("oracle checker: the newest view wins (a fresher range read showing other text)", () => {
  const steps: [Record<string, unknown>, Out][] = [
    [read(), full(A)],
    [{ op: "write", path: "a.txt", content: B }, null],
    [read({ offset: 2, limit: 1 }), {
      mode: "baseline_fallback",
      text: "X\n\n[4 more lines in file. Use offset=3 to continue.]",
    }],
    [{ op: "write", path: "a.txt", content: A }, null],
  ];
  assert.deepEqual(unsafeOf(session([...steps, [read(), unchanged(6)]])), [
    "4 unchanged:stale-line",
  ]);
  assert.deepEqual(
    unsafeOf(session([...steps, [read({ offset: 1, limit: 3 }), {
      mode: "unchanged_range",
      text: "[readcache: unchanged in lines 1-3 of 6]",
    }]])),
    ["4 unchanged_range:stale-line"],
  );
  // lines the fresher read did not touch are still the model's newest view
  assert.deepEqual(
    unsafeOf(session([...steps, [read({ offset: 3, limit: 2 }), {
      mode: "unchanged_range",
      text: "[readcache: unchanged in lines 3-4 of 6]",
    }]])),
    [],
  );
});

Deno.test("oracle checker: where the file ends is what the model saw, not a stated count", () => {
  const A3 = "l1\nl2\nl3"; // 3 lines, no trailing newline
  const B4 = "l1\nnew\nl2\nl3"; // a line inserted
  const DIFF_A3_B4 = "[readcache: 1 lines changed of 4]\n--- a/a.txt\n+++ b/a.txt\n" +
    "@@ -1,3 +1,4 @@\n l1\n+new\n l2\n l3\n\\ No newline at end of file";
  // a range read says the file now has 4 lines; the model still holds all of A3: the diff is fine
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A3)],
      [{ op: "write", path: "a.txt", content: B4 }, null],
      [read({ offset: 1, limit: 1 }), {
        mode: "baseline_fallback",
        text: "l1\n\n[3 more lines in file. Use offset=2 to continue.]",
      }],
      [read(), { mode: "diff", text: DIFF_A3_B4 }],
    ], { "a.txt": A3 })),
    [],
  );
  // the model saw the file end at line 3: its older line 4 is gone from its view
  const C4 = "l1\nl2\nl3\nl4";
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(C4)],
      [{ op: "write", path: "a.txt", content: A3 }, null],
      [read(), full(A3)],
      [{ op: "write", path: "a.txt", content: C4 }, null],
      [read(), unchanged(4)],
    ], { "a.txt": C4 })),
    ["4 unchanged:unknown-line"],
  );
});

Deno.test("oracle checker: unpersisted reads count only within their turn", () => {
  const turn: [Record<string, unknown>, Out][] = [
    [{ op: "message" }, null],
    [read({ persist: false }), full(A)],
    [read(), unchanged(6)], // same turn: relies on the read above, fine
  ];
  assert.deepEqual(unsafeOf(session(turn)), []);
  // after the turn the unpersisted output is gone: the persisted marker vouches for nothing
  assert.deepEqual(
    unsafeOf(session([...turn, [{ op: "message" }, null], [read(), unchanged(6)]])),
    [
      "4 unchanged:unknown-line",
    ],
  );
  // writes between the calls of one turn keep the turn open
  assert.deepEqual(
    unsafeOf(session([
      [read({ persist: false }), full(A)],
      [{ op: "write", path: "b.txt", content: "x" }, null],
      [read({ persist: false }), unchanged(6)],
    ])),
    [],
  );
});

Deno.test("oracle checker: names, compaction and /tree", () => {
  assert.deepEqual(
    unsafeOf(session([
      [{ op: "symlink", path: "link.txt", target: "a.txt" }, null],
      [read({ path: "link.txt" }), full(A)],
      [read({ path: "./a.txt" }), unchanged(6)],
    ])),
    ["2 unchanged:no-view"],
  );
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [read({ path: "sub/../a.txt" }), unchanged(6)],
      [read({ path: "@a.txt" }), unchanged(6)],
    ])),
    [],
  );
  assert.deepEqual(
    unsafeOf(session([[read(), full(A)], [{ op: "compact" }, null], [read(), unchanged(6)]])),
    ["2 unchanged:no-view"],
  );
  assert.deepEqual(
    unsafeOf(session([
      [{ op: "message" }, null],
      [{ op: "label", name: "before" }, null],
      [read(), full(A)],
      [{ op: "navigate", to: "before" }, null],
      [read(), unchanged(6)],
    ])),
    ["4 unchanged:no-view"],
  );
});

Deno.test("oracle checker: wrong counts, wrong content, truncation, non-UTF-8", () => {
  assert.deepEqual(unsafeOf(session([[read(), full(A)], [read(), unchanged(5)]])), [
    "1 unchanged:count",
  ]);
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [{ op: "write", path: "a.txt", content: B }, null],
      [read(), { mode: "diff", text: DIFF_AB.replace("2 lines changed", "3 lines changed") }],
    ])),
    ["2 diff:count"],
  );
  assert.deepEqual(unsafeOf(session([[read(), full(B)]])), ["0 full:wrong-content"]);
  const big = Array.from({ length: 2005 }, (_, i) => `${i + 1}`).join("\n");
  const shown = big.split("\n").slice(0, 2000).join("\n") +
    "\n\n[Showing lines 1-2000 of 2005. Use offset=2001 to continue.]";
  assert.deepEqual(
    unsafeOf(session([
      [read({ path: "big.txt" }), full(shown)],
      [read({ path: "big.txt" }), {
        mode: "unchanged_range",
        text: "[readcache: unchanged in lines 1-2000 of 2005]",
      }],
      [read({ path: "big.txt" }), unchanged(2005)],
    ], { "big.txt": big })),
    ["2 unchanged:unknown-line"],
  );
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [{ op: "write", path: "a.txt", content: { base64: btoa("l1\n\xff\nl3\nl4\nl5\n") } }, null],
      [read(), { mode: null, text: "l1\n\ufffd\nl3\nl4\nl5\n" }],
      [{ op: "write", path: "a.txt", content: A }, null],
      [read(), unchanged(6)],
    ])),
    ["4 unchanged:unknown-line"],
  );
});

const writeTool = (content: string, extra: Record<string, unknown> = {}) => ({
  op: "writeTool",
  path: "a.txt",
  content,
  ...extra,
});

Deno.test("oracle checker: what the model wrote is what it holds", () => {
  const DIFF_BA = "[readcache: 2 lines changed of 6]\n--- a/a.txt\n+++ b/a.txt\n" +
    "@@ -1,5 +1,5 @@\n l1\n-X\n+l2\n l3\n l4\n l5";
  assert.deepEqual(
    unsafeOf(session([
      [writeTool(B), null],
      [read(), unchanged(6)],
      [read({ offset: 2, limit: 2 }), {
        mode: "unchanged_range",
        text: "[readcache: unchanged in lines 2-3 of 6]",
      }],
      [{ op: "write", path: "a.txt", content: A }, null], // someone else reverts it
      [read(), { mode: "diff", text: DIFF_BA }],
      // a new file, under another form of its name
      [{ op: "writeTool", path: "@sub/new.txt", content: "n1\nn2" }, null],
      [read({ path: "./sub/new.txt" }), unchanged(2)],
      [read({ path: "sub/new.txt" }), full("n1\nn2")],
    ])),
    [],
  );
  // the file model applies the write: a plain output must show the written content
  assert.deepEqual(unsafeOf(session([[writeTool(B), null], [read(), full(A)]])), [
    "1 full:wrong-content",
  ]);
});

Deno.test("oracle checker: a write that never returned leaves the name unknown", () => {
  // the same bytes: true of the file, but the model does not know whether its write ran
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [writeTool(A, { persist: false }), null],
      [read({ path: "b.txt" }), full("b")], // the turn ends with another file's result
      [read(), unchanged(6)],
    ], { "a.txt": A, "b.txt": "b" })),
    ["3 unchanged:unknown-line"],
  );
  // in its own turn too
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [writeTool(A, { persist: false }), null],
      [read({ persist: false }), unchanged(6)],
    ])),
    ["2 unchanged:unknown-line"],
  );
  // a later output shows the file again: known again, but only the lines it showed
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [writeTool(A, { persist: false }), null],
      [read(), full(A)],
      [read(), unchanged(6)],
    ])),
    [],
  );
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [writeTool(A, { persist: false }), null],
      [read({ offset: 1, limit: 1 }), {
        mode: "full",
        text: "l1\n\n[5 more lines in file. Use offset=2 to continue.]",
      }],
      [read(), unchanged(6)],
    ])),
    ["3 unchanged:unknown-line"],
  );
});

Deno.test("oracle checker: a write counts from the start of its turn", () => {
  // the read runs before the write in the same message: the model already holds B
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [read({ persist: false }), unchanged(6)],
      [writeTool(B), null],
      [read(), unchanged(6)],
    ])),
    ["1 unchanged:stale-line"],
  );
  // a read result later in the turn is newer than the write
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [writeTool(B, { persist: false }), null],
      [{ op: "write", path: "a.txt", content: A }, null],
      [read({ persist: false }), full(A)],
      [read(), unchanged(6)],
    ])),
    [],
  );
});

Deno.test("oracle checker: compaction, /tree and other names do not carry a write", () => {
  assert.deepEqual(
    unsafeOf(session([[writeTool(B), null], [{ op: "compact" }, null], [read(), unchanged(6)]])),
    ["2 unchanged:no-view"],
  );
  assert.deepEqual(
    unsafeOf(session([
      [{ op: "message" }, null],
      [{ op: "label", name: "before" }, null],
      [writeTool(B), null],
      [read(), unchanged(6)],
      [{ op: "navigate", to: "before" }, null],
      [read(), unchanged(6)],
    ])),
    ["5 unchanged:no-view"],
  );
  // through a link: the link's target changes, the model holds the content under the link's name
  assert.deepEqual(
    unsafeOf(session([
      [{ op: "symlink", path: "link.txt", target: "a.txt" }, null],
      [{ op: "writeTool", path: "link.txt", content: B }, null],
      [read({ path: "link.txt" }), unchanged(6)],
      [read(), unchanged(6)],
      [read(), full(B)],
    ])),
    ["3 unchanged:no-view"],
  );
});

const editTool = (edits: unknown, extra: Record<string, unknown> = {}) => ({
  op: "editTool",
  path: "a.txt",
  edits,
  ...extra,
});
const rep = (oldText: string, newText: string) => [{ oldText, newText }];
const range = (start: number, end: number, total: number) => ({
  mode: "unchanged_range",
  text: `[readcache: unchanged in lines ${start}-${end} of ${total}]`,
});

Deno.test("oracle checker: what the model edited is what it holds", () => {
  const E = "l1\nX\nX2\nl3\nl4\nl5\n"; // A with l2 replaced by two lines
  const DIFF_EA = "[readcache: 3 lines changed of 6]\n--- a/a.txt\n+++ b/a.txt\n" +
    "@@ -1,6 +1,5 @@\n l1\n-X\n-X2\n+l2\n l3\n l4\n l5";
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [editTool(rep("l2", "X\nX2")), null],
      [read(), unchanged(7)],
      [read({ offset: 2, limit: 3 }), range(2, 4, 7)],
      [{ op: "write", path: "a.txt", content: A }, null], // someone else reverts it
      [read(), { mode: "diff", text: DIFF_EA }],
    ])),
    [],
  );
  // the file model applies pi's edit: a plain output must show the edited content
  assert.deepEqual(unsafeOf(session([[editTool(rep("l2", "X\nX2")), null], [read(), full(A)]])), [
    "1 full:wrong-content",
  ]);
  assert.deepEqual(
    unsafeOf(session([[editTool(rep("l2", "X\nX2")), null], [read(), full(E)]])),
    [],
  );
  // reverted by someone else: the model holds its edit, "unchanged" is stale
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [editTool(rep("l2", "X")), null],
      [{ op: "write", path: "a.txt", content: A }, null],
      [read(), unchanged(6)],
      [read({ offset: 3, limit: 2 }), range(3, 4, 6)], // lines it did not touch
    ])),
    ["3 unchanged:stale-line"],
  );
  // the argument shapes pi takes: a JSON string, the legacy top-level pair, both
  for (
    const e of [
      editTool(JSON.stringify(rep("l2", "X"))),
      { op: "editTool", path: "a.txt", oldText: "l2", newText: "X" },
      editTool(rep("l4", "Y"), { oldText: "l2", newText: "X" }),
    ]
  ) {
    const want = "edits" in e && "oldText" in e ? "l1\nX\nl3\nY\nl5\n" : B;
    assert.deepEqual(
      unsafeOf(
        session([[read(), full(A)], [e, null], [read(), unchanged(6)], [read(), full(want)]]),
      ),
      [],
      JSON.stringify(e),
    );
  }
});

Deno.test("oracle checker: several replacements in one call, lines shifted after each", () => {
  const F = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n";
  // l2 -> two lines, l4+l5 -> nothing (and their line break), l7 -> one line
  const edits = [
    { oldText: "l7", newText: "S" },
    { oldText: "l2", newText: "P\nQ" },
    { oldText: "l4\nl5\n", newText: "" },
  ];
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(F)],
      [editTool(edits), null],
      [read(), full("l1\nP\nQ\nl3\nl6\nS\nl8\n")],
      [read(), unchanged(8)],
    ], { "a.txt": F })),
    [],
  );
  // a range read of part of the file: the lines after the edit renumbered, the rest unknown
  assert.deepEqual(
    unsafeOf(session([
      [read({ offset: 2, limit: 4 }), {
        mode: "full",
        text: "l2\nl3\nl4\nl5\n\n[4 more lines in file. Use offset=6 to continue.]",
      }],
      [editTool(rep("l3", "T\nU")), null],
      [read({ offset: 2, limit: 5 }), range(2, 6, 10)],
      [read({ offset: 6, limit: 2 }), range(6, 7, 10)],
      [read(), unchanged(10)],
    ], { "a.txt": F })),
    ["3 unchanged_range:unknown-line", "4 unchanged:unknown-line"],
  );
});

Deno.test("oracle checker: an edit of a CRLF or BOM file keeps its line ending and BOM", () => {
  const C = "l1\r\nl2\r\nl3\r\n";
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(C)],
      [editTool(rep("l2", "X\nY")), null],
      [read(), full("l1\r\nX\r\nY\r\nl3\r\n")],
      [read(), unchanged(5)],
      // someone else writes the new lines with LF: not what the model holds
      [{ op: "write", path: "a.txt", content: "l1\r\nX\nY\nl3\r\n" }, null],
      [read({ offset: 2, limit: 2 }), range(2, 3, 5)],
      [read({ offset: 4, limit: 1 }), range(4, 4, 5)],
    ], { "a.txt": C })),
    ["5 unchanged_range:stale-line"],
  );
  const M = "\uFEFFl1\nl2\nl3"; // BOM, no line break at the end
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(M)],
      [editTool(rep("l1\nl2", "Z")), null],
      [read(), full("\uFEFFZ\nl3")],
      [read(), unchanged(2)],
      [editTool(rep("l3", "W")), null],
      [read(), unchanged(2)],
    ], { "a.txt": M })),
    [],
  );
});

Deno.test("oracle checker: a normalised (fuzzy) edit holds only what the model typed", () => {
  const Q = "l1 it\u2019s\nl2  \nl3\nl4\n"; // a smart quote, trailing spaces
  const steps: [Record<string, unknown>, Out][] = [
    [read(), full(Q)],
    [editTool(rep("l1 it's", "N")), null], // pi normalises the whole file (l2 loses its spaces)
    [read(), full("N\nl2\nl3\nl4\n")],
  ];
  assert.deepEqual(unsafeOf(session(steps, { "a.txt": Q })), []);
  assert.deepEqual(
    unsafeOf(session([
      ...steps.slice(0, 2),
      [read({ offset: 1, limit: 1 }), range(1, 1, 5)], // the line it replaced: what it typed
      [read({ offset: 3, limit: 2 }), range(3, 4, 5)], // untouched, unchanged by normalising
      [read(), unchanged(5)], // line 2 lost its spaces: the model does not know
    ], { "a.txt": Q })),
    ["4 unchanged:stale-line"],
  );
  // a normalised match in the middle of a line: the rest of the line is pi's normalised form
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(Q)],
      [editTool(rep("it's", "is")), null],
      [read({ offset: 1, limit: 1 }), range(1, 1, 5)],
    ], { "a.txt": Q })),
    ["2 unchanged_range:unknown-line"],
  );
});

Deno.test("oracle checker: edits pi refused, edits the model cannot place, edits never answered", () => {
  // refused (not found, found twice, no such file): the model believes the file unchanged
  for (const e of [editTool(rep("zz", "X")), editTool(rep("l", "X"))]) {
    assert.deepEqual(
      unsafeOf(session([[read(), full(A)], [e, null], [read(), unchanged(6)]])),
      [],
    );
  }
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [editTool(rep("x", "y"), { path: "missing.txt" }), null],
      [read(), unchanged(6)],
    ])),
    [],
  );
  // an edit of lines it never saw: it does not know where its edit landed, but not before the
  // lines it holds from line 1 on (its text is not there)
  const first2: [Record<string, unknown>, Out] = [read({ offset: 1, limit: 2 }), {
    mode: "full",
    text: "l1\nl2\n\n[4 more lines in file. Use offset=3 to continue.]",
  }];
  assert.deepEqual(
    unsafeOf(session([
      first2,
      [editTool(rep("l4", "X")), null],
      [read({ offset: 1, limit: 2 }), range(1, 2, 6)],
      [read({ offset: 4, limit: 1 }), range(4, 4, 6)],
    ])),
    ["3 unchanged_range:unknown-line"],
  );
  // its text could begin in line 2 and run on into line 3, which it never saw: line 1 stays
  assert.deepEqual(
    unsafeOf(session([
      first2,
      [editTool(rep("l2\nl3", "X")), null],
      [read({ offset: 1, limit: 1 }), {
        mode: "unchanged_range",
        text: "[readcache: unchanged in lines 1-1; changes exist outside this range]",
      }],
      [read({ offset: 1, limit: 2 }), range(1, 2, 5)],
    ])),
    ["3 unchanged_range:unknown-line"],
  );
  // its text twice in the view (the file is no longer what the view shows): from the first on
  const P = "p\nq\na\nb\na\n";
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(P)],
      [{ op: "write", path: "a.txt", content: "p\nq\na\nb\nZ\n" }, null],
      [editTool(rep("a", "A")), null], // pi finds it once, at line 3
      [read({ offset: 1, limit: 2 }), range(1, 2, 6)],
      [
        read({ offset: 3, limit: 2 }),
        full("A\nb\n\n[2 more lines in file. Use offset=5 to continue.]"),
      ],
      [read({ offset: 1, limit: 4 }), range(1, 4, 6)],
      [read({ offset: 5, limit: 1 }), range(5, 5, 6)],
    ], { "a.txt": P })),
    ["6 unchanged_range:unknown-line"],
  );
  // after a compaction the edit has no base in the context
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [{ op: "compact" }, null],
      [editTool(rep("l2", "X")), null],
      [read(), unchanged(6)],
    ])),
    ["3 unchanged:unknown-line"],
  );
  // never answered: unknown, in its turn and after it (even where the file is what it holds)
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [editTool(rep("l2", "X"), { persist: false }), null],
      [read({ persist: false }), unchanged(6)],
      [read({ path: "b.txt" }), full("b")],
      [read(), unchanged(6)],
    ], { "a.txt": A, "b.txt": "b" })),
    ["2 unchanged:unknown-line", "4 unchanged:unknown-line"],
  );
  // like a write it counts from the start of its turn: a read before it in the same message
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [read({ persist: false }), unchanged(6)],
      [editTool(rep("l2", "X")), null],
      [read(), unchanged(6)],
    ])),
    ["1 unchanged:stale-line"],
  );
  // through a link: the link's name holds the edit, the target's name does not
  assert.deepEqual(
    unsafeOf(session([
      [{ op: "symlink", path: "link.txt", target: "a.txt" }, null],
      [read({ path: "link.txt" }), full(A)],
      [read(), full(A)],
      [editTool(rep("l2", "X"), { path: "link.txt" }), null],
      [read({ path: "link.txt" }), unchanged(6)],
      [read(), unchanged(6)],
    ])),
    ["5 unchanged:stale-line"],
  );
});

const partial = (text: string) => ({ mode: "partial", text });
const PARTIAL_3_4 = "[readcache: unchanged in lines 1-2 of 6; the other lines follow]\n" +
  "[lines 3-4]\nl3\nl4\n\n[2 more lines in file. Use offset=5 to continue.]";

Deno.test("oracle checker: partial answers", () => {
  const first2: [Record<string, unknown>, Out] = [read({ offset: 1, limit: 2 }), {
    mode: "full",
    text: "l1\nl2\n\n[4 more lines in file. Use offset=3 to continue.]",
  }];
  // correct ones: held lines marked, the others shown, pi's notice; the shown lines are then held
  assert.deepEqual(
    unsafeOf(session([
      first2,
      [read({ offset: 1, limit: 4 }), partial(PARTIAL_3_4)],
      [read({ offset: 1, limit: 4 }), range(1, 4, 6)],
      [read(), unchanged(6)], // the model never saw lines 5-6
      // every line held (from several outputs): the range marker
      [read({ offset: 1, limit: 4 }), partial("[readcache: unchanged in lines 1-4 of 6]")],
      [read({ offset: 5, limit: 2 }), partial("[readcache: unchanged in lines 5-6 of 6]")],
    ])),
    ["3 unchanged:unknown-line", "5 partial:unknown-line"],
  );
  // a whole-file read: the window reaches the end, no notice, so the model has seen it end
  assert.deepEqual(
    unsafeOf(session([
      first2,
      [
        read(),
        partial(
          "[readcache: unchanged in lines 1-2 of 6; the other lines follow]\n" +
            "[lines 3-6]\nl3\nl4\nl5\n",
        ),
      ],
      [read(), unchanged(6)],
    ])),
    [],
  );
  // held and shown stretches alternate, single lines as `N` and `[line N]`
  assert.deepEqual(
    unsafeOf(session([
      [read({ offset: 2, limit: 1 }), {
        mode: "full",
        text: "l2\n\n[4 more lines in file. Use offset=3 to continue.]",
      }],
      [read({ offset: 4, limit: 2 }), {
        mode: "full",
        text: "l4\nl5\n\n[1 more lines in file. Use offset=6 to continue.]",
      }],
      [
        read(),
        partial(
          "[readcache: unchanged in lines 2, 4-5 of 6; the other lines follow]\n" +
            "[line 1]\nl1\n[line 3]\nl3\n[line 6]\n",
        ),
      ],
      [read(), unchanged(6)],
    ])),
    [],
  );
  // a truncated whole-file read keeps pi's notice; where the file ends is still unknown
  const big = Array.from({ length: 2005 }, (_, i) => `${i + 1}`);
  assert.deepEqual(
    unsafeOf(session([
      [read({ path: "big.txt", limit: 1000 }), {
        mode: "full",
        text: big.slice(0, 1000).join("\n") +
          "\n\n[1005 more lines in file. Use offset=1001 to continue.]",
      }],
      [
        read({ path: "big.txt" }),
        partial(
          "[readcache: unchanged in lines 1-1000 of 2005; the other lines follow]\n" +
            `[lines 1001-2000]\n${big.slice(1000, 2000).join("\n")}\n\n` +
            "[Showing lines 1-2000 of 2005. Use offset=2001 to continue.]",
        ),
      ],
      [read({ path: "big.txt", offset: 1500, limit: 10 }), range(1500, 1509, 2005)],
      [read({ path: "big.txt" }), unchanged(2005)],
    ], { "big.txt": big.join("\n") })),
    ["3 unchanged:unknown-line"],
  );
  // caught: a held line the model holds with other text, one it never saw, no view at all
  const changed: [Record<string, unknown>, Out][] = [
    first2,
    [{ op: "write", path: "a.txt", content: B }, null],
  ];
  assert.deepEqual(
    unsafeOf(session([...changed, [read({ offset: 1, limit: 4 }), partial(PARTIAL_3_4)]])),
    ["2 partial:stale-line"],
  );
  assert.deepEqual(
    unsafeOf(session([first2, [
      read({ offset: 1, limit: 5 }),
      partial(
        "[readcache: unchanged in lines 1-3 of 6; the other lines follow]\n" +
          "[lines 4-5]\nl4\nl5\n\n[1 more lines in file. Use offset=6 to continue.]",
      ),
    ]])),
    ["1 partial:unknown-line"],
  );
  assert.deepEqual(unsafeOf(session([[read({ offset: 1, limit: 4 }), partial(PARTIAL_3_4)]])), [
    "0 partial:no-view",
  ]);
  // caught: a shown line that is not the file's, a wrong count
  assert.deepEqual(
    unsafeOf(session([first2, [
      read({ offset: 1, limit: 4 }),
      partial(PARTIAL_3_4.replace("\nl4\n", "\nl4 \n")),
    ]])),
    ["1 partial:wrong-content"],
  );
  assert.deepEqual(
    unsafeOf(session([first2, [
      read({ offset: 1, limit: 4 }),
      partial(PARTIAL_3_4.replace("of 6", "of 7")),
    ]])),
    ["1 partial:count"],
  );
  // caught: stretches that are not one window from the line asked for, a notice that does not fit
  for (
    const [req, text] of [
      [{ offset: 1, limit: 4 }, PARTIAL_3_4.replace("[lines 3-4]\nl3\nl4", "[line 4]\nl4")],
      [{ offset: 1, limit: 4 }, PARTIAL_3_4.replace("[lines 3-4]", "[lines 2-4]\nl2")],
      [{ offset: 2, limit: 3 }, PARTIAL_3_4],
      [{ offset: 1, limit: 4 }, PARTIAL_3_4.replace("[2 more", "[3 more")],
      [
        { offset: 1, limit: 4 },
        PARTIAL_3_4.replace("\n\n[2 more lines in file. Use offset=5 to continue.]", ""),
      ],
      [{}, PARTIAL_3_4.replace("lines 3-4]\nl3\nl4", "lines 3-6]\nl3\nl4\nl5\n")],
      [
        { offset: 1, limit: 4 },
        PARTIAL_3_4.replace("2 more lines in file.", "Showing lines 2-4 of 6."),
      ],
    ] as const
  ) {
    assert.deepEqual(
      unsafeOf(session([first2, [read(req), partial(text)]])),
      ["1 partial:count"],
      text,
    );
  }
  assert.deepEqual(
    unsafeOf(session([first2, [read({ offset: 1, limit: 4 }), partial(PARTIAL_3_4 + "\n")]])),
    ["1 partial:unparseable"],
  );
});

Deno.test("oracle checker: a write of content that is not well-formed Unicode", () => {
  // pi writes U+FFFD for the lone surrogate: the model holds what it sent, the file holds else
  assert.deepEqual(
    unsafeOf(session([
      [writeTool("x\uD800y\nl2\n"), null],
      [read({ offset: 2, limit: 1 }), range(2, 2, 3)],
      [read(), unchanged(3)],
      [read(), full("x\uFFFDy\nl2\n")],
    ])),
    ["2 unchanged:stale-line"],
  );
});

// ------------------------------------------------------------ bash and grep

Deno.test("oracle commands: which shell commands the oracle reads precisely", () => {
  assert.deepEqual(readBash("cat a.txt"), {
    kind: "view",
    path: "a.txt",
    shape: { kind: "whole" },
  });
  assert.deepEqual(readBash("cat -n ./sub/c.txt"), {
    kind: "view",
    path: "./sub/c.txt",
    shape: { kind: "numbered" },
  });
  assert.deepEqual(readBash("sed -n '3,5p' a.txt").kind, "view");
  assert.deepEqual(readBash("sed -n '3p' a.txt"), {
    kind: "view",
    path: "a.txt",
    shape: { kind: "range", start: 3, end: 3 },
  });
  assert.deepEqual(readBash("head -n 4 a.txt"), {
    kind: "view",
    path: "a.txt",
    shape: { kind: "head", count: 4 },
  });
  assert.deepEqual(readBash("cat a.txt | head -4"), readBash("head -n 4 a.txt"));
  assert.deepEqual(readBash("tail -n 2 a.txt").kind, "view");
  assert.deepEqual(readBash("grep -n alpha a.txt"), {
    kind: "view",
    path: "a.txt",
    shape: { kind: "grep", word: "alpha" },
  });
  assert.deepEqual(readBash("true"), { kind: "quiet" });
  for (const c of ["sed -i 's/^a1 /a1 x /' a.txt", "printf 'x\\n' >> a.txt", "echo 'x' > a.txt"]) {
    assert.deepEqual(readBash(c), { kind: "change", paths: ["a.txt"] }, c);
  }
  assert.deepEqual(readBash("cp a.txt b.txt"), { kind: "change", paths: ["b.txt"] });
  assert.deepEqual(readBash("rm a.txt"), { kind: "change", paths: ["a.txt"] });
  for (
    const c of [
      "sed -i 's/^a1 /a1 x /' a.txt && nl a.txt",
      "cat a.txt || cp b.txt a.txt",
      "cat a.txt & cp b.txt a.txt",
      "cat a.txt;",
      "nl a.txt",
      "cat a.txt b.txt",
      "sed -n '3p;5p' a.txt",
      "cat $(echo a.txt)",
      "grep -n 'a b' a.txt",
      "cat ../a.txt",
    ]
  ) assert.deepEqual(readBash(c), { kind: "unknown" }, c);
  assert.deepEqual(namedIn("cp ./a.txt sub/new.txt"), ["a.txt", "sub/new.txt"]);
  assert.deepEqual(namedIn("sed -i 's/x/y/' ./b.txt && cat ./b.txt"), ["b.txt", "b.txt"]);
  // chains of recognised parts, split at `&&` and `;` outside quotes
  assert.deepEqual(readBash("sed -i 's/^a1 /a1 x /' a.txt && cat a.txt"), {
    kind: "chain",
    parts: [
      {
        command: "sed -i 's/^a1 /a1 x /' a.txt",
        reading: { kind: "change", paths: ["a.txt"] },
        join: ";",
      },
      {
        command: "cat a.txt",
        reading: { kind: "view", path: "a.txt", shape: { kind: "whole" } },
        join: "&&",
      },
    ],
  });
  const joins = (c: string) => {
    const r = readBash(c);
    return r.kind === "chain" ? r.parts.map((p) => `${p.join} ${p.reading.kind}`) : r.kind;
  };
  assert.deepEqual(
    joins("cp a.txt k.txt && printf 'x; y && z\\n' >> a.txt; cat a.txt;cp k.txt a.txt"),
    [
      "; change",
      "&& change",
      "; view",
      "; change",
    ],
  );
  assert.deepEqual(joins("cat a.txt && cp k.txt a.txt"), ["; view", "&& change"]);
  assert.deepEqual(joins("cat a.txt && nl a.txt"), "unknown");
  assert.deepEqual(namedIn("cp a.txt k.txt && cat ./a.txt; cp k.txt a.txt"), [
    "a.txt",
    "k.txt",
    "a.txt",
    "k.txt",
    "a.txt",
  ]);
});

Deno.test("oracle commands: a chain shows each view as the files were when it ran", () => {
  const fs = FsModel.fromFiles({ "a.txt": "a\nb\nc\n", "k.txt": "k\n" });
  const run = (c: string) => {
    const after = fs.clone();
    after.runBash(c);
    return { shown: bashShown(c, fs, after)?.map((n) => [n.name, n.effects]), after };
  };
  const whole = (lines: string[]) => ({ kind: "shown", start: 1, lines, eof: true });
  // printed, then put back: the model's newest view is what `cat` printed, not the file
  const restore = run(
    "cp a.txt keep.txt && sed -i 's/^b/B/' a.txt && cat a.txt && cp keep.txt a.txt",
  );
  assert.deepEqual(restore.shown, [["a.txt", [whole(["a", "B", "c", ""])]]]);
  assert.deepEqual(restore.after.text("a.txt")?.text, "a\nb\nc\n");
  // a view before and after a change, each of its moment, in order
  assert.deepEqual(run("sed -n '2p' a.txt; printf 'd\\n' >> a.txt; tail -n 2 a.txt").shown, [
    ["a.txt", [{ kind: "shown", start: 2, lines: ["b"], eof: false }]],
    ["a.txt", [{ kind: "shown", start: 3, lines: ["c", "d", ""], eof: true }]],
  ]);
  // `&&` after a part that failed runs nothing more (grep finds nothing: status 1); `;` does
  assert.deepEqual(run("grep -n zz a.txt && cp k.txt a.txt && cat a.txt").shown, [
    ["a.txt", [{ kind: "absent", text: "zz" }]],
  ]);
  assert.deepEqual(run("grep -n zz a.txt; cp k.txt a.txt && cat a.txt").shown, [
    ["a.txt", [{ kind: "absent", text: "zz" }]],
    ["a.txt", [whole(["k", ""])]],
  ]);
  assert.deepEqual(run("cat x.txt && cp k.txt a.txt; cat a.txt").shown, [
    ["x.txt", [{ kind: "unknown" }]],
    ["a.txt", [whole(["a", "b", "c", ""])]],
  ]);
  // parts run one by one must leave what the whole command left, else the strictest reading
  assert.equal(bashShown("cp k.txt a.txt; cat a.txt", fs, fs), undefined);
  // an output pi cuts (all parts together over 2000 lines): the strictest reading
  const big = FsModel.fromFiles({ "big.txt": "x\n".repeat(1200) });
  assert.notEqual(bashShown("cat big.txt && true", big, big), undefined);
  assert.equal(bashShown("cat big.txt && cat big.txt", big, big), undefined);
});

Deno.test("oracle commands: the lines a view command printed, and where it proved the end", () => {
  const fs = FsModel.fromFiles({ "a.txt": "a\nb\nc\n", "n.txt": "a\nb\nc", "e.txt": "" });
  const shown = (c: string) => bashShown(c, fs)?.map((n) => [n.name, n.effects]);
  const whole = { kind: "shown", start: 1, lines: ["a", "b", "c", ""], eof: true };
  assert.deepEqual(shown("cat a.txt"), [["a.txt", [whole]]]);
  assert.deepEqual(shown("cat -n ./a.txt"), [["a.txt", [whole]]]);
  // three lines asked, three printed: the model cannot tell whether more follow
  assert.deepEqual(shown("head -n 3 a.txt"), [["a.txt", [
    { kind: "shown", start: 1, lines: ["a", "b", "c"], eof: false },
  ]]]);
  // fewer printed than asked: the file ends there
  assert.deepEqual(shown("cat a.txt | head -9"), [["a.txt", [whole]]]);
  assert.deepEqual(shown("sed -n '2,3p' a.txt"), [["a.txt", [
    { kind: "shown", start: 2, lines: ["b", "c"], eof: false },
  ]]]);
  // a last line without a line break: nothing can follow it
  assert.deepEqual(shown("sed -n '2,3p' n.txt"), [["n.txt", [
    { kind: "shown", start: 2, lines: ["b", "c"], eof: true },
  ]]]);
  assert.deepEqual(shown("sed -n '7,9p' a.txt"), [["a.txt", [{ kind: "dropFrom", line: 7 }]]]);
  assert.deepEqual(shown("head -n 2 e.txt"), [["e.txt", [
    { kind: "shown", start: 1, lines: [""], eof: true },
  ]]]);
  // tail: the last lines, with the numbers they have in the file
  assert.deepEqual(shown("tail -n 1 a.txt"), [["a.txt", [
    { kind: "shown", start: 3, lines: ["c", ""], eof: true },
  ]]]);
  assert.deepEqual(shown("tail -n 5 a.txt"), [["a.txt", [whole]]]);
  // grep -n: the lines it printed, and no other line has the word
  assert.deepEqual(shown("grep -n b a.txt"), [["a.txt", [
    { kind: "absent", text: "b" },
    { kind: "shown", start: 2, lines: ["b"], eof: false },
  ]]]);
  // a missing file: what the model held of it is gone; a changing command shows nothing
  assert.deepEqual(shown("cat x.txt"), [["x.txt", [{ kind: "unknown" }]]]);
  assert.deepEqual(shown("sed -i 's/a/b/' a.txt"), []);
  assert.deepEqual(shown("true"), []);
  // not recognised, or an output pi cuts (over 2000 lines): the strictest reading
  assert.equal(shown("nl a.txt"), undefined);
  assert.deepEqual(shown("wc -l a.txt"), []);
  const big = FsModel.fromFiles({
    "big.txt": Array.from({ length: 2100 }, (_, i) => `${i}`).join("\n"),
  });
  assert.equal(bashShown("cat big.txt", big), undefined);
  assert.notEqual(bashShown("head -n 10 big.txt", big), undefined);
});

/** Applies a generated step that only changes files (a write, a write call, a removal, a link). */
function applyFileStep(fs: FsModel, st: ReturnType<typeof compileSession>["steps"][number]): void {
  if (st.op === "write") fs.write(st.path, st.content);
  else if (st.op === "writeTool") fs.write(writeNameOf(st.path), st.content);
  else if (st.op === "remove") fs.remove(st.path);
  else if (st.op === "symlink") fs.symlink(st.path, st.target);
}

Deno.test("oracle commands: generated chains run part by part leave what they leave whole", () => {
  let chains = 0;
  for (const [i, s] of fc.sample(sessionArb(), { seed: SEED, numRuns: 40 }).entries()) {
    const v = compileSession(s, `oracle-${i}`);
    const fs = FsModel.fromFiles(v.files);
    for (const st of v.steps) {
      applyFileStep(fs, st);
      if (st.op === "editTool") fs.edit(editToolArgs(st));
      else if (st.op === "bash") {
        const before = fs.clone();
        fs.runBash(st.command);
        if (readBash(st.command).kind !== "chain" || /big|huge/.test(st.command)) continue;
        chains++;
        assert.notEqual(bashShown(st.command, before, fs), undefined, st.command);
      }
    }
  }
  assert.ok(chains > 15, `${chains} chains`);
});

Deno.test("oracle commands: what pi's grep tool showed", () => {
  const fs = FsModel.fromFiles({ "a.txt": "x alpha\ny\r\nalpha z\r\n", "sub/c.txt": "none\n" });
  fs.symlink("link.txt", "a.txt");
  const shown = (step: { pattern: string; path?: string }) =>
    grepShown(step, fs)?.map((n) => [n.name, n.effects]);
  const a = ["a.txt", [
    { kind: "absent", text: "alpha" },
    { kind: "shown", start: 1, lines: ["x alpha"], eof: false },
    { kind: "shown", start: 3, lines: ["alpha z\r"], eof: false },
  ]];
  // the cwd: regular files (links are not followed), each with what it did not print
  assert.deepEqual(shown({ pattern: "alpha" }), [a, ["sub/c.txt", [{
    kind: "absent",
    text: "alpha",
  }]]]);
  assert.deepEqual(shown({ pattern: "alpha", path: "sub" }), [["sub/c.txt", [
    { kind: "absent", text: "alpha" },
  ]]]);
  // a file named: through links, under its own name
  assert.deepEqual(shown({ pattern: "alpha", path: "./link.txt" }), [["link.txt", a[1]]]);
  assert.deepEqual(shown({ pattern: "alpha", path: "missing" }), []);
  // more than 100 matches: pi cuts the output, the strictest reading
  const many = FsModel.fromFiles({ "m.txt": "w\n".repeat(150) });
  assert.equal(grepShown({ pattern: "w" }, many), undefined);
  assert.equal(grepShown({ pattern: "a.b" }, fs), undefined);
});

const bash = (command: string, extra: Record<string, unknown> = {}) => ({
  op: "bash",
  command,
  ...extra,
});
const write = (content: string) => ({ op: "write", path: "a.txt", content });
const DIFF_BA = "[readcache: 2 lines changed of 6]\n--- a/a.txt\n+++ b/a.txt\n" +
  "@@ -1,5 +1,5 @@\n l1\n-X\n+l2\n l3\n l4\n l5";

Deno.test("oracle checker: what a shell command or a search showed is the model's newest view", () => {
  // read; changed outside; a tool shows it; put back; read again: not `unchanged`
  for (const tool of [bash("cat a.txt"), bash("grep -n X a.txt"), { op: "grep", pattern: "X" }]) {
    const steps: [Record<string, unknown>, Out][] = [
      [read(), full(A)],
      [write(B), null],
      [tool, null],
      [write(A), null],
    ];
    const name = JSON.stringify(tool);
    assert.deepEqual(unsafeOf(session([...steps, [read(), unchanged(6)]])), [
      "4 unchanged:stale-line",
    ], name);
    assert.deepEqual(
      unsafeOf(session([...steps, [read(), { mode: "diff", text: DIFF_BA }]])),
      [],
      name,
    );
    assert.deepEqual(unsafeOf(session([...steps, [read(), full(A)]])), [], name);
    // lines the tool did not show (grep) or showed as they are (cat) are held
    assert.deepEqual(
      unsafeOf(session([...steps, [read({ offset: 3, limit: 2 }), {
        mode: "unchanged_range",
        text: "[readcache: unchanged in lines 3-4 of 6]",
      }]])),
      [],
      name,
    );
  }
  // a search that finds nothing where the model's line has the word: that line is out of date
  const C = "l1\nl2\nzz\nl4\nl5\n";
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [write(C), null],
      [bash("grep -n l a.txt"), null],
      [write(A), null],
      [read(), unchanged(6)],
      [read({ offset: 1, limit: 2 }), {
        mode: "unchanged_range",
        text: "[readcache: unchanged in lines 1-2 of 6]",
      }],
    ])),
    ["4 unchanged:unknown-line"],
  );
  // a word in no line: the model learned nothing of the change
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [write(C), null],
      [bash("grep -n q a.txt"), null],
      [write(A), null],
      [read(), unchanged(6)],
    ])),
    [],
  );
});

Deno.test("oracle checker: a view of some lines is only those lines", () => {
  const A10 = Array.from({ length: 10 }, (_, i) => `l${i + 1}`).join("\n") + "\n";
  const B10 = A10.replace("l2\n", "X2\n").replace("l4\n", "X4\n");
  const steps: [Record<string, unknown>, Out][] = [
    [read(), full(A10)],
    [write(B10), null],
    [bash("sed -n '4,4p' a.txt"), null],
    [write(A10), null],
  ];
  const files = { "a.txt": A10 };
  assert.deepEqual(unsafeOf(session([...steps, [read(), unchanged(11)]], files)), [
    "4 unchanged:stale-line",
  ]);
  // what a cache that knows the command shows: line 4 afresh, the others held
  assert.deepEqual(
    unsafeOf(session([...steps, [read(), {
      mode: "partial",
      text: "[readcache: unchanged in lines 1-3, 5-11 of 11; the other lines follow]\n[line 4]\nl4",
    }]], files)),
    [],
  );
  // a cache that took the view for the whole file: its diff does not fit what the model holds
  const diff = "[readcache: 4 lines changed of 11]\n--- a/a.txt\n+++ b/a.txt\n" +
    "@@ -1,5 +1,5 @@\n l1\n-X2\n+l2\n l3\n-X4\n+l4\n l5";
  assert.deepEqual(unsafeOf(session([...steps, [read(), { mode: "diff", text: diff }]], files)), [
    "4 diff:does-not-apply",
  ]);
});

Deno.test("oracle checker: a command that changes a file shows nothing of it", () => {
  const steps: [Record<string, unknown>, Out][] = [
    [read(), full(A)],
    [bash("sed -i 's/^l2$/X/' a.txt"), null],
  ];
  assert.deepEqual(
    unsafeOf(session([
      ...steps,
      [read({ offset: 3, limit: 2 }), {
        mode: "unchanged_range",
        text: "[readcache: unchanged in lines 3-4 of 6]",
      }],
      [read(), { mode: "diff", text: DIFF_AB }],
    ])),
    [],
  );
  assert.deepEqual(unsafeOf(session([...steps, [read(), unchanged(6)]])), [
    "2 unchanged:stale-line",
  ]);
});

Deno.test("oracle checker: a chain shows each view as the file was when it printed", () => {
  const sed = "sed -i 's/^l2$/X/' a.txt";
  // printed between a change and the copy back: the model last saw B, the file holds A again
  for (
    const steps of [
      [[bash(`cp a.txt k.txt && ${sed} && cat a.txt && cp k.txt a.txt`), null]],
      [[bash(`cp a.txt k.txt; ${sed}; cat -n a.txt; cp k.txt a.txt`), null]],
      [[bash("cp a.txt k.txt"), null], [write(B), null], [
        bash("cat a.txt && cp k.txt a.txt"),
        null,
      ]],
    ] as [Record<string, unknown>, Out][][]
  ) {
    const head: [Record<string, unknown>, Out][] = [[read(), full(A)], ...steps];
    const at = head.length;
    const name = JSON.stringify(steps);
    assert.deepEqual(unsafeOf(session([...head, [read(), unchanged(6)]])), [
      `${at} unchanged:stale-line`,
    ], name);
    assert.deepEqual(
      unsafeOf(session([...head, [read(), { mode: "diff", text: DIFF_BA }]])),
      [],
      name,
    );
    assert.deepEqual(unsafeOf(session([...head, [read(), full(A)]])), [], name);
  }
  // a view after every change shows the file as it is at the result
  const after: [Record<string, unknown>, Out][] = [[read(), full(A)], [
    bash(`${sed} && cat a.txt`),
    null,
  ]];
  assert.deepEqual(unsafeOf(session([...after, [read(), unchanged(6)]])), []);
  assert.deepEqual(unsafeOf(session([...after, [read(), { mode: "diff", text: DIFF_AB }]])), [
    "2 diff:does-not-apply",
  ]);
  // a view before the change: what the model holds is out of date
  const before: [Record<string, unknown>, Out][] = [[read(), full(A)], [
    bash(`cat a.txt; ${sed}`),
    null,
  ]];
  assert.deepEqual(unsafeOf(session([...before, [read(), unchanged(6)]])), [
    "2 unchanged:stale-line",
  ]);
  assert.deepEqual(unsafeOf(session([...before, [read(), { mode: "diff", text: DIFF_AB }]])), []);
});

Deno.test("oracle checker: a command the oracle does not read, strictly", () => {
  // in its message, before its result, no file is known
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [bash("nl a.txt", { persist: false }), null],
      [read(), unchanged(6)],
    ])),
    ["2 unchanged:unknown-line"],
  );
  // a read-only command the oracle knows is no such call
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [bash("cat a.txt", { persist: false }), null],
      [read(), unchanged(6)],
    ])),
    [],
  );
  // its result showed every file whole
  assert.deepEqual(
    unsafeOf(session([
      [read(), full(A)],
      [write(B), null],
      [bash("nl a.txt"), null],
      [write(A), null],
      [read(), unchanged(6)],
    ])),
    ["4 unchanged:stale-line"],
  );
  // it may have run at any point of its message: what it showed and what a read of the same
  // message showed are not in any order the model knows, where they differ it holds nothing
  const message = (command: string): [Record<string, unknown>, Out][] => [
    [read(), full(A)],
    [bash(command, { persist: "deferred" }), null],
    [write(B), null],
    [read(), full(B)],
    [write(A), null],
  ];
  assert.deepEqual(
    unsafeOf(session([...message("nl a.txt"), [read(), { mode: "diff", text: DIFF_BA }]])),
    ["5 diff:does-not-apply"],
  );
  assert.deepEqual(unsafeOf(session([...message("nl a.txt"), [read(), full(A)]])), []);
  assert.deepEqual(
    unsafeOf(session([...message("nl a.txt"), [read({ offset: 3, limit: 2 }), {
      mode: "unchanged_range",
      text: "[readcache: unchanged in lines 3-4 of 6]",
    }]])),
    [],
  );
  // a command it reads shows what it shows in call order: the read is the newest view
  assert.deepEqual(
    unsafeOf(session([...message("cat a.txt"), [read(), { mode: "diff", text: DIFF_BA }]])),
    [],
  );
  assert.deepEqual(unsafeOf(session([...message("cat a.txt"), [read(), unchanged(6)]])), [
    "5 unchanged:stale-line",
  ]);
});

Deno.test("oracle checker: a deferred result shows the model what it showed, in call order", () => {
  // the view of a deferred command comes before the read of its message
  const steps: [Record<string, unknown>, Out][] = [
    [read(), full(A)],
    [write(B), null],
    [bash("cat a.txt", { persist: "deferred" }), null],
  ];
  assert.deepEqual(unsafeOf(session([...steps, [read(), unchanged(6)]])), []);
  assert.deepEqual(unsafeOf(session([...steps, [read(), { mode: "diff", text: DIFF_AB }]])), [
    "3 diff:does-not-apply",
  ]);
  // it is in the session after the turn
  assert.deepEqual(
    unsafeOf(session([
      ...steps,
      [read(), full(B)],
      [write(A), null],
      [read(), { mode: "diff", text: DIFF_BA }],
    ])),
    [],
  );
  // a result that never comes (the turn ends first) shows nothing
  assert.deepEqual(
    unsafeOf(session([
      ...steps,
      [read({ persist: false }), full(B)],
      [{ op: "message" }, null],
      [read(), unchanged(6)],
    ])),
    ["5 unchanged:stale-line"],
  );
});

Deno.test("oracle shrinker: files named only in a shell command or searched are kept", () => {
  const files = { "a.txt": "a\n", "b.txt": "b\n", "sub/c.txt": "c\n", "d.txt": "d\n" };
  const vector = (steps: Record<string, unknown>[]) =>
    ScenarioSchema.parse({ id: "x", title: "x", refs: ["x"], files, steps });
  const kept = (steps: Record<string, unknown>[]) =>
    Object.keys(dropUnusedFiles(vector(steps)).files).sort();
  assert.deepEqual(kept([bash("cp ./a.txt b.txt"), { op: "read", path: "b.txt", expect: {} }]), [
    "a.txt",
    "b.txt",
  ]);
  assert.deepEqual(kept([bash("sed -i 's/^a/x/' d.txt && cat d.txt")]), ["d.txt"]);
  assert.deepEqual(kept([{ op: "grep", pattern: "c", path: "sub" }]), ["sub/c.txt"]);
  assert.deepEqual(kept([{ op: "grep", pattern: "c" }]), ["a.txt", "b.txt", "d.txt", "sub/c.txt"]);
});

Deno.test("oracle file model: the commands it does not run change nothing when run", () => {
  // every view command of generated sessions, run for real on the session's files
  const dir = Deno.makeTempDirSync({ prefix: "readcache-oracle-views-" });
  try {
    const listing = () =>
      JSON.stringify(
        readdirSync(dir, { recursive: true, withFileTypes: true }).map((e) => {
          const p = `${e.parentPath}/${e.name}`;
          return [p, e.isSymbolicLink() ? Deno.readLinkSync(p) : e.isFile() ? readFileSync(p) : ""];
        }).sort(),
      );
    let views = 0;
    for (const [i, s] of fc.sample(sessionArb(), { seed: SEED, numRuns: 40 }).entries()) {
      const v = compileSession(s, `oracle-${i}`);
      for (const st of v.steps) {
        if (st.op !== "bash" || !READ_ONLY_COMMAND.test(st.command)) continue;
        views++;
        Deno.removeSync(dir, { recursive: true });
        Deno.mkdirSync(dir);
        for (const [name, c] of Object.entries(v.files)) {
          Deno.mkdirSync(dirname(`${dir}/${name}`), { recursive: true });
          Deno.writeFileSync(`${dir}/${name}`, contentBytes(c));
        }
        Deno.symlinkSync("a.txt", `${dir}/link.txt`);
        const before = listing();
        new Deno.Command("bash", {
          args: ["-c", st.command],
          cwd: dir,
          stdout: "null",
          stderr: "null",
        })
          .outputSync();
        assert.equal(listing(), before, st.command);
      }
    }
    assert.ok(views > 30, `${views} view commands`);
    // every command that changes a file is run
    for (
      const c of [
        "sed -i 's/^a1/x/' a.txt",
        "printf 'a+\\n' >> a.txt",
        "echo 'x' > a.txt",
        "cp b.txt a.txt",
        "rm a.txt",
        "sed -i 's/^a1/x/' a.txt && cat a.txt",
        "cat a.txt > b.txt",
        "cat a.txt; rm b.txt",
        "head -n 3 a.txt | tee b.txt",
      ]
    ) assert.ok(!READ_ONLY_COMMAND.test(c), c);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("oracle file model: pi's edit tool, as pi runs it on a real file", async () => {
  // the edit calls of generated sessions, each run by pi's own tool on disk and by the model
  const dir = await Deno.makeTempDir({ prefix: "readcache-oracle-edit-" });
  try {
    const tool = createEditToolDefinition(dir);
    const outcomes = new Set<string>();
    for (const [i, s] of fc.sample(sessionArb(), { seed: SEED, numRuns: 60 }).entries()) {
      const v = compileSession(s, `oracle-${i}`);
      const fs = FsModel.fromFiles(v.files);
      for (const st of v.steps) {
        applyFileStep(fs, st);
        if (st.op !== "editTool") continue;
        // the same call on f.txt holding the same bytes (or missing), in the model and on disk
        const before = fs.read(writeNameOf(st.path));
        const args = { ...editToolArgs(st), path: "f.txt" };
        const model = FsModel.fromFiles(
          before === undefined ? {} : { "f.txt": bytesContent(before) },
        );
        const want = model.edit(args);
        await Deno.remove(`${dir}/f.txt`).catch(() => {});
        if (before !== undefined) await Deno.writeFile(`${dir}/f.txt`, before);
        let got: { ok: true } | { ok: false; error: string };
        try {
          const input = tool.prepareArguments!(structuredClone(args));
          await tool.execute("id", input, undefined, undefined, undefined!);
          got = { ok: true };
        } catch (e) {
          got = { ok: false, error: (e as Error).message };
        }
        const what = JSON.stringify(st);
        assert.deepEqual(got, want.ok ? { ok: true } : want, what);
        if (before !== undefined) {
          assert.deepEqual(await Deno.readFile(`${dir}/f.txt`), model.read("f.txt"), what);
        }
        outcomes.add(want.ok ? (want.fuzzy ? "fuzzy" : "exact") : want.error.split(" ")[0]);
        fs.edit(editToolArgs(st));
      }
    }
    for (const o of ["exact", "fuzzy", "Could", "Found"]) assert.ok(outcomes.has(o), o);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// ------------------------------------------------------- generated sessions

Deno.test("oracle generator: vectors are valid and deterministic", () => {
  const a = fc.sample(sessionArb(), { seed: SEED, numRuns: 50 }).map((s, i) =>
    compileSession(s, `oracle-${i}`)
  );
  const b = fc.sample(sessionArb(), { seed: SEED, numRuns: 50 }).map((s, i) =>
    compileSession(s, `oracle-${i}`)
  );
  assert.deepEqual(a, b);
  for (const v of a) ScenarioSchema.parse(v);
  const writes = a.flatMap((v) => v.steps).filter((s) => s.op === "writeTool");
  assert.ok(writes.length > 25, `write calls in 50 sessions: ${writes.length}`);
  assert.ok(writes.some((s) => s.persist === false), "some write calls never return");
  assert.ok(writes.some((s) => s.path.startsWith("@") || s.path.startsWith("./")));
  assert.ok(writes.some((s) => s.content.includes("\uD800")), "some write content is not Unicode");
  const edits = a.flatMap((v) => v.steps).filter((s) => s.op === "editTool");
  assert.ok(edits.length > 25, `edit calls in 50 sessions: ${edits.length}`);
  assert.ok(edits.some((s) => s.persist === false), "some edit calls never return");
  assert.ok(edits.some((s) => typeof s.edits === "string"), "edits sent as a JSON string");
  assert.ok(edits.some((s) => s.oldText !== undefined), "the legacy shape");
  assert.ok(
    edits.some((s) => Array.isArray(s.edits) && s.edits.length > 1),
    "several replacements",
  );
  const files = a.flatMap((v) => Object.values(v.files)).filter((c) => typeof c === "string");
  assert.ok(files.some((c) => c.includes("\r\n")) && files.some((c) => c.startsWith("\uFEFF")));
  // bash and grep calls: about one step in ten, every command form, every way to return
  const steps = a.flatMap((v) => v.steps);
  const tools = steps.filter((s) => s.op === "bash" || s.op === "grep");
  assert.ok(tools.length > steps.length / 14, `${tools.length} bash/grep of ${steps.length}`);
  const commands = tools.flatMap((s) => s.op === "bash" ? [s.command] : []);
  for (
    const form of [
      /^cat \S+$/,
      /^cat -n /,
      /^sed -n '\d+(,\d+)?p' /,
      /^head -n /,
      /^tail -n /,
      /^cat \S+ \| head -\d+$/,
      /^grep -n \w+ \S+$/,
      /^sed -i 's\/\^/,
      /^printf '.*\\n' >> /,
      /^echo '.*' > /,
      /^cp /,
      /^rm /,
      /^true$/,
      / && cat /,
      / && nl /,
      / \.\//,
      // chains: a view then a change, a change then a view, with `;` too; the restore shapes
      /^(cat|sed -n|head|tail|grep)[^;&]* (&&|;) (sed -i|printf|echo|cp)[^;&]*$/,
      /^(sed -i|printf|echo|cp)[^;&]*; (cat|sed -n|head|tail|grep)[^;&]*$/,
      /^cp (\S+) (\S+) && (sed -i|printf|echo|cp) [^;&]+ && cat [^;&]+ && cp \2 \1$/,
      /^(cat|head|tail|sed -n)[^;&]* (&&|;) cp \S+ \S+$/,
      /^cp (\S+) (\S+)$/,
    ]
  ) assert.ok(commands.some((c) => form.test(c)), `a command like ${form}`);
  const chains = commands.filter((c) => readBash(c).kind === "chain");
  assert.ok(chains.length > 20, `${chains.length} chains`);
  for (const p of [false, "deferred", undefined]) {
    assert.ok(tools.some((s) => s.persist === p), `a bash or grep call with persist ${p}`);
  }
  assert.ok(tools.some((s) => s.record === false), "a result without a record");
  const greps = tools.flatMap((s) => s.op === "grep" ? [s] : []);
  assert.ok(greps.some((s) => s.path === undefined) && greps.some((s) => s.path !== undefined));
});

Deno.test("oracle generator: a deferred result its turn never answers persists nothing", async () => {
  // reads that never return and a deferred search, then a label: nothing is in the session yet
  // (and pi's leaf is its assistant message, which the reference simulator does not write)
  const vector = (steps: Record<string, unknown>[]) =>
    ScenarioSchema.parse({
      id: "deferred-label",
      title: "a deferred search its turn never answers, then a label",
      refs: ["tests/pi/support/oracle"],
      files: { "a.txt": "a1 beta\na2\n" },
      steps,
    });
  const head = [
    { op: "read", path: "a.txt", persist: false, expect: {} },
    { op: "grep", pattern: "beta", persist: "deferred" },
  ];
  const tail = [{ op: "label", name: "L1" }, { op: "read", path: "a.txt", expect: {} }];
  const ops = (v: Scenario) => v.steps.map((s) => s.op);
  assert.deepEqual(ops(sanitizeScenario(vector([...head, ...tail]))), ["read", "grep", "read"]);
  const outcome = await runSession(PORTS.reference, sanitizeScenario(vector([...head, ...tail])));
  assert.ok(outcome.ok, outcome.ok ? "" : outcome.error);
  // a later call of the turn that returns brings the deferred result with it: the label stays
  const landed = [...head, { op: "read", path: "a.txt", expect: {} }, ...tail];
  assert.deepEqual(ops(sanitizeScenario(vector(landed))), [
    "read",
    "grep",
    "read",
    "label",
    "read",
  ]);
  // the session of the run that found it (seed 3402, session 627) runs on the reference port
  const r = await runOracle({
    port: PORTS.reference,
    sessions: 628,
    seed: 3402,
    shrink: 0,
    only: [627],
  });
  assert.deepEqual([r.sessions, r.errors.length, r.unsafe.length], [1, 0, 0]);
});

Deno.test("oracle view: where an edit lands in what the model holds", () => {
  const view = (lines: string[], end: number | null = lines.length, from = 1) => ({
    lines: new Map(lines.map((l, i) => [from + i, l])),
    end,
  });
  const held = (v: { lines: Map<number, string>; end: number | null }) => ({
    lines: [...v.lines].sort((x, y) => x[0] - y[0]),
    end: v.end,
  });
  // a match ending with a line break joins the next line into the replacement
  assert.deepEqual(held(applyEdit(view(["a", "b", "c", ""]), rep("b\n", "x\ny\n"))), {
    lines: [[1, "a"], [2, "x"], [3, "y"], [4, "c"], [5, ""]],
    end: 5,
  });
  assert.deepEqual(held(applyEdit(view(["a", "b", "c"]), rep("a\nb\nc", ""))), {
    lines: [[1, ""]],
    end: 1,
  });
  // two replacements on one line
  assert.deepEqual(
    held(applyEdit(view(["ab", "c"]), [{ oldText: "a", newText: "1\n2" }, {
      oldText: "b",
      newText: "3",
    }])),
    { lines: [[1, "1"], [2, "23"], [3, "c"]], end: 3 },
  );
  // known stretches around unknown lines: those after the edit shift, unknown ones stay unknown
  assert.deepEqual(held(applyEdit(view(["a", "b"], null, 3), rep("a", "x\ny"))), {
    lines: [[3, "x"], [4, "y"], [5, "b"]],
    end: null,
  });
  // CRLF lines: the new lines end with CR, the last one like the line it replaced
  assert.deepEqual(held(applyEdit(view(["a\r", "b"]), rep("a\nb", "x\ny\nz"))), {
    lines: [[1, "x\r"], [2, "y\r"], [3, "z"]],
    end: 3,
  });
  // mixed endings: the new lines are unknown, the others shift
  assert.deepEqual(held(applyEdit(view(["a\r", "b", "c", ""]), rep("b", "x\ny"))), {
    lines: [[1, "a\r"], [4, "c"], [5, ""]],
    end: 5,
  });
  // the old text twice in the view, or nowhere: the model does not know where its edit landed,
  // only that it starts no earlier than its first occurrence in the lines held from line 1 on,
  // or than where the end of those lines could begin it
  assert.deepEqual(held(applyEdit(view(["a", "a"]), rep("a", "x"))), { lines: [], end: null });
  assert.deepEqual(held(applyEdit(view(["p", "a", "b", "a"]), rep("a", "x"))), {
    lines: [[1, "p"]],
    end: null,
  });
  assert.deepEqual(held(applyEdit(view(["p", "q", "s", "a", "a"], null), rep("a", "x"))), {
    lines: [[1, "p"], [2, "q"], [3, "s"]],
    end: null,
  });
  // twice, both after the stretch from line 1: the line after that stretch could hold it too
  const gap = { lines: new Map([[1, "p"], [2, "q"], [4, "a"], [5, "a"]]), end: null };
  assert.deepEqual(held(applyEdit(gap, rep("a", "x"))), { lines: [[1, "p"], [2, "q"]], end: null });
  // nowhere, in a view of the whole file: the view is out of date somewhere the model cannot
  // tell; it holds its lines, not where the file ends
  assert.deepEqual(held(applyEdit(view(["a", "b"]), rep("z", "x"))), {
    lines: [[1, "a"], [2, "b"]],
    end: null,
  });
  assert.deepEqual(held(applyEdit(view(["a", "bc"]), rep("cz", "x"))), {
    lines: [[1, "a"], [2, "bc"]],
    end: null,
  });
  assert.deepEqual(held(applyEdit(view(["a", "b"]), rep("b\nc", "x"))), {
    lines: [[1, "a"]],
    end: null,
  });
  // nowhere, in a view of lines 1-3 of a longer file: from line 4, the first it does not hold
  assert.deepEqual(held(applyEdit(view(["a", "b", "c"], null), rep("zz", "x"))), {
    lines: [[1, "a"], [2, "b"], [3, "c"]],
    end: null,
  });
  // the end of the stretch could begin it (with the line break after its last line)
  assert.deepEqual(held(applyEdit(view(["a", "b", "c"], null), rep("b\nc\nd", "x"))), {
    lines: [[1, "a"]],
    end: null,
  });
  assert.deepEqual(held(applyEdit(view(["a", "b", "c"], null), rep("c\n\nd", "x"))), {
    lines: [[1, "a"], [2, "b"]],
    end: null,
  });
  assert.deepEqual(held(applyEdit(view(["a", "b", "cd"], null), rep("d\ne", "x"))), {
    lines: [[1, "a"], [2, "b"]],
    end: null,
  });
  // line 1 not known: everything is
  assert.deepEqual(held(applyEdit(view(["a", "b"], null, 2), rep("z", "x"))), {
    lines: [],
    end: null,
  });
  // compared as pi matches: CR endings and line breaks are one, the BOM is not text
  assert.deepEqual(
    held(applyEdit(view(["\uFEFFa\r", "b\r", "c\r"], null), rep("b\r\nc\r\nd", "x"))),
    { lines: [[1, "\uFEFFa\r"]], end: null },
  );
  // pi's normalised form counts too: the model cannot tell which match pi used
  assert.deepEqual(
    held(applyEdit(view(["a", "it\u2019s", "b"], null), rep("it's\nb\nz", "x"))),
    { lines: [[1, "a"]], end: null },
  );
  // a normalised match in a view of part of the file: the exact text could be further on, so
  // the model holds what both give (the line it replaced is unknown, and the lines after it
  // when it added lines)
  assert.deepEqual(
    held(applyEdit(view(["a", "it\u2019s", "b"], null), rep("it's", "x"))),
    { lines: [[1, "a"], [3, "b"]], end: null },
  );
  assert.deepEqual(
    held(applyEdit(view(["a", "it\u2019s", "b"], null), rep("it's", "x\ny"))),
    { lines: [[1, "a"]], end: null },
  );
  // in a view of the whole file it is what pi did
  assert.deepEqual(
    held(applyEdit(view(["a", "it\u2019s", "b"]), rep("it's", "x\ny"))),
    { lines: [[1, "a"], [2, "x"], [3, "y"], [4, "b"]], end: 4 },
  );
  // one replacement placed, another not: from the earliest of the two
  assert.deepEqual(
    held(applyEdit(view(["a", "b", "c"], null), [{ oldText: "b", newText: "B" }, {
      oldText: "zz",
      newText: "x",
    }])),
    { lines: [[1, "a"]], end: null },
  );
  assert.deepEqual(
    held(applyEdit(view(["a", "b", "c"], null), [{ oldText: "c\nd", newText: "C" }, {
      oldText: "a",
      newText: "x",
    }])),
    { lines: [], end: null },
  );
  // replacements that overlap in the view: from the first line either touches
  assert.deepEqual(
    held(applyEdit(view(["a", "bc", "d"]), [{ oldText: "bc", newText: "x" }, {
      oldText: "c\nd",
      newText: "y",
    }])),
    { lines: [[1, "a"]], end: null },
  );
});

Deno.test("oracle view: a partial answer sets what it shows and keeps what it holds", () => {
  const v = foldView([
    { kind: "shown", start: 1, lines: ["a", "b", "c", "d"], eof: true },
    { kind: "partial", shown: [{ start: 2, lines: ["B"] }], end: null },
  ]);
  assert.deepEqual([...v.lines].sort((x, y) => x[0] - y[0]), [[1, "a"], [2, "B"], [3, "c"], [
    4,
    "d",
  ]]);
  assert.equal(v.end, 4);
  // the window reached the end of the file with no notice: it ends there
  const w = foldView([
    { kind: "shown", start: 1, lines: ["a", "b", "c", "d"], eof: true },
    { kind: "partial", shown: [{ start: 3, lines: ["C"] }], end: 3 },
  ]);
  assert.deepEqual([...w.lines].sort((x, y) => x[0] - y[0]), [[1, "a"], [2, "b"], [3, "C"]]);
  assert.equal(w.end, 3);
});

function explain(port: string, sessions: number, r: OracleResult): string {
  const lines = [
    `${port}: ${r.unsafe.length} unsafe answers, ${r.errors.length} vectors that did not run`,
  ];
  for (const e of r.errors.slice(0, 1)) lines.push(`error: ${e.message}`);
  for (const u of r.unsafe.slice(0, 5)) {
    lines.push(`session ${u.session} step ${u.step} ${u.category}: ${u.reason}`);
  }
  for (const c of r.counterexamples) {
    lines.push(`shrunk counterexample (${c.category}):`, JSON.stringify(c.vector, null, 2));
  }
  lines.push(`reproduce: deno task oracle --port ${port} --sessions ${sessions} --seed ${r.seed}`);
  return lines.join("\n");
}

for (const [port, sessions] of [["reference", 250], ["pi", 150], ["pi-no-events", 150]] as const) {
  Deno.test(`oracle: ${sessions} generated sessions through ${port}, 0 unsafe answers`, async () => {
    const r = await runOracle({
      port: PORTS[port as PortName],
      sessions,
      seed: SEED,
      shrink: 1,
      shrinkBudget: 100,
    });
    assert.equal(r.sessions, sessions);
    assert.ok(r.cachedAnswers > sessions / 2, "the sessions exercise cached answers");
    assert.ok(r.writes > sessions / 2, "the sessions exercise write calls");
    assert.ok(r.cachedOnWritten > sessions / 10, "cached answers on files the model wrote");
    assert.ok(r.edits > sessions / 2, "the sessions exercise edit calls");
    assert.ok(r.editsRefused > 0 && r.editsFuzzy > 0 && r.editsUnanswered > 0, "edit outcomes");
    assert.ok(r.cachedOnEdited > sessions / 10, "cached answers on files the model edited");
    assert.ok(r.bash > sessions / 2 && r.grep > sessions / 10, `${r.bash} bash, ${r.grep} grep`);
    assert.ok(r.cachedAfterTool > sessions / 10, "cached answers on files a tool showed");
    assert.ok(r.errors.length === 0 && r.unsafe.length === 0, explain(port, sessions, r));
  });
}

Deno.test("oracle: --only runs the named sessions of a run alone, as the run generated them", async () => {
  const run = (only: number[]) =>
    runOracle({ port: PORTS.reference, sessions: 40, seed: SEED, shrink: 0, only });
  const [a, b, both] = [await run([7]), await run([31]), await run([31, 7])];
  assert.deepEqual([a.sessions, b.sessions, both.sessions], [1, 1, 2]);
  assert.ok(a.reads > 0 && b.reads > 0);
  assert.equal(both.reads, a.reads + b.reads);
  assert.equal(both.cachedAnswers, a.cachedAnswers + b.cachedAnswers);
  assert.deepEqual((await run([7])).modes, a.modes, "the same session each time");
});

Deno.test("oracle: 150 generated sessions through opencode, steps it cannot run dropped and counted, 0 unsafe answers", async () => {
  const r = await runOracle({
    port: PORTS.opencode,
    sessions: 150,
    seed: SEED,
    shrink: 1,
    shrinkBudget: 100,
  });
  assert.equal(r.sessions, 150);
  assert.ok(r.cachedAnswers > 75, "the sessions exercise cached answers");
  assert.ok(r.cachedOnWritten > 15, "cached answers on files the model wrote");
  assert.ok(r.cachedOnEdited > 15, "cached answers on files the model edited (OpenCode's belief)");
  const dropped = Object.values(r.dropped).reduce((a, b) => a + b, 0);
  assert.ok(dropped > 0 && r.sessionsWithDrops < 150, `dropped ${JSON.stringify(r.dropped)}`);
  assert.ok(r.errors.length === 0 && r.unsafe.length === 0, explain("opencode", 150, r));
});

Deno.test("oracle: 150 generated sessions through claude-code, steps it cannot run dropped and counted, 0 unsafe answers", async () => {
  const r = await runOracle({
    port: PORTS["claude-code"],
    sessions: 150,
    seed: SEED,
    shrink: 1,
    shrinkBudget: 100,
  });
  assert.equal(r.sessions, 150);
  assert.ok(r.cachedAnswers > 75, "the sessions exercise cached answers");
  assert.ok(r.cachedOnWritten > 15, "cached answers on files the model wrote");
  assert.ok(r.cachedAfterTool > 15, "cached answers on files a command showed or changed");
  const dropped = Object.values(r.dropped).reduce((a, b) => a + b, 0);
  assert.ok(dropped > 0 && r.sessionsWithDrops < 150, `dropped ${JSON.stringify(r.dropped)}`);
  assert.ok(r.errors.length === 0 && r.unsafe.length === 0, explain("claude-code", 150, r));
});

Deno.test("oracle: the checked-in scenario vectors give no unsafe answer", async () => {
  const dir = new URL("../../vectors/scenario/", import.meta.url);
  for (const f of readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
    const vector = ScenarioSchema.parse(JSON.parse(readFileSync(new URL(f, dir), "utf8")));
    const o = await runSession(PORTS.reference, vector);
    assert.ok(o.ok, `${f}: ${o.ok ? "" : o.error}`);
    assert.deepEqual(o.unsafe, [], f);
  }
});

// ------------------------------------------------------------ planted bugs

for (const bug of PLANTED_BUGS) {
  Deno.test(`oracle catches the planted bug ${bug.name}`, async () => {
    const r = await runMutant(bug, {
      sessions: bug.sessions ?? 200,
      seed: bug.seed ?? SEED,
      stopAfter: 1,
    });
    for (const port of bug.ports) {
      assert.ok(
        r.introduced.some((x) => x.port === port),
        `${bug.name} on ${port}: no unsafe answer beyond the unmodified code's ` +
          JSON.stringify(r.counts),
      );
    }
    // the copy is gone, and so is .oracle-mutants/ (it held nothing else)
    assert.ok(
      !existsSync(new URL("../../.oracle-mutants", import.meta.url)),
      ".oracle-mutants/ was left behind",
    );
  });
}
