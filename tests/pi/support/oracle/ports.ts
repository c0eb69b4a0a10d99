// The ports the oracle drives: the reference session simulator, the pi
// adapter under pi's real SessionManager (with and without pi's events), and
// the OpenCode plugin on the model of OpenCode's session store
// (scripts/opencode/opencode_scenario_runner.ts). `loadPorts` imports the same
// runners from another copy of the repository (the planted-bug harness copies
// src/ and scripts/).
//
// The OpenCode port cannot run every generated step: `prepareForOpenCode`
// drops the steps the port's applicability rule (openCodeVector in
// scripts/opencode/opencode_expectations.ts) names (refreshes, pi's path
// syntax, moves off the session's message list, reads of files with CR line
// ends, a BOM or lines over 2000 characters, images and binary files, edits
// that are not one exact replacement) until none is left; the oracle checks
// the vector that ran and counts the dropped steps by reason. Its answers
// are OpenCode's text, which `openCodeTextAsPi` (parse.ts) writes as pi's
// for the checker.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { runScenarioOnPi } from "../../../../scripts/pi/pi_scenario_runner.ts";
import { runScenario } from "../../../../src/conformance/session_simulator.ts";
import type { Scenario } from "../../../../src/conformance/vector_schema.ts";
import { openCodeVector } from "../../../../scripts/opencode/opencode_expectations.ts";
import { runScenarioOnOpenCode } from "../../../../scripts/opencode/opencode_scenario_runner.ts";
import { claudeVector } from "../../../../scripts/claude/claude_expectations.ts";
import { runScenarioOnClaude } from "../../../../scripts/claude/claude_scenario_runner.ts";
import { renderBaselineRead } from "../../../../src/core/baseline.ts";
import { sanitizeScenario } from "./generator.ts";
import { openCodeTextAsPi } from "./parse.ts";
import type { Port, Prepared } from "./run.ts";

/** Port names accepted by `deno task oracle --port`. */
export const PORT_NAMES = ["reference", "pi", "pi-no-events", "opencode", "claude-code"] as const;
/** One of {@linkcode PORT_NAMES}. */
export type PortName = typeof PORT_NAMES[number];

/** The ports of this checkout. */
export const PORTS: Record<PortName, Port> = {
  reference: (v, cwd, home) => runScenario(v, cwd, home),
  pi: (v, cwd, home) => runScenarioOnPi(v, cwd, home, { events: true }),
  "pi-no-events": (v, cwd, home) => runScenarioOnPi(v, cwd, home, { events: false }),
  opencode: openCodePort(runScenarioOnOpenCode),
  "claude-code": claudePort(runScenarioOnClaude),
};

/** The generated vector without the steps the OpenCode port cannot run (see above). */
export function prepareForOpenCode(vector: Scenario): Prepared {
  return prepareBy(vector, openCodeVector);
}

/** The generated vector without the steps the Claude Code port cannot run (claudeVector). */
export function prepareForClaude(vector: Scenario): Prepared {
  return prepareBy(vector, claudeVector);
}

function prepareBy(
  vector: Scenario,
  rule: (v: Scenario) =>
    | { applies: true }
    | { applies: false; reasons: Partial<Record<string, number[]>> },
): Prepared {
  const dropped: Record<string, number> = {};
  let v = vector;
  for (let round = 0; round < 50; round++) {
    const oc = rule(v);
    if (oc.applies) break;
    const drop = new Map<number, string>();
    for (const [why, steps] of Object.entries(oc.reasons)) {
      for (const i of steps ?? []) if (!drop.has(i)) drop.set(i, why);
    }
    for (const why of drop.values()) dropped[why] = (dropped[why] ?? 0) + 1;
    v = sanitizeScenario({ ...v, steps: v.steps.filter((_, i) => !drop.has(i)) });
  }
  return { vector: v, dropped };
}

/** The OpenCode port for the oracle: its answers written as pi's (parse.ts `openCodeTextAsPi`). */
function openCodePort(run: typeof runScenarioOnOpenCode): Port {
  const port: Port = async (v, cwd, home) => {
    const files = new Map<number, { endsWithBreak: boolean; piLines: number } | undefined>();
    const out = await run(v, cwd, home, {
      onRead: (step, bytes) => {
        const text = bytes === undefined ? undefined : new TextDecoder().decode(bytes);
        files.set(
          step,
          text === undefined
            ? undefined
            : { endsWithBreak: text.endsWith("\n"), piLines: text.split("\n").length },
        );
      },
    });
    return {
      ...out,
      results: out.results.map((r) =>
        "error" in r ? r : { ...r, text: openCodeTextAsPi(r.text, r.mode, files.get(r.step)) }
      ),
    };
  };
  port.prepare = prepareForOpenCode;
  return port;
}

/**
 * The Claude Code port for the oracle: a plain read's text is Claude Code's own lines of its
 * window, which pi writes with a notice when the window ends before the file does; the notice is
 * added as pi would write it for the same request (the lines stay the answer's). Markers, diffs
 * and partial answers are the core's texts, as in pi.
 */
function claudePort(run: typeof runScenarioOnClaude): Port {
  const port: Port = async (v, cwd, home) => {
    const files = new Map<number, string | undefined>();
    const out = await run(v, cwd, home, {
      onRead: (step, bytes) =>
        files.set(step, bytes === undefined ? undefined : new TextDecoder().decode(bytes)),
    });
    return {
      ...out,
      results: out.results.map((r) => {
        if (
          "error" in r || (r.mode !== null && r.mode !== "full" && r.mode !== "baseline_fallback")
        ) {
          return r;
        }
        const text = files.get(r.step);
        const s = v.steps[r.step] as { path: string; offset?: number; limit?: number };
        if (text === undefined) return r;
        try {
          const pi = renderBaselineRead({
            text,
            displayPath: s.path,
            offset: s.offset,
            limit: s.limit,
          });
          return pi.text.startsWith(r.text)
            ? { ...r, text: r.text + pi.text.slice(r.text.length) }
            : r;
        } catch {
          return r;
        }
      }),
    };
  };
  port.prepare = prepareForClaude;
  return port;
}

/**
 * The ports of another copy of the repository at `root` (a directory holding
 * `src/conformance/session_simulator.ts` and `scripts/pi/pi_scenario_runner.ts`).
 */
export async function loadPorts(root: string): Promise<Record<PortName, Port>> {
  const base = pathToFileURL(`${resolve(root)}/`);
  const sim = await import(new URL("src/conformance/session_simulator.ts", base).href);
  const pi = await import(new URL("scripts/pi/pi_scenario_runner.ts", base).href);
  const oc = await import(new URL("scripts/opencode/opencode_scenario_runner.ts", base).href);
  const cc = await import(new URL("scripts/claude/claude_scenario_runner.ts", base).href);
  return {
    reference: (v, cwd, home) => sim.runScenario(v, cwd, home),
    pi: (v, cwd, home) => pi.runScenarioOnPi(v, cwd, home, { events: true }),
    "pi-no-events": (v, cwd, home) => pi.runScenarioOnPi(v, cwd, home, { events: false }),
    opencode: openCodePort(oc.runScenarioOnOpenCode),
    "claude-code": claudePort(cc.runScenarioOnClaude),
  };
}
