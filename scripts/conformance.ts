// Conformance runner: runs vectors against the reference implementation (in
// process) or against any port command (`--cmd "<command>"`, one process per
// vector, vector JSON on stdin, result JSON on stdout).
//
//   deno task conformance [vectors/<folder> | <file.json> ...] [--cmd "<port command>"]
//                         [--timeout <seconds>]
//
// Prints a table of failures with a short expected-vs-actual diff, then
// `N passed, N failed` (plus alternative diffs and unsupported layer cases).
// Anything wrong with a port's answer is a counted failure with a one-line
// reason, never a crash of the runner: a non-zero exit, a crash, a hang (the
// port is killed after --timeout seconds, default 30), empty or non-JSON
// stdout, an answer for another id, or output of the wrong shape
// (src/conformance/port_output.ts).
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { isAbsolute, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { compareLayerResult } from "../src/conformance/layer_compare.ts";
import { runLayerCase } from "../src/conformance/layer_port.ts";
import {
  parseLayerPortOutput,
  parsePortStdout,
  parseScenarioPortOutput,
  type PortCheck,
} from "../src/conformance/port_output.ts";
import { compareScenario } from "../src/conformance/scenario_compare.ts";
import { runScenario } from "../src/conformance/session_simulator.ts";
import { listJsonFiles, loadLayerFile } from "../src/conformance/vector_files.ts";
import {
  layerInput,
  type Scenario,
  scenarioInput,
  ScenarioSchema,
} from "../src/conformance/vector_schema.ts";

const USAGE =
  'usage: deno task conformance [vectors/<folder> | <file.json> ...] [--cmd "<port command>"] [--timeout <seconds>]';
const DEFAULT_TIMEOUT_SECONDS = 30;

function usageError(message: string): never {
  console.error(message);
  console.error(USAGE);
  Deno.exit(2);
}

/** Removes `--flag <value>` from args and returns the value. */
function takeOption(args: string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  if (i === -1) return undefined;
  const value = args[i + 1];
  if (value === undefined || value === "") usageError(`${flag} needs a value`);
  args.splice(i, 2);
  return value;
}

const root = fileURLToPath(new URL("../vectors/", import.meta.url));
const args = [...Deno.args];
if (args.includes("--help") || args.includes("-h")) {
  console.log(USAGE);
  console.log(
    [
      "",
      "Runs the conformance vectors (default: every file under vectors/) against the reference",
      "implementation in process, or against a port: a command that reads ONE input as JSON on",
      "stdin (a vector without its expectations, SPEC §10) and prints ONE JSON result on stdout.",
      "Ends with `N passed, N failed`; exits 1 when any vector failed, 2 on bad arguments.",
      "",
      "  --cmd <command>      run the port with `sh -c <command>`, once per vector",
      "  --timeout <seconds>  kill a port still running after this long (default 30)",
      "",
      "examples:",
      "  deno task conformance",
      "  deno task conformance vectors/scenario --cmd 'deno task -q port:pi --stdin'",
      "  deno task conformance vectors/replay/replay.json --cmd './my-port' --timeout 5",
    ].join("\n"),
  );
  Deno.exit(0);
}
const cmd = takeOption(args, "--cmd");
const timeoutText = takeOption(args, "--timeout");
const timeoutSeconds = timeoutText === undefined ? DEFAULT_TIMEOUT_SECONDS : Number(timeoutText);
if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) {
  usageError(`--timeout needs a positive number of seconds, got ${JSON.stringify(timeoutText)}`);
}
const unknownFlag = args.find((a) => a.startsWith("--"));
if (unknownFlag) usageError(`unknown option ${unknownFlag}`);
const targets = args.length > 0 ? args : [root];
const files: string[] = [];
for (const t of targets) {
  try {
    statSync(t);
  } catch {
    usageError(`no such vector file or folder: ${t}`);
  }
  files.push(...listJsonFiles(t));
}

const ANSI_COLOR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

/**
 * Short one-line excerpt of a port's stderr: its first non-empty lines while
 * they fit in about 200 characters, and always its last line.
 */
function stderrExcerpt(stderr: string): string {
  const plain = stderr.replace(ANSI_COLOR, "");
  const cut = (l: string) => (l.length > 120 ? `${l.slice(0, 117)}...` : l);
  const lines = plain.split("\n").map((l) => cut(l.trim())).filter((l) => l !== "");
  if (lines.length === 0) return "no stderr";
  const last = lines.pop()!;
  const shown: string[] = [];
  let size = last.length;
  for (const l of lines) {
    if (size + l.length > 200) {
      shown.push("...");
      break;
    }
    shown.push(l);
    size += l.length;
  }
  return `stderr: ${[...shown, last].join(" / ")}`;
}

/** Reads a stream to the end into a string; gives up quietly when cancelled. */
async function collect(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  try {
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  } catch {
    // cancelled after a timeout
  }
  return text + decoder.decode();
}

/**
 * Runs the port on one vector: the vector JSON on stdin, stdout parsed as one
 * JSON object. The port runs in its own process group, so a timeout kills it
 * and everything it started.
 */
