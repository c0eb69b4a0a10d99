// Differential testing of a port on random sessions: `deno task conformance --random N --cmd
// "<port>"` (scripts/conformance.ts hands `--random` over to this script). The safety oracle's
// session generator (tests/pi/support/oracle/generator.ts, seeded) makes N random pi sessions;
// each is given to the port as a scenario input (no expectations, SPEC §10) and run by the
// reference in process; every read's answer is compared the way the scenario vectors are
// (scripts/differential/session_diff.ts). At the first session where the port differs, or
// cannot run it, the session is minimised (scripts/differential/minimise_session.ts, with the
// generator's `sanitizeScenario` keeping every candidate runnable) and printed as a scenario
// vector whose expectations are the reference's answers, with the first differing read (its
// step, the reference's answer and the port's). A session with a step the port declares not
// applicable (SPEC §10) is counted apart, with the port's reason, and the run goes on: nothing
// of it is compared. Ends with `N sessions, N reads compared, N not applicable, N differences`;
// exits 0 with no difference, 1 on a difference, a session the port could not run or a run
// where every session was not applicable (nothing compared), 2 on bad arguments or a session
// the reference itself could not run.
//
// It needs pi (the generator models pi's edit tool with pi's own code), so it runs from a
// checkout with pi-suite/deno.json, not from the published package.
import { writeFileSync } from "node:fs";
import fc from "fast-check";
import { runPort } from "../../src/conformance/port_process.ts";
import { minimiseSession } from "../differential/minimise_session.ts";
import {
  diffSession,
  type ExpectAs,
  type PortRunner,
  type SessionDiff,
} from "../differential/session_diff.ts";
import { claudeVector } from "../claude/claude_expectations.ts";
import { openCodeVector } from "../opencode/opencode_expectations.ts";
import { scenarioInput } from "../../src/conformance/vector_schema.ts";
import {
  compileSession,
  sanitizeScenario,
  sessionArb,
} from "../../tests/pi/support/oracle/generator.ts";
import {
  DIFFERENTIAL_USAGE,
  type DifferentialArgs,
  DifferentialArgsError,
  parseDifferentialArgs,
} from "../differential/differential_args.ts";

/**
 * What a differential run found: counts, and the first session where the
 * port differs from the reference (minimised), if any.
 *
 * @example
 * ```ts
 * import type { DifferentialResult } from "./differential.ts";
 * const r: DifferentialResult = { seed: 7, sessions: 30, reads: 512, alternativeDiffs: 0,
 *   notApplicable: {} };
 * ```
 */
export interface DifferentialResult {
  seed: number;
  /** Sessions run (up to and including the first with a difference). */
  sessions: number;
  /** Read steps compared: those of the sessions run, but not of not-applicable ones. */
  reads: number;
  /** Sessions the port declared not applicable, counted by the port's reason. */
  notApplicable: Record<string, number>;
  /** Reads where the port's diff text differs from the reference's but applies (not differences). */
  alternativeDiffs: number;
  /** The first session with a difference, a port failure or a reference failure. */
  found?: {
    /** Index of the generated session. */
    session: number;
    /** Steps of the generated session, before minimising. */
    originalSteps: number;
    /** Candidates tried while minimising (each one port run). */
    minimiseRuns: number;
    /** The outcome on the minimised session (`differs`, `port-failed` or `reference-failed`). */
    diff: Failure;
  };
}

/** A session outcome that stops the run. */
type Failure = Exclude<SessionDiff, { kind: "same" } | { kind: "not-applicable" }>;

function idOf(seed: number, session: number): string {
  return `random-${seed >>> 0}-${session}`;
}

/**
 * Runs `args.sessions` random sessions through the port and the reference
 * and stops at the first difference, which it minimises. Prints nothing
 * (`onProgress` is told after each session).
 *
 * @example
 * ```ts ignore
 * import { runDifferential } from "./differential.ts";
 * const r = await runDifferential({ sessions: 30, seed: 7, cmd: "./my-port", timeoutSeconds: 30,
 *   shrinkBudget: 200, host: "pi", generator: {} });
 * r.found === undefined; // no difference in 30 sessions
 * ```
 */
