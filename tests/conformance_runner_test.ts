// The conformance runner against misbehaving ports: every bad answer is a
// counted failure with a one-line reason, never a crash of the runner.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("../", import.meta.url));
const runner = fileURLToPath(new URL("../scripts/conformance.ts", import.meta.url));

const ID = "runner-small-diff";
const line = (n: number) => `line ${n}: the quick brown fox jumps over the lazy dog`;
const before = Array.from({ length: 20 }, (_, i) => line(i + 1));
const after = before.map((l, i) => (i === 9 ? "line ten was edited" : l));
const text = (lines: string[]) => lines.join("\n") + "\n";

/** The reference's diff for the second read (21 lines as pi counts them). */
const REFERENCE_DIFF = [
  "[readcache: 2 lines changed of 21]",
  "--- a/a.txt",
  "+++ b/a.txt",
  "@@ -7,7 +7,7 @@",
  ` ${line(7)}`,
  ` ${line(8)}`,
  ` ${line(9)}`,
  `-${line(10)}`,
  "+line ten was edited",
  ` ${line(11)}`,
  ` ${line(12)}`,
  ` ${line(13)}`,
].join("\n");

/** The same change with one line of context: a correct alternative diff. */
function alternativeDiff(header = "[readcache: 2 lines changed of 21]"): string {
  return [
    header,
    "--- a/a.txt",
    "+++ b/a.txt",
    "@@ -9,3 +9,3 @@",
    ` ${line(9)}`,
    `-${line(10)}`,
    "+line ten was edited",
    ` ${line(11)}`,
  ].join("\n");
}

const VECTOR = {
  id: ID,
  title: "a changed file is served as a diff",
  refs: ["SPEC §10"],
  files: { "a.txt": text(before) },
  steps: [
    { op: "read", path: "a.txt", expect: { mode: "full" } },
    { op: "write", path: "a.txt", content: text(after) },
    { op: "read", path: "a.txt", expect: { mode: "diff", text: REFERENCE_DIFF } },
  ],
};

const LAYER_ID = "runner-path-relative";
const LAYER_VECTOR = {
  layer: "path",
  description: "one path case for the runner tests",
  cases: [{
    id: LAYER_ID,
    title: "a relative path resolves against cwd",
    refs: ["SPEC §3.1"],
    input: { path: "src/a.ts", cwd: "/w/proj", home: "/home/u", existing: ["/w/proj/src/a.ts"] },
    expected: { resolved: "/w/proj/src/a.ts", pathKey: "/w/proj/src/a.ts" },
  }],
};

/** What a port prints for the scenario when its second read is a diff with `diff` as text. */
function answerWithDiff(diff: string): string {
  return JSON.stringify({
    id: ID,
    results: [
      { step: 0, mode: "full", text: text(before), scope: "full" },
      { step: 2, mode: "diff", text: diff, scope: "full" },
    ],
  });
}

interface Run {
  code: number;
  lines: string[];
  summary: string;
}

/**
 * Runs the conformance runner on one vector file (the scenario unless `layer`)
 * in a fresh temp dir; `port` is the body of a shell script used as the port,
 * `printed` (when given) is a file the script can `cat` as its answer.
 */
