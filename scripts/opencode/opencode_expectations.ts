/**
 * How the OpenCode port's results are compared with a scenario vector, in
 * one place: which vectors apply to OpenCode (a rule computed from the
 * vector's content), and what each expectation of an applicable vector means
 * in OpenCode (the vector rewritten into OpenCode's text). The comparison is
 * then the ordinary one (`compareScenario`) of the rewritten vector with the
 * port's output, so every expectation of an applicable vector is checked.
 *
 * The vectors expect pi's (0.73.1) text; OpenCode's model sees its own. The
 * rewrite, per read step (OpenCode's view = `renderOpenCodeRead` of the file
 * as the vector has it at that step, with the step's `offset` and `limit`,
 * named `<path>/project/…</path>`: the port prints the temporary project
 * directory as {@linkcode PROJECT_DIR}):
 *
 * - `mode` and `scope`: unchanged (the core's decisions; OpenCode's reads
 *   must give the same ones);
 * - `text` of a plain read (modes `full`, `baseline_fallback`, `null`): the
 *   expected text must be pi's own read of the file (`renderBaselineRead`),
 *   and pi's read must show the same lines as OpenCode's (pi's count has one
 *   more, empty, line after a final line break); it becomes OpenCode's own
 *   read text (OpenCode's view: the plugin must keep it byte for byte);
 * - `text` of a marker (`unchanged`, `unchanged_range`) and a diff's first
 *   line: the same marker with OpenCode's numbers (its first and last shown
 *   line and its line count), checked to say the same as pi's (the same
 *   first line, the same last line or pi's final empty line, pi's count of
 *   the file); the diff's hunks stay as they are (line numbers are the
 *   file's in both);
 * - `textIncludes`: a marker or header is rewritten as above; any other
 *   substring is kept (diff lines, file text), unless it is pi's own wording
 *   (a truncation notice, an image note), which does not apply;
 * - `error`: pi's host errors (SPEC §7.6) become OpenCode's: `ENOENT` →
 *   `File not found: `, `Offset N is beyond end of file` →
 *   `Offset N is out of range for this file`; any other expected error does
 *   not apply (it is pi's argument or range validation, SPEC §4.2).
 *
 * A vector does not apply, for each of these reasons (`NOT_APPLICABLE`),
 * when:
 *
 * - `path-syntax`: a path uses pi's own syntax (`@…`, `~…`, `path:N-M`);
 * - `line-args`: a read's `offset` or `limit` is not a positive integer
 *   (pi's validation, SPEC §4.2; OpenCode reads 0 as 1 and has its own);
 * - `truncation`: a read pi cuts at 2,000 lines that OpenCode, asked for more
 *   lines with `limit`, shows in full: the plugin caches only a window both
 *   show alike;
 * - `tree`: it moves to a label that is not on the session's message list
 *   (another branch, or messages a revert deleted, or another session);
 *   OpenCode has no tree, only revert;
 * - `partial`: a read expects a partial answer (SPEC §8.4) without its text
 *   or marker: OpenCode's partial answer is written from the lines the
 *   marker names as held, and is not given when it is not much smaller than
 *   OpenCode's own answer;
 * - `line-model`: a read of a file with `\r`, a BOM, no line at all (empty),
 *   or a line OpenCode shortens (over 2000 characters): OpenCode's line
 *   model differs from the core's there and the plugin never caches it;
 *   also a write over a file that starts with a BOM (OpenCode's `write`
 *   keeps the mark, pi's writes the content as given, so the file the
 *   scenario's later steps meet differs);
 * - `not-text`: a read of a file OpenCode does not show as text (an image,
 *   a file its binary test refuses: `looksBinary` of opencode_tools.ts);
 * - `edit-shape`: an edit that is not one replacement OpenCode's exact match
 *   applies as pi does (several replacements, an empty or unchanged old
 *   text, a text not found exactly: pi's and OpenCode's normalising matchers
 *   differ and OpenCode's are not modelled; pi and exact matching disagree).
 *   An edit of a missing file, or of a text found more than once, fails in
 *   both and applies;
 * - `deferred`: a write or edit whose result comes with a later call of its
 *   message (`persist: "deferred"`, SPEC §10): several edits of one file in
 *   one message are one belief in pi (rule 4 of SPEC §5.9); the plugin takes
 *   none from them, as OpenCode does not pin their order;
 * - `pi-text`: an expectation is pi's wording with no OpenCode counterpart
 *   (see above: a plain read whose shown lines differ from OpenCode's,
 *   pi's notices, another error).
 *
 * @module
 */