export async function runDifferential(
  args: DifferentialArgs,
  onProgress?: (done: number, total: number) => void,
): Promise<DifferentialResult> {
  const port: PortRunner = (input) => runPort(args.cmd, args.timeoutSeconds, input);
  const expectAs: ExpectAs | undefined = args.host === "claude-code"
    ? claudeVector
    : args.host === "opencode"
    ? openCodeVector
    : undefined;
  const samples = fc.sample(sessionArb(args.generator), {
    seed: args.seed,
    numRuns: args.sessions,
  });
  const result: DifferentialResult = {
    seed: args.seed,
    sessions: 0,
    reads: 0,
    alternativeDiffs: 0,
    notApplicable: {},
  };
  for (const [i, s] of samples.entries()) {
    const vector = compileSession(s, idOf(args.seed, i), args.generator);
    const title = `random session ${i} of seed ${args.seed >>> 0}`;
    const d = await diffSession(scenarioInput(vector), port, title, expectAs);
    result.sessions++;
    onProgress?.(i + 1, args.sessions);
    if (d.kind === "not-applicable") {
      result.notApplicable[d.reason] = (result.notApplicable[d.reason] ?? 0) + 1;
      continue;
    }
    if (d.kind !== "reference-failed") result.reads += d.reads;
    if (d.kind === "same") {
      result.alternativeDiffs += d.alternativeDiffs.length;
      continue;
    }
    if (d.kind === "reference-failed" || args.shrinkBudget === 0) {
      result.found = { session: i, originalSteps: vector.steps.length, minimiseRuns: 0, diff: d };
      return result;
    }
    // keep a candidate only when it fails the same way: a difference stays a difference
    let last: Failure = d;
    const m = await minimiseSession(vector, async (c) => {
      const cd = await diffSession(scenarioInput(c), port, `${title}, minimised`, expectAs);
      if (cd.kind !== d.kind) return false;
      last = cd;
      return true;
    }, { budget: args.shrinkBudget, sanitize: sanitizeScenario });
    // the outcome on the minimised session itself (the last failing candidate may be another)
    const final = await diffSession(
      scenarioInput(m.vector),
      port,
      `${title}, minimised`,
      expectAs,
    );
    result.found = {
      session: i,
      originalSteps: vector.steps.length,
      minimiseRuns: m.runs,
      diff: final.kind === "same" || final.kind === "not-applicable" ? last : final,
    };
    return result;
  }
  return result;
}

function oneLine(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > 400 ? `${text.slice(0, 397)}...` : text;
}

/**
 * The report as printed: the first difference with its minimised session, then the counts.
 *
 * @example
 * ```ts ignore
 * import { formatDifferential } from "./differential.ts";
 * formatDifferential(args, { seed: 7, sessions: 30, reads: 512, alternativeDiffs: 0,
 *   notApplicable: {} });
 * // "seed 7, port: ./my-port\n30 sessions, 512 reads compared, 0 not applicable, 0 differences"
 * ```
 */
