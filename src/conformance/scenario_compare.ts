/**
 * Compares a port's output for a scenario vector with the vector's
 * expectations. A diff that differs from the reference text is still accepted
 * (and reported separately) as an alternative diff when its patch applies
 * cleanly to an earlier content of the file and yields the current content
 * (an earlier content: the vector's file, what a `write` step put there, what
 * the model wrote with `writeTool` or made with a successful `editTool`),
 * AND its first line is `[readcache: <n> lines changed of <totalLines>]` with
 * `n` the added plus removed lines of its own hunks and `totalLines` the
 * current file's line count (`text.split("\n").length`), AND its `--- a/` and
 * `+++ b/` lines name the display path.
 *
 * Specified by SPEC.md §10.
 *
 * @module
 */
import { posix } from "node:path";
import { applyPatch, parsePatch, type StructuredPatch } from "diff";
import { resolveReadTarget } from "../core/range.ts";
import { applyPiEdit, editCallArgs } from "../core/edit.ts";
import { editArgsOf, type ScenarioOutput, type StepResult } from "./session_simulator.ts";
import type { Scenario, ScenarioStep } from "./vector_schema.ts";

/** Outcome of one scenario. */
export interface ScenarioVerdict {
  /** Problems; empty when the scenario passes. */
  problems: string[];
  /** Steps whose diff text differs from the reference but applies correctly. */
  alternativeDiffs: number[];
  /** The `read` steps with a problem, in step order (the differential mode reports the first). */
  differingSteps: number[];
}

function decode(c: string | { base64: string }): string {
  return typeof c === "string"
    ? c
    : new TextDecoder().decode(Uint8Array.from(atob(c.base64), (ch) => ch.charCodeAt(0)));
}

// The vector's files live in a virtual working directory; read paths are
// resolved against it with pi's rules (`@`, `./`, `path:N-M` shorthand), and
// `symlink` steps are followed like the file system would.
const VECTOR_CWD = "/vector";
const VECTOR_HOME = "/vector-home";

/** The virtual files of a scenario: contents by real path, and symbolic links. */
interface VirtualTree {
  /** Every content a real file has had, oldest first; the last is current. */
  versions: Map<string, string[]>;
  /** Real path -> current content (absent when removed). */
  current: Map<string, string>;
  /** Link path -> absolute target. */
  links: Map<string, string>;
}

function fileKey(p: string): string {
  return posix.resolve(VECTOR_CWD, p);
}

/** Follows symbolic links in every component of an absolute virtual path. */
function realKey(tree: VirtualTree, abs: string): string {
  let rest = abs.split("/").filter((c) => c !== "");
  let out = "/";
  for (let hops = 0; rest.length > 0;) {
    const next = posix.join(out, rest.shift()!);
    const target = tree.links.get(next);
    if (target !== undefined && hops++ < 40) {
      rest = [...target.split("/").filter((c) => c !== ""), ...rest];
      out = "/";
    } else out = next;
  }
  return out;
}

/** A new content of the file at `key`: its current one, and one more earlier content. */
function setContent(tree: VirtualTree, key: string, c: string): void {
  tree.versions.set(key, [...(tree.versions.get(key) ?? []), c]);
  tree.current.set(key, c);
}

function applyFileStep(tree: VirtualTree, step: ScenarioStep): void {
  if (step.op === "write" || step.op === "writeTool") {
    // what another process wrote, or what the model wrote with its write tool: a content the
    // file has had (an alternative diff may start from it)
    setContent(tree, realKey(tree, fileKey(step.path)), decode(step.content));
  } else if (step.op === "editTool") {
    // the model's edit, applied as pi applies it (a failed edit changes nothing)
    const key = realKey(tree, fileKey(step.path));
    const now = tree.current.get(key);
    const edits = editCallArgs(editArgsOf(step))?.edits;
    if (now === undefined || edits === undefined) return;
    const r = applyPiEdit(now, edits, step.path);
    if (r.ok) setContent(tree, key, r.text);
  } else if (step.op === "remove") {
    const link = fileKey(step.path);
    if (!tree.links.delete(link)) tree.current.delete(realKey(tree, link));
  } else if (step.op === "symlink") {
    const link = fileKey(step.path);
    tree.current.delete(link);
    tree.links.set(link, posix.resolve(posix.dirname(link), step.target));
  }
}

/** The real file a read step targets (a key of `tree.current`) and its display path. */
function locate(
  step: Extract<ScenarioStep, { op: "read" }>,
  tree: VirtualTree,
): { key: string; displayPath: string } {
  try {
    const t = resolveReadTarget(
      { path: step.path, offset: step.offset, limit: step.limit },
      { cwd: VECTOR_CWD, home: VECTOR_HOME, exists: (p) => tree.current.has(realKey(tree, p)) },
    );
    return { key: realKey(tree, t.resolvedPath), displayPath: t.displayPath };
  } catch {
    return { key: realKey(tree, fileKey(step.path)), displayPath: step.path };
  }
}

