// Runs every layer vector (path, range, trust, replay) against the reference
// implementation, and checks the corpus itself: valid against the zod schema,
// unique ids, committed JSON Schema up to date.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { compareLayerResult } from "../src/conformance/layer_compare.ts";
import { runLayerCase } from "../src/conformance/layer_port.ts";
import {
  generateJsonSchemas,
  LAYERS,
  listJsonFiles,
  type LoadedLayerCase,
  loadLayerFile,
  vectorIndex,
} from "../src/conformance/vector_files.ts";
import { layerInput } from "../src/conformance/vector_schema.ts";
import { vectorsReadme } from "../scripts/vectors_readme.ts";

const root = fileURLToPath(new URL("../vectors/", import.meta.url));
const all: LoadedLayerCase[] = [];
for (const layer of LAYERS) {
  for (const file of listJsonFiles(root + layer)) {
    const { cases, problems } = loadLayerFile(file, root);
    Deno.test(`vector file ${file.slice(root.length)} validates`, () => {
      assert.deepEqual(problems, []);
    });
    all.push(...cases);
  }
}

for (const { file, input } of all) {
  Deno.test(`[${input.layer}] ${input.id}: ${input.title} (${file})`, () => {
    assert.deepEqual(compareLayerResult(input, runLayerCase(layerInput(input))), []);
  });
}

Deno.test("every layer has vectors and ids are unique", () => {
  for (const layer of LAYERS) {
    assert.ok(all.some((c) => c.input.layer === layer), `no ${layer} vectors`);
  }
  const seen = new Map<string, string>();
  for (const { file, input } of all) {
    assert.ok(!seen.has(input.id), `duplicate id ${input.id} in ${file} and ${seen.get(input.id)}`);
    seen.set(input.id, file);
  }
});

Deno.test("committed JSON Schema matches the zod schemas (run `deno task schema`)", () => {
  for (const [name, schema] of Object.entries(generateJsonSchemas())) {
    const committed = JSON.parse(readFileSync(`${root}schema/${name}`, "utf8"));
    assert.deepEqual(
      committed,
      JSON.parse(JSON.stringify(schema)),
      `vectors/schema/${name} is stale`,
    );
  }
});

Deno.test("vectors/index.json lists every vector file (run `deno task schema`)", () => {
  const committed = JSON.parse(readFileSync(`${root}index.json`, "utf8"));
  assert.deepEqual(committed, vectorIndex(root.replace(/\/$/, "")), "vectors/index.json is stale");
});

Deno.test("vectors/README.md lists every vector by SPEC section (run `deno task schema`)", async () => {
  const repo = fileURLToPath(new URL("..", import.meta.url));
  assert.equal(
    readFileSync(`${root}README.md`, "utf8"),
    await vectorsReadme(repo),
    "vectors/README.md is stale",
  );
});

Deno.test("a wrong answer is reported as a failure", () => {
  const c = all.find((x) => x.input.layer === "trust")!;
  const problems = compareLayerResult(c.input, {
    id: c.input.id,
    output: { trust: { "/nowhere": { ranges: {} } }, outcomes: [] },
  });
  assert.ok(problems.length > 0);
});
