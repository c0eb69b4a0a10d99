// The reference port: reads ONE vector (scenario, or one layer case tagged
// with "layer") as JSON on stdin, prints ONE JSON result object on stdout.
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { type LayerInput, runLayerCase } from "../src/conformance/layer_port.ts";
import { runScenario } from "../src/conformance/session_simulator.ts";
import { portMain } from "./port_main.ts";
import {
  PathInputSchema,
  RangeInputSchema,
  ReplayInputSchema,
  ScenarioInputSchema,
  TrustInputSchema,
} from "../src/conformance/vector_schema.ts";

const HELP = `deno task port: the reference port (SPEC §10), with the command line every port of
this repository shares (port:pi, port:opencode, port:claude-code):

  deno task port --stdin                 ONE vector's input as JSON on stdin (a scenario, or one
                                         layer case tagged with "layer"), ONE JSON result on stdout
  deno task port [vectors/scenario | <file.json> ...]
                                         runs scenario vectors through it: FAIL lines, then
                                         \`N passed, N failed\`

Without arguments and with input on stdin it is --stdin. The conformance runner starts it once per
vector:

  deno task conformance --cmd "deno task port --stdin"

A port of your own is any command that does the same (docs/porting.md).`;

const args = Deno.args.filter((a) => a !== "--stdin");
if (Deno.args.includes("--help") || Deno.args.includes("-h")) {
  console.log(HELP);
  Deno.exit(0);
}
const unknown = args.find((a) => a.startsWith("-"));
if (unknown !== undefined) {
  console.error(`deno task port: unknown option ${unknown}\n\n${HELP}`);
  Deno.exit(2);
}
if (args.length > 0) {
  // vector files or directories: the shared command line runs them through the reference
  await portMain(args, {
    tempPrefix: "readcache-port-",
    run: (v, cwd) => runScenario(v, cwd, homedir()),
    label: "port: the reference (scripts/port.ts)",
    usage: HELP,
  });
}
if (Deno.stdin.isTerminal()) {
  console.error(`deno task port: give it a vector's input as JSON on stdin\n\n${HELP}`);
  Deno.exit(2);
}
let raw;
try {
  raw = JSON.parse(await new Response(Deno.stdin.readable).text());
} catch (e) {
  console.error(
    `deno task port: stdin is not one JSON value (${(e as Error).message}): give it one vector's ` +
      "input, as the conformance runner does",
  );
  Deno.exit(2);
}
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
