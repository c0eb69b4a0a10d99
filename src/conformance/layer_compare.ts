/**
 * Compares a port's answer to a layer case with the case's expectation.
 *
 * Specified by SPEC.md §10.
 *
 * @module
 */
import type { LayerResult } from "./layer_port.ts";
import type { TaggedLayerCase } from "./vector_schema.ts";

/** Key-order-independent JSON text, for equality and for printing. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      return Object.fromEntries(
        Object.keys(o).sort().filter((k) => o[k] !== undefined).map((
          k,
        ) => [k, o[k]]),
      );
    }
    return v;
  });
}

function eq(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

function field(problems: string[], name: string, expected: unknown, actual: unknown): void {
  if (!eq(expected, actual)) {
    problems.push(
      `${name}: expected ${canonicalJson(expected)}, got ${canonicalJson(actual) ?? "nothing"}`,
    );
  }
}

/**
 * Lists the differences between a port's result and the expectation of the
 * case; an empty list means the case passes.
 */
export function compareLayerResult(input: TaggedLayerCase, result: LayerResult): string[] {
  const problems: string[] = [];
  if (result.id !== input.id) problems.push(`id: expected ${input.id}, got ${result.id}`);
  const expected = input.expected as Record<string, unknown>;
  if ("error" in result) {
    const want = expected.error as { code: string; message: string } | undefined;
    if (!want) return [...problems, `unexpected error: ${result.error.message}`];
    if (result.error.code !== undefined && result.error.code !== want.code) {
      problems.push(`error code: expected ${want.code}, got ${result.error.code}`);
    }
    if (!result.error.message.includes(want.message)) {
      problems.push(
        `error message: expected to include ${JSON.stringify(want.message)}, got ${
          JSON.stringify(result.error.message)
        }`,
      );
    }
    return problems;
  }
  if ("error" in expected) {
    return [...problems, `expected an error (${canonicalJson(expected.error)}), got a result`];
  }
  const out = result.output;
  switch (input.layer) {
    case "path":
    case "range":
      for (const k of new Set([...Object.keys(expected), ...Object.keys(out)])) {
        field(problems, k, expected[k], out[k]);
      }
      break;
    case "trust":
      field(problems, "trust", input.expected.trust, out.trust);
      if (input.expected.outcomes) {
        field(problems, "outcomes", input.expected.outcomes, out.outcomes);
      }
      break;
    case "replay":
      for (const k of ["startIndex", "compactionId", "seq", "trust"] as const) {
        field(problems, k, input.expected[k], out[k]);
      }
      if (input.expected.windowSize !== undefined) {
        field(problems, "windowSize", input.expected.windowSize, out.windowSize);
      }
      break;
  }
  if ((input.layer === "trust" || input.layer === "replay") && input.expected.select) {
    const got = (out.select ?? []) as { pathKey: string; scopeKey: string; base: unknown }[];
    input.expected.select.forEach((q, i) => {
      field(problems, `select ${q.pathKey} ${q.scopeKey}`, q.expected, got[i]?.base);
    });
  }
  return problems;
}
