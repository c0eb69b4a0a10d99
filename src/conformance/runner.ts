/**
 * The conformance runner, the porter's kit (SPEC §10): runs the vectors shipped
 * with this package against the reference implementation (in process) or
 * against a port, any command that reads ONE input as JSON on stdin (a vector
 * without its expectations) and prints ONE JSON result on stdout. The runner
 * keeps the expectations and compares; it prints a table of failures with a
 * short expected-vs-actual diff and ends with `N passed, N failed`.
 *
 * Run it from anywhere, with only the package:
 *
 * ```sh
 * deno run -A jsr:@readcache/core/conformance --help
 * deno run -A jsr:@readcache/core/conformance scenario --cmd "python3 my_port.py"
 * ```
 *
 * Anything wrong with a port's answer is a counted failure with a one-line
 * reason, never a crash of the runner: a non-zero exit, a crash, a hang (the
 * port is killed with its process group after `--timeout` seconds, default 30),
 * empty or non-JSON stdout, an answer for another id, or output of the wrong
 * shape (named by JSON pointer).
 *
 * Specified by SPEC.md §10.
 *
 * @module
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { compareLayerResult } from "./layer_compare.ts";
import { runLayerCase } from "./layer_port.ts";
import { parseLayerPortOutput, parseScenarioPortOutput, type PortCheck } from "./port_output.ts";
import { runPort } from "./port_process.ts";
import { compareScenario } from "./scenario_compare.ts";
import { runScenario } from "./session_simulator.ts";
import { LAYERS, listJsonFiles, parseLayerFile } from "./vector_files.ts";
import { layerInput, scenarioInput, ScenarioSchema } from "./vector_schema.ts";

const USAGE =
  'usage: deno task conformance [path|range|trust|replay|scenario | <folder> | <file.json> ...] [--cmd "<port command>"] [--timeout <seconds>] [--json]';

const HELP = [
  "",
  "Runs the conformance vectors (default: all of them) against the reference implementation in",
  "process, or against a port: a command that reads ONE input as JSON on stdin (a vector",
  "without its expectations, SPEC §10) and prints ONE JSON result on stdout.",
  "Ends with `N passed, N failed` (and `, N not applicable` where a port declared a scenario step",
  "not applicable to its host: `{id, notApplicable: {step, reason}}`, SPEC §10); exits 1 when any",
  "vector failed, 2 on bad arguments.",
  "",
  "  path|range|trust|replay|scenario  the vectors of one layer (several may be given)",
  "  <folder> | <file.json>            vector files of your own, or of the package by path",
  "  --cmd <command>                   run the port with `sh -c <command>`, once per vector",
  "  --timeout <seconds>               kill a port still running after this long (default 30)",
  "  --json                            print one JSON report instead of the table",
  "  --random <N> --cmd <command>      from a checkout: the port against the reference on N random",
  "                                    sessions (vectors/README.md, Differential testing);",
  "                                    --seed <S>, --host pi|opencode|claude-code and more:",
  "                                    deno task conformance --random 1 --help",
  "",
  "examples:",
  "  deno task conformance",
  "  deno task conformance scenario --cmd 'deno task -q port:pi --stdin'",
  "  deno run -A jsr:@readcache/core/conformance replay --cmd './my-port' --timeout 5",
].join("\n");

const DEFAULT_TIMEOUT_SECONDS = 30;

/**
 * What one run found: counts, the failures with their problems, scenarios
 * that passed with another diff algorithm, and layer cases the port does not
 * support. `--json` prints it.
 *
 * @example
 * ```ts
 * import type { ConformanceReport } from "@readcache/core/conformance";
 * const r: ConformanceReport = { port: "reference (in process)", passed: 1, failed: 0,
 *   unsupported: 0, failures: [], alternativeDiffs: [] };
 * ```
 */
export interface ConformanceReport {
  /** The port command, or `reference (in process)`. */
  port: string;
  /** Vectors (scenarios and layer cases) that passed. */
  passed: number;
  /** Vectors that failed. */
  failed: number;
  /** Layer cases the port answered `unsupported`. */
  unsupported: number;
  /** Each failed vector: its id, its file, and what is wrong. */
  failures: { id: string; file: string; problems: string[] }[];
  /** Scenarios that passed with a diff of another algorithm, with the steps. */
  alternativeDiffs: { id: string; steps: number[] }[];
  /**
   * Scenarios the port said it cannot run (SPEC §10: `notApplicable`), each with the first step
   * it cannot run and why; neither passed nor failed.
   */
  notApplicable?: { id: string; step: number; reason: string }[];
}

/** Thrown for bad arguments (exit 2). */
class UsageError extends Error {}

/** Removes `--flag <value>` from args and returns the value. */
function takeOption(args: string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  if (i === -1) return undefined;
  const value = args[i + 1];
  if (value === undefined || value === "") throw new UsageError(`${flag} needs a value`);
  args.splice(i, 2);
  return value;
}

function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

