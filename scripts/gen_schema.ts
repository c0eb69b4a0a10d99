// Regenerates vectors/schema/*.json from the zod schemas in src/conformance/vector_schema.ts.
import { writeFileSync } from "node:fs";
import { generateJsonSchemas } from "../src/conformance/vector_files.ts";

const dir = new URL("../vectors/schema/", import.meta.url);
for (const [name, schema] of Object.entries(generateJsonSchemas())) {
  writeFileSync(new URL(name, dir), JSON.stringify(schema, null, 2) + "\n");
  console.log(`wrote vectors/schema/${name}`);
}
