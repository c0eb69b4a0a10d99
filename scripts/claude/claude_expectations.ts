/**
 * How the Claude Code port's results are compared with a scenario vector:
 * which vectors apply to Claude Code (a rule computed from the vector's
 * content) and what each expectation of an applicable vector means there.
 *
 * Claude Code's `Read` splits lines as SPEC §4.3 does, so the host's answers
 * are the core's texts (markers, diffs, partial answers) as they are in pi:
 * those expectations stand as written (the port writes paths under the
 * project relative, as the vector names them). A plain read's text is Claude
 * Code's own: the lines of its window, without pi's notices; an expected
 * plain text is rewritten to them where pi shows the same window. An
 * expected error becomes Claude Code's (`File does not exist.` for a missing
 * file).
 *
 * A vector does not apply, for each of these reasons (`NOT_APPLICABLE`),
 * when: `path-syntax` (pi's `@`, `~`, `path:N-M`), `line-args` (an offset or
 * limit that is not a positive integer, or an offset past the end: Claude
 * Code answers with a notice of its own), `truncation` (a read whose window
 * pi cuts, at 2,000 lines or 50 KB, where Claude Code shows another),
 * `line-model` and `not-text` (as for OpenCode: CR, a BOM, an empty file,
 * lines over 2,000 characters; images and binary files), `bypass` (Claude
 * Code's `Read` has no `bypass_cache`), `edit` (an edit that is not one
 * replacement Claude Code's exact match applies as pi's does), `refresh` (no refresh tool yet), `cut-message` (Claude Code keeps an
 * aborted message), `deferred` (a result appended with a later call's),
 * `tree` (a move to a point from before a fork: another transcript),
 * `output-cut` (a command or a search whose output pi cuts: pi's grep shows
 * at most 100 matches and cuts lines over 500 characters, Claude Code's
 * `Grep` as this port runs it shows every match whole), `pi-text` (an expectation in
 * pi's words with no Claude Code counterpart), `diff-margin` (an expected diff so near the size a
 * diff may have that the host's, whose headers name the absolute path, may be over it).
 *
 * @module
 */
import { tmpdir } from "node:os";
import { renderBaselineRead } from "../../src/core/baseline.ts";
import { DEFAULT_DECISION_CONFIG } from "../../src/core/decision.ts";
import type { Scenario, ScenarioStep } from "../../src/conformance/vector_schema.ts";
import { applyPiEdit } from "../../src/core/edit.ts";
import { bytesOf, contentReason, VirtualFiles } from "../opencode/opencode_expectations.ts";
import { singleReplacement } from "../opencode/opencode_scenario_runner.ts";

/** Why a vector does not apply to the Claude Code port, in words. */
export const NOT_APPLICABLE = {
  "path-syntax": "a path in pi's own syntax (@..., ~..., path:N-M); the model types file_path",
  "line-args":
    "an offset or limit that is not a positive integer, or an offset past the end (Claude Code's own notice)",
  truncation: "a read pi cuts (2,000 lines, 50 KB) where Claude Code shows another window",
  "line-model":
    "a file with CR line ends, a BOM, no line, or a line over 2000 characters: the host does not cache it",
  "not-text": "an image or a binary file: Claude Code shows no text of it",
  bypass: "bypass_cache: Claude Code's Read has no such argument",
  edit:
    "an edit that is not one replacement Claude Code's exact match applies as pi does (several, empty, unchanged, or pi's normalising match)",
  refresh: "a refresh: the Claude Code host has no refresh tool yet",
  "cut-message": "an aborted message: Claude Code keeps its output",
  deferred: "a result appended with a later call's",
  tree: "a move to a point from before a fork (another transcript)",
  "output-cut": "a command or a search whose output pi cuts",
  "pi-text": "an expectation in pi's words with no Claude Code counterpart",
  "diff-margin":
    "a diff near the size a diff may have: the host's headers name the file by its absolute path, so its diff is longer and may be over the limit",
} as const;

