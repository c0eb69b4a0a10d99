// The OpenCode port's applicability rule counts the session's messages as the runner makes them
// (SPEC §10: a call starts a message unless the call before it is still in flight; commands and
// searches are calls too), and models OpenCode's write of a content that starts with a BOM as the
// step that does not apply, not every read after it (issue 41 item 9: the rule dropped more than
// it must).
import assert from "node:assert/strict";
import { openCodeVector } from "../../scripts/opencode/opencode_expectations.ts";
import type { Scenario } from "../../src/conformance/vector_schema.ts";

const vector = (steps: Scenario["steps"], files: Scenario["files"] = { "a.txt": "a\n" }) => ({
  id: "rule-turns",
  title: "the OpenCode rule's turns",
  refs: ["SPEC §10"],
  files,
  steps,
});

Deno.test("the OpenCode rule: a move to a point a later message replaced does not apply", () => {
  // read a; L1; read b; L2; back to L1; read c (replaces L2's message); to L2: that point is gone
  const v = openCodeVector(vector([
    { op: "read", path: "a.txt", expect: { mode: "full" } },
    { op: "label", name: "L1" },
    { op: "read", path: "a.txt", expect: { mode: "unchanged" } },
    { op: "label", name: "L2" },
    { op: "navigate", to: "L1" },
    { op: "read", path: "a.txt", expect: { mode: "unchanged" } },
    { op: "navigate", to: "L2" },
  ]));
  assert.deepEqual(v.applies ? "applies" : v.reasons, { tree: [6] });
});

Deno.test("the OpenCode rule: calls of one message (the first still in flight) are one message", () => {
  // a read that has not returned and the read after it are one message: L is after both
  const v = openCodeVector(vector([
    { op: "read", path: "a.txt", persist: false, expect: { mode: "full" } },
    { op: "read", path: "a.txt", expect: { mode: "full" } },
    { op: "label", name: "L" },
    { op: "message" },
    { op: "navigate", to: "L" },
  ]));
  assert.equal(v.applies, true, JSON.stringify(v));
});

Deno.test("the OpenCode rule: a write of content starting with a BOM is the step that does not apply", () => {
  const v = openCodeVector(vector([
    { op: "writeTool", path: "b.txt", content: "\uFEFFhello\n" },
    { op: "read", path: "b.txt", expect: { mode: "unchanged" } },
    { op: "read", path: "a.txt", expect: { mode: "full" } },
  ]));
  assert.deepEqual(v.applies ? "applies" : v.reasons, { "line-model": [0] });
});
