/**
 * The shape of what a port prints on stdout (SPEC §10), as zod schemas, and
 * the checks the conformance runner applies before comparing anything: the
 * stdout must be one JSON object, of the right shape, for the vector that was
 * sent. Every failed check gives a one-line reason.
 *
 * @example
 * ```ts
 * import { parsePortStdout, parseScenarioPortOutput } from "./port_output.ts";
 * const json = parsePortStdout('{"id": "v1", "results": [{"step": 0, "mode": "full", "text": "x"}]}');
 * if (json.ok) parseScenarioPortOutput(json.value, "v1").ok; // true
 * ```
 *
 * Specified by SPEC.md §10.
 *
 * @module
 */
import { z } from "zod";
import type { LayerResult } from "./layer_port.ts";
import type { ScenarioOutput, StepResult } from "./session_simulator.ts";

export type { LayerResult, ScenarioOutput, StepResult };

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** A zod error message: "is missing" when absent, else "must be <what>, got <value>". */
function must(what: string): (issue: { input?: unknown }) => string {
  return (issue) =>
    issue.input === undefined ? "is missing" : `must be ${what}, got ${describe(issue.input)}`;
}

const stepIndex = z.number({ error: must("a step index") }).int({
  error: must("a step index (an integer)"),
}).min(0, { error: must("a step index (0 or more)") });

/**
 * A scenario result for a read step that failed, like pi's read:
 * `{"step": <index>, "error": "<message>"}`.
 */
const StepErrorResultSchema: z.ZodType<Extract<StepResult, { error: string }>> = z.object({
  step: stepIndex,
  error: z.string({ error: must("a string") }),
});

/**
 * A scenario result for a read step that was served:
 * `{"step": <index>, "mode": "<mode>" | null, "text": "<output text>", "scope"?: "<scope key>"}`.
 */
const StepReadResultSchema: z.ZodType<Exclude<StepResult, { error: string }>> = z.object({
  step: stepIndex,
  mode: z.string({ error: must("a string or null") }).nullable(),
  text: z.string({ error: must("a string") }),
  scope: z.string({ error: must("a string") }).optional(),
});

/**
 * One item of `results`: an error result when it has an `error` key, else a
 * read result.
 */
const StepResultSchema: z.ZodType<StepResult> = z.union([
  StepErrorResultSchema,
  StepReadResultSchema,
]);

/**
 * What a port prints for a scenario vector: `{"id": "<id>", "results": [...]}`,
 * one result per `read` step.
 */
const ScenarioResultsSchema: z.ZodType<ScenarioOutput> = z.object({
  id: z.string({ error: must("a string") }),
  results: z.array(StepResultSchema, { error: must("an array of step results") }),
});

/**
 * What a port prints for a scenario vector it cannot run (SPEC §10): the
 * first step it cannot run and why, `{"id", "notApplicable": {"step", "reason"}}`
 * (a host port whose agent has no such tool or event). The runner counts it
 * apart, neither passed nor failed.
 *
 * @example
 * ```ts
 * import type { ScenarioNotApplicable } from "./port_output.ts";
 * const out: ScenarioNotApplicable = { id: "refresh-only", notApplicable: { step: 1, reason: "refresh" } };
 * ```
 */
export interface ScenarioNotApplicable {
  /** The vector's id. */
  id: string;
  /** The first step the port cannot run, and why (one line). */
  notApplicable: { step: number; reason: string };
}

const ScenarioNotApplicableSchema: z.ZodType<ScenarioNotApplicable> = z.object({
  id: z.string({ error: must("a string") }),
  notApplicable: z.object({
    step: stepIndex,
    reason: z.string({ error: must("a string") }).min(1, { error: must("a reason") }),
  }, { error: must('an object {"step", "reason"}') }),
});

/**
 * What a port prints for a layer case: `{"id", "output": {...}}`,
 * `{"id", "error": {"code"?, "message"}}`, or `{"id", "unsupported": true}`.
 */
const LayerPortOutputSchema: z.ZodType<LayerPortOutput> = z.union([
  z.object({
    id: z.string({ error: must("a string") }),
    unsupported: z.literal(true, { error: must("true") }),
  }),
  z.object({
    id: z.string({ error: must("a string") }),
    output: z.record(z.string(), z.unknown(), { error: must("an object") }),
  }),
  z.object({
    id: z.string({ error: must("a string") }),
    error: z.object({
      code: z.string({ error: must("a string") }).optional(),
      message: z.string({ error: must("a string") }),
    }, { error: must("an object") }),
  }),
]);

/**
 * A port's answer to a layer case: a {@linkcode LayerResult} or "this layer is
 * not supported".
 *
 * @example
 * ```ts
 * import type { LayerPortOutput } from "./port_output.ts";
 * const out: LayerPortOutput = { id: "path-relative", unsupported: true };
 * ```
 */
export type LayerPortOutput = LayerResult | { id: string; unsupported: true };

/**
 * Everything a port may print (SPEC §10): a scenario's results or a layer
 * case's answer. `vectors/schema/port-output.schema.json` is generated from it.
 *
 * @example
 * ```ts ignore
 * PortOutputSchema.safeParse({ id: "x", results: [] }).success; // true
 * ```
 */
export const PortOutputSchema: z.ZodType<
  ScenarioOutput | ScenarioNotApplicable | LayerPortOutput
> = z.union([
  ScenarioResultsSchema,
  ScenarioNotApplicableSchema,
  LayerPortOutputSchema,
]);

/**
 * The result of a check: the value, or why it was rejected (one line).
 *
 * @example
 * ```ts
 * import type { PortCheck } from "./port_output.ts";
 * const bad: PortCheck<unknown> = { ok: false, reason: "port printed nothing on stdout" };
 * ```
 */
