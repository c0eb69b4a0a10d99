// Regenerates vectors/schema/*.json from the zod schemas in src/conformance/vector_schema.ts, and
// vectors/index.json (the list of vector files, for the runner where it cannot list a folder).
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { generateJsonSchemas, vectorIndex } from "../src/conformance/vector_files.ts";
import { vectorsReadme } from "./vectors_readme.ts";

const dir = new URL("../vectors/schema/", import.meta.url);
for (const [name, schema] of Object.entries(generateJsonSchemas())) {
  writeFileSync(new URL(name, dir), JSON.stringify(schema, null, 2) + "\n");
  console.log(`wrote vectors/schema/${name}`);
}

const root = fileURLToPath(new URL("../vectors/", import.meta.url));
writeFileSync(
  new URL("../vectors/index.json", import.meta.url),
  JSON.stringify(vectorIndex(root), null, 2) + "\n",
);
console.log("wrote vectors/index.json");
writeFileSync(
  new URL("../vectors/README.md", import.meta.url),
  await vectorsReadme(fileURLToPath(new URL("..", import.meta.url))),
);
console.log("wrote vectors/README.md (vectors by SPEC section)");
