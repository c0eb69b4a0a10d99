// The OpenCode plugin's per-read cost against session length (issues 27, 39):
//
//   deno task bench:opencode [--sizes 100,1000,10000] [--reads 20] [--baseline REV] [--json]
//   deno task bench:opencode --model [--sizes ...] [--reads 30] [--baseline REV] [--json]
//
// By default, the real OpenCode binary (real.ts): `opencode serve` on 127.0.0.1 with a session of
// SIZE messages written into its database, a scripted model that re-reads files, and each size run
// twice: OpenCode's own read without the plugin ("opencode") and with it ("current"; `--baseline
// REV` adds the plugin as committed in REV). A read is timed as the model waits for it: from
// OpenCode's `tool.execute.before` to the end of `tool.execute.after` (its read tool and both
// hooks); the plugin's hook and the time it spent in OpenCode's HTTP API (`session.messages`,
// `session.get`) are reported apart. The first read of the session is reported on its own; median
// and p95 are of the reads after it. The speed goals are checked at the end (per read within
// 2x from the smallest size to the largest and within 5 ms of OpenCode's own read at the largest,
// first read <= 500 ms, p95 <= 3x median), each beside the same figure of OpenCode's own read, and
// the plugin's share is shown on its own: its hook's median and p95 at every size.
//
// `--model`: the fast mode, on the model of OpenCode's session store
// (scripts/opencode/opencode_session_model.ts) answering over a JSON wire (what the SDK does over
// HTTP: the store serialises, the plugin parses): a session of SIZE messages with realistic tool
// outputs (history.ts) is loaded, a fresh plugin starts (a long session's first read fetches it in
// the background; that fetch is let finish, untimed), and the model makes reads of files it read
// before, one step each (every fourth starts a new turn; every third step reads two files in one
// message). What is timed is the plugin's `tool.execute.after` hook for `read`. An untimed pass at
// the smallest size runs first (compiling the code). The store delivers its events to the plugin's
// `event` hook as OpenCode does; their cost is reported per read.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type ModelEvent,
  type ModelMessage,
  OpenCodeSessionStore,
} from "../../scripts/opencode/opencode_session_model.ts";
import {
  type OpenCodeClientLike,
  OpenCodeSessionCache,
  type ToolAfterOutput,
} from "../../src/adapters/opencode/plugin.ts";
import { type RealRead, type RealRun, startReal } from "./real.ts";
import {
  generateHistory,
  makeProject,
  openCodeReadOutput,
  type PluginFactory,
  type Project,
  readMetadata,
} from "./history.ts";
import { seededRandom as random } from "../../scripts/seeded_random.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");

/** Command-line options. */
export interface BenchArgs {
  sizes: number[];
  reads: number;
  baseline?: string;
  json: boolean;
  /** The model of OpenCode's store instead of the real binary. */
  model: boolean;
}

