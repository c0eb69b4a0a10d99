// Output-level safety oracle: generates random pi sessions, runs them
// through a port and checks every cached answer against what the model was
// shown (tests/pi/support/oracle/). Prints, per port, the shrunk counterexamples
// as scenario vector JSON and a final line
// `N sessions, N reads, N cached answers, N unsafe` (after a line with the
// write calls and the cached answers on files the model wrote, one with the
// edit calls and the cached answers on files the model edited, and one with the
// bash and grep calls and the cached answers on files they showed or changed);
// exits 1 when any answer is unsafe (2 when a port could not run a generated vector).
//
//   deno task oracle [--sessions N] [--seed S] [--port reference|pi|pi-no-events|opencode|claude-code|all]
//                    [--shrink K] [--out DIR] [--no-symlinks] [--no-in-flight] [--no-tools]
//                    [--root DIR] [--only I,J,...]
//
// --only runs only the generated sessions with these indices (as "unsafe sessions" and the
// counterexamples name them), e.g. to check flagged sessions of a long run again.
//
// --no-tools generates no bash or grep steps.
//
// Progress goes to stderr: a status line on a terminal, else a line at each tenth of the run.
//
// --root runs the runners of another copy of the repository (a directory with
// src/ and scripts/, e.g. `git archive <rev> src scripts | tar -x -C DIR`).
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  loadPorts,
  PORT_NAMES,
  type PortName,
  PORTS,
} from "../../tests/pi/support/oracle/ports.ts";
import { type OracleResult, runOracle } from "../../tests/pi/support/oracle/run.ts";

const USAGE =
  "usage: deno task oracle [--sessions N] [--seed S] [--port reference|pi|pi-no-events|opencode|claude-code|all] " +
  "[--shrink K] [--out DIR] [--no-symlinks] [--no-in-flight] [--no-tools] [--root DIR] [--only I,J,...]";

function fail(message: string): never {
  console.error(`${message}\n${USAGE}`);
  Deno.exit(2);
}

