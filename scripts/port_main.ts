// The command line every port shares (scripts/port.ts, scripts/pi/port_pi.ts,
// scripts/opencode/port_opencode.ts, scripts/claude/port_claude.ts): `--stdin` is the port contract
// (ONE scenario input on stdin, ONE result object on stdout: the results, or the first step the
// port cannot run with its reason, `{"id", "notApplicable": {"step", "reason"}}`, SPEC §10);
// otherwise the scenario vectors given (default: vectors/scenario) run through the port, with FAIL
// lines and a last line `N passed, N failed` (and `, N not applicable` for a port that says which
// vectors do not apply to it). Each vector runs in a fresh temporary directory.
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { compareScenario } from "../src/conformance/scenario_compare.ts";
import type { ScenarioOutput } from "../src/conformance/session_simulator.ts";
import { listJsonFiles } from "../src/conformance/vector_files.ts";
import {
  type Scenario,
  type ScenarioInput,
  scenarioInput,
  ScenarioInputSchema,
  ScenarioSchema,
} from "../src/conformance/vector_schema.ts";

/** What a host port gives the shared command line. */
export interface PortMain {
  /** Prefix of the temporary directory each vector runs in. */
  tempPrefix: string;
  /** Runs one scenario input in `cwd` (an empty directory). */
  run(input: ScenarioInput, cwd: string): Promise<ScenarioOutput>;
  /** The line naming the port, printed before the totals. */
  label: string;
  /**
   * The vector to compare the port's output with, or the steps of it that do not apply to the
   * port by reason (default: the vector as it is).
   */
  prepare?(vector: Scenario): { vector: Scenario } | { reasons: Record<string, number[]> };
  /** What a reason of `prepare` means, for the list of vectors that do not apply. */
  reasonText?(reason: string): string;
  /** The port's usage text (`--help`). */
  usage: string;
}

/** Runs the port's command line on `args` (without the port's own flags); exits the process. */
export async function portMain(args: string[], port: PortMain): Promise<never> {
  const rest = [...args];
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(port.usage);
    Deno.exit(0);
  }
  const stdinAt = rest.indexOf("--stdin");
  if (stdinAt >= 0) rest.splice(stdinAt, 1);
  const unknown = rest.find((a) => a.startsWith("-"));
  if (unknown !== undefined) {
    console.error(`unknown option '${unknown}'\n\n${port.usage}`);
    Deno.exit(2);
  }
  const runInTemp = async (v: ScenarioInput) => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), port.tempPrefix)));
    try {
      return await port.run(v, cwd);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  };

  if (stdinAt >= 0) {
    // a port is given the vector's inputs only (SPEC §10)
    let raw: unknown;
    try {
      raw = JSON.parse(await new Response(Deno.stdin.readable).text());
    } catch (e) {
      console.error(`stdin is not one JSON value (${(e as Error).message})`);
      Deno.exit(2);
    }
    const parsed = ScenarioInputSchema.safeParse(raw);
    if (!parsed.success) {
      console.error(`invalid scenario input: ${parsed.error.message}`);
      Deno.exit(2);
    }
    const input = parsed.data;
    // a step the port cannot run: said as the contract says, the first one with its reason
    const notApplicable = (step: number, reason: string) => {
      console.log(JSON.stringify({ id: input.id, notApplicable: { step, reason } }));
      Deno.exit(0);
    };
    // the rule sees the steps only: a port never sees the expected answers
    let prepared: ReturnType<NonNullable<PortMain["prepare"]>> | undefined;
    try {
      prepared = port.prepare?.({
        ...input,
        title: input.id,
        refs: [],
        steps: input.steps.map((st) => st.op === "read" ? { ...st, expect: {} } : st),
      } as unknown as Scenario);
    } catch {
      prepared = undefined; // a rule that needs the answers: the run itself says
    }
    if (prepared !== undefined && "reasons" in prepared) {
      const first = Object.entries(prepared.reasons)
        .flatMap(([why, steps]) => steps.map((step) => ({ step, why })))
        .sort((a, b) => a.step - b.step)[0];
      if (first !== undefined) {
        notApplicable(first.step, port.reasonText?.(first.why) ?? first.why);
      }
    }
    try {
      console.log(JSON.stringify(await runInTemp(input)));
    } catch (e) {
      const step = (e as { index?: unknown }).index;
      const why = (e as { why?: unknown }).why;
      if (typeof step === "number" && typeof why === "string") notApplicable(step, why);
      console.error(`the port failed: ${e instanceof Error ? e.message : String(e)}`);
      Deno.exit(1);
    }
    Deno.exit(0);
  }

  const root = fileURLToPath(new URL("../vectors/", import.meta.url));
  const targets = rest.length > 0 ? rest : [join(root, "scenario")];
  let passed = 0;
  let failed = 0;
  let notApplicable = 0;
  const skipped = new Map<string, string[]>();
  for (const file of targets.flatMap((t) => listJsonFiles(t))) {
    const rel = relative(root, file);
    const parsed = ScenarioSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
    if (!parsed.success) {
      failed++;
      console.log(`FAIL ${rel}: not a scenario vector: ${parsed.error.message}`);
      continue;
    }
    const prepared = port.prepare?.(parsed.data) ?? { vector: parsed.data };
    if ("reasons" in prepared) {
      notApplicable++;
      for (const [why, steps] of Object.entries(prepared.reasons)) {
        const list = skipped.get(why) ?? [];
        list.push(`${parsed.data.id} (step${steps.length > 1 ? "s" : ""} ${steps.join(", ")})`);
        skipped.set(why, list);
      }
      continue;
    }
    try {
      const verdict = compareScenario(
        prepared.vector,
        await runInTemp(scenarioInput(parsed.data)),
      );
      if (verdict.problems.length === 0) passed++;
      else {
        failed++;
        console.log(`FAIL ${parsed.data.id} (${rel}):`);
        for (const p of verdict.problems) console.log(`  ${p}`);
      }
    } catch (e) {
      failed++;
      console.log(`FAIL ${parsed.data.id} (${rel}): ${e instanceof Error ? e.stack : e}`);
    }
  }
  if (skipped.size > 0) {
    console.log("not applicable (a vector may have several reasons):");
    for (const [why, ids] of skipped) {
      console.log(`  ${why}: ${port.reasonText?.(why) ?? why}`);
      for (const id of ids) console.log(`    ${id}`);
    }
  }
  console.log(port.label);
  console.log(
    port.prepare === undefined
      ? `${passed} passed, ${failed} failed`
      : `${passed} passed, ${failed} failed, ${notApplicable} not applicable`,
  );
  Deno.exit(failed === 0 ? 0 : 1);
}