import { classifyShellCommand } from "../../src/core/shell_view.ts";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, posix, relative, resolve, sep } from "node:path";
import { runBashStep, startsTurn } from "../../src/conformance/session_simulator.ts";
import { renderOpenCodeRead, splitOpenCodeLines } from "../../src/adapters/opencode/baseline.ts";
import { openCodePartialAnswer } from "../../src/adapters/opencode/answer.ts";
import { DEFAULT_DECISION_CONFIG } from "../../src/core/decision.ts";
import { renderBaselineRead } from "../../src/core/baseline.ts";
import { applyPiEdit } from "../../src/core/edit.ts";
import {
  diffHeader,
  rangeDiffHeader,
  unchangedMarker,
  unchangedRangeElsewhereMarker,
  unchangedRangeMarker,
} from "../../src/core/markers.ts";
import { countLines } from "../../src/core/range.ts";
import type { Scenario, ScenarioStep } from "../../src/conformance/vector_schema.ts";
import { singleReplacement } from "./opencode_scenario_runner.ts";
import { imageMime, looksBinary, startsWithBom } from "./opencode_tools.ts";

/**
 * The project directory as the OpenCode port prints it: the port replaces
 * the temporary directory it ran in with this in every text and error.
 *
 * @example
 * ```ts
 * import { PROJECT_DIR } from "./opencode_expectations.ts";
 * PROJECT_DIR; // "/project"
 * ```
 */
export const PROJECT_DIR = "/project";

/**
 * Why a vector does not apply to OpenCode, by reason id (see the module
 * documentation).
 *
 * @example
 * ```ts
 * import { NOT_APPLICABLE } from "./opencode_expectations.ts";
 * NOT_APPLICABLE.tree; // "moves to a point off the session's message list; OpenCode has revert, not a tree"
 * ```
 */
export const NOT_APPLICABLE = {
  "path-syntax":
    "a path in pi's own syntax (@..., ~..., path:N-M); OpenCode takes filePath as a path",
  "line-args":
    "a read offset or limit that is not a positive integer (pi's own validation, SPEC §4.2)",
  truncation:
    "a read pi cuts at 2,000 lines that OpenCode, asked for more with limit, shows in full: the plugin caches only a window both show alike",
  tree: "moves to a point off the session's message list; OpenCode has revert, not a tree",
  partial:
    "expects a partial answer (SPEC §8.4) without its text: OpenCode's answer is written from the lines held, and may be too large to give",
  "line-model":
    "reads a file with CR line ends, a BOM, no line, or a line over 2000 characters (or writes over a file with a BOM, which OpenCode's write keeps): OpenCode's line model differs, the plugin never caches it",
  "not-text":
    "reads an image or a file OpenCode's read refuses as binary: OpenCode shows no text of it",
  "edit-shape":
    "an edit OpenCode's one exact replacement does not apply as pi's edit (several replacements, empty old text, pi's normalising match)",
  deferred:
    "a write or edit answered with a later call of its message: pi's belief from several edits of one file in one message (SPEC §5.9 rule 4); the OpenCode plugin takes none",
  "pi-text": "an expectation in pi's own wording with no OpenCode counterpart",
  "output-cut":
    "a command whose output pi's bash cuts (2,000 lines or 50 KB) and OpenCode's bash cuts its own way",
  "pi-grep":
    "a cached answer from lines pi's grep tool printed (`path:N: text`); OpenCode's grep prints its own layout, which the plugin does not take as views",
  "unanswered-shell":
    "a read-only shell command that never returns: OpenCode stores the call as failed without the plugin's record, so every file counts as changed",
  "cut-message":
    "an assistant message pi aborted or ended in an error: pi runs none of its calls and drops it from the context; OpenCode keeps what an aborted message produced",
} as const;