/** Checks every read step's result against its `expect`. */
export function compareScenario(vector: Scenario, output: ScenarioOutput): ScenarioVerdict {
  const problems: string[] = [];
  const alternativeDiffs: number[] = [];
  const differingSteps: number[] = [];
  if (output.id !== vector.id) problems.push(`id: expected ${vector.id}, got ${output.id}`);
  const byStep = new Map<number, StepResult>(output.results.map((r) => [r.step, r]));
  const tree: VirtualTree = { versions: new Map(), current: new Map(), links: new Map() };
  for (const [p, c] of Object.entries(vector.files)) {
    tree.versions.set(fileKey(p), [decode(c)]);
    tree.current.set(fileKey(p), decode(c));
  }
  const reads = vector.steps.filter((s) => s.op === "read").length;
  if (output.results.length !== reads) {
    problems.push(`expected ${reads} results (one per read step), got ${output.results.length}`);
  }
  vector.steps.forEach((step, i) => {
    if (step.op !== "read") return applyFileStep(tree, step);
    const before = problems.length;
    compareRead(step, i);
    if (problems.length > before) differingSteps.push(i);
  });
  return { problems, alternativeDiffs, differingSteps };

  function compareRead(step: Extract<Scenario["steps"][number], { op: "read" }>, i: number): void {
    const r = byStep.get(i);
    const at = `step ${i} (read ${step.path})`;
    if (!r) return void problems.push(`${at}: no result`);
    const e = step.expect;
    if (e.error !== undefined) {
      if (!("error" in r)) {
        problems.push(
          `${at}: expected error containing ${JSON.stringify(e.error)}, got mode ${r.mode}`,
        );
      } else if (!r.error.includes(e.error)) {
        problems.push(
          `${at}: error ${JSON.stringify(r.error)} does not contain ${JSON.stringify(e.error)}`,
        );
      }
      return;
    }
    if ("error" in r) {
      return void problems.push(`${at}: unexpected error ${JSON.stringify(r.error)}`);
    }
    if (e.mode !== undefined && r.mode !== e.mode) {
      problems.push(`${at}: mode expected ${e.mode}, got ${r.mode}`);
    }
    if (e.scope !== undefined && r.scope !== e.scope) {
      problems.push(`${at}: scope expected ${e.scope}, got ${r.scope}`);
    }
    if (e.text !== undefined && r.text !== e.text) {
      const { key, displayPath } = locate(step, tree);
      const now = tree.current.get(key);
      if (r.mode !== "diff" || e.mode !== "diff" || now === undefined) {
        problems.push(`${at}: text differs\n${shortDiff(e.text, r.text)}`);
      } else {
        const why = alternativeDiffProblems(r.text, tree.versions.get(key) ?? [], now, displayPath);
        if (why.length === 0) alternativeDiffs.push(i);
        else {
          problems.push(
            `${at}: diff text differs and is not a valid alternative diff: ${why.join("; ")}\n${
              shortDiff(e.text, r.text)
            }`,
          );
        }
      }
    }
    for (const inc of e.textIncludes ?? []) {
      if (!r.text.includes(inc)) {
        problems.push(`${at}: text does not include ${JSON.stringify(inc)}`);
      }
    }
  }
}

/**
 * Why a diff payload is not an acceptable alternative to the reference text;
 * empty when it is acceptable.
 */
function alternativeDiffProblems(
  payload: string,
  versions: string[],
  now: string,
  displayPath: string,
): string[] {
  const problems: string[] = [];
  const lines = payload.split("\n");
  let patch: StructuredPatch | undefined;
  try {
    const patches = parsePatch(lines.slice(1).join("\n") + "\n");
    if (patches.length === 1) patch = patches[0];
    else problems.push(`its patch names ${patches.length} files, expected 1`);
  } catch (e) {
    problems.push(`its patch does not parse (${e instanceof Error ? e.message : String(e)})`);
  }
  const header = /^\[readcache: (0|[1-9]\d*) lines? changed of (0|[1-9]\d*)\]$/.exec(lines[0]);
  if (!header) {
    problems.push(
      `first line ${JSON.stringify(lines[0])} is not "[readcache: <n> lines changed of <total>]"`,
    );
  } else {
    if (patch) {
      const changed = patch.hunks.reduce(
        (n, h) => n + h.lines.filter((l) => l.startsWith("+") || l.startsWith("-")).length,
        0,
      );
      if (Number(header[1]) !== changed) {
        problems.push(
          `wrong changed-line count: header says ${header[1]}, its hunks change ${changed}`,
        );
      }
    }
    const total = now.split("\n").length;
    if (Number(header[2]) !== total) {
      problems.push(`wrong total: header says ${header[2]} lines, the file has ${total}`);
    }
  }
  for (const [line, want] of [[1, `--- a/${displayPath}`], [2, `+++ b/${displayPath}`]] as const) {
    if (lines[line] !== want) {
      problems.push(
        `line ${line + 1} should be ${JSON.stringify(want)}, got ${
          JSON.stringify(lines[line] ?? "<end>")
        }`,
      );
    }
  }
  if (patch) {
    if (patch.hunks.length === 0) problems.push("it has no hunks");
    else if (!versions.some((v) => appliesTo(v, patch, now))) {
      problems.push("its patch does not turn any earlier content of the file into the current one");
    }
  }
  return problems;
}

function appliesTo(base: string, patch: StructuredPatch, now: string): boolean {
  try {
    return applyPatch(base, patch) === now;
  } catch {
    return false;
  }
}

/** A short line diff of expected vs actual text, for failure reports. */
export function shortDiff(expected: string, actual: string): string {
  const a = expected.split("\n");
  const b = actual.split("\n");
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) {
      return `    first difference at line ${i + 1}:\n    - ${
        JSON.stringify(a[i] ?? "<end>")
      }\n    + ${
        JSON.stringify(b[i] ?? "<end>")
      }\n    (expected ${a.length} lines, got ${b.length})`;
    }
  }
  return "    (texts differ only in length)";
}
