// The reference port: reads ONE vector (scenario, or one layer case tagged
// with "layer") as JSON on stdin, prints ONE JSON result object on stdout.
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { type LayerInput, runLayerCase } from "../src/conformance/layer_port.ts";
import { runScenario } from "../src/conformance/session_simulator.ts";
import {
  PathInputSchema,
  RangeInputSchema,
  ReplayInputSchema,
  ScenarioInputSchema,
  TrustInputSchema,
} from "../src/conformance/vector_schema.ts";

const raw = JSON.parse(await new Response(Deno.stdin.readable).text());
if (raw && typeof raw === "object" && "layer" in raw) {
  const schema = { path: PathInputSchema, range: RangeInputSchema, trust: TrustInputSchema }[
    String(raw.layer)
  ] ?? ReplayInputSchema;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    console.error(`invalid layer input: ${parsed.error.message}`);
    Deno.exit(2);
  }
  console.log(JSON.stringify(runLayerCase(parsed.data as LayerInput)));
} else {
  const parsed = ScenarioInputSchema.safeParse(raw);
  if (!parsed.success) {
    console.error(`invalid scenario input: ${parsed.error.message}`);
    Deno.exit(2);
  }
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-port-")));
  try {
    console.log(JSON.stringify(await runScenario(parsed.data, cwd, homedir())));
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}
