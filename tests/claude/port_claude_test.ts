// port:claude-code: every scenario vector that applies to Claude Code passes through the host on
// the model of Claude Code's transcript and tools, and the comparison fails a host that answers
// a re-read `unchanged` without knowing the model holds the file (a planted bug); the same when
// every response carries one API id.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
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

async function runAll(options?: ClaudeRunOptions) {
  let passed = 0;
  const failed: string[] = [];
  let notApplicable = 0;
  for (const file of listJsonFiles(root)) {
    const v = ScenarioSchema.parse(JSON.parse(readFileSync(file, "utf8")));
    const c = claudeVector(v);
    if (!c.applies) {
      notApplicable++;
      continue;
    }
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-port-claude-test-")));
    try {
      const out = await runScenarioOnClaude(scenarioInput(v), cwd, homedir(), options);
      if (compareScenario(c.vector, out).problems.length === 0) passed++;
      else failed.push(v.id);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  }
  return { passed, failed, notApplicable };
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
