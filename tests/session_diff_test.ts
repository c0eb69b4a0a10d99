// The pieces of the differential mode that need no pi (scripts/differential/session_diff.ts,
// reference_expectations.ts, minimise_session.ts), on hand-made sessions and in-process ports:
// the reference's answers become expectations, a changed answer is the first differing read, a
// port that cannot run a session is reported as such, and the minimiser keeps only what fails.
// The whole mode, on random sessions and real port commands, is tests/pi/differential_test.ts.
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { minimiseSession } from "../scripts/differential/minimise_session.ts";
import {
  errorExpectation,
  expectationsFromReference,
} from "../scripts/differential/reference_expectations.ts";
import { diffSession, type PortRunner } from "../scripts/differential/session_diff.ts";
import { runScenario, type ScenarioOutput } from "../src/conformance/session_simulator.ts";
import type { ScenarioInput } from "../src/conformance/vector_schema.ts";
import { main } from "../src/conformance/runner.ts";

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n";

const SESSION: ScenarioInput = {
  id: "diff-session",
  files: { "a.txt": lines(40), "b.txt": lines(3) },
  steps: [
    { op: "read", path: "a.txt" },
    { op: "read", path: "b.txt" },
    { op: "read", path: "a.txt" },
    { op: "write", path: "a.txt", content: lines(40).replace("line 20\n", "line twenty\n") },
    { op: "read", path: "a.txt" },
    { op: "read", path: "missing.txt" },
  ],
};

/** The reference run as a port would run it, its answers passed through `change`. */
function referencePort(change: (out: ScenarioOutput) => ScenarioOutput = (o) => o): PortRunner {
  return async (input) => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-diff-test-")));
    try {
      const out = change(await runScenario(input, cwd, homedir()));
      return { ok: true, value: { ...out } };
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  };
}

Deno.test("errorExpectation keeps a message, or its code when it names the cwd", () => {
  assert.equal(
    errorExpectation("ENOENT: no such file or directory, open '/tmp/w/a.txt'", "/tmp/w"),
    "ENOENT",
  );
  const offset = "Offset 9 is beyond end of file (4 lines total)";
  assert.equal(errorExpectation(offset, "/tmp/w"), offset);
});

Deno.test("expectationsFromReference writes the reference's answers into the read steps", () => {
  const v = expectationsFromReference(
    { id: "s", files: {}, steps: [{ op: "read", path: "a" }, { op: "message" }] },
    { id: "s", results: [{ step: 0, error: "ENOENT: open '/w/a'" }] },
    { cwd: "/w", title: "t" },
  );
  assert.deepEqual(v.steps, [
    { op: "read", path: "a", expect: { error: "ENOENT" } },
    { op: "message" },
  ]);
  assert.deepEqual(v.refs, ["SPEC §10"]);
  assert.throws(
    () =>
      expectationsFromReference(
        { id: "s", files: {}, steps: [{ op: "read", path: "a" }] },
        { id: "s", results: [] },
        { cwd: "/w", title: "t" },
      ),
    /no result for read step 0/,
  );
});

Deno.test("the reference against itself: the same answers, every read compared", async () => {
  const d = await diffSession(SESSION, referencePort());
  assert.deepEqual(d, { kind: "same", reads: 5, alternativeDiffs: [] });
});

Deno.test("a planted difference is the first differing read, with both answers", async () => {
  // the port answers the second read of a.txt (step 2, unchanged) in full
  const port = referencePort((o) => ({
    ...o,
    results: o.results.map((r) =>
      r.step === 2 && !("error" in r) ? { ...r, mode: "full", text: lines(40) } : r
    ),
  }));
  const d = await diffSession(SESSION, port);
  assert.equal(d.kind, "differs");
  if (d.kind !== "differs") return;
  assert.equal(d.step, 2);
  assert.equal(d.reference && "mode" in d.reference ? d.reference.mode : "", "unchanged");
  assert.equal(d.port && "mode" in d.port ? d.port.mode : "", "full");
  assert.match(d.problems[0], /^step 2 \(read a\.txt\): mode expected unchanged, got full/);
  const expectOf = (i: number) => {
    const s = d.vector.steps[i];
    return s.op === "read" ? s.expect : undefined;
  };
  assert.equal(expectOf(4)?.mode, "diff");
  assert.deepEqual(expectOf(5), { error: "ENOENT" });
});

Deno.test("a port that cannot run the session is reported, not skipped", async () => {
  const d = await diffSession(SESSION, () => Promise.resolve({ ok: false, reason: "exit 3" }));
  assert.equal(d.kind, "port-failed");
  assert.equal(d.kind === "port-failed" ? d.reason : "", "exit 3");
  const wrongId = await diffSession(
    SESSION,
    referencePort((o) => ({ ...o, id: "other" })),
  );
  assert.equal(wrongId.kind, "port-failed");
});

Deno.test("a session the port declares not applicable is no failure, and nothing is compared", async () => {
  const port: PortRunner = (input) =>
    Promise.resolve({
      ok: true,
      value: { id: input.id, notApplicable: { step: 3, reason: "no write tool" } },
    });
  const d = await diffSession(SESSION, port);
  assert.deepEqual(d, { kind: "not-applicable", reads: 5, step: 3, reason: "no write tool" });
});

Deno.test("minimiseSession drops steps, files and lines while the failure stays", async () => {
  const v = {
    files: { "a.txt": lines(40), "b.txt": "b\n" },
    steps: ["s0", "s1", "x", "s3", "s4", "s5", "y", "s7"],
  };
  const fails = (c: typeof v) =>
    Promise.resolve(
      c.steps.includes("x") && c.steps.includes("y") && "a.txt" in c.files &&
        c.files["a.txt"].includes("line 3\n"),
    );
  const m = await minimiseSession(v, fails);
  assert.deepEqual(m.vector.steps, ["x", "y"]);
  assert.deepEqual(Object.keys(m.vector.files), ["a.txt"]);
  assert.equal(m.vector.files["a.txt"], lines(3));
  const capped = await minimiseSession(v, fails, { budget: 3 });
  assert.equal(capped.runs, 3);
});

Deno.test("the packaged runner explains that --random needs a checkout", async () => {
  const errors: string[] = [];
  const error = console.error;
  console.error = (...a: unknown[]) => void errors.push(a.join(" "));
  try {
    assert.equal(await main(["--random", "5", "--cmd", "./port"]), 2);
  } finally {
    console.error = error;
  }
  assert.match(errors[0], /--random .* runs from a checkout/);
});