export function parseArgs(args: string[]): BenchArgs {
  const o: BenchArgs = { sizes: [100, 1000, 10000], reads: 20, json: false, model: false };
  let reads: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const next = () => {
      const v = args[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    const count = (v: string) => {
      const n = Number(v.replaceAll("_", ""));
      if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${a}: ${v} is not a positive number`);
      return n;
    };
    if (a === "--sizes") o.sizes = next().split(",").map(count);
    else if (a === "--reads") reads = count(next());
    else if (a === "--baseline") o.baseline = next();
    else if (a === "--json") o.json = true;
    else if (a === "--model") o.model = true;
    else throw new Error(`unknown option ${a}`);
  }
  o.reads = reads ?? (o.model ? 30 : 20);
  return o;
}

/** The plugin as committed in `rev` (its `src/` extracted into a temporary directory). */
export async function pluginAt(rev: string): Promise<PluginFactory> {
  const dir = await Deno.makeTempDir({ prefix: "readcache-bench-plugin-" });
  const out = await new Deno.Command("sh", {
    args: ["-c", `git -C "${REPO}" archive "${rev}" src | tar -x -C "${dir}"`],
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  const mod = await import(join(dir, "src/adapters/opencode/plugin.ts"));
  return mod.createReadcachePlugin as PluginFactory;
}

/** Timings of one run, ms. */
export interface RunResult {
  messages: number;
  first: number;
  firstFetch: number;
  reads: number[];
  fetch: number[];
  eventMs: number;
  events: number;
  cached: number;
}

const median = (xs: number[]) => quantile(xs, 0.5);
export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  return s[lo] + (s[Math.ceil(at)] - s[lo]) * (at - lo);
}

/**
 * Loads a session of `size` messages, starts `plugin`, times `reads` reads. With `follow` (this
 * checkout's plugin), a first read that fetches a long session in the background (SPEC §11.8) is
 * let finish before the timed reads, as the real bench's warm-up does: the reads made meanwhile
 * would stay OpenCode's and time nothing.
 */
export async function runModel(
  plugin: PluginFactory,
  project: Project,
  size: number,
  reads: number,
  follow = false,
): Promise<RunResult> {
  const store = new OpenCodeSessionStore(project.dir, { wire: "json" });
  const session = store.createSession();
  const history = generateHistory({
    messages: size,
    sessionID: session.id,
    directory: project.dir,
    files: project.files,
    captured: project.captured,
    id: (p) => store.newId(p),
    start: 1_600_000_000_000,
  });
  session.messages.push(...(history as unknown as ModelMessage[]));

  // wall time with a client call under way (the plugin runs two at once)
  let fetchMs = 0;
  let active = 0;
  let since = 0;
  const timed = <A, R>(f: (a: A) => Promise<R>) => async (a: A): Promise<R> => {
    if (active++ === 0) since = performance.now();
    try {
      return await f(a);
    } finally {
      if (--active === 0) fetchMs += performance.now() - since;
    }
  };
  const client: OpenCodeClientLike = {
    session: {
      messages: timed(store.client.session.messages),
      get: timed(store.client.session.get),
    },
  };
  const caches: OpenCodeSessionCache[] = [];
  const sessionCache = () => {
    const c = new OpenCodeSessionCache();
    caches.push(c);
    return c;
  };
  const hooks = await plugin(follow ? { sessionCache } : {})({ client, directory: project.dir });
  let eventMs = 0;
  let events = 0;
  const event = (hooks as { event?: (i: { event: ModelEvent }) => Promise<void> }).event;
  if (event !== undefined) {
    store.subscribe((e) => {
      const t = performance.now();
      void event({ event: e });
      eventMs += performance.now() - t;
      events++;
    });
  }

  const rnd = random(size + 11);
  const held = project.files.filter((f) => history.some((m) => JSON.stringify(m).includes(f)));
  const result: RunResult = {
    messages: size,
    first: NaN,
    firstFetch: NaN,
    reads: [],
    fetch: [],
    eventMs: 0,
    events: 0,
    cached: 0,
  };
  let step = 0;
  let done = 0;
  while (done < reads + 1) {
    if (step % 4 === 0) store.userMessage(session.id, "next");
    const m = store.assistantMessage(session.id);
    const files = Array.from(
      { length: step % 3 === 2 ? 2 : 1 },
      () => held[Math.floor(rnd() * held.length)],
    );
    const parts = files.map((f) =>
      store.toolPart(m.info.id, "read", { filePath: join(project.dir, f) })
    );
    for (const p of parts) store.run(p);
    for (let i = 0; i < parts.length && done < reads + 1; i++) {
      const file = files[i];
      const part = parts[i];
      const args = { filePath: join(project.dir, file) };
      const out: ToolAfterOutput = {
        title: file,
        output: openCodeReadOutput(project.dir, file),
        metadata: readMetadata(args.filePath, Deno.readTextFileSync(args.filePath)),
      };
      fetchMs = 0;
      const t = performance.now();
      await hooks["tool.execute.after"]!(
        { tool: "read", sessionID: session.id, callID: part.callID, args },
        out,
      );
      const ms = performance.now() - t;
      if (done === 0) {
        result.first = ms;
        result.firstFetch = fetchMs;
        // the background fetch goes a page a turn of the event loop
        for (let turn = 0; turn < 100_000 && caches.some((c) => c.stats.full < 1); turn++) {
          await new Promise((r) => setTimeout(r, 0));
        }
        eventMs = 0;
        events = 0;
      } else {
        result.reads.push(ms);
        result.fetch.push(fetchMs);
      }
      const mode = (out.metadata as { readcache?: { mode?: string } }).readcache?.mode;
      if (mode !== undefined && mode !== "full" && mode !== "baseline_fallback") result.cached++;
      store.complete(part, out.output, out.metadata, out.title);
      done++;
    }
    step++;
  }
  result.eventMs = eventMs;
  result.events = events;
  return result;
}

const f1 = (n: number) => n.toFixed(n < 10 ? 2 : 1);

/** The table's rows for runs of one variant. */
export function rows(variant: string, runs: RunResult[]): string[] {
  return runs.map((r) => {
    const own = r.reads.map((x, i) => x - r.fetch[i]);
    const perRead = r.reads.length === 0 ? 0 : r.eventMs / r.reads.length;
    return `| ${r.messages.toLocaleString("en-US").padStart(6)} | ${variant.padEnd(8)} | ` +
      `${f1(r.first).padStart(7)} | ${f1(median(r.reads)).padStart(7)} | ` +
      `${f1(quantile(r.reads, 0.95)).padStart(7)} | ${f1(median(r.fetch)).padStart(7)} | ` +
      `${f1(median(own)).padStart(7)} | ${f1(perRead).padStart(6)} | ` +
      `${String(r.cached).padStart(3)}/${r.reads.length + 1} |`;
  });
}

export const REAL_HEADER = [
  "| messages | variant  | first read | median read | p95 read | plugin hook (median) | fetch (median) | " +
  "plugin own (median) | reads fetching every message | messages fetched per read after the first | " +
  "warm-up reads (while the session was fetched in the background), median |",
  "| -------- | -------- | ---------- | ----------- | -------- | -------------------- | -------------- | " +
  "------------------- | ---------------------------- | ----------------------------------------- | " +
  "-------------------------------------------------------------------- |",
];

/** The read as the model waits for it (the hook's time for a log without the clock around it). */
const total = (r: RealRead) => r.totalMs ?? r.ms;

/** The reads timed: after the first and after the warm-up (see `RealRead.warmup`). */
function timed(reads: RealRead[]): RealRead[] {
  return reads.slice(1).filter((r) => !r.warmup);
}

/** The real binary's row for one variant ("opencode": without the plugin). */
export function realRow(variant: string, size: number, reads: RealRead[]): string {
  const [first] = reads;
  const rest = timed(reads);
  const warm = reads.filter((r) => r.warmup);
  const ms = rest.map(total);
  const statsOf = (r: RealRead | undefined) => r?.stats?.find((s) => s.session === r.session);
  const last = statsOf(reads.at(-1));
  const fetched0 = statsOf(first)?.fetched;
  const plain = variant === "opencode";
  const perRead = plain
    ? "-"
    : last === undefined || fetched0 === undefined
    ? `${size.toLocaleString("en-US")} and more (every message)`
    : ((last.fetched - fetched0) / (reads.length - 1)).toFixed(1);
  const cells = [
    size.toLocaleString("en-US").padStart(6),
    variant.padEnd(8),
    f1(total(first)).padStart(7),
    f1(median(ms)).padStart(7),
    f1(quantile(ms, 0.95)).padStart(7),
    plain ? "-" : f1(median(rest.map((r) => r.ms))).padStart(7),
    plain ? "-" : f1(median(rest.map((r) => r.fetchMs))).padStart(7),
    plain ? "-" : f1(median(rest.map((r) => r.ms - r.fetchMs))).padStart(7),
    plain ? "-" : `${last === undefined ? reads.length : last.full}/${reads.length}`,
    perRead,
    plain ? "-" : warm.length === 0 ? "0" : `${warm.length}, ${f1(median(warm.map(total)))}`,
  ];
  return `| ${cells.join(" | ")} |`;
}

/**
 * The speed goals on the real binary, as lines `ok`/`MISSED` with the figures: per read within 2x
 * from the smallest size to the largest and within 5 ms of OpenCode's own read at the largest;
 * first read <= 500 ms and p95 <= 3x median at every size. The goals on the read as a whole show
 * OpenCode's own read beside them (the same figure without the plugin), and an `info` line gives
 * the plugin's own share: its hook's median and p95 at every size.
 */
export function realGoals(
  runs: Record<string, Record<number, RealRead[]>>,
  sizes: number[],
): string[] {
  const med = (r: RealRead[]) => median(timed(r).map(total));
  const out: string[] = [];
  const check = (ok: boolean, what: string) => out.push(`${ok ? "ok    " : "MISSED"} ${what}`);
  const lo = Math.min(...sizes);
  const hi = Math.max(...sizes);
  const plugin = runs.current;
  const plain = runs.opencode;
  const goal = (what: string) => ` (goal ${what})`;
  // OpenCode's own read beside each goal on the read as a whole: what the host alone gives
  const without = (f: (r: RealRead[]) => string, size: number) =>
    plain?.[size] === undefined ? "" : `; without the plugin ${f(plain[size])}`;
  if (plugin?.[lo] !== undefined && plugin?.[hi] !== undefined && lo !== hi) {
    const ratio = med(plugin[hi]) / med(plugin[lo]);
    const plainRatio = plain?.[lo] !== undefined && plain?.[hi] !== undefined
      ? `; without the plugin ${f1(med(plain[lo]))} -> ${f1(med(plain[hi]))} ms: ${
        (med(plain[hi]) / med(plain[lo])).toFixed(2)
      }x`
      : "";
    check(
      ratio <= 2,
      `per read ${f1(med(plugin[lo]))} -> ${f1(med(plugin[hi]))} ms from ${lo} to ${hi} messages: ${
        ratio.toFixed(2)
      }x${goal("<= 2x")}${plainRatio}`,
    );
  }
  if (plugin?.[hi] !== undefined && plain?.[hi] !== undefined) {
    const d = med(plugin[hi]) - med(plain[hi]);
    check(
      d <= 5,
      `at ${hi} messages ${f1(med(plugin[hi]))} ms with the plugin, ${
        f1(med(plain[hi]))
      } ms without: ${d < 0 ? "" : "+"}${f1(d)} ms${goal("<= 5 ms")}`,
    );
  }
  const p95 = (r: RealRead[]) => quantile(timed(r).map(total), 0.95);
  const p95Ratio = (r: RealRead[]) => `${(p95(r) / med(r)).toFixed(1)}x`;
  for (const size of sizes) {
    const r = plugin?.[size];
    if (r === undefined) continue;
    check(
      total(r[0]) <= 500,
      `first read at ${size} messages ${f1(total(r[0]))} ms${goal("<= 500 ms")}`,
    );
    check(
      p95(r) <= 3 * med(r),
      `p95 at ${size} messages ${f1(p95(r))} ms, ${p95Ratio(r)} the median${goal("<= 3x")}${
        without(p95Ratio, size)
      }`,
    );
  }
  // the plugin's own share of a read: its hook (OpenCode's read runs whether or not it is there)
  const hooked = sizes.filter((size) => plugin?.[size] !== undefined);
  if (hooked.length > 0) {
    const hook = (size: number, q: number) => f1(quantile(timed(plugin[size]).map((x) => x.ms), q));
    out.push(
      `info   the plugin's hook at ${hooked.join(" / ")} messages: median ${
        hooked.map((size) => hook(size, 0.5)).join(" / ")
      } ms, p95 ${hooked.map((size) => hook(size, 0.95)).join(" / ")} ms`,
    );
  }
  return out;
}

export const HEADER = [
  "| messages | plugin   | first read | median | p95 | fetch (median) | plugin own (median) | events/read | cached |",
  "| -------- | -------- | ---------- | ------ | --- | -------------- | ------------------- | ----------- | ------ |",
];

function cpuName(): string {
  try {
    return /model name\s*:\s*(.*)/.exec(Deno.readTextFileSync("/proc/cpuinfo"))?.[1] ?? "?";
  } catch {
    return "?";
  }
}

/** The model mode (`--model`): the plugin on the model of OpenCode's session store. */
async function mainModel(args: BenchArgs, variants: [string, PluginFactory][]): Promise<void> {
  const project = await makeProject(variants[0][1]);
  const results: Record<string, RunResult[]> = {};
  // an untimed pass first, so that the first size measured does not pay for compiling the code
  const follow = (name: string) => name === "current";
  for (const [name, plugin] of variants) {
    await runModel(plugin, project, Math.min(...args.sizes), 10, follow(name));
  }
  for (const size of args.sizes) {
    for (const [name, plugin] of variants) {
      const r = await runModel(plugin, project, size, args.reads, follow(name));
      (results[name] ??= []).push(r);
      if (!args.json) {
        console.error(
          `  ${name} ${size}: first ${f1(r.first)} ms, median ${f1(median(r.reads))} ms`,
        );
      }
    }
  }
  await Deno.remove(project.dir, { recursive: true });
  if (args.json) {
    console.log(
      JSON.stringify({ mode: "model", cpu: cpuName(), deno: Deno.version.deno, results }, null, 2),
    );
    return;
  }
  console.log(
    `\nOpenCode plugin, per-read overhead (ms; the read hook), session-store model over JSON, ` +
      `${args.reads} reads after the first; ${navigator.hardwareConcurrency} cores, ${cpuName()}, ` +
      `Deno ${Deno.version.deno}\n`,
  );
  console.log(HEADER.join("\n"));
  for (const [name] of variants) for (const line of rows(name, results[name])) console.log(line);
}

/**
 * The default mode: the real OpenCode binary, without the plugin and with it, at every size, the
 * variants' timed rounds taking turns.
 */
async function mainReal(args: BenchArgs, variants: [string, PluginFactory][]): Promise<number> {
  const runs: Record<string, Record<number, RealRead[]>> = {};
  const all: [string, PluginFactory, boolean][] = [
    ["opencode", variants[0][1], true],
    ...variants.map(([n, p]) => [n, p, false] as [string, PluginFactory, boolean]),
  ];
  for (const size of args.sizes) {
    const t0 = performance.now();
    const started: [string, RealRun][] = [];
    try {
      for (const [name, plugin, plain] of all) {
        const rev = name === "current" || plain ? undefined : args.baseline;
        const r = await startReal(plugin, size, rev, { plain });
        if ("skip" in r) {
          if (args.json) console.log(JSON.stringify({ mode: "real", skip: r.skip }));
          else console.log(`skipped: ${r.skip}`);
          return 1;
        }
        started.push([name, r]);
      }
      // paired: the variants take turns, round by round, the one to go first rotating
      for (let done = 0, turn = 0; done < args.reads; done += 2, turn++) {
        for (let k = 0; k < started.length; k++) {
          await started[(turn + k) % started.length][1].round(`${done}`);
        }
      }
      for (const [name, run] of started) {
        const reads = await run.reads();
        (runs[name] ??= {})[size] = reads;
        if (!args.json) {
          const ms = timed(reads).map(total);
          console.error(
            `  ${name} ${size}: ${reads.length} reads, median ${f1(median(ms))} ms`,
          );
        }
      }
      if (!args.json) {
        console.error(`  ${size} messages: ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      }
    } finally {
      for (const [, run] of started) await run.close();
    }
  }
  const goals = realGoals(runs, args.sizes);
  if (args.json) {
    console.log(
      JSON.stringify(
        { mode: "real", cpu: cpuName(), deno: Deno.version.deno, runs, goals },
        null,
        2,
      ),
    );
    return 0;
  }
  console.log(
    `\nOpenCode's read with and without the plugin (ms; the real binary, opencode serve, the plugin ` +
      `called back over HTTP), ${args.reads} reads timed after the first and the warm-up; ` +
      `${navigator.hardwareConcurrency} cores, ${cpuName()}, Deno ${Deno.version.deno}\n`,
  );
  console.log(REAL_HEADER.join("\n"));
  for (const size of args.sizes) {
    for (const [name] of all) console.log(realRow(name, size, runs[name][size]));
  }
  console.log(`\n${goals.join("\n")}`);
  return 0;
}

if (import.meta.main) {
  let args: BenchArgs;
  try {
    args = parseArgs(Deno.args);
  } catch (e) {
    console.error(`bench:opencode: ${(e as Error).message}`);
    Deno.exit(2);
  }
  const current = (await import("../../src/adapters/opencode/plugin.ts")).createReadcachePlugin;
  const variants: [string, PluginFactory][] = [["current", current]];
  if (args.baseline !== undefined) {
    variants.push([args.baseline.slice(0, 8), await pluginAt(args.baseline)]);
  }
  if (args.model) await mainModel(args, variants);
  else Deno.exitCode = await mainReal(args, variants);
}