export type PortCheck<T> = { ok: true; value: T } | { ok: false; reason: string };

/**
 * Parses a port's stdout: it must be exactly one JSON object (surrounding
 * whitespace is ignored).
 *
 * @example
 * ```ts
 * import { parsePortStdout } from "./port_output.ts";
 * parsePortStdout("");        // { ok: false, reason: "port printed nothing on stdout" }
 * parsePortStdout("[1]");     // { ok: false, reason: "port output is not a JSON object (got an array)" }
 * parsePortStdout('{"id":1}'); // { ok: true, value: { id: 1 } }
 * ```
 */
export function parsePortStdout(stdout: string): PortCheck<Record<string, unknown>> {
  const text = stdout.trim();
  if (text === "") return { ok: false, reason: "port printed nothing on stdout" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const start = text.length > 60 ? `${text.slice(0, 57)}...` : text;
    const why = e instanceof Error ? e.message : String(e);
    return {
      ok: false,
      reason: `port output is not one JSON object (${why}); stdout starts ${JSON.stringify(start)}`,
    };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, reason: `port output is not a JSON object (got ${describe(value)})` };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** The JSON pointer (RFC 6901) of a place in the port's output: `/results/1/mode`. */
function pathText(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "the output";
  return path.map((p) => "/" + String(p).replaceAll("~", "~0").replaceAll("/", "~1")).join("");
}

/** Flattens zod issues into short texts; a failed union reports the branch `pick` chooses. */
function issueTexts(
  issues: readonly z.core.$ZodIssue[],
  pick: (input: unknown) => number | string,
  prefix: readonly PropertyKey[] = [],
): string[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === "invalid_union") {
      const branch = pick(issue.input);
      if (typeof branch === "string") return [`${pathText(path)} ${branch}`];
      return issueTexts(issue.errors[branch] ?? [], pick, path);
    }
    return [`${pathText(path)} ${issue.message}`];
  });
}

function hasKey(value: unknown, key: string): boolean {
  return value !== null && typeof value === "object" && key in value;
}

function wrongId(value: Record<string, unknown>, expectedId: string): string | undefined {
  if (typeof value.id !== "string" || value.id === expectedId) return undefined;
  return `port answered for id ${JSON.stringify(value.id)}, expected ${JSON.stringify(expectedId)}`;
}

function malformed(texts: string[]): string {
  const more = texts.length > 3 ? ` (and ${texts.length - 3} more)` : "";
  return `malformed port output: ${texts.slice(0, 3).join("; ")}${more}`;
}

function checked<T>(
  schema: z.ZodType<T>,
  value: Record<string, unknown>,
  pick: (input: unknown) => number | string,
): PortCheck<T> {
  const parsed = schema.safeParse(value, { reportInput: true });
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, reason: malformed(issueTexts(parsed.error.issues, pick)) };
}

/**
 * Checks a port's JSON output for a scenario vector: its shape and that it
 * answers the vector that was sent.
 *
 * @example
 * ```ts
 * import { parseScenarioPortOutput } from "./port_output.ts";
 * parseScenarioPortOutput({ id: "v1" }, "v1");
 * // { ok: false, reason: 'malformed port output: "results" is missing' }
 * parseScenarioPortOutput({ id: "v2", results: [] }, "v1");
 * // { ok: false, reason: 'port answered for id "v2", expected "v1"' }
 * ```
 */
export function parseScenarioPortOutput(
  value: Record<string, unknown>,
  expectedId: string,
): PortCheck<ScenarioOutput | ScenarioNotApplicable> {
  const wrong = wrongId(value, expectedId);
  if (wrong) return { ok: false, reason: wrong };
  if ("notApplicable" in value && !("results" in value)) {
    return checked(ScenarioNotApplicableSchema, value, () => 0);
  }
  return checked(ScenarioResultsSchema, value, (input) => {
    if (input === null || typeof input !== "object" || Array.isArray(input)) {
      return `must be a step result object, got ${describe(input)}`;
    }
    return hasKey(input, "error") ? 0 : 1;
  });
}

const LAYER_KEYS = ["unsupported", "output", "error"] as const;

/**
 * Checks a port's JSON output for a layer case: its shape (exactly one of
 * `output`, `error`, `unsupported`) and that it answers the case that was sent.
 *
 * @example
 * ```ts
 * import { parseLayerPortOutput } from "./port_output.ts";
 * parseLayerPortOutput({ id: "c1" }, "c1");
 * // { ok: false, reason: 'malformed port output: the object needs one of "output", "error" or "unsupported"' }
 * parseLayerPortOutput({ id: "c1", output: { resolved: "/w/a" } }, "c1").ok; // true
 * ```
 */
export function parseLayerPortOutput(
  value: Record<string, unknown>,
  expectedId: string,
): PortCheck<LayerPortOutput> {
  const wrong = wrongId(value, expectedId);
  if (wrong) return { ok: false, reason: wrong };
  const keys = LAYER_KEYS.filter((k) => k in value);
  if (keys.length !== 1) {
    const texts = typeof value.id === "string"
      ? []
      : [`/id ${must("a string")({ input: value.id })}`];
    texts.push(
      keys.length === 0
        ? 'the object needs one of "output", "error" or "unsupported"'
        : `the object has ${keys.map((k) => `"${k}"`).join(" and ")}; it needs exactly one of them`,
    );
    return { ok: false, reason: malformed(texts) };
  }
  return checked(LayerPortOutputSchema, value, () => LAYER_KEYS.indexOf(keys[0]));
}