/** The vectors shipped with the package: a folder next to this module's `../../vectors/`. */
function packageVectors(): URL {
  return new URL("../../vectors/", import.meta.url);
}

/** One vector file: where it is shown from, and its text. */
interface VectorText {
  rel: string;
  text: () => Promise<string>;
}

/**
 * The package's vector files: from the file system when the package is on
 * disk (a checkout, a `links` entry, npm), else over HTTP from its index.
 */
async function packageFiles(root: URL, only: string[]): Promise<VectorText[]> {
  if (root.protocol === "file:") {
    const dir = fileURLToPath(root);
    const folders = only.length > 0 ? only.map((l) => join(dir, l)) : [dir];
    return folders.flatMap((f) => listJsonFiles(f)).map((file) => ({
      rel: relative(dir, file),
      text: () => Promise.resolve(readFileSync(file, "utf8")),
    }));
  }
  const index = await (await fetch(new URL("index.json", root))).json() as { files: string[] };
  return index.files
    .filter((rel) => only.length === 0 || only.includes(rel.split("/")[0]))
    .map((rel) => ({ rel, text: async () => await (await fetch(new URL(rel, root))).text() }));
}

/** Vector files given by path on disk (a file or a folder). */
function diskFiles(target: string, root: URL): VectorText[] {
  const base = root.protocol === "file:" ? fileURLToPath(root) : undefined;
  return listJsonFiles(target).map((file) => {
    const rel = base === undefined ? file : relative(base, resolve(file));
    return {
      rel: rel.startsWith("..") || isAbsolute(rel) ? file : rel,
      text: () => Promise.resolve(readFileSync(file, "utf8")),
    };
  });
}

/**
 * Runs the vectors named by `args` (layer names, files or folders; none: all
 * the package's vectors) against the reference or `--cmd`, and returns the
 * report. Prints nothing.
 *
 * @example
 * ```ts ignore
 * import { runConformance } from "@readcache/core/conformance";
 * const report = await runConformance({ targets: ["scenario"], cmd: "python3 my_port.py" });
 * report.failed; // 0 when the port passes every scenario vector
 * ```
 */
export async function runConformance(options: {
  /** Layer names (`path`, `range`, `trust`, `replay`, `scenario`), files or folders. */
  targets?: string[];
  /** The port command (run with `sh -c`); without it, the reference in process. */
  cmd?: string;
  /** Seconds a port may run per vector (default 30). */
  timeoutSeconds?: number;
}): Promise<ConformanceReport> {
  const root = packageVectors();
  const cmd = options.cmd;
  const timeoutSeconds = options.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  const layerNames: string[] = [...LAYERS, "scenario"];
  const targets = options.targets ?? [];
  const named = targets.filter((t) => layerNames.includes(t));
  const paths = targets.filter((t) => !layerNames.includes(t));
  const files: VectorText[] = [];
  if (named.length > 0 || paths.length === 0) files.push(...await packageFiles(root, named));
  for (const p of paths) files.push(...diskFiles(p, root));

  const report: ConformanceReport = {
    port: cmd ?? "reference (in process)",
    passed: 0,
    failed: 0,
    unsupported: 0,
    failures: [],
    alternativeDiffs: [],
  };
  const fail = (id: string, file: string, problems: string[]) => {
    report.failed++;
    report.failures.push({ id, file, problems });
  };

  for (const f of files) {
    let text: string;
    let raw: unknown;
    try {
      text = await f.text();
      raw = JSON.parse(text);
    } catch (e) {
      fail("(file)", f.rel, [`not a readable JSON vector file: ${errorText(e)}`]);
      continue;
    }
    if (raw !== null && typeof raw === "object" && "layer" in raw) {
      const { cases, problems } = parseLayerFile(text, f.rel);
      if (problems.length > 0) {
        fail("(file)", f.rel, problems.map((p) => p.message));
        continue;
      }
      for (const { input } of cases) {
        try {
          // a port is given the inputs only; the expectations stay here (SPEC §10)
          const json = cmd
            ? await runPort(cmd, timeoutSeconds, layerInput(input))
            : { ok: true as const, value: { ...runLayerCase(layerInput(input)) } };
          const result = json.ok ? parseLayerPortOutput(json.value, input.id) : json;
          if (!result.ok) {
            fail(input.id, f.rel, [result.reason]);
            continue;
          }
          if ("unsupported" in result.value) {
            report.unsupported++;
            continue;
          }
          const p = compareLayerResult(input, result.value);
          if (p.length === 0) report.passed++;
          else fail(input.id, f.rel, p);
        } catch (e) {
          fail(input.id, f.rel, [`runner error: ${errorText(e)}`]);
        }
      }
      continue;
    }
    const parsed = ScenarioSchema.safeParse(raw);
    if (!parsed.success) {
      const id = (raw as { id?: unknown } | null)?.id;
      fail(typeof id === "string" ? id : "(file)", f.rel, [
        `not a valid scenario vector: ${parsed.error.message.replace(/\s+/g, " ")}`,
      ]);
      continue;
    }
    const v = parsed.data;
    try {
      let json: PortCheck<Record<string, unknown>>;
      if (cmd) json = await runPort(cmd, timeoutSeconds, scenarioInput(v));
      else {
        const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-conf-")));
        try {
          json = { ok: true, value: { ...await runScenario(scenarioInput(v), cwd, homedir()) } };
        } finally {
          rmSync(cwd, { recursive: true, force: true });
        }
      }
      const out = json.ok ? parseScenarioPortOutput(json.value, v.id) : json;
      if (!out.ok) {
        fail(v.id, f.rel, [out.reason]);
        continue;
      }
      if ("notApplicable" in out.value) {
        const { step, reason } = out.value.notApplicable;
        if (step >= v.steps.length) {
          fail(v.id, f.rel, [
            `not applicable at step ${step}, but the vector has ${v.steps.length}`,
          ]);
          continue;
        }
        (report.notApplicable ??= []).push({ id: v.id, step, reason });
        continue;
      }
      const verdict = compareScenario(v, out.value);
      if (verdict.problems.length > 0) {
        fail(v.id, f.rel, verdict.problems);
        continue;
      }
      report.passed++;
      if (verdict.alternativeDiffs.length > 0) {
        report.alternativeDiffs.push({ id: v.id, steps: verdict.alternativeDiffs });
      }
    } catch (e) {
      fail(v.id, f.rel, [`runner error: ${errorText(e)}`]);
    }
  }
  return report;
}