async function conformance(
  opts: {
    port?: string;
    printed?: string;
    layer?: boolean;
    extra?: string[];
    vector?: { id: string };
  },
): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), "readcache-runner-"));
  try {
    const given = opts.vector ?? (opts.layer ? LAYER_VECTOR : VECTOR);
    const vector = join(dir, opts.layer ? "layer.json" : `${opts.vector?.id ?? ID}.json`);
    writeFileSync(vector, JSON.stringify(given, null, 2));
    const args = ["run", "-A", runner, vector, ...(opts.extra ?? [])];
    if (opts.port !== undefined) {
      if (opts.printed !== undefined) writeFileSync(join(dir, "answer.json"), opts.printed);
      writeFileSync(join(dir, "port.sh"), opts.port);
      args.push("--cmd", `cd '${dir}' && sh port.sh`);
    }
    const out = await new Deno.Command(Deno.execPath(), {
      args,
      cwd: repo,
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const lines = new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "");
    return { code: out.code, lines, summary: lines.at(-1) ?? "" };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const PRINT_ANSWER = "cat > /dev/null\ncat answer.json\n";

/** Asserts one failed vector whose reason (the line under `<id> (<file>):`) is `reason`. */
function assertOneFailure(run: Run, reason: string | RegExp, id = ID): void {
  assert.equal(run.code, 1);
  assert.equal(run.summary, "0 passed, 1 failed");
  const at = run.lines.findIndex((l) => l.startsWith(`${id} (`) && l.endsWith("):"));
  assert.notEqual(at, -1, `no failure section for ${id} in:\n${run.lines.join("\n")}`);
  const shown = run.lines[at + 1];
  if (typeof reason === "string") assert.equal(shown, `  ${reason}`);
  else assert.match(shown, reason);
}

Deno.test("the reference in process passes the small vector", async () => {
  const run = await conformance({});
  assert.equal(run.code, 0);
  assert.equal(run.summary, "1 passed, 0 failed");
  assert.ok(run.lines.includes("port: reference (in process)"));
});

Deno.test("the reference in process passes the whole corpus (no arguments)", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", runner],
    cwd: repo,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
  assert.match(lines.at(-1) ?? "", /^\d+ passed, 0 failed$/);
  assert.equal(out.code, 0);
});

Deno.test("a port printing {} fails: id and results are missing", async () => {
  const run = await conformance({ port: PRINT_ANSWER, printed: "{}" });
  assertOneFailure(run, "malformed port output: /id is missing; /results is missing");
  const row = run.lines.find((l) => l.startsWith(`| ${ID} | `));
  assert.ok(
    row?.endsWith(` | malformed port output: /id is missing; /results is missing |`),
    `the failure table names the vector and the reason: ${row}`,
  );
});

Deno.test("a port printing no results fails", async () => {
  const run = await conformance({ port: PRINT_ANSWER, printed: JSON.stringify({ id: ID }) });
  assertOneFailure(run, "malformed port output: /results is missing");
});

Deno.test("a port printing results that are not an array fails", async () => {
  const run = await conformance({
    port: PRINT_ANSWER,
    printed: JSON.stringify({ id: ID, results: "all good" }),
  });
  assertOneFailure(
    run,
    'malformed port output: /results must be an array of step results, got "all good"',
  );
});

Deno.test("a port printing result items of the wrong shape fails and names the fields", async () => {
  const run = await conformance({
    port: PRINT_ANSWER,
    printed: JSON.stringify({
      id: ID,
      results: [{ mode: 3, text: "x" }, { step: 2, mode: "diff" }],
    }),
  });
  assertOneFailure(
    run,
    "malformed port output: /results/0/step is missing; /results/0/mode must be a string or null, got 3; /results/1/text is missing",
  );
});

Deno.test("a port printing something that is not JSON fails", async () => {
  const run = await conformance({ port: "cat > /dev/null\necho 'hello, I am a port'\n" });
  assertOneFailure(
    run,
    /^ {2}port output is not one JSON object \(.+\); stdout starts "hello, I am a port"$/,
  );
});

Deno.test("a port printing nothing fails", async () => {
  const run = await conformance({ port: "cat > /dev/null\n" });
  assertOneFailure(run, "port printed nothing on stdout");
});

Deno.test("a port exiting non-zero fails with an excerpt of its stderr", async () => {
  const run = await conformance({
    port:
      "cat > /dev/null\necho 'reading the vector' >&2\necho 'boom: no such layer' >&2\nexit 3\n",
  });
  assertOneFailure(
    run,
    "port exited with code 3 (stderr: reading the vector / boom: no such layer)",
  );
});

Deno.test("a port that crashes fails with its error message", async () => {
  const crash = `throw new Error("port bug: step 2 exploded")`;
  const run = await conformance({
    port: `cat > /dev/null\n'${Deno.execPath()}' eval '${crash}'\n`,
  });
  assertOneFailure(
    run,
    /^ {2}port exited with code 1 \(stderr: error: Uncaught .*port bug: step 2 exploded.*\)$/,
  );
});

Deno.test("a port killed by a signal fails", async () => {
  const run = await conformance({ port: "cat > /dev/null\nkill -KILL $$\n" });
  assertOneFailure(run, /^ {2}port (was killed by SIGKILL|exited with code 137) \(.*\)$/);
});

Deno.test("a port that hangs is killed after --timeout seconds and fails", async () => {
  const nap = 100000 + Math.floor(Math.random() * 100000);
  const started = Date.now();
  const run = await conformance({ port: `sleep ${nap}\n`, extra: ["--timeout", "1"] });
  assertOneFailure(run, "timed out after 1 s (port killed)");
  assert.ok(Date.now() - started < 20_000, "the runner does not wait for the port");
  const ps = await new Deno.Command("ps", { args: ["-eo", "args"], stdout: "piped" }).output();
  const left = new TextDecoder().decode(ps.stdout).split("\n").filter((l) =>
    l.trim() === `sleep ${nap}`
  );
  assert.deepEqual(left, [], "the port's processes are gone");
});

Deno.test("a port answering for another id fails", async () => {
  const run = await conformance({
    port: PRINT_ANSWER,
    printed: JSON.stringify({ id: "some-other-vector", results: [] }),
  });
  assertOneFailure(run, `port answered for id "some-other-vector", expected "${ID}"`);
});

Deno.test("a layer port answer without output, error or unsupported fails", async () => {
  const run = await conformance({
    port: PRINT_ANSWER,
    printed: JSON.stringify({ id: LAYER_ID }),
    layer: true,
  });
  assertOneFailure(
    run,
    'malformed port output: the object needs one of "output", "error" or "unsupported"',
    LAYER_ID,
  );
});

Deno.test("a correct alternative diff passes and is reported as an alternative", async () => {
  const run = await conformance({ port: PRINT_ANSWER, printed: answerWithDiff(alternativeDiff()) });
  assert.equal(run.code, 0);
  assert.equal(run.summary, "1 passed, 0 failed");
  assert.ok(run.lines.includes("1 scenarios passed with an alternative diff:"));
  assert.ok(run.lines.includes(`  ${ID} (steps 2)`));
});

Deno.test("the reference diff through a port passes without an alternative", async () => {
  const run = await conformance({ port: PRINT_ANSWER, printed: answerWithDiff(REFERENCE_DIFF) });
  assert.equal(run.code, 0);
  assert.equal(run.summary, "1 passed, 0 failed");
  assert.ok(!run.lines.some((l) => l.includes("alternative")));
});

Deno.test("an alternative diff with a wrong changed-line count fails and says so", async () => {
  const run = await conformance({
    port: PRINT_ANSWER,
    printed: answerWithDiff(alternativeDiff("[readcache: 3 lines changed of 21]")),
  });
  assertOneFailure(
    run,
    "step 2 (read a.txt): diff text differs and is not a valid alternative diff: wrong changed-line count: header says 3, its hunks change 2",
  );
});

Deno.test("an alternative diff with a wrong total fails and says so", async () => {
  const run = await conformance({
    port: PRINT_ANSWER,
    printed: answerWithDiff(alternativeDiff("[readcache: 2 lines changed of 20]")),
  });
  assertOneFailure(
    run,
    "step 2 (read a.txt): diff text differs and is not a valid alternative diff: wrong total: header says 20 lines, the file has 21",
  );
});

Deno.test("an alternative diff naming another path fails", async () => {
  const diff = alternativeDiff().replace("--- a/a.txt", "--- a/b.txt");
  const run = await conformance({ port: PRINT_ANSWER, printed: answerWithDiff(diff) });
  assertOneFailure(
    run,
    'step 2 (read a.txt): diff text differs and is not a valid alternative diff: line 2 should be "--- a/a.txt", got "--- a/b.txt"',
  );
});

Deno.test("an alternative diff whose patch does not apply fails", async () => {
  const diff = alternativeDiff().replace("+line ten was edited", "+line ten was mangled");
  const run = await conformance({ port: PRINT_ANSWER, printed: answerWithDiff(diff) });
  assertOneFailure(
    run,
    "step 2 (read a.txt): diff text differs and is not a valid alternative diff: its patch does not turn any earlier content of the file into the current one",
  );
});

Deno.test("bad runner arguments are a usage error", async () => {
  const run = await conformance({ extra: ["--timeout", "soon"] });
  assert.equal(run.code, 2);
});

/** Runs the runner on `targets` (relative to the repository) with `port`; the failed ids. */
async function corpusRun(port: string, targets: string[]): Promise<{ run: Run; failed: string[] }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", runner, ...targets, "--cmd", port],
    cwd: repo,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const lines = new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "");
  const failed = lines.flatMap((l) => {
    const m = /^\| ([a-z0-9-]+) \| /.exec(l);
    return m && m[1] !== "vector" && !/^-+$/.test(m[1]) ? [m[1]] : [];
  });
  return { run: { code: out.code, lines, summary: lines.at(-1) ?? "" }, failed };
}

