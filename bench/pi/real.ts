// `deno task bench:real [--per-read] [--no-bash-files] [--json] [DIR...]`: bytes the read cache
// serves on REAL pi sessions, against pi's plain read and against the ideal (the fewest bytes an
// answer can have that tells the model nothing false), with every cached answer checked against
// the model's context.
//
// Each DIR is a session folder in the layout of ../shared/realworld/README.md (session.jsonl,
// manifest.json, files/); default: every ../shared/realworld/*/* folder that has both files. The
// session's own tool calls are replayed in order through the pi extension on pi's real
// SessionManager (bench/pi/real_replay.ts); the ideal and the safety check use only the model's
// context (cli/savings_model.ts), not the cache's code. Deterministic: no timing, no paths of
// this machine in the output. Definitions and figures: bench/README.md, "Real sessions".
import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  GAP_KINDS,
  type ReadRecord,
  type ReplayOptions,
  replaySession,
  type SessionReplay,
} from "./real_replay.ts";
import { SessionInputError } from "./real_log.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The default session folders: ../shared/realworld/<source>/<session>, sorted. */
export function defaultSessionDirs(): string[] {
  const base = resolve(ROOT, "../shared/realworld");
  if (!existsSync(base)) return [];
  const out: string[] = [];
  for (const source of readdirSync(base, { withFileTypes: true })) {
    if (!source.isDirectory()) continue;
    for (const s of readdirSync(join(base, source.name), { withFileTypes: true })) {
      const dir = join(base, source.name, s.name);
      if (
        s.isDirectory() && existsSync(join(dir, "session.jsonl")) &&
        existsSync(join(dir, "manifest.json"))
      ) out.push(dir);
    }
  }
  return out.sort();
}

/** Renders rows as a Markdown table with padded columns (numbers right-aligned). */
function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(3, h.length, ...rows.map((r) => r[i].length)));
  const numeric = head.map((_, i) => rows.every((r) => /^-?[\d.,%() ]*$/.test(r[i])));
  const cell = (s: string, i: number) => numeric[i] ? s.padStart(widths[i]) : s.padEnd(widths[i]);
  const line = (r: string[]) => `| ${r.map(cell).join(" | ")} |`;
  const rule = `| ${
    widths.map((w, i) => numeric[i] ? "-".repeat(w - 1) + ":" : "-".repeat(w)).join(" | ")
  } |`;
  return [line(head), rule, ...rows.map(line)].join("\n");
}

const pct = (a: number, b: number) => b === 0 ? "-" : `${(100 * a / b).toFixed(1)}%`;

interface Totals {
  reads: number;
  resynced: number;
  plain: number;
  served: number;
  ideal: number;
}

function totals(reads: readonly ReadRecord[]): Totals {
  const t = { reads: reads.length, resynced: 0, plain: 0, served: 0, ideal: 0 };
  for (const r of reads) {
    if (r.truth === "resynced") t.resynced++;
    // after a change the replay could not apply: reported on their own, never as savings
    if (r.unapplied) continue;
    t.plain += r.plain;
    t.served += r.served;
    t.ideal += r.ideal;
  }
  return t;
}

const MODES = [
  "full",
  "baseline_fallback",
  "unchanged",
  "unchanged_range",
  "diff",
  "partial",
] as const;

