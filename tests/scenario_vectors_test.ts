// Runs every scenario vector through the reference session simulator.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { compareScenario } from "../src/conformance/scenario_compare.ts";
import { runScenario } from "../src/conformance/session_simulator.ts";
import { ScenarioSchema } from "../src/conformance/vector_schema.ts";

const dir = fileURLToPath(new URL("../vectors/scenario/", import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();

for (const f of files) {
  const raw = JSON.parse(readFileSync(join(dir, f), "utf8"));
  const parsed = ScenarioSchema.safeParse(raw);
  Deno.test(`[scenario] ${raw.id ?? f}: ${raw.title ?? ""}`, async () => {
    assert.ok(parsed.success, `${f} does not validate: ${parsed.error?.message}`);
    assert.equal(`${parsed.data!.id}.json`, f, "file name must be <id>.json");
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-scn-")));
    try {
      const out = await runScenario(parsed.data!, cwd, homedir());
      const verdict = compareScenario(parsed.data!, out);
      assert.deepEqual(verdict.problems, []);
      assert.deepEqual(verdict.alternativeDiffs, [], "the reference must produce the exact diff");
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
}

Deno.test("scenario corpus is not empty", () => assert.ok(files.length >= 30));

Deno.test("a port's different but correct diff is accepted and reported separately; a wrong one fails", async () => {
  const raw = JSON.parse(readFileSync(join(dir, "core-changed-full-diff.json"), "utf8"));
  const v = ScenarioSchema.parse(raw);
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-alt-")));
  try {
    const out = await runScenario(v, cwd, homedir());
    const i = out.results.findIndex((r) => "mode" in r && r.mode === "diff");
    const ref = out.results[i] as { step: number; mode: string; text: string };
    // same change expressed with one line of context instead of three
    const lines = ref.text.split("\n");
    const alt = [lines[0], lines[1], lines[2], "@@ -9,3 +9,3 @@", ...lines.slice(6, 10)].join("\n");
    out.results[i] = { ...ref, text: alt };
    const ok = compareScenario(v, out);
    assert.deepEqual(ok.problems, []);
    assert.deepEqual(ok.alternativeDiffs, [ref.step]);
    out.results[i] = { ...ref, text: alt.replace("+line ten was edited", "+line ten was mangled") };
    assert.equal(compareScenario(v, out).problems.length, 1);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});