export function formatDifferential(args: DifferentialArgs, r: DifferentialResult): string {
  const out: string[] = [];
  const f = r.found;
  const again = `deno task conformance --random ${args.sessions} --seed ${r.seed >>> 0} --cmd ${
    JSON.stringify(args.cmd)
  }`;
  if (f !== undefined) {
    const d = f.diff;
    if (d.kind === "reference-failed") {
      out.push(
        `session ${f.session}: the reference itself could not run it (a generator problem, ` +
          `not the port's): ${d.reason}`,
      );
    } else {
      const steps = d.vector.steps.length;
      const shrunk =
        `minimised from ${f.originalSteps} to ${steps} steps in ${f.minimiseRuns} runs`;
      if (d.kind === "port-failed") {
        const ops = [...new Set(d.vector.steps.map((s) => s.op))].join(", ");
        out.push(
          `session ${f.session}: the port could not run it (${shrunk}): ${d.reason}`,
          `  its steps: ${ops} (a step the port does not support? --no-tools, --no-symlinks and ` +
            `--no-in-flight leave some out)`,
        );
      } else {
        const s = d.step === undefined ? undefined : d.vector.steps[d.step];
        const at = s === undefined || s.op !== "read"
          ? "the number of results"
          : `step ${d.step} (read ${s.path})`;
        out.push(
          `session ${f.session}: first differing read: ${at} (${shrunk})`,
          `  reference: ${oneLine(d.reference ?? "(no result)")}`,
          `  port:      ${oneLine(d.port ?? "(no result)")}`,
          ...d.problems.flatMap((p) => p.split("\n").map((l) => `  ${l}`)),
        );
      }
      out.push(
        "the minimised session as a scenario vector (its expectations are the reference's answers):",
        JSON.stringify(d.vector, null, 2),
      );
      if (args.out !== undefined) out.push(`written to ${args.out}`);
    }
    out.push(`reproduce: ${again}`);
  }
  if (r.alternativeDiffs > 0) {
    out.push(
      `${r.alternativeDiffs} reads answered with an alternative diff that applies (SPEC §10)`,
    );
  }
  const reasons = Object.entries(r.notApplicable).sort((a, b) => b[1] - a[1]);
  const notApplicable = reasons.reduce((n, [, c]) => n + c, 0);
  for (const [reason, count] of reasons) {
    out.push(
      `not applicable to the port (not compared): ${count} session${
        count === 1 ? "" : "s"
      }: ${reason}`,
    );
  }
  if (notApplicable > 0 && notApplicable === r.sessions) {
    out.push(
      "nothing compared: the port declared every session not applicable (--no-tools, " +
        "--no-symlinks and --no-in-flight leave some steps out)",
    );
  }
  const differences = f === undefined ? 0 : 1;
  out.push(
    `seed ${r.seed >>> 0}, port: ${args.cmd}`,
    `${r.sessions} sessions, ${r.reads} reads compared, ${notApplicable} not applicable, ${differences} difference${
      differences === 1 ? "" : "s"
    }`,
  );
  return out.join("\n");
}

/**
 * The command line: parses `argv`, runs, prints, and returns the exit code
 * (0 no difference, 1 a difference, a session the port could not run or
 * nothing compared because every session was not applicable, 2 bad
 * arguments or a session the reference could not run).
 *
 * @example
 * ```ts ignore
 * import { main } from "./differential.ts";
 * Deno.exit(await main(["--random", "30", "--cmd", "./my-port"]));
 * ```
 */
export async function main(argv: readonly string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(DIFFERENTIAL_USAGE);
    return 0;
  }
  let args: DifferentialArgs;
  try {
    args = parseDifferentialArgs(argv);
  } catch (e) {
    if (!(e instanceof DifferentialArgsError)) throw e;
    console.error(`${e.code}: ${e.message}\n${DIFFERENTIAL_USAGE}`);
    return 2;
  }
  const tty = Deno.stderr.isTerminal();
  const enc = new TextEncoder();
  const r = await runDifferential(args, (done, total) => {
    if (tty) Deno.stderr.writeSync(enc.encode(`\r\x1b[K${done}/${total} sessions`));
  });
  if (tty) Deno.stderr.writeSync(enc.encode("\r\x1b[K"));
  const d = r.found?.diff;
  if (args.out !== undefined && d !== undefined && d.kind !== "reference-failed") {
    writeFileSync(args.out, JSON.stringify(d.vector, null, 2) + "\n");
  }
  console.log(formatDifferential(args, r));
  if (r.found === undefined) {
    const none = Object.keys(r.notApplicable).length > 0 && r.reads === 0;
    return none ? 1 : 0;
  }
  return r.found.diff.kind === "reference-failed" ? 2 : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
