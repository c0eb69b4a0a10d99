// The pi port: runs scenario vectors through the pi extension with pi's real
// SessionManager (see pi_scenario_runner.ts).
//
//   deno task port:pi [vectors/scenario | <file.json> ...] [--no-events]
//       runs the vectors and prints failures, then `N passed, N failed`
//   deno task port:pi --stdin [--no-events]
//       port contract: ONE scenario vector on stdin, ONE result object on stdout
//       (deno task conformance vectors/scenario --cmd "deno task -q port:pi --stdin")
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
import { runScenarioOnPi } from "./pi_scenario_runner.ts";

const args = [...Deno.args];
const take = (flag: string): boolean => {
  const i = args.indexOf(flag);
  if (i === -1) return false;
  args.splice(i, 1);
  return true;
};
const events = !take("--no-events");
const stdin = take("--stdin");

async function runInTemp(v: ScenarioInput) {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-port-pi-")));
  try {
    return await runScenarioOnPi(v, cwd, homedir(), { events });
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

if (stdin) {
  // a port is given the vector's inputs only (SPEC §10)
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
for (const file of targets.flatMap((t) => listJsonFiles(t))) {
  const rel = relative(root, file);
  const parsed = ScenarioSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
  if (!parsed.success) {
    failed++;
    console.log(`FAIL ${rel}: not a scenario vector: ${parsed.error.message}`);
    continue;
  }
  try {
    const verdict = compareScenario(parsed.data, await runInTemp(scenarioInput(parsed.data)));
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
console.log(`port: pi extension + pi SessionManager (events ${events ? "on" : "off"})`);
console.log(`${passed} passed, ${failed} failed`);
Deno.exit(failed === 0 ? 0 : 1);