/**
 * How much longer the host's diff headers can be than the vector's (bytes): each of its two
 * header lines names the file by its absolute path under the port's project directory, a
 * temporary directory.
 */
const PATH_ROOM = 2 * (tmpdir().length + "/readcache-claude-port-XXXXXXXX/".length);

/** A diff the core serves: under this share of the plain answer's bytes (its default). */
const DIFF_BYTES_RATIO = DEFAULT_DECISION_CONFIG.maxDiffBytesRatio;

/** A reason of {@linkcode NOT_APPLICABLE}. */
export type NotApplicableReason = keyof typeof NOT_APPLICABLE;

/** The rule's answer: the vector to compare with, or the steps that do not apply by reason. */
export type ClaudeVector =
  | { applies: true; vector: Scenario }
  | { applies: false; reasons: Partial<Record<NotApplicableReason, number[]>> };

type ReadStep = Extract<ScenarioStep, { op: "read" }>;
const LOSSY_UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** Decides whether a scenario vector applies to the Claude Code port (see the module doc). */
export function claudeVector(vector: Scenario): ClaudeVector {
  const reasons: Partial<Record<NotApplicableReason, number[]>> = {};
  const no = (why: NotApplicableReason, index: number): void => {
    (reasons[why] ??= []).push(index);
  };
  const fs = new VirtualFiles();
  for (const [p, c] of Object.entries(vector.files)) fs.set(p, bytesOf(c));
  const pathSyntax = (p: string) =>
    p.startsWith("@") || p.startsWith("~") || /:\d+(-\d+)?$/.test(p);
  const labels = new Map<string, number>(); // label -> fork generation it was set in
  let generation = 0;
  const steps: ScenarioStep[] = [];
  vector.steps.forEach((s, i) => {
    switch (s.op) {
      case "read": {
        if (pathSyntax(s.path)) no("path-syntax", i);
        if (s.bypass !== undefined) no("bypass", i);
        const positive = (n: number | undefined) =>
          n === undefined || (Number.isSafeInteger(n) && n > 0);
        if (!positive(s.offset) || !positive(s.limit)) no("line-args", i);
        const bytes = fs.get(s.path);
        const why = bytes === undefined ? undefined : contentReason(fs.abs(s.path), bytes);
        if (why === "not-text" || why === "line-model") no(why, i);
        steps.push({ ...s, expect: translate(s, bytes, i, no) });
        return;
      }
      case "bash":
        if (s.persist === "deferred") no("deferred", i);
        if (fs.runBash(s.command).split("\n").length > 2000) no("output-cut", i);
        break;
      case "grep":
        if (s.persist === "deferred") no("deferred", i);
        if (grepCut(fs, s.pattern, s.path)) no("output-cut", i);
        break;
      case "writeTool":
        if (pathSyntax(s.path)) no("path-syntax", i);
        if (s.persist === "deferred") no("deferred", i);
        fs.set(s.path, new TextEncoder().encode(s.content));
        break;
      case "editTool": {
        if (pathSyntax(s.path)) no("path-syntax", i);
        if (s.persist === "deferred") no("deferred", i);
        const r = singleReplacement(s);
        const bytes = fs.get(s.path);
        if (r === undefined || r.oldText === "" || r.oldText === r.newText) {
          no("edit", i);
          break;
        }
        if (bytes === undefined) break; // both fail: a missing file
        const text = LOSSY_UTF8.decode(bytes);
        const pi = applyPiEdit(text, [r], s.path);
        const at = text.indexOf(r.oldText);
        const exact = at >= 0 && text.indexOf(r.oldText, at + 1) < 0
          ? text.slice(0, at) + r.newText + text.slice(at + r.oldText.length)
          : undefined;
        // pi's edit and Claude Code's exact one must agree (pi's normalising match is not Claude
        // Code's, which is not modelled)
        if (
          at < 0 || pi.ok !== (exact !== undefined) || (pi.ok && (pi.fuzzy || pi.text !== exact))
        ) {
          no("edit", i);
        } else if (exact !== undefined) fs.set(s.path, new TextEncoder().encode(exact));
        break;
      }
      case "invalidate":
        no("refresh", i);
        break;
      case "cutMessage":
        no("cut-message", i);
        break;
      case "label":
        labels.set(s.name, generation);
        break;
      case "navigate":
        if (labels.get(s.to) !== generation) no("tree", i);
        break;
      case "fork":
        generation++;
        break;
      default:
        fs.apply(s);
    }
    steps.push(s);
  });
  if (Object.keys(reasons).length > 0) return { applies: false, reasons };
  return { applies: true, vector: { ...vector, steps } };
}

