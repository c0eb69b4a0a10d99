// The reference port: reads ONE vector (scenario, or one layer case tagged
// with "layer") as JSON on stdin, prints ONE JSON result object on stdout.
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { type LayerInput, runLayerCase } from "../src/conformance/layer_port.ts";
import { runScenario } from "../src/conformance/session_simulator.ts";
import { ScenarioSchema } from "../src/conformance/vector_schema.ts";

const raw = JSON.parse(await new Response(Deno.stdin.readable).text());
if (raw && typeof raw === "object" && "layer" in raw) {
  console.log(JSON.stringify(runLayerCase(raw as LayerInput)));
} else {
  const parsed = ScenarioSchema.safeParse(raw);
  if (!parsed.success) {
    console.error(`invalid scenario vector: ${parsed.error.message}`);
    Deno.exit(2);
  }
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-port-")));
  try {
    console.log(JSON.stringify(await runScenario(parsed.data, cwd, homedir())));
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}