/** The report as the runner prints it: a table of failures, details, then the counts. */
function formatReport(r: ConformanceReport): string {
  const out: string[] = [];
  const cell = (s: string) => s.replaceAll("|", "\\|");
  if (r.failures.length > 0) {
    out.push("FAILURES", "| vector | file | problem |", "| --- | --- | --- |");
    for (const f of r.failures) {
      out.push(`| ${cell(f.id)} | ${cell(f.file)} | ${cell(f.problems[0].split("\n")[0])} |`);
    }
    out.push("");
    for (const f of r.failures) {
      out.push(`${f.id} (${f.file}):`);
      for (const p of f.problems) out.push(`  ${p}`);
    }
  }
  out.push(`port: ${r.port}`);
  if (r.alternativeDiffs.length > 0) {
    out.push(`${r.alternativeDiffs.length} scenarios passed with an alternative diff:`);
    for (const a of r.alternativeDiffs) out.push(`  ${a.id} (steps ${a.steps.join(", ")})`);
  }
  if (r.unsupported > 0) out.push(`${r.unsupported} layer cases not supported by the port`);
  const na = r.notApplicable ?? [];
  if (na.length > 0) {
    out.push(`${na.length} scenarios not applicable to the port:`);
    for (const n of na) out.push(`  ${n.id} (step ${n.step}): ${n.reason}`);
  }
  out.push(
    `${r.passed} passed, ${r.failed} failed` +
      (na.length > 0 ? `, ${na.length} not applicable` : ""),
  );
  return out.join("\n");
}

/**
 * The command line: parses `args`, runs, prints the table (or the JSON
 * report with `--json`) and returns the exit code: 0 all passed, 1 a vector
 * failed, 2 bad arguments.
 *
 * @example
 * ```ts ignore
 * import { main } from "@readcache/core/conformance";
 * Deno.exit(await main(["scenario", "--cmd", "./my-port"]));
 * ```
 */
export async function main(args: readonly string[]): Promise<number> {
  const rest = [...args];
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(USAGE + "\n" + HELP);
    return 0;
  }
  try {
    if (rest.includes("--random")) {
      throw new UsageError(
        "--random (a port against the reference on random sessions) runs from a checkout of the " +
          "repository, not from the package: its session generator needs pi " +
          '(`deno task conformance --random <N> --cmd "<port>"`, vectors/README.md)',
      );
    }
    const cmd = takeOption(rest, "--cmd");
    const timeoutText = takeOption(rest, "--timeout");
    const json = rest.includes("--json");
    if (json) rest.splice(rest.indexOf("--json"), 1);
    const timeoutSeconds = timeoutText === undefined
      ? DEFAULT_TIMEOUT_SECONDS
      : Number(timeoutText);
    if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) {
      throw new UsageError(
        `--timeout needs a positive number of seconds, got ${JSON.stringify(timeoutText)}`,
      );
    }
    const unknownFlag = rest.find((a) => a.startsWith("--"));
    if (unknownFlag) throw new UsageError(`unknown option ${unknownFlag}`);
    const layerNames: string[] = [...LAYERS, "scenario"];
    for (const t of rest) {
      if (layerNames.includes(t)) continue;
      try {
        statSync(t);
      } catch {
        throw new UsageError(`no such vector file, folder or layer: ${t}`);
      }
    }
    const report = await runConformance({ targets: rest, cmd, timeoutSeconds });
    console.log(json ? JSON.stringify(report, null, 2) : formatReport(report));
    return report.failed === 0 ? 0 : 1;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(e.message);
    console.error(USAGE);
    return 2;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
