// The table of judgment calls in vectors/README.md stays true: every vector it names as pinning a
// call is in the corpus, and every mutant it names is planted (tests/support/vector_mutants.ts).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { listJsonFiles } from "../src/conformance/vector_files.ts";
import { VECTOR_MUTANTS } from "./support/vector_mutants.ts";

const root = fileURLToPath(new URL("../vectors/", import.meta.url));

/** Every vector id of the corpus (scenario files hold one, layer files a list of cases). */
function vectorIds(): Set<string> {
  const ids = new Set<string>();
  for (const file of listJsonFiles(root)) {
    const v = JSON.parse(readFileSync(file, "utf8"));
    for (const c of Array.isArray(v?.cases) ? v.cases : [v]) {
      if (typeof c?.id === "string") ids.add(c.id);
    }
  }
  return ids;
}

/** The rows of the "Judgment calls" table: its cells, split on `|`. */
function judgmentRows(): string[][] {
  const text = readFileSync(root + "README.md", "utf8");
  const start = text.indexOf("## Judgment calls");
  assert.ok(start >= 0, "vectors/README.md has a Judgment calls section");
  const end = text.indexOf("\n## ", start + 1);
  return text.slice(start, end === -1 ? undefined : end).split("\n")
    .filter((l) => l.startsWith("| §"))
    .map((l) => l.split("|").slice(1, -1).map((c) => c.trim()));
}

const ticked = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);

Deno.test("every judgment call names vectors of the corpus and a planted mutant", () => {
  const ids = vectorIds();
  const mutants = new Set(VECTOR_MUTANTS.map((m) => m.name));
  const rows = judgmentRows();
  assert.ok(rows.length >= 40, `only ${rows.length} rows`);
  for (const cells of rows) {
    assert.equal(cells.length, 5, cells.join(" | "));
    const [spec, , , pinnedBy, mutant] = cells;
    const vectors = ticked(pinnedBy);
    assert.ok(vectors.length > 0, `${spec}: no vector pins it`);
    for (const id of vectors) assert.ok(ids.has(id), `${spec}: no vector '${id}'`);
    const planted = ticked(mutant);
    assert.ok(planted.length > 0, `${spec}: no mutant`);
    for (const name of planted) assert.ok(mutants.has(name), `${spec}: no mutant '${name}'`);
  }
});
