// The OpenCode port (scripts/opencode/port_opencode.ts): every scenario vector that applies to
// OpenCode passes through the plugin on the model of OpenCode's session store, the vectors that
// do not apply are found by the rule (opencode_expectations.ts), and the comparison fails for a
// plugin with a planted bug.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createReadcachePlugin,
  type ReadcachePluginOptions,
} from "../../src/adapters/opencode/plugin.ts";
import { unchangedMarker } from "../../src/core/markers.ts";
import { compareScenario } from "../../src/conformance/scenario_compare.ts";
import { listJsonFiles } from "../../src/conformance/vector_files.ts";
import {
  type Scenario,
  scenarioInput,
  ScenarioSchema,
} from "../../src/conformance/vector_schema.ts";
import {
  NOT_APPLICABLE,
  openCodeVector,
  portableOutput,
  PROJECT_DIR,
} from "../../scripts/opencode/opencode_expectations.ts";
import {
  type OpenCodeRunOptions,
  runScenarioOnOpenCode,
} from "../../scripts/opencode/opencode_scenario_runner.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const vectors: Scenario[] = listJsonFiles(join(ROOT, "vectors", "scenario")).map((f) =>
  ScenarioSchema.parse(JSON.parse(readFileSync(f, "utf8")))
);

async function problemsOf(v: Scenario, options?: OpenCodeRunOptions): Promise<string[]> {
  const oc = openCodeVector(v);
  if (!oc.applies) throw new Error(`${v.id} does not apply`);
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-oc-port-test-")));
  try {
    const out = await runScenarioOnOpenCode(scenarioInput(v), cwd, cwd, options);
    return compareScenario(oc.vector, portableOutput(out, cwd)).problems;
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

Deno.test("every scenario vector that applies to OpenCode passes through the plugin", async () => {
  const applicable = vectors.filter((v) => openCodeVector(v).applies);
  const failures: string[] = [];
  for (const v of applicable) {
    const problems = await problemsOf(v);
    if (problems.length > 0) failures.push(`${v.id}:\n  ${problems.join("\n  ")}`);
  }
  assert.deepEqual(failures, []);
  // most of the corpus applies (94 of 139 when this was written); the rest is listed by reason
  assert.ok(
    applicable.length >= Math.floor(vectors.length * 0.65),
    `only ${applicable.length} of ${vectors.length} vectors apply`,
  );
  // the guide says how many pass and how many do not apply
  const guide = readFileSync(join(ROOT, "docs", "opencode.md"), "utf8");
  const claim = `(${applicable.length} pass; ${vectors.length - applicable.length} do not apply`;
  assert.ok(guide.includes(claim), `docs/opencode.md should say ${claim}`);
});

Deno.test("vectors that do not apply name a documented reason and the steps that give it", () => {
  for (const v of vectors) {
    const oc = openCodeVector(v);
    if (oc.applies) continue;
    const reasons = Object.entries(oc.reasons);
    assert.ok(reasons.length > 0, v.id);
    for (const [why, steps] of reasons) {
      assert.ok(why in NOT_APPLICABLE, `${v.id}: ${why}`);
      for (const i of steps!) assert.ok(i >= 0 && i < v.steps.length, `${v.id}: step ${i}`);
    }
  }
  // the rule looks at content, not at ids: a read pi cuts at 2,000 lines never applies
  const long = Array.from({ length: 2500 }, (_, i) => `row ${i + 1}\n`).join("");
  const cut = ruleOn({ "a.txt": long }, [
    { op: "read", path: "a.txt", offset: 2, limit: 3000, expect: { mode: "full" } },
  ], ["§4.3"]);
  assert.deepEqual(cut, { applies: false, reasons: { truncation: [0] } });
  // OpenCode's write keeps the BOM of the file it replaces (pi's does not): a command after it
  // meets other bytes on each host (an oracle counterexample: `sed -i 's/^a1 /.../'` matched
  // under pi only)
  const overBom = ruleOn({ "a.txt": "\ufeffa1 beta\n" }, [
    { op: "writeTool", path: "a.txt", content: "a1 beta\n" },
    { op: "bash", command: "sed -i 's/^a1 /a1 sed /' a.txt" },
    { op: "read", path: "a.txt", expect: { mode: "full" } },
  ]);
  // the write goes, the file keeps its BOM: the read of it does not apply either
  assert.deepEqual(overBom, { applies: false, reasons: { "line-model": [0, 2] } });
  // a file a command makes is followed too: `cp` of a file with a line OpenCode shortens
  const copied = ruleOn({ "a.txt": "a\n", "long.txt": `${"h".repeat(2100)}\n` }, [
    { op: "bash", command: "rm ./a.txt" },
    { op: "bash", command: "cp ./long.txt ./a.txt" },
    { op: "read", path: "a.txt", expect: { mode: "full" } },
  ]);
  assert.deepEqual(copied, { applies: false, reasons: { "line-model": [2] } });
  // and links: a link a command removed and replaced by a file is a file from then on
  const relinked = ruleOn({ "b.txt": "b\n" }, [
    { op: "symlink", path: "a.txt", target: "b.txt" },
    { op: "bash", command: "rm ./a.txt" },
    { op: "bash", command: "cp ./b.txt ./a.txt" },
    { op: "bash", command: "cat ./a.txt" },
    { op: "write", path: "b.txt", content: "c\n" },
    { op: "read", path: "a.txt", expect: { mode: "full", text: "b\n" } },
  ]);
  assert.ok(relinked.applies);
  const read = relinked.vector.steps[5];
  assert.equal(read.op, "read");
  assert.deepEqual(read.op === "read" && read.expect, {
    mode: "full",
    text:
      `<path>/project/a.txt</path>\n<type>file</type>\n<content>\n1: b\n\n(End of file - total 1 lines)\n</content>`,
  });
});

/** The applicability rule on a one-off vector of these files and steps. */
function ruleOn(
  files: Scenario["files"],
  steps: Scenario["steps"],
  refs = ["§10"],
): ReturnType<typeof openCodeVector> {
  return openCodeVector({ id: "t", title: "t", refs, files, steps });
}

Deno.test("expectations are rewritten into OpenCode's text", () => {
  const oc = openCodeVector({
    id: "t",
    title: "t",
    refs: ["§8"],
    files: { "a.txt": "one\ntwo\nthree\n" },
    steps: [
      { op: "read", path: "a.txt", expect: { mode: "full", text: "one\ntwo\nthree\n" } },
      {
        op: "read",
        path: "a.txt",
        expect: { mode: "unchanged", text: "[readcache: unchanged, 4 lines]" },
      },
      {
        op: "read",
        path: "a.txt",
        offset: 2,
        limit: 5,
        expect: { mode: "unchanged_range", text: "[readcache: unchanged in lines 2-4 of 4]" },
      },
      { op: "read", path: "b.txt", expect: { error: "ENOENT" } },
    ],
  });
  assert.ok(oc.applies);
  const expects = oc.vector.steps.map((s) => s.op === "read" ? s.expect : undefined);
  assert.equal(
    expects[0]?.text,
    `<path>${PROJECT_DIR}/a.txt</path>\n<type>file</type>\n<content>\n1: one\n2: two\n3: three\n\n(End of file - total 3 lines)\n</content>`,
  );
  assert.equal(expects[1]?.text, "[readcache: unchanged, 3 lines]");
  assert.equal(expects[2]?.text, "[readcache: unchanged in lines 2-3 of 3]");
  assert.equal(expects[3]?.error, "File not found: ");
});

/** The plugin with a planted bug: `rewrite` changes a read's result after the plugin served it. */
function plantedBug(
  rewrite: (output: { output: string; metadata: unknown }) => void,
): typeof createReadcachePlugin {
  return (options?: ReadcachePluginOptions) => async (input) => {
    const hooks = await createReadcachePlugin(options)(input);
    return {
      ...hooks,
      "tool.execute.after": async (call, output) => {
        await hooks["tool.execute.after"]!(call, output);
        if (call.tool === "read") rewrite(output);
      },
    };
  };
}

function readcacheOf(metadata: unknown): Record<string, unknown> | undefined {
  return (metadata as { readcache?: Record<string, unknown> } | undefined)?.readcache;
}

Deno.test("the comparison catches a plugin that answers 'unchanged' for a changed file", async () => {
  // a diff or a fallback (the file changed since the model's view) answered as unchanged
  const wrong = plantedBug((out) => {
    const meta = readcacheOf(out.metadata);
    if (meta?.mode !== "diff" && meta?.mode !== "baseline_fallback") return;
    meta.mode = "unchanged";
    out.output = unchangedMarker(Number(meta.totalLines));
  });
  let caught = 0;
  for (const v of vectors.filter((v) => openCodeVector(v).applies)) {
    if ((await problemsOf(v, { plugin: wrong })).length > 0) caught++;
  }
  assert.ok(caught >= 10, `caught by ${caught} vectors`);
  const diff = vectors.find((v) => v.id === "core-changed-full-diff")!;
  assert.match((await problemsOf(diff, { plugin: wrong })).join("\n"), /mode expected diff/);
});

Deno.test("the comparison catches a plugin that changes OpenCode's own first read", async () => {
  // the plain read loses OpenCode's framing: the model would not get OpenCode's text
  const reframed = plantedBug((out) => {
    if (readcacheOf(out.metadata)?.mode === "full") {
      out.output = out.output.replace(/^<path>[^\n]*\n/, "");
    }
  });
  const v = vectors.find((v) => v.id === "core-first-full-read")!;
  assert.match((await problemsOf(v, { plugin: reframed })).join("\n"), /text differs/);
});

Deno.test("port:opencode --stdin is a port: one scenario input in, one result out", async () => {
  const v = vectors.find((v) => v.id === "core-unchanged-full")!;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(ROOT, "scripts", "opencode", "port_opencode.ts"), "--stdin"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify(scenarioInput(v))));
  await writer.close();
  const { code, stdout } = await child.output();
  assert.equal(code, 0);
  const out = JSON.parse(new TextDecoder().decode(stdout));
  const oc = openCodeVector(v);
  assert.ok(oc.applies);
  assert.deepEqual(compareScenario(oc.vector, out).problems, []);
});

Deno.test("port:opencode --help prints its usage; an unknown option exits 2", async () => {
  const run = async (arg: string) =>
    await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", join(ROOT, "scripts", "opencode", "port_opencode.ts"), arg],
      stdout: "piped",
      stderr: "piped",
    }).output();
  const help = await run("--help");
  assert.equal(help.code, 0);
  assert.match(new TextDecoder().decode(help.stdout), /^usage: deno task port:opencode /);
  const bad = await run("--bogus");
  assert.equal(bad.code, 2);
  assert.match(new TextDecoder().decode(bad.stderr), /unknown option '--bogus'/);
});
