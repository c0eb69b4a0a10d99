// Every scenario vector through the pi extension with pi's real SessionManager
// (`deno task port:pi`), with pi's session events delivered and without them:
// correctness must not depend on the events.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { compareScenario } from "../../src/conformance/scenario_compare.ts";
import { ScenarioSchema } from "../../src/conformance/vector_schema.ts";
import { runScenarioOnPi } from "../../scripts/pi/pi_scenario_runner.ts";

const dir = fileURLToPath(new URL("../../vectors/scenario/", import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();

for (const events of [true, false]) {
  for (const f of files) {
    const v = ScenarioSchema.parse(JSON.parse(readFileSync(join(dir, f), "utf8")));
    Deno.test(`[pi port, events ${events ? "on" : "off"}] ${v.id}`, async () => {
      const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-pi-port-")));
      try {
        const verdict = compareScenario(v, await runScenarioOnPi(v, cwd, homedir(), { events }));
        assert.deepEqual(verdict.problems, []);
        assert.deepEqual(verdict.alternativeDiffs, [], "the adapter must produce the exact diff");
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    });
  }
}

Deno.test("port:pi --help prints its usage; an unknown option exits 2", async () => {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const run = async (arg: string) =>
    await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--config",
        join(root, "pi-suite", "deno.json"),
        join(root, "scripts", "pi", "port_pi.ts"),
        arg,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
  const help = await run("--help");
  assert.equal(help.code, 0);
  assert.match(new TextDecoder().decode(help.stdout), /^usage: deno task port:pi /);
  const bad = await run("--bogus");
  assert.equal(bad.code, 2);
  assert.match(new TextDecoder().decode(bad.stderr), /unknown option '--bogus'/);
});