/**
 * A reason id of {@linkcode NOT_APPLICABLE}.
 *
 * @example
 * ```ts
 * import type { NotApplicableReason } from "./opencode_expectations.ts";
 * const r: NotApplicableReason = "tree";
 * ```
 */
export type NotApplicableReason = keyof typeof NOT_APPLICABLE;

/**
 * The verdict of {@linkcode openCodeVector}: the vector with its expectations
 * in OpenCode's terms, or why it does not apply (each reason with the steps
 * that give it).
 *
 * @example
 * ```ts
 * import type { OpenCodeVector } from "./opencode_expectations.ts";
 * const v: OpenCodeVector = { applies: false, reasons: { tree: [3] } };
 * ```
 */
export type OpenCodeVector =
  | { applies: true; vector: Scenario }
  | { applies: false; reasons: Partial<Record<NotApplicableReason, number[]>> };

type ReadStep = Extract<ScenarioStep, { op: "read" }>;
type Expect = ReadStep["expect"];

export function bytesOf(c: string | { base64: string }): Uint8Array {
  return typeof c === "string"
    ? new TextEncoder().encode(c)
    : Uint8Array.from(atob(c.base64), (ch) => ch.charCodeAt(0));
}

/** True for a path inside the virtual project directory. */
function inProject(p: string): boolean {
  return p.startsWith(`${PROJECT_DIR}/`);
}

/** What a `bash` command printed and left in the project (files and links, in walk order). */
interface BashOutcome {
  output: string;
  files: [string, Uint8Array][];
  links: [string, string][];
  /** Directories there afterwards (empty ones too). */
  dirs: string[];
}

/**
 * Outcomes of `bash` commands by command and project state: the oracle asks
 * for a generated session's rule again after dropping the steps it names, so
 * the same commands meet the same files again (a real run each time was half
 * of the OpenCode port's time).
 */
const BASH_OUTCOMES = new Map<string, BashOutcome>();

/** The vector's files in a virtual project directory, with symbolic links followed. */
export class VirtualFiles {
  readonly files = new Map<string, Uint8Array>();
  readonly links = new Map<string, string>();
  /**
   * Directories of the project that exist (a file's directories, kept when the file is removed,
   * as on disk: `rm sub/c.txt` leaves `sub/`, where a later `cp` can write).
   */
  readonly dirs = new Set<string>();

  abs(p: string): string {
    return posix.resolve(PROJECT_DIR, p);
  }

  real(p: string): string {
    let rest = this.abs(p).split("/").filter((c) => c !== "");
    let out = "/";
    for (let hops = 0; rest.length > 0;) {
      const next = posix.join(out, rest.shift()!);
      const target = this.links.get(next);
      if (target !== undefined && hops++ < 40) {
        rest = [...target.split("/").filter((c) => c !== ""), ...rest];
        out = "/";
      } else out = next;
    }
    return out;
  }

  get(p: string): Uint8Array | undefined {
    return this.files.get(this.real(p));
  }

  set(p: string, bytes: Uint8Array): void {
    const real = this.real(p);
    this.files.set(real, bytes);
    for (let d = posix.dirname(real); inProject(d); d = posix.dirname(d)) this.dirs.add(d);
  }

  /**
   * Runs a `bash` step's command on a copy of the files (links included) and
   * takes back what it changed (files and links it made or removed too), so
   * the model keeps the content later reads are translated from.
   */
  runBash(command: string): string {
    const key = this.#stateKey(command);
    let outcome = BASH_OUTCOMES.get(key);
    if (outcome === undefined) {
      outcome = this.#runBash(command);
      if (BASH_OUTCOMES.size >= 2000) BASH_OUTCOMES.delete(BASH_OUTCOMES.keys().next().value!);
      BASH_OUTCOMES.set(key, outcome);
    }
    for (const p of [...this.files.keys()]) if (inProject(p)) this.files.delete(p);
    for (const p of [...this.links.keys()]) if (inProject(p)) this.links.delete(p);
    this.dirs.clear();
    for (const [p, bytes] of outcome.files) this.files.set(p, bytes);
    for (const [link, target] of outcome.links) this.links.set(link, target);
    for (const d of outcome.dirs) this.dirs.add(d);
    return outcome.output;
  }