/**
 * Whether pi's grep cuts what a search of `path` shows (more than 100
 * matching lines, or one over 500 characters), where Claude Code's `Grep`
 * shows every match whole: the model's views differ.
 */
function grepCut(fs: VirtualFiles, pattern: string, path: string | undefined): boolean {
  const at = fs.real(path ?? ".");
  const re = new RegExp(pattern);
  let matches = 0;
  for (const [name, bytes] of fs.files) {
    if (name !== at && !name.startsWith(`${at}/`)) continue;
    for (const l of LOSSY_UTF8.decode(bytes).replace(/\r\n/g, "\n").split("\n")) {
      if (!re.test(l)) continue;
      if (++matches > 100 || l.replace(/\r/g, "").length > 500) return true;
    }
  }
  return false;
}

/** A read step's expectation in Claude Code's terms (reporting what cannot be). */
function translate(
  s: ReadStep,
  bytes: Uint8Array | undefined,
  index: number,
  no: (why: NotApplicableReason, index: number) => void,
): ReadStep["expect"] {
  const e = s.expect;
  const out = { ...e };
  if (e.error !== undefined) {
    if (e.error.includes("ENOENT")) out.error = "File does not exist.";
    else if (/^Offset \d+ is beyond end of file/.test(e.error)) no("line-args", index);
    else no("pi-text", index);
    return out;
  }
  if (bytes === undefined) return out;
  const text = LOSSY_UTF8.decode(bytes);
  const lines = text.split("\n");
  const start = s.offset ?? 1;
  if (start > lines.length) {
    no("line-args", index);
    return out;
  }
  const end = Math.min(lines.length, start - 1 + (s.limit ?? 2000));
  let pi;
  try {
    pi = renderBaselineRead({ text, displayPath: s.path, offset: s.offset, limit: s.limit });
  } catch {
    pi = undefined;
  }
  // pi cuts the window (2,000 lines, 50 KB) where Claude Code shows another: its answers differ
  if (pi === undefined || pi.shownStart !== start || pi.shownEnd !== end) {
    no("truncation", index);
    return out;
  }
  const mode = e.mode ?? null;
  // pi's notice of a cut window names the request pi got; the host asks for Claude Code's window
  const notice = /\[Showing lines |more lines in file\./;
  if (
    mode !== "full" && mode !== "baseline_fallback" && mode !== null &&
    [e.text ?? "", ...(e.textIncludes ?? [])].some((t) => notice.test(t))
  ) no("pi-text", index);
  if (mode === "diff" && e.text !== undefined) {
    // the host's diff names the file by its absolute path: near the limit, it may not be served
    const plain = s.offset === undefined && s.limit === undefined
      ? bytes.length
      : new TextEncoder().encode(pi.text).length;
    if (new TextEncoder().encode(e.text).length + PATH_ROOM >= DIFF_BYTES_RATIO * plain) {
      no("diff-margin", index);
    }
  }
  if (mode === "full" || mode === "baseline_fallback" || mode === null) {
    // a plain read: Claude Code's own lines of the window
    const own = lines.slice(start - 1, end).join("\n");
    if (e.text !== undefined) {
      if (e.text !== pi.text) no("pi-text", index);
      out.text = own;
    }
    if (e.textIncludes !== undefined) {
      if (e.textIncludes.some((t) => !own.includes(t))) no("pi-text", index);
    }
  }
  return out;
}