Deno.test("a port never sees the expectations: one that echoes them passes nothing", async () => {
  const echo = fileURLToPath(new URL("./fixtures/ports/echo_port.ts", import.meta.url));
  const { run } = await corpusRun(`'${Deno.execPath()}' run -A '${echo}'`, ["vectors/"]);
  assert.match(run.summary, /^0 passed, \d+ failed$/);
});

Deno.test("a port that answers every read in full fails every vector with a cached answer", async () => {
  const full = fileURLToPath(new URL("./fixtures/ports/full_read_port.ts", import.meta.url));
  const dir = fileURLToPath(new URL("../vectors/scenario/", import.meta.url));
  const shouldFail: string[] = [];
  let total = 0;
  for (
    const f of [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".json"))
  ) {
    const v = JSON.parse(Deno.readTextFileSync(join(dir, f)));
    total++;
    const cached = v.steps.some((s: { op: string; expect?: { mode?: string | null } }) =>
      s.op === "read" && s.expect?.mode !== undefined && s.expect.mode !== null &&
      s.expect.mode !== "full"
    );
    if (cached) shouldFail.push(v.id);
  }
  const { run, failed } = await corpusRun(`'${Deno.execPath()}' run -A '${full}'`, [
    "vectors/scenario/",
  ]);
  assert.deepEqual(failed.sort(), shouldFail.sort());
  assert.equal(run.summary, `${total - shouldFail.length} passed, ${shouldFail.length} failed`);
});