const { values } = parseArgs({
  args: Deno.args,
  options: {
    sessions: { type: "string", default: "200" },
    seed: { type: "string" },
    port: { type: "string", default: "all" },
    shrink: { type: "string", default: "3" },
    out: { type: "string" },
    "no-symlinks": { type: "boolean", default: false },
    "no-in-flight": { type: "boolean", default: false },
    "no-tools": { type: "boolean", default: false },
    root: { type: "string" },
    only: { type: "string" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  Deno.exit(0);
}
const int = (name: string, v: string): number => {
  if (!/^-?\d+$/.test(v)) fail(`--${name} must be an integer, got '${v}'`);
  return Number(v);
};
const sessions = int("sessions", values.sessions);
const seed = values.seed === undefined ? (Date.now() ^ (Math.random() * 2 ** 31)) | 0 : int(
  "seed",
  values.seed,
);
const shrink = int("shrink", values.shrink);
const only = values.only === undefined
  ? undefined
  : values.only.split(",").map((v) => int("only", v.trim()));
if (only?.some((i) => i < 0 || i >= sessions)) {
  fail(`--only takes session indices from 0 to ${sessions - 1}`);
}
const ports: PortName[] = values.port === "all"
  ? [...PORT_NAMES]
  : PORT_NAMES.includes(values.port as PortName)
  ? [values.port as PortName]
  : fail(`unknown port '${values.port}'`);
const tty = Deno.stderr.isTerminal();
const enc = new TextEncoder();

function progress(port: string, p: { done: number; total: number; unsafe: number }): void {
  if (!tty) {
    // a log (CI, nohup): a line at each tenth of the run
    const every = Math.max(1, Math.round(p.total / 10));
    if (p.done % every === 0 && p.done < p.total) {
      console.error(`[${port}] ${p.done}/${p.total} sessions, ${p.unsafe} unsafe`);
    }
    return;
  }
  Deno.stderr.writeSync(
    enc.encode(`\r\x1b[K[${port}] ${p.done}/${p.total} sessions, ${p.unsafe} unsafe`),
  );
}

function report(port: PortName, r: OracleResult, seconds: number): void {
  const again = `deno task oracle --port ${port} --sessions ${sessions} --seed ${seed}` +
    (values.root === undefined ? "" : ` --root ${values.root}`) +
    (only === undefined ? "" : ` --only ${only.join(",")}`);
  if (r.errors.length > 0) {
    console.log(`${r.errors.length} generated vectors could not run on ${port}; first:`);
    console.log(`  ${r.errors[0].message}`);
    console.log(JSON.stringify(r.errors[0].vector, null, 2));
  }
  if (r.unsafe.length > 0) {
    const byCategory = new Map<string, number>();
    for (const u of r.unsafe) byCategory.set(u.category, (byCategory.get(u.category) ?? 0) + 1);
    console.log(
      `unsafe answers by category: ${[...byCategory].map(([c, n]) => `${c} ${n}`).join(", ")}`,
    );
    const flagged = [...new Set(r.unsafe.map((u) => u.session))];
    console.log(
      `unsafe sessions: ${flagged.join(",")} (check them again alone: --only ${flagged.join(",")})`,
    );
    for (const c of r.counterexamples) {
      console.log(`\ncounterexample (${c.category}, from session ${c.session}, shrunk):`);
      for (const u of c.unsafe) {
        console.log(`  step ${u.step} ${u.path}: ${u.category}: ${u.reason}`);
      }
      console.log(JSON.stringify(c.vector, null, 2));
      if (values.out !== undefined) {
        mkdirSync(values.out, { recursive: true });
        const file = join(values.out, `${c.vector.id}.json`);
        writeFileSync(file, JSON.stringify(c.vector, null, 2) + "\n");
        console.log(`written to ${file}`);
      }
    }
    console.log(`\nreproduce: ${again}`);
  }
  if (r.anomalies.length > 0) {
    const a = r.anomalies[0];
    console.log(
      `${r.anomalies.length} anomalies (not safety problems); first: session ${a.session} ` +
        `step ${a.step}: ${a.reason}`,
    );
  }
  if (PORTS[port].prepare !== undefined) {
    const by = Object.entries(r.dropped).map(([why, n]) => `${why} ${n}`).join(", ");
    const total = Object.values(r.dropped).reduce((a, n) => a + n, 0);
    console.log(
      `${r.sessionsWithDrops} of ${r.sessions} sessions lost steps the ${port} port cannot run; ` +
        `${total} of ${r.steps} steps (${(100 * total / Math.max(r.steps, 1)).toFixed(1)}%) ` +
        `dropped before running and checking: ${by || "none"}`,
    );
  }
  console.log(
    `port ${port}, seed ${seed}: ${seconds.toFixed(1)} s; modes ${
      Object.entries(r.modes).map(([m, n]) => `${m} ${n}`).join(", ")
    }`,
  );
  console.log(
    `${r.writes} write calls, ${r.cachedOnWritten} cached answers on names the model wrote`,
  );
  console.log(
    `${r.edits} edit calls (${r.editsRefused} refused by pi, ${r.editsFuzzy} normalised matches, ` +
      `${r.editsUnanswered} never answered), ${r.cachedOnEdited} cached answers on names the model edited`,
  );
  console.log(
    `${r.bash} bash calls, ${r.grep} grep calls (${r.toolsStrict} results read the strictest way), ` +
      `${r.cachedAfterTool} cached answers on names a bash or grep result showed or changed`,
  );
  console.log(
    `${r.sessions} sessions, ${r.reads} reads, ${r.cachedAnswers} cached answers, ${r.unsafe.length} unsafe`,
  );
}

const portsOf = values.root === undefined ? PORTS : await loadPorts(resolve(values.root));
let unsafe = 0;
let errors = 0;
for (const port of ports) {
  const t0 = performance.now();
  const r = await runOracle({
    port: portsOf[port],
    sessions,
    seed,
    shrink,
    ...(only === undefined ? {} : { only }),
    generator: {
      ...(values["no-symlinks"] ? { symlinks: false } : {}),
      ...(values["no-in-flight"] ? { inFlight: false } : {}),
      ...(values["no-tools"] ? { tools: false } : {}),
    },
    onProgress: (p) => progress(port, p),
  });
  if (tty) Deno.stderr.writeSync(enc.encode("\r\x1b[K"));
  report(port, r, (performance.now() - t0) / 1000);
  unsafe += r.unsafe.length;
  errors += r.errors.length;
}
Deno.exit(unsafe > 0 ? 1 : errors > 0 ? 2 : 0);
