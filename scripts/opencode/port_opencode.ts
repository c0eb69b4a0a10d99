// The OpenCode port: runs scenario vectors through the OpenCode plugin on a model of OpenCode's
// session store (see opencode_scenario_runner.ts), comparing OpenCode's texts with each vector
// rewritten into OpenCode's terms, and lists the vectors that do not apply and why (the rule and
// the rewrite: opencode_expectations.ts).
//
//   deno task port:opencode [vectors/scenario | <file.json> ...]
//       runs the vectors; prints FAIL lines, the vectors that do not apply (grouped by reason),
//       then `N passed, N failed, N not applicable`
//   deno task port:opencode --stdin
//       port contract: ONE scenario input on stdin, ONE result object on stdout (texts name the
//       project directory as /project); compare it with the rewritten vector, not pi's texts
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { compareScenario } from "../../src/conformance/scenario_compare.ts";
import { listJsonFiles } from "../../src/conformance/vector_files.ts";
import {
  type ScenarioInput,
  scenarioInput,
  ScenarioInputSchema,
  ScenarioSchema,
} from "../../src/conformance/vector_schema.ts";
import {
  NOT_APPLICABLE,
  type NotApplicableReason,
  openCodeVector,
  portableOutput,
} from "./opencode_expectations.ts";
import { runScenarioOnOpenCode } from "./opencode_scenario_runner.ts";

const args = [...Deno.args];
const stdinAt = args.indexOf("--stdin");
if (stdinAt >= 0) args.splice(stdinAt, 1);

async function runInTemp(v: ScenarioInput) {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-port-opencode-")));
  try {
    return portableOutput(await runScenarioOnOpenCode(v, cwd, homedir()), cwd);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

if (stdinAt >= 0) {
  const parsed = ScenarioInputSchema.safeParse(
    JSON.parse(await new Response(Deno.stdin.readable).text()),
  );
  if (!parsed.success) {
    console.error(`invalid scenario input: ${parsed.error.message}`);
    Deno.exit(2);
  }
  console.log(JSON.stringify(await runInTemp(parsed.data)));
  Deno.exit(0);
}

const root = fileURLToPath(new URL("../../vectors/", import.meta.url));
const targets = args.length > 0 ? args : [join(root, "scenario")];
let passed = 0;
let failed = 0;
const skipped = new Map<NotApplicableReason, string[]>();
let notApplicable = 0;
for (const file of targets.flatMap((t) => listJsonFiles(t))) {
  const rel = relative(root, file);
  const parsed = ScenarioSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
  if (!parsed.success) {
    failed++;
    console.log(`FAIL ${rel}: not a scenario vector: ${parsed.error.message}`);
    continue;
  }
  const oc = openCodeVector(parsed.data);
  if (!oc.applies) {
    notApplicable++;
    for (const [why, steps] of Object.entries(oc.reasons) as [NotApplicableReason, number[]][]) {
      const list = skipped.get(why) ?? [];
      list.push(`${parsed.data.id} (step${steps.length > 1 ? "s" : ""} ${steps.join(", ")})`);
      skipped.set(why, list);
    }
    continue;
  }
  try {
    const verdict = compareScenario(oc.vector, await runInTemp(scenarioInput(parsed.data)));
    if (verdict.problems.length === 0) passed++;
    else {
      failed++;
      console.log(`FAIL ${parsed.data.id} (${rel}):`);
      for (const p of verdict.problems) console.log(`  ${p}`);
    }
  } catch (e) {
    failed++;
    console.log(`FAIL ${parsed.data.id} (${rel}): ${e instanceof Error ? e.stack : e}`);
  }
}
if (skipped.size > 0) {
  console.log("not applicable (a vector may have several reasons):");
  for (const [why, ids] of skipped) {
    console.log(`  ${why}: ${NOT_APPLICABLE[why]}`);
    for (const id of ids) console.log(`    ${id}`);
  }
}
console.log("port: OpenCode plugin + a model of OpenCode's session store");
console.log(`${passed} passed, ${failed} failed, ${notApplicable} not applicable`);
Deno.exit(failed === 0 ? 0 : 1);
