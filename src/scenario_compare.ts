/**
 * Compares a port's output for a scenario vector with the vector's
 * expectations. A diff that differs from the reference text is still accepted
 * (and reported separately) when it applies cleanly to an earlier content of
 * the file and yields the current content.
 *
 * @module
 */
import { applyPatch } from "diff";
import type { ScenarioOutput, StepResult } from "./session_simulator.ts";
import type { Scenario } from "./vector_schema.ts";

/** Outcome of one scenario. */
export interface ScenarioVerdict {
  /** Problems; empty when the scenario passes. */
  problems: string[];
  /** Steps whose diff text differs from the reference but applies correctly. */
  alternativeDiffs: number[];
}

function decode(c: string | { base64: string }): string {
  return typeof c === "string"
    ? c
    : new TextDecoder().decode(Uint8Array.from(atob(c.base64), (ch) => ch.charCodeAt(0)));
}

function normalise(p: string): string {
  return p.replace(/^@/, "").replace(/^\.\//, "").replace(/:\d+(-\d+)?$/, "");
}

/** Checks every read step's result against its `expect`. */
export function compareScenario(vector: Scenario, output: ScenarioOutput): ScenarioVerdict {
  const problems: string[] = [];
  const alternativeDiffs: number[] = [];
  if (output.id !== vector.id) problems.push(`id: expected ${vector.id}, got ${output.id}`);
  const byStep = new Map<number, StepResult>(output.results.map((r) => [r.step, r]));
  const versions = new Map<string, string[]>();
  const current = new Map<string, string>();
  for (const [p, c] of Object.entries(vector.files)) {
    versions.set(p, [decode(c)]);
    current.set(p, decode(c));
  }
  const reads = vector.steps.filter((s) => s.op === "read").length;
  if (output.results.length !== reads) {
    problems.push(`expected ${reads} results (one per read step), got ${output.results.length}`);
  }
  vector.steps.forEach((step, i) => {
    if (step.op === "write") {
      const c = decode(step.content);
      versions.set(step.path, [...(versions.get(step.path) ?? []), c]);
      current.set(step.path, c);
      return;
    }
    if (step.op !== "read") return;
    const r = byStep.get(i);
    const at = `step ${i} (read ${step.path})`;
    if (!r) return void problems.push(`${at}: no result`);
    const e = step.expect;
    if (e.error !== undefined) {
      if (!("error" in r)) {
        problems.push(
          `${at}: expected error containing ${JSON.stringify(e.error)}, got mode ${r.mode}`,
        );
      } else if (!r.error.includes(e.error)) {
        problems.push(
          `${at}: error ${JSON.stringify(r.error)} does not contain ${JSON.stringify(e.error)}`,
        );
      }
      return;
    }
    if ("error" in r) {
      return void problems.push(`${at}: unexpected error ${JSON.stringify(r.error)}`);
    }
    if (e.mode !== undefined && r.mode !== e.mode) {
      problems.push(`${at}: mode expected ${e.mode}, got ${r.mode}`);
    }
    if (e.scope !== undefined && r.scope !== e.scope) {
      problems.push(`${at}: scope expected ${e.scope}, got ${r.scope}`);
    }
    if (e.text !== undefined && r.text !== e.text) {
      const key = normalise(step.path);
      const now = current.get(key);
      const ok = r.mode === "diff" && e.mode === "diff" && now !== undefined &&
        diffAppliesToSomeVersion(r.text, versions.get(key) ?? [], now);
      if (ok) alternativeDiffs.push(i);
      else problems.push(`${at}: text differs\n${shortDiff(e.text, r.text)}`);
    }
    for (const inc of e.textIncludes ?? []) {
      if (!r.text.includes(inc)) {
        problems.push(`${at}: text does not include ${JSON.stringify(inc)}`);
      }
    }
  });
  return { problems, alternativeDiffs };
}

function diffAppliesToSomeVersion(payload: string, versions: string[], now: string): boolean {
  const nl = payload.indexOf("\n");
  if (nl === -1 || !payload.startsWith("[readcache: ")) return false;
  const patch = payload.slice(nl + 1) + "\n";
  return versions.some((v) => {
    try {
      return applyPatch(v, patch) === now;
    } catch {
      return false;
    }
  });
}

/** A short line diff of expected vs actual text, for failure reports. */
export function shortDiff(expected: string, actual: string): string {
  const a = expected.split("\n");
  const b = actual.split("\n");
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) {
      return `    first difference at line ${i + 1}:\n    - ${
        JSON.stringify(a[i] ?? "<end>")
      }\n    + ${
        JSON.stringify(b[i] ?? "<end>")
      }\n    (expected ${a.length} lines, got ${b.length})`;
    }
  }
  return "    (texts differ only in length)";
}
