// port:claude-code: every scenario vector that applies to Claude Code passes through the host on
// the model of Claude Code's transcript and tools, and the comparison fails a host that answers
// a re-read `unchanged` without knowing the model holds the file (a planted bug); the same when
// every response carries one API id.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { claudeVector } from "../../scripts/claude/claude_expectations.ts";
import {
  type ClaudeRunOptions,
  runScenarioOnClaude,
} from "../../scripts/claude/claude_scenario_runner.ts";
import { compareScenario } from "../../src/conformance/scenario_compare.ts";
import { listJsonFiles } from "../../src/conformance/vector_files.ts";
import { scenarioInput, ScenarioSchema } from "../../src/conformance/vector_schema.ts";
import { unchangedMarker } from "../../src/core/markers.ts";

const root = fileURLToPath(new URL("../../vectors/scenario/", import.meta.url));

async function runAll(options?: ClaudeRunOptions, run = runScenarioOnClaude) {
  let passed = 0;
  const failed: string[] = [];
  let notApplicable = 0;
  // the steps answered otherwise than expected with a cached answer (not a plain read)
  const cachedOtherwise: string[] = [];
  for (const file of listJsonFiles(root)) {
    const v = ScenarioSchema.parse(JSON.parse(readFileSync(file, "utf8")));
    const c = claudeVector(v);
    if (!c.applies) {
      notApplicable++;
      continue;
    }
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-port-claude-test-")));
    try {
      const out = await run(scenarioInput(v), cwd, homedir(), options);
      const verdict = compareScenario(c.vector, out);
      if (verdict.problems.length === 0) passed++;
      else failed.push(v.id);
      for (const step of verdict.differingSteps) {
        const got = out.results.find((r) => r.step === step);
        const mode = got !== undefined && "mode" in got ? got.mode : undefined;
        // null: the host left Claude Code's own output
        if (mode !== null && mode !== "full" && mode !== "baseline_fallback") {
          cachedOtherwise.push(`${v.id} step ${step}: ${mode}`);
        }
      }
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  }
  return { passed, failed, notApplicable, cachedOtherwise };
}

Deno.test("port:claude-code: every applicable scenario vector passes", async () => {
  const r = await runAll();
  assert.deepEqual(r.failed, []);
  assert.ok(r.passed >= 160, `only ${r.passed} passed`);
  // the guide says how many pass and how many do not apply
  const guide = readFileSync(new URL("../../docs/claude-code.md", import.meta.url), "utf8");
  const claim = `(${r.passed} pass; ${r.notApplicable} do not apply`;
  assert.ok(guide.includes(claim), `docs/claude-code.md should say ${claim}`);
});

Deno.test("port:claude-code: the same when every response has one API id (the host follows the uuid chain)", async () => {
  const r = await runAll({ messageIds: "repeated" });
  assert.deepEqual(r.failed, []);
  assert.ok(r.passed >= 160, `only ${r.passed} passed`);
});

Deno.test("port:claude-code: rows without Claude Code's request id and one API id: where an answer differs, it is the plain read", async () => {
  const r = await runAll({ messageIds: "repeated", requestRefs: false });
  // a message of several calls is not proven one response: its reads are Claude Code's own; every
  // other answer is as expected
  assert.deepEqual(r.cachedOtherwise, []);
  assert.ok(r.passed >= 140, `only ${r.passed} passed`);
});

Deno.test("port:claude-code without request ids fails a host that takes the API's id as proof (a planted bug)", async () => {
  // a copy of the host without its check of messages the API's id alone put together
  const repo = fileURLToPath(new URL("../../", import.meta.url));
  await mkdir(join(repo, ".vector-mutants"), { recursive: true });
  const dir = await mkdtemp(join(repo, ".vector-mutants", "claude-api-id-"));
  try {
    await cp(join(repo, "src"), join(dir, "src"), { recursive: true });
    await cp(join(repo, "scripts"), join(dir, "scripts"), { recursive: true });
    const host = join(dir, "src/adapters/claude/host.ts");
    const text = await readFile(host, "utf8");
    const check = "if (st.index.unproven(input.tool_use_id)) return undefined;";
    assert.equal(text.split(check).length, 2, "the check is in the host once");
    await writeFile(host, text.replace(check, ""));
    const planted = await import(join(dir, "scripts/claude/claude_scenario_runner.ts"));
    const r = await runAll(
      { messageIds: "repeated", requestRefs: false },
      planted.runScenarioOnClaude,
    );
    assert.ok(r.cachedOtherwise.length > 0, "a cached answer where the plain read was due");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

Deno.test("port:claude-code fails a host that marks a re-read unchanged on its own", async () => {
  // the planted bug: a plain answer to a read of a file read before becomes `unchanged`
  const r = await runAll({
    host: (make) => {
      const real = make();
      const seen = new Set<string>();
      return {
        async handle(input) {
          const out = await real.handle(input);
          const i = input as { tool_name?: string; tool_input?: { file_path?: string } };
          const path = i.tool_input?.file_path;
          const replaced = out.hookSpecificOutput?.updatedToolOutput as
            | { file?: { startLine: number; totalLines: number } }
            | undefined;
          if (i.tool_name !== "Read" || path === undefined || replaced?.file === undefined) {
            return out;
          }
          if (!seen.has(path) || replaced.file.startLine <= 0) {
            seen.add(path);
            return out;
          }
          const file = {
            ...replaced.file,
            content: unchangedMarker(replaced.file.totalLines),
            numLines: 1,
            startLine: 0,
          };
          return {
            hookSpecificOutput: {
              hookEventName: "PostToolUse",
              updatedToolOutput: { ...replaced, file },
            },
          };
        },
      };
    },
  });
  assert.ok(r.failed.length >= 10, `only ${r.failed.length} vectors caught the planted bug`);
});
