// The OpenCode plugin's per-read overhead against session length (issue 27):
//
//   deno task bench:opencode [--sizes 100,1000,10000] [--reads 30] [--baseline REV] [--json]
//                            [--real SIZE [--real-reads N]]
//
// On the model of OpenCode's session store (scripts/opencode/opencode_session_model.ts) answering
// over a JSON wire (what the SDK does over HTTP: the store serialises, the plugin parses), a
// session of SIZE messages with realistic tool outputs (history.ts) is loaded, a fresh plugin
// starts, and the model makes reads of files it read before, one step each (every fourth starts a
// new turn; every third step reads two files in one message). What is timed is the plugin's
// `tool.execute.after` hook for `read`: everything the plugin adds to a read (fetching and
// converting the session, replaying it, reading the file, deciding, storing). Its parts: `fetch`,
// the time inside the client's `session.messages` and `session.get` (OpenCode's work: query and
// serialise, and the plugin's parse), and the plugin's own work (the rest). The store delivers its
// events to the plugin's `event` hook as OpenCode does; their cost is reported per read.
//
// The first read after the plugin starts fetches and converts the whole session (`first`); the
// table's median and p95 are of the reads after it. An untimed pass at the smallest size runs
// first (compiling the code). `--baseline REV` runs the plugin as committed
// in REV too (extracted with `git archive`), on the same sessions, for before/after figures.
// `--real SIZE` also runs the real OpenCode binary (real.ts) with a session of SIZE messages.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type ModelEvent,
  type ModelMessage,
  OpenCodeSessionStore,
} from "../../scripts/opencode/opencode_session_model.ts";
import type { OpenCodeClientLike, ToolAfterOutput } from "../../src/adapters/opencode/plugin.ts";
import { type RealRead, runReal } from "./real.ts";
import {
  generateHistory,
  makeProject,
  openCodeReadOutput,
  type PluginFactory,
  type Project,
  random,
  readMetadata,
} from "./history.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");

/** Command-line options. */
export interface BenchArgs {
  sizes: number[];
  reads: number;
  baseline?: string;
  json: boolean;
  real?: number;
  realReads: number;
}

export function parseArgs(args: string[]): BenchArgs {
  const o: BenchArgs = { sizes: [100, 1000, 10000], reads: 30, json: false, realReads: 20 };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const next = () => {
      const v = args[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--sizes") o.sizes = next().split(",").map((s) => Number(s.replaceAll("_", "")));
    else if (a === "--reads") o.reads = Number(next());
    else if (a === "--baseline") o.baseline = next();
    else if (a === "--json") o.json = true;
    else if (a === "--real") o.real = Number(next());
    else if (a === "--real-reads") o.realReads = Number(next());
    else throw new Error(`unknown option ${a}`);
  }
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

/** Loads a session of `size` messages, starts `plugin`, times `reads` reads. */
export async function runModel(
  plugin: PluginFactory,
  project: Project,
  size: number,
  reads: number,
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
  const hooks = await plugin({})({ client, directory: project.dir });
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
  "| messages | plugin   | first read | median | p95 | fetch (median) | plugin own (median) | " +
  "reads fetching every message | messages fetched per read after the first |",
  "| -------- | -------- | ---------- | ------ | --- | -------------- | ------------------- | " +
  "---------------------------- | ----------------------------------------- |",
];

/** The real binary's row for one variant. */
export function realRow(variant: string, size: number, reads: RealRead[]): string {
  const [first, ...rest] = reads;
  const ms = rest.map((r) => r.ms);
  const own = rest.map((r) => r.ms - r.fetchMs);
  const statsOf = (r: RealRead | undefined) => r?.stats?.find((s) => s.session === r.session);
  const last = statsOf(reads.at(-1));
  const full = last === undefined ? reads.length : last.full;
  const fetched0 = statsOf(first)?.fetched;
  const perRead = last === undefined || fetched0 === undefined
    ? `${size.toLocaleString("en-US")} and more (every message)`
    : ((last.fetched - fetched0) / rest.length).toFixed(1);
  const cells = [
    size.toLocaleString("en-US").padStart(6),
    variant.padEnd(8),
    f1(first.ms).padStart(7),
    f1(median(ms)).padStart(7),
    f1(quantile(ms, 0.95)).padStart(7),
    f1(median(rest.map((r) => r.fetchMs))).padStart(7),
    f1(median(own)).padStart(7),
    `${full}/${reads.length}`,
    perRead,
  ];
  return `| ${cells.join(" | ")} |`;
}

export const HEADER = [
  "| messages | plugin   | first read | median | p95 | fetch (median) | plugin own (median) | events/read | cached |",
  "| -------- | -------- | ---------- | ------ | --- | -------------- | ------------------- | ----------- | ------ |",
];

if (import.meta.main) {
  const args = parseArgs(Deno.args);
  const current = (await import("../../src/adapters/opencode/plugin.ts")).createReadcachePlugin;
  const variants: [string, PluginFactory][] = [["current", current]];
  if (args.baseline !== undefined) {
    variants.push([args.baseline.slice(0, 8), await pluginAt(args.baseline)]);
  }
  const project = await makeProject(current);
  const results: Record<string, RunResult[]> = {};
  // an untimed pass first, so that the first size measured does not pay for compiling the code
  for (const [, plugin] of variants) await runModel(plugin, project, Math.min(...args.sizes), 10);
  for (const size of args.sizes) {
    for (const [name, plugin] of variants) {
      const r = await runModel(plugin, project, size, args.reads);
      (results[name] ??= []).push(r);
      if (!args.json) {
        console.error(
          `  ${name} ${size}: first ${f1(r.first)} ms, median ${f1(median(r.reads))} ms`,
        );
      }
    }
  }
  const cpu = (() => {
    try {
      return /model name\s*:\s*(.*)/.exec(Deno.readTextFileSync("/proc/cpuinfo"))?.[1] ?? "?";
    } catch {
      return "?";
    }
  })();
  const real: Record<string, RealRead[]> = {};
  let realSkip: string | undefined;
  if (args.real !== undefined) {
    for (const [name, plugin] of variants) {
      const rev = name === "current" ? undefined : args.baseline;
      const r = await runReal(plugin, args.real, args.realReads, rev);
      if ("skip" in r) {
        realSkip = r.skip;
        break;
      }
      real[name] = r.reads;
      if (!args.json) {
        console.error(
          `  ${name} real ${args.real}: ${r.reads.length} reads in ${r.seconds.toFixed(0)} s`,
        );
      }
    }
  }
  if (args.json) {
    console.log(JSON.stringify({ cpu, deno: Deno.version.deno, results, real, realSkip }, null, 2));
  } else {
    console.log(
      `\nOpenCode plugin, per-read overhead (ms; the read hook), session-store model over JSON, ` +
        `${args.reads} reads after the first; ${navigator.hardwareConcurrency} cores, ${cpu}, ` +
        `Deno ${Deno.version.deno}\n`,
    );
    console.log(HEADER.join("\n"));
    for (const [name] of variants) for (const line of rows(name, results[name])) console.log(line);
    if (args.real !== undefined) {
      console.log(
        `\nThe same with the real OpenCode binary (opencode serve, the plugin called back over HTTP), ` +
          `${args.real.toLocaleString("en-US")} messages:\n`,
      );
      if (realSkip !== undefined) console.log(`skipped: ${realSkip}`);
      else {
        console.log(REAL_HEADER.join("\n"));
        for (const [name] of variants) console.log(realRow(name, args.real, real[name]));
      }
    }
  }
  await Deno.remove(project.dir, { recursive: true });
}
