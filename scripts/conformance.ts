// Conformance runner: runs vectors against the reference implementation (in
// process) or against any port command (`--cmd "<command>"`, one process per
// vector, vector JSON on stdin, result JSON on stdout).
//
//   deno task conformance [vectors/<folder> | <file.json> ...] [--cmd "<port command>"]
//
// Prints a table of failures with a short expected-vs-actual diff, then
// `N passed, N failed` (plus alternative diffs and unsupported layer cases).
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { compareLayerResult } from "../src/layer_compare.ts";
import { type LayerInput, type LayerResult, runLayerCase } from "../src/layer_port.ts";
import { compareScenario } from "../src/scenario_compare.ts";
import { runScenario, type ScenarioOutput } from "../src/session_simulator.ts";
import { listJsonFiles, loadLayerFile } from "../src/vector_files.ts";
import { type Scenario, ScenarioSchema } from "../src/vector_schema.ts";

const root = fileURLToPath(new URL("../vectors/", import.meta.url));
const args = [...Deno.args];
let cmd: string | undefined;
const ci = args.indexOf("--cmd");
if (ci !== -1) {
  cmd = args[ci + 1];
  if (!cmd) {
    console.error('--cmd needs a command, e.g. --cmd "python3 my_port.py"');
    Deno.exit(2);
  }
  args.splice(ci, 2);
}
const targets = args.length > 0 ? args : [root];
const files: string[] = [];
for (const t of targets) {
  try {
    statSync(t);
  } catch {
    console.error(`no such vector file or folder: ${t}`);
    Deno.exit(2);
  }
  files.push(...listJsonFiles(t));
}

async function runCommand(input: unknown): Promise<unknown> {
  const child = new Deno.Command("sh", {
    args: ["-c", cmd!],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(JSON.stringify(input)));
  await w.close();
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success && text === "") {
    throw new Error(`port exited ${out.code}: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  return JSON.parse(text);
}

let passed = 0;
let failed = 0;
let unsupported = 0;
let alternative = 0;
const failures: { id: string; file: string; problems: string[] }[] = [];

for (const file of files) {
  const rel = relative(root, file);
  const raw = JSON.parse(readFileSync(file, "utf8"));
  if (raw && typeof raw === "object" && "layer" in raw) {
    const { cases, problems } = loadLayerFile(file, root);
    if (problems.length > 0) {
      failed++;
      failures.push({ id: "(file)", file: rel, problems: problems.map((p) => p.message) });
      continue;
    }
    for (const { input } of cases) {
      try {
        const result = cmd ? await runCommand(input) : runLayerCase(input as LayerInput);
        if (result && typeof result === "object" && "unsupported" in result) {
          unsupported++;
          continue;
        }
        const p = compareLayerResult(input, result as LayerResult);
        if (p.length === 0) passed++;
        else {
          failed++;
          failures.push({ id: input.id, file: rel, problems: p });
        }
      } catch (e) {
        failed++;
        failures.push({ id: input.id, file: rel, problems: [String(e)] });
      }
    }
    continue;
  }
  const parsed = ScenarioSchema.safeParse(raw);
  if (!parsed.success) {
    failed++;
    failures.push({ id: String(raw?.id), file: rel, problems: [parsed.error.message] });
    continue;
  }
  const v: Scenario = parsed.data;
  try {
    let out: ScenarioOutput;
    if (cmd) out = await runCommand(v) as ScenarioOutput;
    else {
      const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-conf-")));
      try {
        out = await runScenario(v, cwd, homedir());
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    }
    const verdict = compareScenario(v, out);
    if (verdict.problems.length === 0) {
      passed++;
      if (verdict.alternativeDiffs.length > 0) alternative++;
    } else {
      failed++;
      failures.push({ id: v.id, file: rel, problems: verdict.problems });
    }
  } catch (e) {
    failed++;
    failures.push({ id: v.id, file: rel, problems: [String(e)] });
  }
}

if (failures.length > 0) {
  console.log("FAILURES");
  console.log("| vector | file | problem |");
  console.log("| --- | --- | --- |");
  for (const f of failures) {
    console.log(`| ${f.id} | ${f.file} | ${f.problems[0].split("\n")[0]} |`);
  }
  console.log("");
  for (const f of failures) {
    console.log(`${f.id} (${f.file}):`);
    for (const p of f.problems) console.log(`  ${p}`);
  }
}
console.log(`port: ${cmd ?? "reference (in process)"}`);
if (alternative > 0) console.log(`${alternative} scenarios passed with an alternative diff`);
if (unsupported > 0) console.log(`${unsupported} layer cases not supported by the port`);
console.log(`${passed} passed, ${failed} failed`);
Deno.exit(failed === 0 ? 0 : 1);
