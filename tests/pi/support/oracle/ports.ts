// The ports the oracle drives: the reference session simulator and the pi
// adapter under pi's real SessionManager (with and without pi's events).
// `loadPorts` imports the same two runners from another copy of the
// repository (the planted-bug harness copies src/ and scripts/).
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { runScenarioOnPi } from "../../../../scripts/pi/pi_scenario_runner.ts";
import { runScenario } from "../../../../src/conformance/session_simulator.ts";
import type { Port } from "./run.ts";

/** Port names accepted by `deno task oracle --port`. */
export const PORT_NAMES = ["reference", "pi", "pi-no-events"] as const;
/** One of {@linkcode PORT_NAMES}. */
export type PortName = typeof PORT_NAMES[number];

/** The ports of this checkout. */
export const PORTS: Record<PortName, Port> = {
  reference: (v, cwd, home) => runScenario(v, cwd, home),
  pi: (v, cwd, home) => runScenarioOnPi(v, cwd, home, { events: true }),
  "pi-no-events": (v, cwd, home) => runScenarioOnPi(v, cwd, home, { events: false }),
};

/**
 * The ports of another copy of the repository at `root` (a directory holding
 * `src/conformance/session_simulator.ts` and `scripts/pi/pi_scenario_runner.ts`).
 */
export async function loadPorts(root: string): Promise<Record<PortName, Port>> {
  const base = pathToFileURL(`${resolve(root)}/`);
  const sim = await import(new URL("src/conformance/session_simulator.ts", base).href);
  const pi = await import(new URL("scripts/pi/pi_scenario_runner.ts", base).href);
  return {
    reference: (v, cwd, home) => sim.runScenario(v, cwd, home),
    pi: (v, cwd, home) => pi.runScenarioOnPi(v, cwd, home, { events: true }),
    "pi-no-events": (v, cwd, home) => pi.runScenarioOnPi(v, cwd, home, { events: false }),
  };
}
