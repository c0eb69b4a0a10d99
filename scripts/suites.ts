// `deno task test` and `deno task check`: the two suites of this repository, each with its own
// dependencies (README: Dependencies).
//
// - core: the library, the conformance harness, the CLI and their tests, with deno.json (zod,
//   diff, fast-check; never pi);
// - pi: everything that needs pi itself (the adapter's tests against pi's own code, the pi port,
//   the end-to-end test in a real pi, the oracle, the hostile-machine tests, the bench), with
//   pi-suite/deno.json; every file of it lives in a `pi/` folder.
//
// `test` runs both suites even when the first fails and ends with one summary line for both,
// `ok | N passed | N failed` (what CI counts). `check` type-checks both.
import { existsSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const mode = Deno.args[0];
if (mode !== "test" && mode !== "check") {
  console.error("usage: deno run -A scripts/suites.ts test|check");
  Deno.exit(2);
}

/** `.ts` files under `dir`, split by whether they are in a `pi/` folder. */
function tsFiles(
  dir: string,
): { core: string[]; pi: string[]; opencode: string[]; claude: string[] } {
  const out = {
    core: [] as string[],
    pi: [] as string[],
    opencode: [] as string[],
    claude: [] as string[],
  };
  if (!existsSync(join(root, dir))) return out;
  for (const e of readdirSync(join(root, dir), { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || !e.name.endsWith(".ts")) continue;
    const rel = relative(root, join(e.parentPath, e.name));
    const segs = rel.split("/");
    const bucket = rel.startsWith("src/")
      ? out.core
      : segs.includes("pi")
      ? out.pi
      : segs.includes("opencode")
      ? out.opencode
      : segs.includes("claude")
      ? out.claude
      : out.core;
    bucket.push(rel);
  }
  return out;
}

async function run(args: string[]): Promise<{ code: number; output: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: root,
    env: { NO_COLOR: "1" }, // plain summary lines to count
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  const pump = async (stream: ReadableStream<Uint8Array>, to: typeof Deno.stdout) => {
    for await (const chunk of stream) {
      output += new TextDecoder().decode(chunk);
      await to.write(chunk);
    }
  };
  await Promise.all([pump(child.stdout, Deno.stdout), pump(child.stderr, Deno.stderr)]);
  return { code: (await child.status).code, output };
}

const tests = tsFiles("tests");
const scripts = tsFiles("scripts");
const bench = tsFiles("bench");
const cli = tsFiles("cli");

if (mode === "check") {
  const core = await run([
    "check",
    "mod.ts",
    "rules.ts",
    "replay.ts",
    "service.ts",
    "src/",
    ...tests.core,
    ...scripts.core,
    ...bench.core,
    ...cli.core,
    ...tests.opencode,
    ...scripts.opencode,
    ...tests.claude,
    ...scripts.claude,
  ]);
  const pi = await run([
    "check",
    "--config",
    "pi-suite/deno.json",
    ...tests.pi,
    ...scripts.pi,
    ...bench.pi,
  ]);
  Deno.exit(core.code !== 0 || pi.code !== 0 ? 1 : 0);
}

const summary = /(ok|FAILED) \| (\d+) passed(?: \(\d+ steps\))? \| (\d+) failed/;
let passed = 0;
let failed = 0;
let code = 0;
const suites: [string, string[]][] = [
  ["core", [
    "test",
    "-A",
    "--no-check=remote",
    "--doc",
    ...tests.core.filter((f) => f.endsWith("_test.ts")),
    "README.md",
  ]],
  ["pi", [
    "test",
    "-A",
    "--no-check=remote",
    "--config",
    "pi-suite/deno.json",
    ...tests.pi.filter((f) => f.endsWith("_test.ts")),
  ]],
  // the OpenCode plugin against the real opencode binary (npm-installed into .scratch/opencode/)
  ["opencode", [
    "test",
    "-A",
    "--no-check=remote",
    ...tests.opencode.filter((f) => f.endsWith("_test.ts")),
  ]],
  // the Claude Code host against the real claude binary (npm-installed into .scratch/claude-code/)
  ["claude", [
    "test",
    "-A",
    "--no-check=remote",
    ...tests.claude.filter((f) => f.endsWith("_test.ts")),
  ]],
];
for (const [name, args] of suites) {
  console.log(`== ${name} suite`);
  const r = await run(args);
  const m = [...r.output.matchAll(new RegExp(summary, "g"))].at(-1);
  if (m) {
    passed += Number(m[2]);
    failed += Number(m[3]);
  } else {
    failed += 1; // a suite that did not report is a failure
  }
  if (r.code !== 0) code = 1;
}
console.log(
  `\n${
    failed === 0 && code === 0 ? "ok" : "FAILED"
  } | ${passed} passed | ${failed} failed (core, pi, opencode and claude suites)`,
);
Deno.exit(code);