/** The report for replayed sessions. */
export function report(sessions: readonly SessionReplay[]): string {
  const all = sessions.flatMap((s) => s.reads);
  const out: string[] = [];
  const row = (name: string, t: Totals) => [
    name,
    `${t.reads}`,
    `${t.resynced}`,
    `${t.plain}`,
    `${t.served}`,
    `${t.ideal}`,
    pct(t.served, t.plain),
    pct(t.plain - t.served, t.plain - t.ideal),
  ];
  out.push("Bytes per read: pi's plain read, the extension's answer, the ideal answer");
  out.push("");
  out.push(table(
    [
      "session",
      "reads",
      "resynced",
      "plain bytes",
      "served bytes",
      "ideal bytes",
      "served / plain",
      "savings claimed",
    ],
    [
      ...sessions.map((s) => row(s.name, totals(s.reads))),
      ...(sessions.length > 1 ? [row("total", totals(all))] : []),
    ],
  ));
  out.push("");
  out.push(
    "savings claimed = (plain - served) / (plain - ideal). Modes served (reads, bytes):",
  );
  out.push("");
  const modeCell = (reads: readonly ReadRecord[], mode: string | null) => {
    const rs = reads.filter((r) => r.mode === mode);
    return rs.length === 0 ? "0" : `${rs.length} (${rs.reduce((a, r) => a + r.served, 0)})`;
  };
  const modeRow = (name: string, reads: readonly ReadRecord[]) => [
    name,
    ...MODES.map((m) => modeCell(reads, m)),
    modeCell(reads, null),
  ];
  out.push(table(
    ["session", ...MODES, "no metadata"],
    [
      ...sessions.map((s) => modeRow(s.name, s.reads)),
      ...(sessions.length > 1 ? [modeRow("total", all)] : []),
    ],
  ));
  out.push("");
  out.push("Where the rest is: served - ideal bytes (reads), by the first kind that applies:");
  out.push("");
  const gapCell = (reads: readonly ReadRecord[], kind: string) => {
    const rs = reads.filter((r) => r.gap === kind);
    return rs.length === 0
      ? "0"
      : `${rs.reduce((a, r) => a + r.served - r.ideal, 0)} (${rs.length})`;
  };
  const below = (reads: readonly ReadRecord[]) => {
    const rs = reads.filter((r) => r.served < r.ideal);
    return rs.length === 0
      ? "0"
      : `${rs.reduce((a, r) => a + r.served - r.ideal, 0)} (${rs.length})`;
  };
  const gapCols = [...sessions.map((s) => s.reads), ...(sessions.length > 1 ? [all] : [])];
  out.push(table(
    ["kind", ...sessions.map((s) => s.name), ...(sessions.length > 1 ? ["total"] : [])],
    [
      ...GAP_KINDS.map((k) => [k, ...gapCols.map((rs) => gapCell(rs, k))]),
      ["served below ideal", ...gapCols.map(below)],
      [
        "total gap",
        ...gapCols.map((rs) => `${rs.reduce((a, r) => a + r.served - r.ideal, 0)}`),
      ],
    ],
  ));
  const lowered = all.filter((r) => r.idealLowered !== undefined);
  if (lowered.length > 0) {
    out.push(
      `${lowered.length} checked cached answers were shorter than the ideal's pieces (by ${
        lowered.reduce((a, r) => a + r.idealLowered!, 0)
      } bytes): the ideal is lowered to them, so no read claims more than was achievable.`,
    );
  }
  out.push("");
  out.push("The replay: how the truth of each read was chosen, and the session's other calls:");
  out.push("");
  out.push(table(
    [
      "session",
      "pi",
      "reads exact",
      "resynced",
      "unresolved",
      "manifest: exact / with resync",
      "failed reads",
      "failed only in the replay",
    ],
    sessions.map((s) => [
      s.name,
      s.generation,
      `${s.reads.filter((r) => r.truth === "exact").length}`,
      `${s.reads.filter((r) => r.truth === "resynced").length}`,
      `${s.reads.filter((r) => r.truth === "unresolved").length}`,
      `${s.manifest.exact ?? "-"} / ${s.manifest.exactWithResync ?? "-"}`,
      `${s.counts.readErrors}`,
      `${s.counts.replayFailures}`,
    ]),
  ));
  out.push("");
  out.push(table(
    [
      "session",
      "edits",
      "followed by the cache",
      "not applied",
      "unlike pi 0.73",
      "failed edits",
      "writes",
      "without a result",
      "bash cp/mv/rm",
      "bash views",
      "grep views",
      "compactions",
    ],
    sessions.map((s) => [
      s.name,
      `${s.counts.edits}`,
      `${s.counts.editsFollowed}`,
      `${s.counts.editsNotApplied}`,
      `${s.counts.editsUnlikePi}`,
      `${s.counts.editsFailed}`,
      `${s.counts.writes}`,
      `${s.counts.unanswered}`,
      `${s.counts.bashFileCommands}`,
      `${s.counts.bashViews}`,
      `${s.counts.grepViews}`,
      `${s.counts.compactions}`,
    ]),
  ));
  out.push("");
  const sum = (f: (c: SessionReplay["counts"]) => number) =>
    sessions.reduce((a, s) => a + f(s.counts), 0);
  out.push(
    `Checks: ${sum((c) => c.resyncNotExact)} resynced reads render other than shown, ` +
      `${sum((c) => c.plainDiffers)} plain answers of the extension differ from pi's read.`,
  );
  const unapplied = all.filter((r) => r.unapplied);
  out.push(
    `Unapplied: ${unapplied.length} reads came after a bash command the replay could not apply ` +
      `(a formatter, git checkout, sed -i) and showed other text than the rebuild, or were ` +
      "answered from what the replay's cache held and fail the check (the session's cache may " +
      "have seen the change the replay's could not): " +
      `${unapplied.reduce((a, r) => a + r.plain, 0)} bytes plain, ` +
      `${unapplied.reduce((a, r) => a + r.served, 0)} served, not in the figures above. ` +
      `${sum((c) => c.bashResyncs)} bash outputs put the lines they printed into the rebuild.`,
  );
  // measured, not served: what answering bash views from the cache could save
  for (const s of sessions) {
    const b = s.counts.bashShownLines;
    out.push(
      `Bash re-shows (${s.name}): ${b.reshown} of ${b.lines} file lines bash outputs showed ` +
        `(${b.reshownBytes} of ${b.bytes} bytes) were lines the model already held with the same ` +
        "text.",
    );
  }
  // views through bash as agents type them (SPEC §5.10): how many forms the cache recognises
  const positioned = sum((c) => c.positionedViews);
  out.push(
    `Views: the cache recognises the form of ${sum((c) => c.positionedRecognised)} of ` +
      `${positioned} bash calls that print lines of files with their places ` +
      `(${pct(sum((c) => c.positionedRecognised), positioned)}); ` +
      `${sum((c) => c.unpositionedViews)} more print lines the model cannot place ` +
      "(grep without -n, plain nl): no view.",
  );
  // the replay runs in moments what took hours (SPEC §5.10, printed while changing)
  out.push(
    `Time: ${sum((c) => c.settledCalls)} messages with bash or grep calls started at least 3 s ` +
      `after the last change before them (replayed with no racy window), ` +
      `${sum((c) => c.racyCalls)} sooner (the default window).`,
  );
  // a read the replay cannot judge counts neither for nor against the cache (its violation too:
  // the replay's cache saw a file the session's command had changed)
  const judged = all.filter((r) => !r.unapplied);
  const cached = judged.filter((r) =>
    r.mode !== null && ["unchanged", "unchanged_range", "diff", "partial"].includes(r.mode)
  );
  const bad = judged.filter((r) => r.violation !== undefined);
  for (const s of sessions) {
    for (const r of s.reads) {
      if (r.violation === undefined || r.unapplied) continue;
      out.push(
        `VIOLATION ${s.name} entry ${r.entryIndex} ${r.path}` +
          `${r.offset !== undefined ? ` offset=${r.offset}` : ""}` +
          `${r.limit !== undefined ? ` limit=${r.limit}` : ""} (${r.mode}): ${r.violation}`,
      );
    }
  }
  const t = totals(all);
  out.push(
    `Safety: ${cached.length} cached answers checked against the model's context, ` +
      `${bad.length} violations. Total: served ${pct(t.served, t.plain)} of plain, ideal ${
        pct(t.ideal, t.plain)
      }, ` +
      `savings claimed ${pct(t.plain - t.served, t.plain - t.ideal)}.`,
  );
  return out.join("\n");
}

