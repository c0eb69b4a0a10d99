/**
 * A scenario input with the reference's answers as its expectations: the
 * differential mode (`deno task conformance --random`) compares a port with
 * the reference on sessions that have no expectations of their own, so it
 * writes the reference's answer to every `read` step into the step's
 * `expect` (mode, exact text, scope; or the error) and compares the port's
 * output with the ordinary scenario comparison. The result is a scenario
 * vector like those in `vectors/scenario/`, which the runner can run again.
 *
 * Specified by SPEC.md §10.
 *
 * @module
 */
import type { ScenarioOutput, StepResult } from "../../src/conformance/session_simulator.ts";
import {
  type Scenario,
  type ScenarioInput,
  ScenarioSchema,
} from "../../src/conformance/vector_schema.ts";

/**
 * The part of a reference error message a port must also print: the whole
 * message, unless it names the reference's temporary working directory (a
 * port runs in another one); then the text before that, up to its first `:`
 * (`ENOENT: no such file or directory, open '/tmp/x/a.txt'` gives `ENOENT`,
 * as the hand-written vectors pin it).
 *
 * @example
 * ```ts
 * import { errorExpectation } from "./reference_expectations.ts";
 * errorExpectation("ENOENT: no such file or directory, open '/tmp/w/a.txt'", "/tmp/w"); // "ENOENT"
 * errorExpectation("Offset 9 is beyond end of file (4 lines total)", "/tmp/w"); // the whole message
 * ```
 */
export function errorExpectation(message: string, cwd: string): string {
  const at = message.indexOf(cwd);
  if (at === -1) return message;
  const before = message.slice(0, at);
  const colon = before.indexOf(":");
  return colon > 0 ? before.slice(0, colon) : before.trim();
}

/**
 * The scenario vector of `input` whose expectations are the reference's
 * answers in `reference` (one result per `read` step). `cwd` is the
 * directory the reference ran in (see {@linkcode errorExpectation}). Throws
 * when the reference gave no result for a `read` step.
 *
 * @example
 * ```ts
 * import { expectationsFromReference } from "./reference_expectations.ts";
 * const input = { id: "s1", files: { "a.txt": "x\n" }, steps: [{ op: "read" as const, path: "a.txt" }] };
 * const v = expectationsFromReference(input, {
 *   id: "s1",
 *   results: [{ step: 0, mode: "full", text: "x\n", scope: "full" }],
 * }, { cwd: "/tmp/w", title: "a random session" });
 * v.steps[0]; // { op: "read", path: "a.txt", expect: { mode: "full", text: "x\n", scope: "full" } }
 * ```
 */
export function expectationsFromReference(
  input: ScenarioInput,
  reference: ScenarioOutput,
  meta: { cwd: string; title: string; refs?: string[] },
): Scenario {
  const byStep = new Map<number, StepResult>(reference.results.map((r) => [r.step, r]));
  const steps = input.steps.map((s, i) => {
    if (s.op !== "read") return s;
    const r = byStep.get(i);
    if (r === undefined) throw new Error(`the reference gave no result for read step ${i}`);
    if ("error" in r) return { ...s, expect: { error: errorExpectation(r.error, meta.cwd) } };
    const expect: Record<string, unknown> = { mode: r.mode, text: r.text };
    if (r.scope !== undefined) expect.scope = r.scope;
    return { ...s, expect };
  });
  return ScenarioSchema.parse({
    id: input.id,
    title: meta.title,
    refs: meta.refs ?? ["SPEC §10"],
    ...(input.config === undefined ? {} : { config: input.config }),
    files: input.files,
    steps,
  });
}
