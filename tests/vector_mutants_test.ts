// Every rule is pinned by a vector (issue: a conformance check must be able to fail): each
// planted mutant of the reference (tests/support/vector_mutants.ts, one per SPEC rule) runs the
// vector corpus until a vector fails on it (all of it with READCACHE_MUTANTS, which then lists
// every killer). The test prints each mutant with its killers, and fails naming any that survives.
import assert from "node:assert/strict";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { realpathSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { compareLayerResult } from "../src/conformance/layer_compare.ts";
import { compareScenario } from "../src/conformance/scenario_compare.ts";
import { LAYERS, listJsonFiles, loadLayerFile } from "../src/conformance/vector_files.ts";
import { layerInput, scenarioInput, ScenarioSchema } from "../src/conformance/vector_schema.ts";
import type * as LayerPort from "../src/conformance/layer_port.ts";
import type * as Simulator from "../src/conformance/session_simulator.ts";
import { type MutantEdit, VECTOR_MUTANTS } from "./support/vector_mutants.ts";

const repo = fileURLToPath(new URL("../", import.meta.url));
const vectors = join(repo, "vectors");
// inside the repository, so a copy resolves the same import map and node_modules
const mutantsDir = join(repo, ".vector-mutants");

const layerCases = LAYERS.flatMap((layer) =>
  listJsonFiles(join(vectors, layer)).flatMap((f) => loadLayerFile(f, vectors).cases)
);
const scenarios = listJsonFiles(join(vectors, "scenario")).map((f) =>
  ScenarioSchema.parse(JSON.parse(Deno.readTextFileSync(f)))
);

/** A copy of src/ with the mutant's edits; each `find` must occur exactly once. */
async function plant(name: string, edits: MutantEdit[]): Promise<string> {
  await mkdir(mutantsDir, { recursive: true });
  const dir = await mkdtemp(join(mutantsDir, `${name}-`));
  await cp(join(repo, "src"), join(dir, "src"), { recursive: true });
  for (const e of edits) {
    const path = join(dir, e.file);
    const text = await readFile(path, "utf8");
    const at = text.indexOf(e.find);
    assert.ok(at !== -1, `mutant ${name}: not found in ${e.file}: ${e.find}`);
    assert.equal(text.indexOf(e.find, at + 1), -1, `mutant ${name}: found twice in ${e.file}`);
    await writeFile(path, text.slice(0, at) + e.replace + text.slice(at + e.find.length));
  }
  return dir;
}

/** The ids of the vectors that fail on the copy in `dir` (the first one only, unless `all`). */
async function killers(dir: string, all: boolean): Promise<string[]> {
  const layerPort: typeof LayerPort = await import(
    join(dir, "src/conformance/layer_port.ts")
  );
  const sim: typeof Simulator = await import(join(dir, "src/conformance/session_simulator.ts"));
  const out: string[] = [];
  for (const { input } of layerCases) {
    let problems: string[];
    try {
      problems = compareLayerResult(input, layerPort.runLayerCase(layerInput(input)));
    } catch (e) {
      problems = [String(e)];
    }
    if (problems.length > 0) out.push(input.id);
    if (out.length > 0 && !all) return out;
  }
  for (const v of scenarios) {
    const cwd = realpathSync(await mkdtemp(join(tmpdir(), "readcache-mutant-")));
    try {
      const result = await sim.runScenario(scenarioInput(v), cwd, homedir());
      if (compareScenario(v, result).problems.length > 0) out.push(v.id);
    } catch {
      out.push(v.id);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
    if (out.length > 0 && !all) return out;
  }
  return out;
}

Deno.test("every planted mutant's text occurs exactly once where it is planted", async () => {
  // checked for all mutants up front, so a refactor that moves a line fails here in a second
  const missing: string[] = [];
  for (const m of VECTOR_MUTANTS) {
    const edits = "edits" in m ? m.edits : [{ file: m.file, find: m.find, replace: m.replace }];
    for (const e of edits) {
      const text = await readFile(join(repo, e.file), "utf8");
      const at = text.indexOf(e.find);
      if (at === -1 || text.indexOf(e.find, at + 1) !== -1) {
        missing.push(`${m.name}: ${at === -1 ? "not found" : "found twice"} in ${e.file}`);
      }
    }
  }
  assert.deepEqual(missing, [], "mutants whose text moved: update tests/support/vector_mutants.ts");
});

Deno.test("every planted mutant of the reference is killed by a vector", async () => {
  const survivors: string[] = [];
  const table: string[] = [];
  try {
    // READCACHE_MUTANTS=name,name runs only those (while writing a vector) and lists every
    // vector that kills each; a full run stops at the first killer
    const only = Deno.env.get("READCACHE_MUTANTS")?.split(",");
    for (const m of VECTOR_MUTANTS.filter((m) => only === undefined || only.includes(m.name))) {
      const edits = "edits" in m ? m.edits : [{ file: m.file, find: m.find, replace: m.replace }];
      const dir = await plant(m.name, edits);
      const ids = await killers(dir, only !== undefined);
      if (ids.length === 0) survivors.push(`${m.name} (${m.rule})`);
      const shown = ids.length > 6 ? [...ids.slice(0, 6), `+${ids.length - 6} more`] : ids;
      table.push(`${m.name}: ${ids.length === 0 ? "SURVIVES" : shown.join(", ")}`);
    }
  } finally {
    await rm(mutantsDir, { recursive: true, force: true });
  }
  console.log(table.join("\n"));
  assert.deepEqual(survivors, [], "mutants no vector kills");
});
