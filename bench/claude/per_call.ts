// The Claude Code host's own time per hook call against transcript length :
//
//   deno task bench:claude [--sizes 100,1000,10000] [--reads 40] [--json] [--e2e N]
//
// A session is written the way Claude Code writes it (scripts/claude/transcript_writer.ts): per
// step an assistant row with one Read (or, every fifth step, a Bash call), its result row (for a
// Read: the result the host answered, as Claude Code stores the replacement), and the bookkeeping
// rows Claude Code adds (request blobs, hook attachments), driven through one host to SIZE rows.
// Then reads of files read before are timed: `first` is the first call of a fresh host (it
// indexes the whole transcript), the median and p95 are of the calls after it, each after the
// rows of the step before were appended (what a long-lived service does at every call). What is
// timed is `ClaudeCodeHost.handle`: reading the appended rows, the branch, the replay, reading the
// file, deciding, storing. `--e2e N` also runs the real Claude Code binary (pinned, offline, a fake
// Messages API on loopback; scripts/claude/claude_bin.ts installs it) through N tool calls (reads
// of 12 files, every fifth a Bash command) with readcache's hooks and service and N without any,
// paired (rounds of ten calls taking turns), and reports the median gap between the model requests
// Claude Code sends: the end-to-end cost of a tool call, and what the hooks add to it.

import { ClaudeCodeHost } from "../../src/adapters/claude/host.ts";
import { MemoryObjectStore } from "../../src/core/object_store.ts";
import { ClaudeTranscriptWriter } from "../../scripts/claude/transcript_writer.ts";
import { claudeBinary } from "../../scripts/claude/claude_bin.ts";
import { startClaudeSandbox } from "../../scripts/claude/claude_session.ts";
import { startClaudeCodeService } from "../../src/adapters/claude/service.ts";

function arg(name: string, fallback: string): string {
  const i = Deno.args.indexOf(name);
  return i >= 0 && i + 1 < Deno.args.length ? Deno.args[i + 1] : fallback;
}
if (Deno.args.includes("--help") || Deno.args.includes("-h")) {
  console.log("usage: deno task bench:claude [--sizes 100,1000,10000] [--reads 40] [--json]");
  Deno.exit(0);
}
const sizes = arg("--sizes", "100,1000,10000").split(",").map(Number);
const reads = Number(arg("--reads", "40"));
const json = Deno.args.includes("--json");
const e2e = Number(arg("--e2e", "0"));

interface Row {
  rows: number;
  bytes: number;
  firstMs: number;
  medianMs: number;
  p95Ms: number;
  cached: number;
}