  /** The command and every file and link in the project, as a key (a SHA-256). */
  #stateKey(command: string): string {
    const h = createHash("sha256").update(`${command}\0`);
    for (const [p, bytes] of this.files) {
      if (inProject(p)) h.update(`f${p.length}:${p}${bytes.length}:`).update(bytes);
    }
    for (const [link, target] of this.links) {
      if (inProject(link)) h.update(`l${link.length}:${link}${target.length}:${target}`);
    }
    for (const d of [...this.dirs].sort()) h.update(`d${d.length}:${d}`);
    return h.digest("hex");
  }

  #runBash(command: string): BashOutcome {
    const files: [string, Uint8Array][] = [];
    const links: [string, string][] = [];
    const dirs: string[] = [];
    const dir = mkdtempSync(join(tmpdir(), "readcache-oc-expect-"));
    const at = (p: string) => join(dir, posix.relative(PROJECT_DIR, p));
    try {
      for (const d of this.dirs) if (inProject(d)) mkdirSync(at(d), { recursive: true });
      for (const [p, bytes] of this.files) {
        if (!inProject(p)) continue;
        mkdirSync(dirname(at(p)), { recursive: true });
        writeFileSync(at(p), bytes);
      }
      for (const [link, target] of this.links) {
        if (!inProject(link)) continue;
        mkdirSync(dirname(at(link)), { recursive: true });
        symlinkSync(inProject(target) ? at(target) : target, at(link));
      }
      const output = runBashStep(command, dir);
      // every regular file and link now there, those the command made (`cp`, `>`, `rm`) included
      const back = (full: string) =>
        posix.join(PROJECT_DIR, relative(dir, full).split(sep).join("/"));
      const walk = (d: string): void => {
        for (const e of readdirSync(d, { withFileTypes: true })) {
          const full = join(d, e.name);
          if (e.isSymbolicLink()) {
            const target = resolve(dirname(full), readlinkSync(full));
            const rel = relative(dir, target);
            links.push([
              back(full),
              rel.startsWith("..") || isAbsolute(rel) ? target : back(target),
            ]);
          } else if (e.isDirectory()) {
            dirs.push(back(full));
            walk(full);
          } else if (e.isFile()) files.push([back(full), readFileSync(full)]);
        }
      };
      walk(dir);
      return { output, files, links, dirs };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  apply(step: ScenarioStep): void {
    if (step.op === "write") this.set(step.path, bytesOf(step.content));
    else if (step.op === "remove") {
      if (!this.links.delete(this.abs(step.path))) this.files.delete(this.real(step.path));
    } else if (step.op === "symlink") {
      const link = this.abs(step.path);
      this.files.delete(link);
      this.links.set(link, posix.resolve(posix.dirname(link), step.target));
    }
  }
}

const LOSSY_UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });
const encoder = new TextEncoder();

/** Why a read of these bytes is outside what the port checks, if it is. */
export function contentReason(path: string, b: Uint8Array): NotApplicableReason | undefined {
  if (imageMime(b) !== undefined || looksBinary(path, b.subarray(0, 4096))) return "not-text";
  const text = LOSSY_UTF8.decode(b);
  if (text.startsWith("\uFEFF") || text.includes("\r") || text === "") return "line-model";
  if (splitOpenCodeLines(text).some((l) => l.length > 2000)) return "line-model";
  return undefined;
}