async function runPort(input: unknown): Promise<PortCheck<Record<string, unknown>>> {
  const child = new Deno.Command("sh", {
    args: ["-c", cmd!],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
  const stdout = collect(child.stdout);
  const stderr = collect(child.stderr);
  const feed = (async () => {
    const w = child.stdin.getWriter();
    try {
      await w.write(new TextEncoder().encode(JSON.stringify(input)));
      await w.close();
    } catch {
      // the port exited without reading all of its input; its exit status tells
    }
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutSeconds * 1000);
  });
  const done = Promise.all([child.status, stdout, stderr, feed]);
  const first = await Promise.race([done, timedOut]);
  clearTimeout(timer);
  if (first === "timeout") {
    for (const target of [-child.pid, child.pid]) {
      try {
        Deno.kill(target, "SIGKILL");
      } catch {
        // already gone
      }
    }
    // the pipes close once the killed process group is gone; do not wait on
    // anything that escaped the group
    await Promise.race([done, new Promise((r) => setTimeout(r, 1000))]);
    return { ok: false, reason: `timed out after ${timeoutSeconds} s (port killed)` };
  }
  const [status, out, err] = first;
  if (status.signal !== null) {
    return { ok: false, reason: `port was killed by ${status.signal} (${stderrExcerpt(err)})` };
  }
  if (status.code !== 0) {
    return { ok: false, reason: `port exited with code ${status.code} (${stderrExcerpt(err)})` };
  }
  const parsed = parsePortStdout(out);
  if (!parsed.ok && out.trim() === "" && err.trim() !== "") {
    return { ok: false, reason: `${parsed.reason} (${stderrExcerpt(err)})` };
  }
  return parsed;
}

function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

function displayFile(file: string): string {
  const rel = relative(root, file);
  return rel.startsWith("..") || isAbsolute(rel) ? file : rel;
}

let passed = 0;
let failed = 0;
let unsupported = 0;
const alternatives: { id: string; steps: number[] }[] = [];
const failures: { id: string; file: string; problems: string[] }[] = [];
const fail = (id: string, file: string, problems: string[]) => {
  failed++;
  failures.push({ id, file, problems });
};

async function runLayerFile(file: string, rel: string): Promise<void> {
  const { cases, problems } = loadLayerFile(file, root);
  if (problems.length > 0) return fail("(file)", rel, problems.map((p) => p.message));
  for (const { input } of cases) {
    try {
      // a port is given the inputs only; the expectations stay here (SPEC §10)
      const json = cmd
        ? await runPort(layerInput(input))
        : { ok: true as const, value: { ...runLayerCase(layerInput(input)) } };
      const result = json.ok ? parseLayerPortOutput(json.value, input.id) : json;
      if (!result.ok) {
        fail(input.id, rel, [result.reason]);
        continue;
      }
      if ("unsupported" in result.value) {
        unsupported++;
        continue;
      }
      const p = compareLayerResult(input, result.value);
      if (p.length === 0) passed++;
      else fail(input.id, rel, p);
    } catch (e) {
      fail(input.id, rel, [`runner error: ${errorText(e)}`]);
    }
  }
}

async function runScenarioFile(v: Scenario, rel: string): Promise<void> {
  try {
    let json: PortCheck<Record<string, unknown>>;
    if (cmd) json = await runPort(scenarioInput(v));
    else {
      const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-conf-")));
      try {
        json = { ok: true, value: { ...await runScenario(scenarioInput(v), cwd, homedir()) } };
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    }
    const out = json.ok ? parseScenarioPortOutput(json.value, v.id) : json;
    if (!out.ok) return fail(v.id, rel, [out.reason]);
    const verdict = compareScenario(v, out.value);
    if (verdict.problems.length > 0) return fail(v.id, rel, verdict.problems);
    passed++;
    if (verdict.alternativeDiffs.length > 0) {
      alternatives.push({ id: v.id, steps: verdict.alternativeDiffs });
    }
  } catch (e) {
    fail(v.id, rel, [`runner error: ${errorText(e)}`]);
  }
}

for (const file of files) {
  const rel = displayFile(file);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    fail("(file)", rel, [`not a readable JSON vector file: ${errorText(e)}`]);
    continue;
  }
  if (raw !== null && typeof raw === "object" && "layer" in raw) {
    await runLayerFile(file, rel);
    continue;
  }
  const parsed = ScenarioSchema.safeParse(raw);
  if (!parsed.success) {
    const id = (raw as { id?: unknown } | null)?.id;
    fail(typeof id === "string" ? id : "(file)", rel, [
      `not a valid scenario vector: ${parsed.error.message.replace(/\s+/g, " ")}`,
    ]);
    continue;
  }
  await runScenarioFile(parsed.data, rel);
}

const cell = (s: string) => s.replaceAll("|", "\\|");
if (failures.length > 0) {
  console.log("FAILURES");
  console.log("| vector | file | problem |");
  console.log("| --- | --- | --- |");
  for (const f of failures) {
    console.log(`| ${cell(f.id)} | ${cell(f.file)} | ${cell(f.problems[0].split("\n")[0])} |`);
  }
  console.log("");
  for (const f of failures) {
    console.log(`${f.id} (${f.file}):`);
    for (const p of f.problems) console.log(`  ${p}`);
  }
}
console.log(`port: ${cmd ?? "reference (in process)"}`);
if (alternatives.length > 0) {
  console.log(`${alternatives.length} scenarios passed with an alternative diff:`);
  for (const a of alternatives) console.log(`  ${a.id} (steps ${a.steps.join(", ")})`);
}
if (unsupported > 0) console.log(`${unsupported} layer cases not supported by the port`);
console.log(`${passed} passed, ${failed} failed`);
Deno.exit(failed === 0 ? 0 : 1);