const pct = (xs: number[], p: number) => {
  const s = xs.toSorted((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};

async function runSize(size: number): Promise<Row> {
  const dir = await Deno.makeTempDir({ prefix: "readcache-bench-claude-" });
  try {
    const w = await ClaudeTranscriptWriter.create(dir, 12);
    const store = new MemoryObjectStore();
    const host = new ClaudeCodeHost({ storeFor: () => store });
    let step = 0;
    while (w.rows < size) await w.step(host, step++);
    const fresh = new ClaudeCodeHost({ storeFor: () => store });
    const times: number[] = [];
    let cached = 0;
    let first = 0;
    for (let i = 0; i <= reads; i++) {
      const call = await w.pendingRead(step++);
      const t0 = performance.now();
      const out = await fresh.handle(call.input);
      const ms = performance.now() - t0;
      if (i === 0) first = ms;
      else times.push(ms);
      const file = (out.hookSpecificOutput?.updatedToolOutput as { file?: { startLine?: number } })
        ?.file;
      if (i > 0 && file?.startLine !== undefined && file.startLine <= 0) cached++;
      await call.finish(out);
    }
    return {
      rows: w.rows,
      bytes: (await Deno.stat(w.path)).size,
      firstMs: first,
      medianMs: pct(times, 0.5),
      p95Ms: pct(times, 0.95),
      cached,
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Median gap between model requests over `calls` tool calls with readcache's hooks and `calls`
 * without, measured paired: two sandboxes (one with the hooks as `readcache claude install` writes
 * them and the service behind them, one with no hooks) take turns, a round of ten calls each, the
 * one to go first alternating, each round continuing its sandbox's session (`--continue`), so that
 * both see the same machine at the same time and re-reads happen.
 */
async function runE2e(
  calls: number,
): Promise<{ plainMs: number; hookMs: number; cached: number; reads: number }> {
  const found = await claudeBinary();
  if ("skip" in found) throw new Error(found.skip);
  const hooked = await startClaudeSandbox(found.bin, "readcache");
  const plain = await startClaudeSandbox(found.bin);
  const service = await startClaudeCodeService({
    dir: hooked.serviceDir,
    storeFor: () => new MemoryObjectStore(),
  });
  const gaps = new Map([[hooked, [] as number[]], [plain, [] as number[]]]);
  try {
    for (const s of [hooked, plain]) {
      for (let f = 0; f < 12; f++) {
        const lines = Array.from({ length: 200 }, (_, i) => `file ${f} line ${i + 1}: some code`);
        await Deno.writeTextFile(`${s.work}/f${f}.ts`, lines.join("\n") + "\n");
      }
    }
    const perRound = 10;
    for (let round = 0, done = 0; done < calls; round++, done += perRound) {
      const order = round % 2 === 0 ? [hooked, plain] : [plain, hooked];
      for (const s of order) {
        for (let i = done; i < Math.min(calls, done + perRound); i++) {
          s.api.queue.push({
            calls: [
              i % 5 === 4
                ? { name: "Bash", input: { command: "true" } }
                : { name: "Read", input: { file_path: `${s.work}/f${(i * 5) % 12}.ts` } },
            ],
          });
        }
        const before = s.api.arrivals.length;
        const r = await s.run(round === 0 ? ["-p", "go"] : ["--continue", "-p", "go on"]);
        if (r.code !== 0) throw new Error(r.stderr);
        // the gaps between the requests that follow a tool result in this round
        const t = s.api.arrivals.slice(before);
        gaps.get(s)!.push(...t.slice(2).map((x, k) => x - t[k + 1]));
      }
    }
    const results = [...hooked.toolResults().values()];
    return {
      plainMs: pct(gaps.get(plain)!, 0.5),
      hookMs: pct(gaps.get(hooked)!, 0.5),
      cached: results.filter((x) => x.startsWith("0\t")).length,
      reads: hooked.api.calls.filter((c) => c.name === "Read").length,
    };
  } finally {
    await hooked.close();
    await plain.close();
    await service.close();
  }
}

await runSize(100); // untimed: compiles the code
const out: Row[] = [];
for (const size of sizes) out.push(await runSize(size));
const end = e2e > 0 ? await runE2e(e2e) : undefined;
if (json) {
  console.log(JSON.stringify(end === undefined ? out : { perCall: out, e2e: end }, null, 2));
} else {
  const cpu = Deno.readTextFileSync("/proc/cpuinfo").match(/model name\s*:\s*(.*)/)?.[1] ?? "?";
  console.log(
    `Claude Code host, own time per hook call (${navigator.hardwareConcurrency} cores, ${cpu})`,
  );
  console.log("rows      transcript   first     median    p95       cached");
  for (const r of out) {
    console.log(
      [
        String(r.rows).padEnd(9),
        `${(r.bytes / 1e6).toFixed(1)} MB`.padEnd(12),
        `${r.firstMs.toFixed(1)} ms`.padEnd(9),
        `${r.medianMs.toFixed(2)} ms`.padEnd(9),
        `${r.p95Ms.toFixed(2)} ms`.padEnd(9),
        `${r.cached}/${reads}`,
      ].join(" "),
    );
  }
  const a = out[0], b = out.at(-1)!;
  console.log(
    `median at ${b.rows} rows / at ${a.rows} rows: ${(b.medianMs / a.medianMs).toFixed(2)}x`,
  );
  if (end !== undefined) {
    console.log(
      `real binary, ${e2e} tool calls each way, paired: median ${
        end.plainMs.toFixed(1)
      } ms per call without the hooks, ` +
        `${end.hookMs.toFixed(1)} ms with them (+${(end.hookMs - end.plainMs).toFixed(1)} ms); ` +
        `${end.cached} of ${end.reads} reads answered from the cache`,
    );
  }
}
