// The pi port: runs scenario vectors through the pi extension with pi's real
// SessionManager (see pi_scenario_runner.ts).
//
//   deno task port:pi [vectors/scenario | <file.json> ...] [--no-events]
//       runs the vectors and prints failures, then `N passed, N failed`
//   deno task port:pi --stdin [--no-events]
//       port contract: ONE scenario vector on stdin, ONE result object on stdout
//       (deno task conformance vectors/scenario --cmd "deno task -q port:pi --stdin")
import { homedir } from "node:os";
import { portMain } from "../port_main.ts";
import { runScenarioOnPi } from "./pi_scenario_runner.ts";

const args = [...Deno.args];
const noEvents = args.indexOf("--no-events");
if (noEvents >= 0) args.splice(noEvents, 1);
const events = noEvents < 0;

await portMain(args, {
  tempPrefix: "readcache-port-pi-",
  run: (v, cwd) => runScenarioOnPi(v, cwd, homedir(), { events }),
  label: `port: pi extension + pi SessionManager (events ${events ? "on" : "off"})`,
  usage: [
    "usage: deno task port:pi [vectors/scenario | <file.json> ...] [--no-events]",
    "       deno task port:pi --stdin [--no-events]",
    "",
    "Runs scenario vectors through the pi extension on pi's real SessionManager and prints",
    "failures, then `N passed, N failed`. --stdin is the port contract (SPEC §10): one scenario",
    "input on stdin, one result object on stdout:",
    '  deno task conformance vectors/scenario --cmd "deno task -q port:pi --stdin"',
    "--no-events: pi's session events are not delivered (the extension must not need them).",
  ].join("\n"),
});
