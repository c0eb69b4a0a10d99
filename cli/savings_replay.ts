/**
 * What the read cache would have saved on pi sessions recorded WITHOUT it, worked out by the
 * replay of `deno task bench:real` (bench/pi/real.ts): each session's own tool calls run again
 * through pi's real tools, its SessionManager and the extension, on files rebuilt from the
 * session's own outputs (or from a session folder's snapshots, `manifest.json` and `files/`).
 * `readcache savings` and bench:real so give one figure for the same sessions.
 *
 * The replay needs pi itself (the pi suite's `pi-suite/deno.json`), which the CLI's own config
 * never installs: it runs in a child process (Deno fetches pi from npm on its first run). Reads it
 * cannot judge are counted apart, with the reason, and left out of both sides of the figure,
 * exactly as bench:real leaves them out.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { READ_MODES, type ReadMode } from "../src/core/meta.ts";
import {
  emptySessionSavings,
  NOT_JUDGED,
  type NotJudgedReason,
  piSessionHead,
  readCounter,
  type SessionSavings,
} from "./savings_figures.ts";

export { NOT_JUDGED, type NotJudgedReason };
import type { SessionFile } from "./support/sessions.ts";

/** One read of bench:real's `--json` records (bench/pi/real_replay.ts `ReadRecord`). */
interface ReplayedRead {
  path: string;
  mode: string | null;
  plain: number;
  served: number;
  shown: number;
  unapplied?: true;
  violation?: string;
}

/** One input of bench:real's `--json` output. */
type ReplayResult =
  | { input: string; name: string; reads: ReplayedRead[]; counts: { replayFailures: number } }
  | { input: string; skipped: string };

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/**
 * What bench:real is given for a session file: its folder when it is a session folder with
 * snapshots (`session.jsonl` beside `manifest.json`), else the file.
 */
function benchInput(file: string): string {
  const dir = dirname(file);
  return basename(file) === "session.jsonl" && existsSync(join(dir, "manifest.json")) ? dir : file;
}

/**
 * Replays pi session files through bench:real's replay in one child process. Resolves to each
 * file's result (by the path given), or to why the replay could not run at all (pi cannot be
 * installed, the child failed): then the caller says so and uses its own estimate.
 *
 * @example
 * ```ts ignore
 * import { replayThroughPi } from "./savings_replay.ts";
 * const r = await replayThroughPi(["/home/me/.pi/agent/sessions/--w--/s.jsonl"]);
 * ```
 */
export async function replayThroughPi(
  files: readonly string[],
): Promise<{ results: Map<string, ReplayResult> } | { error: string }> {
  const config = join(ROOT, "pi-suite", "deno.json");
  const bench = join(ROOT, "bench", "pi", "real.ts");
  if (!existsSync(config) || !existsSync(bench)) {
    return { error: "bench/pi/real.ts and pi-suite/deno.json are not beside the CLI" };
  }
  const inputs = files.map(benchInput);
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", "--config", config, bench, "--json", ...inputs],
      cwd: ROOT,
      env: { NO_COLOR: "1" }, // Deno's error lines without colour, to quote them
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (e) {
    return { error: `cannot start Deno (${e instanceof Error ? e.message : String(e)})` };
  }
  const why = () => {
    // Deno's error line (`error: Failed caching npm package ...`), else the last line it printed
    const err = new TextDecoder().decode(out.stderr).trim().split("\n").filter((l) => l !== "");
    const said = err.find((l) => /^error: /.test(l));
    if (said === undefined) return err.at(-1) ?? `exit code ${out.code}`;
    const cause = /failed to lookup address|Connect|dns error/i.test(err.join("\n"))
      ? " (the npm registry cannot be reached: the first replay fetches pi, about 212 MB)"
      : "";
    return said.slice("error: ".length) + cause;
  };
  if (!out.success) return { error: `the replay failed: ${why()}` };
  let parsed: { results: ReplayResult[] };
  try {
    parsed = JSON.parse(new TextDecoder().decode(out.stdout));
  } catch {
    return { error: `the replay printed no JSON: ${why()}` };
  }
  const results = new Map<string, ReplayResult>();
  for (const [i, f] of files.entries()) {
    const r = parsed.results.find((x) => resolve(x.input) === resolve(inputs[i]));
    if (r !== undefined) results.set(f, r);
  }
  return { results };
}

/**
 * The figures of a session without the read cache from its replay (see the module
 * documentation), or `undefined` when the replay skipped it (the reason is in `skipped`).
 *
 * @example
 * ```ts
 * import { savingsFromReplay } from "./savings_replay.ts";
 * const file = { path: "/s.jsonl", mtimeMs: 0, bytes: 0, header: null, entries: [] };
 * const s = savingsFromReplay(file, { input: "/s.jsonl", name: "s", reads: [
 *   { path: "a.ts", mode: "full", plain: 900, served: 900, shown: 900 },
 *   { path: "a.ts", mode: "unchanged", plain: 900, served: 30, shown: 900 },
 * ], counts: { replayFailures: 0 } });
 * s!.readcacheBytes; // 930
 * ```
 */
export function savingsFromReplay(
  session: SessionFile,
  result: ReplayResult,
): SessionSavings | undefined {
  if ("skipped" in result) return undefined;
  const cwd = session.header?.cwd ?? "/";
  const out = emptySessionSavings(piSessionHead(session, false));
  out.estimate = "replay";
  out.safety = { checked: 0, violations: 0 };
  const notJudged: NonNullable<SessionSavings["notJudged"]> = {};
  const skip = (reason: NotJudgedReason, bytes: number) => {
    const n = notJudged[reason] ??= { reads: 0, bytes: 0 };
    n.reads++;
    n.bytes += bytes;
  };
  const counter = readCounter(out);
  for (const r of result.reads) {
    out.reads++;
    if (r.unapplied) {
      skip("unapplied", r.shown);
      continue;
    }
    const mode = (READ_MODES as readonly string[]).includes(r.mode ?? "")
      ? r.mode as ReadMode
      : "plain";
    out.byMode[mode]++;
    if (mode !== "plain" && mode !== "full" && mode !== "baseline_fallback") {
      out.safety.checked++;
      if (r.violation !== undefined) out.safety.violations++;
    }
    const key = r.path.startsWith("~") ? r.path : resolve(cwd, r.path);
    // pi's side is what the session shows; the read cache's, that less what the replay saved
    // (the replay's pi may word a notice a byte apart from the pi that recorded the session)
    counter.count(key, r.shown, Math.max(0, r.shown - (r.plain - r.served)));
  }
  const failed = result.counts.replayFailures;
  if (failed > 0) notJudged["replay-failed"] = { reads: failed, bytes: 0 };
  out.reads += failed;
  counter.done();
  out.notJudged = notJudged;
  return out;
}
