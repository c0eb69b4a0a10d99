// runOracle: generate sessions, run each through a port in a fresh temporary
// directory, check the outputs, and shrink a few counterexamples (first with
// fast-check from the failing run's path, then by dropping single steps and
// unused files) into small scenario vectors.
import fc from "fast-check";
import type { ScenarioOutput } from "../../../../src/conformance/session_simulator.ts";
import type { Scenario } from "../../../../src/conformance/vector_schema.ts";
import {
  addCounts,
  type Anomaly,
  type AnswerCounts,
  type CheckReport,
  checkScenario,
  type UnsafeAnswer,
  zeroCounts,
} from "./checker.ts";
import { namedIn } from "./commands.ts";
import { linkTargetName, nameOf } from "./fs_model.ts";
import {
  type ASession,
  compileSession,
  type GeneratorOptions,
  sanitizeScenario,
  sessionArb,
} from "./generator.ts";

/**
 * What a port's `prepare` makes of a generated vector: the vector it can run
 * (steps it cannot run dropped) and how many steps it dropped, by reason.
 */
export interface Prepared {
  vector: Scenario;
  dropped: Record<string, number>;
}

/**
 * A port: runs one scenario vector in `cwd` (empty) with `home` for `~`. A
 * port that cannot run every generated step (OpenCode) has `prepare`: the
 * oracle runs and checks the prepared vector, and counts what was dropped.
 */
export type Port =
  & ((vector: Scenario, cwd: string, home: string) => Promise<ScenarioOutput>)
  & { prepare?: (vector: Scenario) => Prepared };

/** An unsafe answer found in one generated session. */
export interface UnsafeFinding extends UnsafeAnswer {
  /** Index of the generated session. */
  session: number;
}

/** A shrunk failing session. */
export interface Counterexample {
  /** The category it was shrunk for. */
  category: string;
  /** Index of the generated session it came from. */
  session: number;
  /** The shrunk vector (a regression vector once expectations are filled in). */
  vector: Scenario;
  /** The unsafe answers the port gives on it. */
  unsafe: UnsafeAnswer[];
}

/** A port that threw (the vector could not run). */
export interface PortError {
  session: number;
  message: string;
  vector: Scenario;
}

/** Progress after each session. */
export interface OracleProgress {
  done: number;
  total: number;
  reads: number;
  cachedAnswers: number;
  unsafe: number;
}

/** Options of {@linkcode runOracle}. */
export interface OracleOptions {
  port: Port;
  /** Sessions to generate. */
  sessions: number;
  /** fast-check seed. */
  seed: number;
  onProgress?: (p: OracleProgress) => void;
  /** Generator switches (symlinks default to what the schema supports). */
  generator?: GeneratorOptions;
  /** Counterexamples to shrink, one per category, in order of discovery (default 3). */
  shrink?: number;
  /** Port runs allowed per shrink (default 400). */
  shrinkBudget?: number;
  /**
   * Run only the sessions with these indices (0-based, as counterexamples and
   * `unsafe[].session` name them) among the `sessions` generated: a flagged
   * session of a long run checked again on its own.
   */
  only?: readonly number[];
}

/** What {@linkcode runOracle} found. */
export interface OracleResult extends AnswerCounts {
  seed: number;
  sessions: number;
  unsafe: UnsafeFinding[];
  /** Sessions whose port threw. */
  errors: PortError[];
  /** Oddities that are not safety problems. */
  anomalies: (Anomaly & { session: number })[];
  counterexamples: Counterexample[];
  /** Steps the port's `prepare` dropped, by reason (none for a port without it). */
  dropped: Record<string, number>;
  /** Sessions that lost at least one step to `prepare`. */
  sessionsWithDrops: number;
  /** Steps of the generated sessions, before `prepare` dropped any. */
  steps: number;
}

/** The outcome of running one vector through a port. */
export type SessionOutcome =
  | ({ ok: true } & CheckReport)
  | { ok: false; error: string };

