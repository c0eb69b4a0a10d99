// `deno task conformance`: the conformance runner (src/conformance/runner.ts, also published as
// `@readcache/core/conformance`). See `deno task conformance --help` and SPEC §10.
//
// With `--random N`, the differential mode instead (scripts/pi/differential.ts): random sessions
// from the oracle's generator, run by a port and by the reference, read by read. It needs pi, so
// it runs in its own process with pi-suite/deno.json.
import { fileURLToPath } from "node:url";
import { main } from "../src/conformance/runner.ts";

if (Deno.args.includes("--random")) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--config",
      fileURLToPath(new URL("../pi-suite/deno.json", import.meta.url)),
      fileURLToPath(new URL("./pi/differential.ts", import.meta.url)),
      ...Deno.args,
    ],
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  Deno.exit((await child.status).code);
}
Deno.exit(await main(Deno.args));