/** Replays the session folders and returns the results and the report. */
export async function runRealBench(
  dirs: readonly string[],
  options: ReplayOptions = {},
): Promise<{ sessions: SessionReplay[]; text: string; skipped: string[] }> {
  const names = dirs.map((d) => basename(d).replace(/\.jsonl$/, ""));
  const sessions: SessionReplay[] = [];
  const skipped: string[] = [];
  for (const [i, dir] of dirs.entries()) {
    const clash = names.filter((n) => n === names[i]).length > 1;
    const name = clash ? `${basename(dirname(dir))}/${names[i]}` : names[i];
    try {
      sessions.push(await replaySession(dir, name, options));
    } catch (e) {
      // what is wrong with the input, in words; anything else is the bench's own bug
      if (!(e instanceof SessionInputError)) throw e;
      skipped.push(e.message);
    }
  }
  const text = sessions.length > 0 ? report(sessions) : "no session could be replayed";
  const notes = skipped.map((m) => `skipped: ${m}`);
  return {
    sessions,
    text: [...notes, ...(notes.length > 0 ? [""] : []), text].join("\n"),
    skipped,
  };
}

/**
 * The sessions an argument names: a session folder (with `session.jsonl`), a pi session file,
 * or a folder of pi session files (pi's own sessions folder, searched three levels deep).
 */
export function sessionInputs(arg: string): string[] {
  const path = resolve(arg);
  if (!existsSync(path)) throw new SessionInputError(`${arg}: no such file or folder`);
  if (statSync(path).isFile()) return [path];
  if (existsSync(join(path, "session.jsonl"))) return [path];
  const found = readdirSync(path, { withFileTypes: true, recursive: true })
    .filter((e) =>
      e.isFile() && e.name.endsWith(".jsonl") &&
      relative(path, e.parentPath).split("/").filter(Boolean).length <= 2
    )
    .map((e) => join(e.parentPath, e.name))
    .sort();
  if (found.length === 0) {
    throw new SessionInputError(
      `${arg}: no pi session in it (a folder with session.jsonl, or .jsonl session files)`,
    );
  }
  return found;
}