/** Runs one vector through a port in fresh temporary directories and checks it. */
export async function runSession(port: Port, vector: Scenario): Promise<SessionOutcome> {
  if (port.prepare !== undefined) vector = port.prepare(vector).vector;
  const cwd = await Deno.makeTempDir({ prefix: "readcache-oracle-" });
  const home = await Deno.makeTempDir({ prefix: "readcache-oracle-home-" });
  try {
    const out = await port(structuredClone(vector), cwd, home);
    return { ok: true, ...checkScenario(vector, out) };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  } finally {
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
}

function seedTag(seed: number): string {
  return String(seed >>> 0);
}

const hasCategory = (o: SessionOutcome, category: string) =>
  o.ok && o.unsafe.some((u) => u.category === category);

/** Generates, runs and checks `sessions` sessions; shrinks a few counterexamples. */
export async function runOracle(options: OracleOptions): Promise<OracleResult> {
  const { port, sessions, seed } = options;
  const arb = sessionArb(options.generator);
  const samples = sessions > 0 ? fc.sample(arb, { seed, numRuns: sessions }) : [];
  const result: OracleResult = {
    ...zeroCounts(),
    seed,
    sessions: 0,
    unsafe: [],
    errors: [],
    anomalies: [],
    counterexamples: [],
    dropped: {},
    sessionsWithDrops: 0,
    steps: 0,
  };
  const firstByCategory = new Map<string, number>();
  const only = options.only === undefined ? undefined : new Set(options.only);
  for (const [i, s] of samples.entries()) {
    if (only !== undefined && !only.has(i)) continue;
    const vector = compileSession(s, `oracle-${seedTag(seed)}-${i}`, options.generator);
    result.steps += vector.steps.length;
    if (port.prepare !== undefined) {
      const { dropped } = port.prepare(vector);
      if (Object.keys(dropped).length > 0) result.sessionsWithDrops++;
      for (const [why, n] of Object.entries(dropped)) {
        result.dropped[why] = (result.dropped[why] ?? 0) + n;
      }
    }
    const o = await runSession(port, vector);
    result.sessions++;
    if (!o.ok) {
      result.errors.push({ session: i, message: o.error, vector });
    } else {
      addCounts(result, o);
      for (const u of o.unsafe) {
        result.unsafe.push({ ...u, session: i });
        if (!firstByCategory.has(u.category)) firstByCategory.set(u.category, i);
      }
      for (const a of o.anomalies) result.anomalies.push({ ...a, session: i });
    }
    options.onProgress?.({
      done: only === undefined ? i + 1 : result.sessions,
      total: only === undefined ? sessions : only.size,
      reads: result.reads,
      cachedAnswers: result.cachedAnswers,
      unsafe: result.unsafe.length,
    });
  }
  const toShrink = [...firstByCategory].slice(0, options.shrink ?? 3);
  for (const [category, session] of toShrink) {
    result.counterexamples.push(
      await shrinkCounterexample({
        port,
        seed,
        session,
        category,
        generator: options.generator,
        budget: options.shrinkBudget ?? 400,
        fallback: samples[session],
      }),
    );
  }
  return result;
}

/** Options of {@linkcode shrinkCounterexample}. */
export interface ShrinkOptions {
  port: Port;
  seed: number;
  /** Index of the failing generated session. */
  session: number;
  /** Keep only shrinks that still give an unsafe answer of this category. */
  category: string;
  generator?: GeneratorOptions;
  /** Port runs allowed (fast-check phase and step-dropping phase each). */
  budget: number;
  /** The session itself, used when fast-check cannot replay it. */
  fallback: ASession;
}

/**
 * Shrinks a failing session: fast-check replays it from its path and shrinks
 * the abstract session, then single steps and unused files are dropped from
 * the compiled vector while the category still shows up.
 */
export async function shrinkCounterexample(o: ShrinkOptions): Promise<Counterexample> {
  const id = `oracle-${o.category.replace(/[^a-z0-9]+/g, "-")}-${seedTag(o.seed)}-${o.session}`;
  let runs = 0;
  let best: ASession = o.fallback;
  const prop = fc.asyncProperty(sessionArb(o.generator), async (s) => {
    if (runs >= o.budget) return true;
    runs++;
    const failing = hasCategory(
      await runSession(o.port, compileSession(s, id, o.generator)),
      o.category,
    );
    if (failing) best = s;
    return !failing;
  });
  await fc.check(prop, { seed: o.seed, path: String(o.session), numRuns: 1 });
  let vector = compileSession(best, id, o.generator);
  vector = await dropSteps(o.port, vector, o.category, o.budget);
  vector = dropUnusedFiles(vector);
  if (o.port.prepare !== undefined) vector = o.port.prepare(vector).vector;
  const final = await runSession(o.port, vector);
  const unsafe = final.ok ? final.unsafe : [];
  const first = unsafe.find((u) => u.category === o.category);
  vector.title = first === undefined
    ? `oracle counterexample (${o.category})`
    : `oracle: ${o.category} at step ${first.step}: ${first.reason}`;
  return { category: o.category, session: o.session, vector, unsafe };
}

async function dropSteps(
  port: Port,
  vector: Scenario,
  category: string,
  budget: number,
): Promise<Scenario> {
  let cur = vector;
  let runs = 0;
  let changed = true;
  while (changed && runs < budget) {
    changed = false;
    for (let i = cur.steps.length - 1; i >= 0 && runs < budget; i--) {
      if (cur.steps.length <= 1) break;
      const candidate = sanitizeScenario({
        ...cur,
        steps: cur.steps.filter((_, k) => k !== i),
      });
      runs++;
      if (hasCategory(await runSession(port, candidate), category)) {
        cur = candidate;
        changed = true;
        i = Math.min(i, cur.steps.length);
      }
    }
  }
  return cur;
}

/**
 * Drops initial files no step names (directly, through `..` forms, as a link
 * target, in a shell command, or as what a search without a path searches).
 */
export function dropUnusedFiles(vector: Scenario): Scenario {
  const used = new Set<string>();
  for (const s of vector.steps) {
    if (s.op === "bash") {
      for (const n of namedIn(s.command)) used.add(n);
      // a command the oracle does not read may name a file in any form: keep what it mentions
      for (const k of Object.keys(vector.files)) if (s.command.includes(k)) used.add(k);
      continue;
    }
    if (s.op === "grep") {
      // what it searches: the file it names, or every file under the directory
      const at = nameOf(s.path ?? ".");
      for (const k of Object.keys(vector.files)) {
        if (at === "" || k === at || k.startsWith(`${at}/`)) used.add(k);
      }
      continue;
    }
    if (!("path" in s) || s.path === undefined) continue;
    const p = s.op === "read" ? s.path.replace(/:\d+(?:-\d+)?$/, "") : s.path;
    used.add(nameOf(p));
    if (s.op === "symlink") used.add(linkTargetName(nameOf(s.path), s.target));
  }
  const files = Object.fromEntries(Object.entries(vector.files).filter(([k]) => used.has(k)));
  return sanitizeScenario({ ...vector, files });
}
