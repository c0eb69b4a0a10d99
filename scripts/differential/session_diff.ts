/**
 * One session run by the reference (in process) and by a port, read by read:
 * the differential mode's unit (`deno task conformance --random`). The
 * reference's answers become the session's expectations
 * (`reference_expectations.ts`) and the port's output is compared with them
 * by the scenario comparison (`scenario_compare.ts`), so a diff of another
 * algorithm that applies is not a difference, as for the vectors.
 *
 * Specified by SPEC.md §10.
 *
 * @module
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { parseScenarioPortOutput, type PortCheck } from "../../src/conformance/port_output.ts";
import { expectationsFromReference } from "./reference_expectations.ts";
import { compareScenario } from "../../src/conformance/scenario_compare.ts";
import {
  runScenario,
  type ScenarioOutput,
  type StepResult,
} from "../../src/conformance/session_simulator.ts";
import type { Scenario, ScenarioInput } from "../../src/conformance/vector_schema.ts";

/**
 * Runs a port on one scenario input and gives its stdout as a JSON object,
 * or why it could not (`runPort` of `port_process.ts` with its command).
 *
 * @example
 * ```ts ignore
 * import { runPort } from "../../src/conformance/port_process.ts";
 * const port: PortRunner = (input) => runPort("./my-port", 30, input);
 * ```
 */
export type PortRunner = (input: ScenarioInput) => Promise<PortCheck<Record<string, unknown>>>;

/**
 * What one session gave: the same answers, a read that differs (the first
 * one, with both answers), a port that could not run the session, a port
 * that says a step is not applicable to it (nothing compared, no fault), or a
 * reference that could not (a generator problem, not the port's).
 *
 * @example
 * ```ts
 * import type { SessionDiff } from "./session_diff.ts";
 * const same: SessionDiff = { kind: "same", reads: 3, alternativeDiffs: [] };
 * ```
 */
export type SessionDiff =
  | {
    kind: "same";
    /** Read steps compared. */
    reads: number;
    /** Read steps where the port's diff text differs but applies (not a difference). */
    alternativeDiffs: number[];
  }
  | {
    kind: "differs";
    reads: number;
    /** The first read step whose answer differs (absent when only the result count is off). */
    step?: number;
    /** The reference's answer to that step. */
    reference?: StepResult;
    /** The port's answer to that step (absent: it gave none). */
    port?: StepResult;
    /** Every problem the scenario comparison found. */
    problems: string[];
    /** The session as a scenario vector, the reference's answers as its expectations. */
    vector: Scenario;
  }
  | {
    kind: "port-failed";
    reads: number;
    /** Why the port's run is not an answer (exit code, timeout, malformed output, ...). */
    reason: string;
    vector: Scenario;
  }
  | {
    kind: "not-applicable";
    reads: number;
    /** The step the port says it cannot run (SPEC §10: `notApplicable`). */
    step: number;
    /** The port's reason, as it gave it. */
    reason: string;
  }
  | { kind: "reference-failed"; reason: string };

/**
 * How a host port's answers are compared (the host's expectation rule, such as
 * `claudeVector`): the vector with the reference's answers rewritten in the host's terms, or the
 * steps that do not apply to the host, by reason.
 *
 * @example
 * ```ts
 * import type { ExpectAs } from "./session_diff.ts";
 * const pi: ExpectAs = (vector) => ({ applies: true, vector });
 * ```
 */
export type ExpectAs = (
  vector: Scenario,
) => { applies: true; vector: Scenario } | {
  applies: false;
  reasons: Partial<Record<string, number[]>>;
};

function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

/**
 * Runs `input` on the port and, meanwhile, on the reference in a fresh
 * temporary directory, and compares every read's answer. `title` names the session in the
 * vector it gives back.
 *
 * @example
 * ```ts ignore
 * import { runPort } from "../../src/conformance/port_process.ts";
 * const d = await diffSession(input, (i) => runPort("./my-port", 30, i), "random session 3");
 * if (d.kind === "differs") console.log(d.step, d.reference, d.port);
 * ```
 */
export async function diffSession(
  input: ScenarioInput,
  port: PortRunner,
  title = "a random session",
  expectAs?: ExpectAs,
): Promise<SessionDiff> {
  const reads = input.steps.filter((s) => s.op === "read").length;
  // the port starts first and runs while the reference does (a port is a process of its own)
  const running = port(input);
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-diff-")));
  let vector: Scenario;
  let reference: ScenarioOutput;
  try {
    reference = await runScenario(structuredClone(input), cwd, homedir());
    vector = expectationsFromReference(input, reference, { cwd, title });
  } catch (e) {
    await running.catch(() => {});
    return { kind: "reference-failed", reason: errorText(e) };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
  const ran = await running;
  const out = ran.ok ? parseScenarioPortOutput(ran.value, input.id) : ran;
  if (!out.ok) return { kind: "port-failed", reads, reason: out.reason, vector };
  if ("notApplicable" in out.value) {
    // a random session with a step this port cannot run: nothing to compare, and no fault
    const { step, reason } = out.value.notApplicable;
    return { kind: "not-applicable", reads, step, reason };
  }
  if (expectAs !== undefined) {
    // a host port answers in its host's terms: the reference's answers are rewritten to them
    const host = expectAs(vector);
    if (!host.applies) {
      const [reason, steps] = Object.entries(host.reasons)[0] ?? ["(no reason)", [0]];
      return { kind: "not-applicable", reads, step: steps?.[0] ?? 0, reason };
    }
    vector = host.vector;
  }
  const verdict = compareScenario(vector, out.value);
  if (verdict.problems.length === 0) {
    return { kind: "same", reads, alternativeDiffs: verdict.alternativeDiffs };
  }
  const step = verdict.differingSteps[0];
  const diff: SessionDiff = { kind: "differs", reads, problems: verdict.problems, vector };
  if (step !== undefined) {
    diff.step = step;
    diff.reference = reference.results.find((r) => r.step === step);
    const got = out.value.results.find((r) => r.step === step);
    if (got !== undefined) diff.port = got;
  }
  return diff;
}