function perRead(sessions: readonly SessionReplay[]): string {
  const rows = sessions.flatMap((s) =>
    s.reads.map((r) => [
      s.name,
      `${r.entryIndex}`,
      `${r.path}${
        r.offset !== undefined || r.limit !== undefined ? `:${r.offset ?? 1}+${r.limit ?? ""}` : ""
      }`,
      r.truth,
      r.mode ?? "-",
      `${r.plain}`,
      `${r.served}`,
      `${r.ideal}`,
      `${r.holding.held}/${r.holding.stale}/${r.holding.unknown}`,
      r.gap ?? "",
    ])
  );
  return table(
    [
      "session",
      "entry",
      "read",
      "truth",
      "mode",
      "plain",
      "served",
      "ideal",
      "held/stale/unknown",
      "gap",
    ],
    rows,
  );
}

/**
 * One input's replay for machines (`--json`, read by `readcache savings`): its reads and counts,
 * or why it could not be replayed.
 */
export type JsonResult =
  | { input: string; name: string; reads: ReadRecord[]; counts: SessionReplay["counts"] }
  | { input: string; skipped: string };

/** Replays each input on its own: the records `--json` prints, in the order given. */
export async function jsonResults(
  inputs: readonly string[],
  options: ReplayOptions = {},
): Promise<JsonResult[]> {
  const out: JsonResult[] = [];
  for (const input of inputs) {
    const name = basename(input).replace(/\.jsonl$/, "");
    try {
      const s = await replaySession(input, name, options);
      out.push({ input, name, reads: s.reads, counts: s.counts });
    } catch (e) {
      if (!(e instanceof SessionInputError)) throw e;
      out.push({ input, skipped: e.message });
    }
  }
  return out;
}

const USAGE = `usage: deno task bench:real [--per-read] [--no-bash-files] [--json] [DIR...]

  DIR              a session folder (session.jsonl, manifest.json, files/; see
                   ../shared/realworld/README.md), a pi session file, or a folder of them (pi's
                   ~/.pi/agent/sessions); without a manifest every file is rebuilt from what the
                   session's own outputs showed; default: every ../shared/realworld/*/* folder
  --per-read       also print one row per read
  --json           print each input's reads and counts as JSON (what readcache savings reads)
  --no-bash-files  do not apply the plain cp/mv/rm of the session's bash calls to the rebuild
                   (then "reads exact" equals the manifest's readsRebuiltExactlyWithResync)`;

if (import.meta.main) {
  const flags = new Set(["--per-read", "--no-bash-files", "--json"]);
  const args = Deno.args.filter((a) => !flags.has(a));
  if (args.some((a) => a.startsWith("-"))) {
    console.error(USAGE);
    Deno.exit(args.includes("--help") || args.includes("-h") ? 0 : 2);
  }
  let dirs: string[];
  try {
    dirs = args.length > 0 ? args.flatMap(sessionInputs) : defaultSessionDirs();
  } catch (e) {
    if (!(e instanceof SessionInputError)) throw e;
    console.error(`bench:real: ${e.message}`);
    Deno.exit(2);
  }
  if (dirs.length === 0) {
    console.error(
      "no sessions to replay: give pi session files or folders, e.g. `deno task bench:real " +
        "~/.pi/agent/sessions` (your own sessions) or `deno task bench:real " +
        "tests/fixtures/realworld/conflict tests/fixtures/realworld-bare` (the repository's " +
        "fixtures); the shared real sessions are read by default from ../shared/realworld/*/* " +
        "when they sit beside the checkout",
    );
    Deno.exit(2);
  }
  if (Deno.args.includes("--json")) {
    const results = await jsonResults(dirs, { bashFiles: !Deno.args.includes("--no-bash-files") });
    console.log(JSON.stringify({ results }));
    Deno.exit(0);
  }
  const { sessions, text } = await runRealBench(dirs, {
    bashFiles: !Deno.args.includes("--no-bash-files"),
  });
  if (sessions.length === 0) {
    console.error(text);
    Deno.exit(2);
  }
  if (Deno.args.includes("--per-read")) console.log(perRead(sessions) + "\n");
  console.log(text);
  // a violation is a finding: the run fails so that it is not missed
  if (sessions.some((s) => s.reads.some((r) => r.violation !== undefined && !r.unapplied))) {
    Deno.exit(1);
  }
}