const PI_WORDING = [/\[Showing lines /, /more lines in file\./, /Read image file/, /exceeds 50/];

/**
 * Decides whether a scenario vector applies to the OpenCode port and, when
 * it does, rewrites its expectations into OpenCode's (see the module
 * documentation for the rule and the rewrite).
 *
 * @example
 * ```ts
 * import { openCodeVector } from "./opencode_expectations.ts";
 * const v = openCodeVector({ id: "x", title: "t", refs: ["§7"], files: { "a.txt": "a\n" },
 *   steps: [{ op: "read", path: "a.txt", expect: { mode: "full", text: "a\n" } },
 *     { op: "read", path: "a.txt", expect: { mode: "unchanged", text: "[readcache: unchanged, 2 lines]" } }] });
 * v.applies && v.vector.steps[1]; // { op: "read", path: "a.txt", expect: { mode: "unchanged", text: "[readcache: unchanged, 1 lines]" } }
 * ```
 */
export function openCodeVector(vector: Scenario): OpenCodeVector {
  const reasons: Partial<Record<NotApplicableReason, number[]>> = {};
  const no = (why: NotApplicableReason, index: number): void => {
    (reasons[why] ??= []).push(index);
  };
  const fs = new VirtualFiles();
  for (const [p, c] of Object.entries(vector.files)) fs.set(p, bytesOf(c));
  // the session's message list, as units (one per appended message group), for labels
  let session = 0;
  let line: number[] = [];
  let visible = 0;
  let unit = 0;
  const append = (): void => {
    line.splice(visible);
    line.push(++unit);
    visible = line.length;
  };
  const labels = new Map<string, { session: number; count: number; last?: number }>();
  const steps: ScenarioStep[] = [];
  // a call step (a read, write, edit, command or search) starts a message as the runner makes
  // them (SPEC §10): unless the call before it is still in flight
  const isCall = (s: ScenarioStep) =>
    s.op === "read" || s.op === "writeTool" || s.op === "editTool" || s.op === "bash" ||
    s.op === "grep";
  const pathSyntax = (p: string) => p.startsWith("@") || p.startsWith("~");
  let grepped = false;

  vector.steps.forEach((s, i) => {
    if (isCall(s) && startsTurn(vector.steps, i)) append();
    switch (s.op) {
      case "read": {
        if (pathSyntax(s.path) || /:\d+(-\d+)?$/.test(s.path)) no("path-syntax", i);
        const positive = (n: number | undefined) =>
          n === undefined || (Number.isSafeInteger(n) && n > 0);
        if (!positive(s.offset) || !positive(s.limit)) no("line-args", i);
        // a partial answer is checked through the lines its marker names as held
        if (
          s.expect.mode === "partial" && s.expect.text === undefined &&
          !(s.expect.textIncludes ?? []).some((t) => PARTIAL_MARKER.test(t))
        ) no("partial", i);
        const key = fs.real(s.path);
        const bytes = fs.files.get(key);
        const why = bytes === undefined ? undefined : contentReason(fs.abs(s.path), bytes);
        if (why !== undefined) no(why, i);
        if (bytes !== undefined && s.limit !== undefined && s.limit > 2000) {
          const window = splitOpenCodeLines(LOSSY_UTF8.decode(bytes)).length - (s.offset ?? 1) + 1;
          if (Math.min(s.limit, window) > 2000) no("truncation", i);
        }
        if (grepped && s.expect.mode !== "full" && s.expect.mode !== "baseline_fallback") {
          no("pi-grep", i);
        }
        const expect = translate(s, bytes, i, no, vector.config?.maxDiffBytesRatio);
        steps.push({ ...s, expect });
        return;
      }
      case "bash":
        if (s.persist === "deferred") no("deferred", i);
        if (s.persist === false && classifyShellCommand(s.command).readOnly) {
          no("unanswered-shell", i);
        }
        // pi's bash cuts long output; OpenCode's cuts it its own way
        if (fs.runBash(s.command).split("\n").length > 2000) no("output-cut", i);
        break;
      case "grep":
        if (s.persist === "deferred") no("deferred", i);
        grepped = true;
        break;
      case "writeTool":
        if (pathSyntax(s.path)) no("path-syntax", i);
        if (s.persist === "deferred") no("deferred", i);
        // OpenCode's write keeps a BOM the file starts with and drops one the content starts
        // with; pi's writes the content as given: that write is the step that does not apply (the
        // reads after it stay checkable once it is gone)
        if (
          startsWithBom(fs.get(s.path) ?? new Uint8Array()) || s.content.startsWith("\uFEFF")
        ) {
          no("line-model", i);
          break; // the step goes: the files stay as they were
        }
        fs.set(s.path, new TextEncoder().encode(s.content)); // written even when not yet returned
        break;
      case "editTool": {
        if (pathSyntax(s.path)) no("path-syntax", i);
        if (s.persist === "deferred") no("deferred", i);
        const key = fs.real(s.path);
        const r = singleReplacement(s);
        const bytes = fs.files.get(key);
        if (r === undefined || r.oldText === "" || r.oldText === r.newText) {
          no("edit-shape", i);
          break;
        }
        if (bytes === undefined) break; // both fail: a missing file
        const text = LOSSY_UTF8.decode(bytes);
        const pi = applyPiEdit(text, [r], s.path);
        const at = text.indexOf(r.oldText);
        const exact = at >= 0 && text.indexOf(r.oldText, at + 1) < 0
          ? text.slice(0, at) + r.newText + text.slice(at + r.oldText.length)
          : undefined;
        // not found exactly: OpenCode would try its normalising matchers, which are not modelled
        if (
          at < 0 || pi.ok !== (exact !== undefined) || (pi.ok && (pi.fuzzy || pi.text !== exact))
        ) {
          no("edit-shape", i);
        } else if (exact !== undefined) fs.files.set(key, new TextEncoder().encode(exact));
        break;
      }
      case "message":
      case "compact":
        append();
        break;
      case "cutMessage":
        // OpenCode keeps an aborted message's output in the context: another host's rule
        no("cut-message", i);
        break;
      case "label":
        labels.set(s.name, { session, count: visible, last: line[visible - 1] });
        break;
      case "navigate": {
        const to = labels.get(s.to);
        if (
          to === undefined || to.session !== session || to.count > line.length ||
          line[to.count - 1] !== to.last
        ) {
          no("tree", i);
        } else visible = to.count;
        break;
      }
      case "fork":
        session++;
        line = line.slice(0, visible).map(() => ++unit);
        visible = line.length;
        break;
      case "invalidate":
        // the plugin's readcache_refresh: a tool call in an assistant message of its own
        if (pathSyntax(s.path) || /:\d+(-\d+)?$/.test(s.path)) no("path-syntax", i);
        append();
        break;
      default:
        fs.apply(s);
    }
    steps.push(s);
  });
  if (Object.keys(reasons).length > 0) return { applies: false, reasons };
  return { applies: true, vector: { ...vector, steps } };
}

/** A read step's expectation in OpenCode's terms (reporting what cannot be). */
/** pi's partial answer marker (SPEC §8.4): the held stretches and the file's line count. */
const PARTIAL_MARKER =
  /^\[readcache: unchanged in lines ([\d, -]+) of (\d+); the other lines follow\]/;

/** The held stretches a partial answer's marker names (`1-3, 7, 9-12`). */
function heldOf(list: string): { start: number; end: number }[] {
  return list.split(", ").map((p) => {
    const [a, b] = p.split("-").map(Number);
    return { start: a, end: b ?? a };
  });
}

function translate(
  s: ReadStep,
  bytes: Uint8Array | undefined,
  index: number,
  no: (why: NotApplicableReason, index: number) => void,
  maxBytesRatio = DEFAULT_DECISION_CONFIG.maxDiffBytesRatio,
): Expect {
  const e = s.expect;
  const out: Expect = { ...e };
  if (e.error !== undefined) {
    const offset = /^Offset (\d+) is beyond end of file/.exec(e.error);
    if (e.error.includes("ENOENT")) out.error = "File not found: ";
    else if (offset) out.error = `Offset ${offset[1]} is out of range for this file`;
    else no("pi-text", index);
    return out;
  }
  if (bytes === undefined || (e.text === undefined && e.textIncludes === undefined)) return out;
  const text = LOSSY_UTF8.decode(bytes);
  const path = posix.resolve(PROJECT_DIR, s.path);
  const view = renderOpenCodeRead({ path, text, offset: s.offset, limit: s.limit });
  if (view === undefined) {
    no("pi-text", index);
    return out;
  }
  const piTotal = countLines(text);
  const endOk = (end: number) =>
    end === view.end ||
    (end === view.end + 1 && !view.more && end === piTotal && text.endsWith("\n"));
  /** A marker or diff header of pi, with OpenCode's numbers; undefined when it says otherwise. */
  const marker = (m: string): string | undefined => {
    let g = /^\[readcache: unchanged, (\d+) lines?\]$/.exec(m);
    if (g) return Number(g[1]) === piTotal ? unchangedMarker(view.fileLines) : undefined;
    g = /^\[readcache: unchanged in lines (\d+)-(\d+) of (\d+)\]$/.exec(m);
    if (g) {
      return Number(g[1]) === view.start && endOk(Number(g[2])) && Number(g[3]) === piTotal
        ? unchangedRangeMarker(view.start, view.end, view.fileLines)
        : undefined;
    }
    g = /^\[readcache: unchanged in lines (\d+)-(\d+); changes exist outside this range\]$/.exec(m);
    if (g) {
      return Number(g[1]) === view.start && endOk(Number(g[2]))
        ? unchangedRangeElsewhereMarker(view.start, view.end)
        : undefined;
    }
    g = /^\[readcache: (\d+) lines? changed of (\d+)\]$/.exec(m);
    if (g) return Number(g[2]) === piTotal ? diffHeader(Number(g[1]), view.fileLines) : undefined;
    g = /^\[readcache: (\d+) lines? changed in lines (\d+)-(\d+) of (\d+)\]$/.exec(m);
    if (g) {
      return Number(g[2]) === view.start && endOk(Number(g[3])) && Number(g[4]) === piTotal
        ? rangeDiffHeader(Number(g[1]), view.start, view.end, view.fileLines)
        : undefined;
    }
    return undefined;
  };
  if (e.mode === "partial") {
    // OpenCode's partial answer from the held lines pi's marker names, or OpenCode's own read
    // when it is not much smaller (SPEC §11.8)
    const g = PARTIAL_MARKER.exec(
      e.text ?? e.textIncludes?.find((t) => PARTIAL_MARKER.test(t)) ?? "",
    );
    if (g === null || Number(g[2]) !== piTotal) {
      no("pi-text", index);
      return out;
    }
    const partial = openCodePartialAnswer(view, text.split("\n"), heldOf(g[1]));
    const small = partial !== undefined &&
      encoder.encode(partial).length < maxBytesRatio * encoder.encode(view.text).length;
    // not small: OpenCode's own output, recorded as the plain answer it is (full, or a fallback)
    return small ? { mode: "partial", text: partial } : { text: view.text };
  }
  if (e.text !== undefined) {
    const mode = e.mode ?? null;
    if (mode === "full" || mode === "baseline_fallback" || mode === null) {
      let pi;
      try {
        pi = renderBaselineRead({ text, displayPath: s.path, offset: s.offset, limit: s.limit });
      } catch {
        pi = undefined;
      }
      if (
        pi === undefined || pi.text !== e.text || pi.shownStart !== view.start ||
        !endOk(pi.shownEnd)
      ) {
        no("pi-text", index);
      } else out.text = view.text;
    } else if (mode === "unchanged" || mode === "unchanged_range") {
      const m = marker(e.text);
      if (m === undefined) no("pi-text", index);
      else out.text = m;
    } else if (mode === "diff") {
      const nl = e.text.indexOf("\n");
      const m = marker(nl < 0 ? e.text : e.text.slice(0, nl));
      if (m === undefined || nl < 0) no("pi-text", index);
      else out.text = m + e.text.slice(nl);
    } else no("pi-text", index);
  }
  if (e.textIncludes !== undefined) {
    out.textIncludes = e.textIncludes.map((inc) => {
      if (PI_WORDING.some((w) => w.test(inc))) no("pi-text", index);
      if (!inc.startsWith("[readcache:")) return inc;
      const m = marker(inc);
      if (m === undefined) no("pi-text", index);
      return m ?? inc;
    });
  }
  return out;
}

/**
 * The port output with the temporary project directory `cwd` written as
 * {@linkcode PROJECT_DIR} in every text and error (OpenCode's read names
 * files by absolute path).
 *
 * @example
 * ```ts
 * import { portableOutput } from "./opencode_expectations.ts";
 * portableOutput({ id: "x", results: [{ step: 0, error: "File not found: /tmp/p/a" }] }, "/tmp/p")
 *   .results[0]; // { step: 0, error: "File not found: /project/a" }
 * ```
 */
export function portableOutput<
  T extends { id: string; results: ({ text: string } | { error: string })[] },
>(out: T, cwd: string): T {
  const fix = (t: string) => t.replaceAll(`${cwd}/`, `${PROJECT_DIR}/`);
  return {
    ...out,
    results: out.results.map((r) =>
      "error" in r ? { ...r, error: fix(r.error) } : { ...r, text: fix(r.text) }
    ),
  };
}