Deno.test("--help prints the usage and the port contract, and exits 0", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", runner, "--help"],
    cwd: repo,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0);
  const text = new TextDecoder().decode(out.stdout);
  assert.match(text, /^usage: deno task conformance/);
  assert.match(text, /without its expectations/);
});

Deno.test("a correct alternative diff from what the model wrote with writeTool passes", async () => {
  // the model wrote `before` (writeTool); another process changed line 10: the diff's base is
  // what the model wrote, which the vector's files never held
  const first = before.map((l, i) => (i === 0 ? "line one, before the model wrote" : l));
  const vector = {
    ...VECTOR,
    id: "runner-diff-after-write-tool",
    files: { "a.txt": text(first) },
    steps: [
      { op: "read", path: "a.txt", expect: { mode: "full" } },
      { op: "writeTool", path: "a.txt", content: text(before) },
      { op: "write", path: "a.txt", content: text(after) },
      { op: "read", path: "a.txt", expect: { mode: "diff", text: REFERENCE_DIFF } },
    ],
  };
  const printed = JSON.stringify({
    id: vector.id,
    results: [
      { step: 0, mode: "full", text: text(first), scope: "full" },
      { step: 3, mode: "diff", text: alternativeDiff(), scope: "full" },
    ],
  });
  const run = await conformance({ port: PRINT_ANSWER, printed, vector });
  assert.equal(run.code, 0, run.lines.join("\n"));
  assert.ok(
    run.lines.includes("1 scenarios passed with an alternative diff:"),
    run.lines.join("\n"),
  );
});

Deno.test("a port that cannot run a scenario says so (notApplicable): counted apart, not failed", async () => {
  const printed = JSON.stringify({
    id: ID,
    notApplicable: { step: 1, reason: "no write of another process in this host" },
  });
  const run = await conformance({ port: PRINT_ANSWER, printed });
  assert.equal(run.code, 0, run.lines.join("\n"));
  assert.ok(run.lines.includes("1 scenarios not applicable to the port:"), run.lines.join("\n"));
  assert.ok(run.lines.includes(`  ${ID} (step 1): no write of another process in this host`));
  assert.equal(run.summary, "0 passed, 0 failed, 1 not applicable");
  // a step the vector does not have is no answer
  const wrong = await conformance({
    port: PRINT_ANSWER,
    printed: JSON.stringify({ id: ID, notApplicable: { step: 9, reason: "x" } }),
  });
  assert.equal(wrong.summary, "0 passed, 1 failed");
});
