// The output-level safety check. It walks a scenario vector with its own
// file system and session tree models and, for every `read` result the port
// printed, rebuilds what the model holds of that name from the outputs in its
// context, then decides whether a cached answer (`unchanged`,
// `unchanged_range`, `diff`, `partial`) is true of the current file given
// that view.
// Plain outputs are checked against the file too. Nothing here comes from the
// implementation: only the outputs.
//
// The model (pi semantics):
// - Turns: a turn is one assistant message carrying tool calls, the calls
//   being the `read`, `writeTool`, `editTool`, `bash` and `grep` steps; a call step starts a
//   new turn unless the previous call step had `persist: false` (it has not
//   returned); `write`, `remove`, `symlink` and `storeFault` steps may sit
//   between the calls of a turn (SPEC §10); any other step ends it.
// - Context: the outputs of the persisted reads and the write calls on the
//   active branch after its latest compaction, in order, plus the
//   unpersisted reads earlier in the same turn (when the turn ends, its
//   unpersisted outputs leave the context: they never reached the session).
//   A write call is in the assistant message, so it counts from the START of
//   its turn, before every result of that turn: a write whose result is in
//   the session shows the whole content it wrote (every line and where the
//   file ends); a write that never returned (`persist: false`) makes every
//   line of its name UNKNOWN and the end unknown, also after its turn (the
//   message stays in the session), until a later output shows them again.
//   Compaction, `/tree`, fork and restart treat it as the message it is in.
//   The write itself (pi's `write` tool: UTF-8, through links, path resolved
//   like a read's minus the `path:N-M` shorthand) changes the file model
//   when its step runs. A write of content that is not well-formed Unicode
//   (a lone surrogate) is what the model believes it wrote; pi writes U+FFFD
//   in its place, so the file holds something else.
// - Edit calls (`editTool`, pi's `edit` tool) sit in the assistant message
//   like write calls and count from the START of their turn too. What one
//   tells the model depends on its result: a successful edit whose result is
//   in the session is what the model believes it wrote, its view at that
//   point with each replacement applied where the view shows the old text
//   (view.ts `applyEdit`: exact edits of lines it holds are known, CR endings
//   of a CRLF file kept; a normalised ("fuzzy") match is known only where the
//   model replaced whole lines, and in a view of part of the file only where
//   that agrees with the exact text lying in lines the model does not hold;
//   an edit the model cannot place in its view (its text nowhere there, or
//   more than once) keeps the lines before the earliest place the text could
//   start in the lines held from line 1 on, and makes the rest UNKNOWN); an
//   edit pi refused (not found, found twice, no file, ...) tells the model
//   the file is unchanged (nothing); an edit that never returned makes the
//   name UNKNOWN like such a write. The outcome is
//   the edit step's (the turn's file changes before it replayed on a copy of
//   the file model). The edit itself is pi's edit tool on the file model
//   (fs_model.ts: BOM, line endings, exact then normalised matching, a
//   normalised match rewriting the whole file normalised).
// - Shell commands and searches (`bash` and `grep` steps, SPEC §5.10) are
//   calls like the others (`persist: false` never returns, `"deferred"`
//   returns with the next call of its turn that returns at once). What a
//   result showed is read by commands.ts: PRECISELY for the commands it
//   recognises (the lines a view printed, computed from the file model when
//   it ran; what a search did not print; nothing for a command that changes
//   files or shows none; for a chain of those joined by `&&` or `;`, each
//   part in the order it ran, a view's lines from the files as they were at
//   that moment, the last one printed the newest), else by the STRICTEST
//   reading (every file whole, as it is when the command returns). A command
//   the oracle does not recognise may also change or show any file at any
//   point of its message: every name is unknown from the start of its turn
//   (after the turn's writes and edits: they may have run before it), and
//   the turn's results are folded in every order that call may take among
//   them, the model holding only what all orders agree on (`foldContext`).
//   A result the model reads before a later call of its turn (a deferred one
//   that will return) counts for that call in call order; a result that
//   never comes shows nothing.
// - Names: a view per name as typed and resolved against cwd (`a.txt`,
//   `./a.txt`, `sub/../a.txt`, `@a.txt` are one name; a symlink is its own
//   name, never its target's).
// - View: line -> text, newest output wins, and where the file ends once the
//   model has seen its end. A plain output sets the lines it shows (and the
//   end, when it reached it: no notice); `[readcache: unchanged, T lines]`
//   keeps lines 1..T and ends the file at T; the range markers keep their
//   lines (the other lines stay as they were, also after "changes exist
//   outside this range"); a partial answer (SPEC §8.4) sets the lines it
//   shows and keeps those it names unchanged, and shows the end when its
//   window reaches its marker's count with no notice after it; a diff is
//   applied to lines 1..end of the view (all must be known) and the result is
//   the view. Line counts a notice merely states (`of Z`, `N more lines`)
//   change nothing. Non-UTF-8 plain reads, unparseable outputs and diffs that
//   do not apply make lines UNKNOWN. The fold uses the outputs only, so a
//   persisted answer whose base was an unpersisted read means nothing once
//   its turn is over.
// - Unsafe: a cached answer whose lines are not exactly the current file in
//   the view at that moment (unknown, or older text than the newest shown), a
//   diff that does not apply to the view or does not yield the file, wrong
//   line counts; a partial answer whose held lines are not so, whose shown
//   lines are not the file's, or whose stretches are not one window from the
//   requested line with pi's notice for it; a plain output whose text is not
//   the file's.
//
// Categories are `<mode>:<problem>`, the problem being `no-view` (no output in
// the context names the file), `unknown-line`, `stale-line`,
// `does-not-apply`, `wrong-result`, `count`, `missing-file`, `non-utf8`,
// `unparseable` or `wrong-content`.
import type { ScenarioOutput, StepResult } from "../../../../src/conformance/session_simulator.ts";
import type { Scenario } from "../../../../src/conformance/vector_schema.ts";
import {
  editToolArgs,
  type FileText,
  FsModel,
  type ResolvedRead,
  resolveRead,
  writeNameOf,
} from "./fs_model.ts";
import {
  applyHunks,
  type CachedAnswer,
  changedLines,
  type Notice,
  parseCached,
  parseShown,
} from "./parse.ts";
import { returnsAtOnce, SessionTree, startsTurn, turnCalls } from "./session_model.ts";
import { bashShown, grepShown, type NameEffects, readBash, strictView } from "./commands.ts";
import {
  applyEffect,
  applyRangeDiff,
  type Effect,
  emptyView,
  firstMismatch,
  foldView,
  type View,
  viewText,
} from "./view.ts";

/** Modes whose output relies on content already in the model's context. */
export const CACHED_MODES: readonly string[] = [
  "unchanged",
  "unchanged_range",
  "diff",
  "partial",
];

/** A read answer the model could not safely rely on. */
export interface UnsafeAnswer {
  /** Index of the `read` step in the vector. */
  step: number;
  /** The path as the step typed it. */
  path: string;
  /** The mode the port reported. */
  mode: string | null;
  /**
   * `<answer>:<problem>`, e.g. `unchanged:stale-line`, `diff:does-not-apply`,
   * `unchanged_range:no-view`, `full:wrong-content`.
   */
  category: string;
  /** What exactly is wrong. */
  reason: string;
  /** The output text (cut to 300 characters). */
  text: string;
}

/** Something odd that is not a safety problem (an unexpected error, say). */
export interface Anomaly {
  step: number;
  reason: string;
}

/** Result of checking one scenario run. */
/** What one check counts; a run of many sessions adds them up ({@linkcode addCounts}). */
export interface AnswerCounts {
  /** `read` steps. */
  reads: number;
  /** Reads answered with a cached mode. */
  cachedAnswers: number;
  /** `writeTool` steps. */
  writes: number;
  /** Cached answers for a name a write call in the model's context names. */
  cachedOnWritten: number;
  /** `editTool` steps. */
  edits: number;
  /** Answered edit calls pi refused (the file unchanged: not found, found twice, no file, ...). */
  editsRefused: number;
  /** Edit calls pi applied with its normalised match (the whole file rewritten normalised). */
  editsFuzzy: number;
  /** Edit calls that never returned (`persist: false`). */
  editsUnanswered: number;
  /** Cached answers for a name an edit call in the model's context names. */
  cachedOnEdited: number;
  /** `bash` steps. */
  bash: number;
  /** `grep` steps. */
  grep: number;
  /** `bash` and `grep` results read by the strictest reading (a command not recognised, an output pi cut). */
  toolsStrict: number;
  /** Cached answers for a name a `bash` or `grep` result in the model's context showed or changed. */
  cachedAfterTool: number;
  /** Results by mode (`error` for failed reads, `null` for plain reads). */
  modes: Record<string, number>;
}

/** Counts that start at zero. */
export function zeroCounts(): AnswerCounts {
  return {
    reads: 0,
    cachedAnswers: 0,
    writes: 0,
    cachedOnWritten: 0,
    edits: 0,
    editsRefused: 0,
    editsFuzzy: 0,
    editsUnanswered: 0,
    cachedOnEdited: 0,
    bash: 0,
    grep: 0,
    toolsStrict: 0,
    cachedAfterTool: 0,
    modes: {},
  };
}

/** Adds the counts of `from` to `into`. */
export function addCounts(into: AnswerCounts, from: AnswerCounts): void {
  into.reads += from.reads;
  into.cachedAnswers += from.cachedAnswers;
  into.writes += from.writes;
  into.cachedOnWritten += from.cachedOnWritten;
  into.edits += from.edits;
  into.editsRefused += from.editsRefused;
  into.editsFuzzy += from.editsFuzzy;
  into.editsUnanswered += from.editsUnanswered;
  into.cachedOnEdited += from.cachedOnEdited;
  into.bash += from.bash;
  into.grep += from.grep;
  into.toolsStrict += from.toolsStrict;
  into.cachedAfterTool += from.cachedAfterTool;
  for (const [m, n] of Object.entries(from.modes)) into.modes[m] = (into.modes[m] ?? 0) + n;
}

export interface CheckReport extends AnswerCounts {
  unsafe: UnsafeAnswer[];
  anomalies: Anomaly[];
}

interface Payload {
  /** The name it is about; `*` for every name. */
  name: string;
  effect: Effect;
  /** A write call (its content, or its unknown outcome), not a read output. */
  write?: true;
  /** An edit call (its replacements, or its unknown outcome), not a read output. */
  edit?: true;
  /** What a `bash` or `grep` call showed or changed. */
  tool?: true;
  /**
   * A result of a turn with an opaque call (see {@linkcode foldContext}):
   * the turn, the call it comes from, and whether that call may have run at
   * any point of the turn (an opaque call) or in call order.
   */
  group?: { id: number; element: number; float: boolean };
}

/** Most orders of one turn's results {@linkcode foldContext} folds before it gives up (all unknown). */
const MAX_ORDERS = 720;

/** The lines and the end every view agrees on. */
function agreed(views: View[]): View {
  const [first, ...rest] = views;
  const out: View = {
    lines: new Map(),
    end: rest.every((v) => v.end === first.end) ? first.end : null,
  };
  for (const [k, l] of first.lines) {
    if (rest.every((v) => v.lines.get(k) === l)) out.lines.set(k, l);
  }
  return out;
}

function copyView(v: View): View {
  return { lines: new Map(v.lines), end: v.end };
}

/**
 * Every order of `fixed` (kept in order) with the `floating` elements
 * anywhere; `undefined` when there are more than {@linkcode MAX_ORDERS}.
 */
function interleavings<T>(fixed: T[], floating: T[]): T[][] | undefined {
  let count = 1;
  for (let k = 1; k <= floating.length; k++) count *= fixed.length + k;
  if (count > MAX_ORDERS) return undefined;
  let out: T[][] = [fixed];
  for (const f of floating) {
    out = out.flatMap((seq) =>
      Array.from({ length: seq.length + 1 }, (_, i) => [...seq.slice(0, i), f, ...seq.slice(i)])
    );
  }
  return out;
}

/**
 * The model's view of one name from the payloads of its context, oldest
 * first. The results of a turn whose assistant message has an opaque call (a
 * shell command the oracle does not know to only read files) are one group:
 * such a call may have run before or after any other call of its message
 * (SPEC §5.10), so the model cannot order what it showed or changed against
 * what the other results showed; the group is folded in every order its
 * opaque calls allow (the other results keep their call order, as pi appends
 * them and the model reads them), and the model holds a line, or where the
 * file ends, only when every order gives the same.
 */
function foldContext(payloads: readonly Payload[]): View {
  let v = emptyView();
  for (let i = 0; i < payloads.length;) {
    const g = payloads[i].group;
    if (g === undefined) {
      v = applyEffect(v, payloads[i++].effect);
      continue;
    }
    const elements = new Map<number, { float: boolean; effects: Effect[] }>();
    for (; i < payloads.length && payloads[i].group?.id === g.id; i++) {
      const p = payloads[i];
      const e = elements.get(p.group!.element) ?? { float: p.group!.float, effects: [] };
      e.effects.push(p.effect);
      elements.set(p.group!.element, e);
    }
    const all = [...elements.values()];
    const orders = interleavings(
      all.filter((e) => !e.float).map((e) => e.effects),
      all.filter((e) => e.float).map((e) => e.effects),
    );
    if (orders === undefined) {
      v = emptyView();
      continue;
    }
    const base = v;
    v = agreed(orders.map((order) => foldView(order.flat(), copyView(base))));
  }
  return v;
}

/**
 * What a write call tells the model of the name it wrote (at the start of its
 * turn); `answered`: its result reaches the session.
 */
function writeEffect(step: { content: string }, answered: boolean): Effect {
  return !answered
    ? { kind: "unknown" }
    : { kind: "shown", start: 1, lines: step.content.split("\n"), eof: true };
}

/**
 * What an edit call tells the model of the name it edited (at the start of
 * its turn): `outcome` is what pi's edit did when the step ran.
 */
function editEffect(
  answered: boolean,
  outcome: { ok: boolean; edits?: { oldText: string; newText: string }[] },
): Effect {
  if (!answered) return { kind: "unknown" };
  return outcome.ok && outcome.edits !== undefined
    ? { kind: "edit", edits: outcome.edits }
    : { kind: "nothing" };
}

interface Verdict {
  effect: Effect;
  problem?: { kind: string; reason: string };
  anomaly?: string;
}

function cut(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}

/**
 * `no-view` (no output in the context names the file), `unknown-line` or
 * `stale-line` for a mismatch found in a view.
 */
function staleKind(seen: boolean, mismatch: string): string {
  if (!seen) return "no-view";
  return mismatch.includes("unknown") ? "unknown-line" : "stale-line";
}

/** Where a partial answer's window ends, and whether it showed the end of the file. */
function partialWindow(ans: Extract<CachedAnswer, { kind: "partial" }>) {
  const stretches = [
    ...ans.held,
    ...ans.shown.map((s) => ({ start: s.start, end: s.start + s.lines.length - 1 })),
  ].sort((a, b) => a.start - b.start);
  const first = stretches[0].start;
  const last = stretches[stretches.length - 1].end;
  const gap = stretches.findIndex((s, k) => k > 0 && s.start !== stretches[k - 1].end + 1);
  return { stretches, first, last, gap, eof: last === ans.total && ans.notice === null };
}

/** Why a partial answer's notice is not pi's for its window, or `undefined`. */
function noticeProblem(
  notice: Notice | null,
  first: number,
  last: number,
  total: number,
): string | undefined {
  if (notice === null) {
    return last === total
      ? undefined
      : `no notice, but the window ends at line ${last} of ${total}`;
  }
  if (last === total) return `a notice, but the window reaches the end of the file`;
  const ok = notice.kind === "more"
    ? notice.more === total - last && notice.next === last + 1
    : notice.from === first && notice.to === last && notice.total === total &&
      notice.next === last + 1;
  return ok ? undefined : `a notice that does not fit lines ${first}-${last} of ${total}`;
}

function checkCached(
  ans: CachedAnswer,
  req: ResolvedRead,
  view: View,
  seen: boolean,
  cur: FileText | undefined,
): Verdict {
  const effect: Effect = ans.kind === "partial"
    ? { kind: "partial", shown: ans.shown, end: partialWindow(ans).eof ? ans.total : null }
    : ans.kind === "diff"
    ? { kind: "diff", hunks: ans.hunks, total: ans.total }
    : ans.kind === "range_diff"
    ? { kind: "range_diff", start: ans.start, end: ans.end, hunks: ans.hunks }
    : ans.kind === "unchanged"
    ? { kind: "unchanged", total: ans.total }
    : { kind: "unchanged_range", start: ans.start, end: ans.end };
  const fail = (kind: string, reason: string): Verdict => ({ effect, problem: { kind, reason } });
  if (cur === undefined) return fail("missing-file", "the file does not exist");
  if (!cur.utf8) return fail("non-utf8", "the file is not UTF-8 text");
  const total = cur.lines.length;
  switch (ans.kind) {
    case "unchanged": {
      if (ans.total !== total) {
        return fail("count", `marker says ${ans.total} lines, the file has ${total}`);
      }
      const m = firstMismatch(view, cur.lines, 1, ans.total);
      return m === undefined ? { effect } : fail(staleKind(seen, m), m);
    }
    case "unchanged_range":
    case "unchanged_outside": {
      if (ans.start < 1 || ans.end < ans.start || ans.end > total) {
        return fail(
          "count",
          `lines ${ans.start}-${ans.end} are not a range of a ${total}-line file`,
        );
      }
      if (ans.kind === "unchanged_range" && ans.total !== total) {
        return fail("count", `marker says ${ans.total} lines, the file has ${total}`);
      }
      const m = firstMismatch(view, cur.lines, ans.start, ans.end);
      return m === undefined ? { effect } : fail(staleKind(seen, m), m);
    }
    case "range_diff": {
      if (ans.total !== total) {
        return fail("count", `diff header says ${ans.total} lines, the file has ${total}`);
      }
      if (ans.start < 1 || ans.end < ans.start || ans.end > total) {
        return fail(
          "count",
          `lines ${ans.start}-${ans.end} are not a range of a ${total}-line file`,
        );
      }
      const n = changedLines(ans.hunks);
      if (ans.changed !== n) {
        return fail("count", `diff header says ${ans.changed} lines changed, the diff has ${n}`);
      }
      const r = applyRangeDiff(view, ans.start, ans.end, ans.hunks);
      if (r === undefined || "error" in r) {
        return fail(seen ? "does-not-apply" : "no-view", r?.error ?? "does not apply");
      }
      const want = cur.lines.slice(ans.start - 1, ans.end);
      const i = r.lines.findIndex((l, k) => l !== want[k]);
      if (i !== -1 || r.lines.length !== want.length) {
        return fail(
          "wrong-result",
          `applied to lines ${ans.start}-${ans.end} of the model's view the diff gives ${
            JSON.stringify(r.lines[i])
          } at line ${ans.start + i}, the file has ${JSON.stringify(want[i])}`,
        );
      }
      return { effect };
    }
    case "diff": {
      if (ans.total !== total) {
        return fail("count", `diff header says ${ans.total} lines, the file has ${total}`);
      }
      const n = changedLines(ans.hunks);
      if (ans.changed !== n) {
        return fail("count", `diff header says ${ans.changed} lines changed, the diff has ${n}`);
      }
      const base = viewText(view);
      if (base === undefined) {
        const missing = view.end === null
          ? "the model has not seen where the file ends"
          : `line ${
            [...Array(view.end).keys()].map((i) => i + 1).find((i) => !view.lines.has(i))
          } of ${view.end} is unknown to the model`;
        return fail(seen ? "does-not-apply" : "no-view", missing);
      }
      const r = applyHunks(base, ans.hunks);
      if ("error" in r) return fail("does-not-apply", r.error);
      if (r.text !== cur.text) {
        const got = r.text.split("\n");
        const i = got.findIndex((l, k) => l !== cur.lines[k]);
        return fail(
          "wrong-result",
          `applied to the model's view the diff gives ${got.length} lines; line ${i + 1} is ${
            JSON.stringify(got[i])
          }, the file has ${JSON.stringify(cur.lines[i])}`,
        );
      }
      return { effect };
    }
    case "partial": {
      if (ans.total !== total) {
        return fail("count", `marker says ${ans.total} lines, the file has ${total}`);
      }
      const w = partialWindow(ans);
      if (w.last > total) {
        return fail("count", `lines ${w.first}-${w.last} are not a range of a ${total}-line file`);
      }
      for (const h of ans.held) {
        const m = firstMismatch(view, cur.lines, h.start, h.end);
        if (m !== undefined) return fail(staleKind(seen, m), m);
      }
      for (const st of ans.shown) {
        const i = st.lines.findIndex((l, k) => l !== cur.lines[st.start - 1 + k]);
        if (i !== -1) {
          return fail(
            "wrong-content",
            `line ${st.start + i} shown as ${JSON.stringify(st.lines[i])}, the file has ${
              JSON.stringify(cur.lines[st.start - 1 + i])
            }`,
          );
        }
      }
      if (w.gap !== -1) {
        const [a, b] = [w.stretches[w.gap - 1], w.stretches[w.gap]];
        return fail(
          "count",
          `the stretches are not one window: ${a.start}-${a.end} then ${b.start}-${b.end}`,
        );
      }
      const start = req.offset ?? 1;
      if (w.first !== start) {
        return fail(
          "count",
          `the answer's lines start at ${w.first}, the read asked from ${start}`,
        );
      }
      const n = noticeProblem(ans.notice, w.first, w.last, total);
      return n === undefined ? { effect } : fail("count", n);
    }
  }
}

function checkShown(text: string, req: ResolvedRead, cur: FileText | undefined): Verdict {
  const start = req.offset ?? 1;
  const p = parseShown(text, start);
  const fail = (kind: string, reason: string, effect: Effect): Verdict => ({
    effect,
    problem: { kind, reason },
  });
  if (p === undefined) {
    return fail("unparseable", "the output is not in pi's read format", { kind: "unknown" });
  }
  if (p.kind === "first-line-too-large") {
    const line = cur?.lines[start - 1];
    const big = line !== undefined && new TextEncoder().encode(line).length > 51200;
    return {
      effect: { kind: "nothing" },
      anomaly: big ? undefined : `first-line-too-large message for a line of normal size`,
    };
  }
  if (cur === undefined || !cur.utf8) {
    // a non-UTF-8 file is shown with U+FFFD: the model does not learn its lines
    const effect: Effect = {
      kind: "shown",
      start,
      lines: p.lines.map(() => null),
      eof: p.notice === "none",
    };
    return cur === undefined
      ? fail("wrong-content", "content shown for a file that does not exist", effect)
      : { effect };
  }
  const effect: Effect = { kind: "shown", start, lines: p.lines, eof: p.notice === "none" };
  if (p.total !== cur.lines.length) {
    return fail(
      "wrong-content",
      `output implies ${p.total} lines, the file has ${cur.lines.length}`,
      effect,
    );
  }
  for (let i = 0; i < p.lines.length; i++) {
    if (p.lines[i] !== cur.lines[start - 1 + i]) {
      return fail(
        "wrong-content",
        `line ${start + i} shown as ${JSON.stringify(p.lines[i])}, the file has ${
          JSON.stringify(cur.lines[start - 1 + i])
        }`,
        effect,
      );
    }
  }
  return { effect };
}

function judge(
  r: StepResult,
  req: ResolvedRead,
  view: View,
  seen: boolean,
  cur: FileText | undefined,
): Verdict {
  if ("error" in r) {
    const bad = (n: number | undefined) => n !== undefined && !(Number.isInteger(n) && n >= 1);
    const expected = cur === undefined || bad(req.offset) || bad(req.limit) ||
      (req.offset !== undefined && req.offset > cur.lines.length);
    return {
      effect: { kind: "nothing" },
      anomaly: expected ? undefined : `unexpected error: ${r.error}`,
    };
  }
  if (r.mode !== null && CACHED_MODES.includes(r.mode)) {
    const ans = parseCached(r.text);
    if (ans === undefined) {
      return {
        effect: { kind: "unknown" },
        problem: { kind: "unparseable", reason: "not a readcache marker or diff" },
      };
    }
    return checkCached(ans, req, view, seen, cur);
  }
  return checkShown(r.text, req, cur);
}

/**
 * Checks one port run of a scenario vector. Throws only when the vector
 * itself cannot run (a navigation to a label that does not exist).
 */
export function checkScenario(vector: Scenario, output: ScenarioOutput): CheckReport {
  const fs = FsModel.fromFiles(vector.files);
  const tree = new SessionTree<Payload>();
  const results = new Map(output.results.map((r) => [r.step, r]));
  const report: CheckReport = { ...zeroCounts(), unsafe: [], anomalies: [] };
  /**
   * Outputs of the current turn the model reads before the next call's, not
   * in the session yet: unpersisted reads, and what deferred `bash` and
   * `grep` calls that will return showed (in call order, as pi appends them).
   */
  let pending: Payload[] = [];
  /** The current turn has write calls: its assistant message is a `turn` entry of the tree. */
  let turnEntry = false;
  /** Results of `"deferred"` calls of the current turn, not yet in the session (their payloads). */
  let deferred: Payload[][] = [];
  /** The current turn: its number, whether its message has an opaque call, its last call returns. */
  let turn = { id: 0, opaque: false, lastReturns: true, calls: 0 };
  const endTurn = () => {
    pending = [];
    turnEntry = false;
    deferred = [];
    turn = { ...turn, opaque: false, lastReturns: true };
  };
  /** A call that returns at once: the deferred results of its turn come first, in call order. */
  const flushDeferred = () => {
    for (const d of deferred) tree.appendAll("result", d);
    deferred = [];
  };
  /** Appends the result of the call that ends the turn. */
  const appendResult = (payloads: Payload[]) => {
    flushDeferred();
    tree.appendAll(turnEntry ? "result" : "read", payloads);
    endTurn();
  };
  /** Tags the payloads of one call of the current turn with its group (in an opaque turn). */
  const grouped = (payloads: Payload[], float: boolean): Payload[] => {
    const element = turn.calls++;
    return turn.opaque
      ? payloads.map((p) => ({ ...p, group: { id: turn.id, element, float } }))
      : payloads;
  };
  /** A call step: at the start of a turn, its assistant message with the write calls. */
  const call = (index: number) => {
    if (!startsTurn(vector.steps, index)) return;
    endTurn();
    const writes: Payload[] = [];
    /** What the turn's opaque calls may change: unknown from the turn start, after its writes. */
    const opaqueUnknown: Payload[] = [];
    // the turn's file changes replayed on a copy, to know what each edit call of it will do
    const ahead = fs.clone();
    const calls = turnCalls(vector.steps, index);
    // a deferred result comes with the turn's last call, when that one returns at once
    const lastReturns = returnsAtOnce(vector.steps[calls[calls.length - 1]]);
    const answered = (s: { persist?: boolean | "deferred" }) =>
      s.persist === "deferred" ? lastReturns : s.persist !== false;
    let bash = false;
    let opaque = false;
    for (let i = index; i <= calls[calls.length - 1]; i++) {
      const s = vector.steps[i];
      if (s.op === "writeTool") {
        writes.push({
          name: writeNameOf(s.path),
          effect: writeEffect(s, answered(s)),
          write: true,
        });
      } else if (s.op === "editTool" && calls.includes(i)) {
        const effect = editEffect(answered(s), ahead.edit(editToolArgs(s)));
        writes.push({ name: writeNameOf(s.path), effect, edit: true });
        continue;
      } else if (s.op === "bash" && calls.includes(i)) {
        bash = true;
        ahead.runBash(s.command);
        if (readBash(s.command).kind !== "unknown") continue;
        opaque = true;
        // the strictest reading of a command the oracle does not know: it may show any file at
        // any point of its message (SPEC §5.10), so until its result no view is known
        opaqueUnknown.push({ name: "*", effect: { kind: "unknown" }, tool: true });
        continue;
      }
      applyFileStep(ahead, s);
    }
    turn = { id: turn.id + 1, opaque, lastReturns, calls: 0 };
    // a write or edit of a message with an opaque call may have run before or after it
    writes.push(...opaqueUnknown);
    if (writes.length > 0 || bash) {
      tree.appendAll("turn", writes);
      turnEntry = true;
    }
  };
  /**
   * A `bash` or `grep` result: `shown` what it showed; `float` for a command
   * the oracle does not know (it may have run at any point of its message).
   * One that never returns shows the model nothing.
   */
  const toolResult = (
    step: { persist?: boolean | "deferred" },
    shown: NameEffects[],
    float: boolean,
  ) => {
    const payloads = shown.flatMap((n) =>
      n.effects.map((effect): Payload => ({ name: n.name, effect, tool: true }))
    );
    if (step.persist === "deferred") {
      if (!turn.lastReturns) {
        turn.calls++;
        return; // never appended: the turn ends without a call that returns
      }
      pending.push(...payloads);
      deferred.push(grouped(payloads, float));
    } else if (step.persist !== false) appendResult(grouped(payloads, float));
    else turn.calls++;
  };

  vector.steps.forEach((step, index) => {
    switch (step.op) {
      case "read": {
        call(index);
        report.reads++;
        const req = resolveRead(fs, step);
        const r = results.get(index) ??
          { step: index, error: "(the port printed no result for this step)" };
        if (!results.has(index)) report.anomalies.push({ step: index, reason: "no result" });
        const context = [...tree.contextPayloads(), ...pending].filter((p) =>
          p.name === req.name || p.name === "*"
        );
        const view = foldContext(context);
        const cur = fs.text(req.name);
        const v = judge(r, req, view, context.some((p) => p.effect.kind !== "nothing"), cur);
        if (!("error" in r) && r.mode !== null && CACHED_MODES.includes(r.mode)) {
          report.cachedAnswers++;
          if (context.some((p) => p.write)) report.cachedOnWritten++;
          if (context.some((p) => p.edit)) report.cachedOnEdited++;
          if (context.some((p) => p.tool)) report.cachedAfterTool++;
        }
        const mode = "error" in r ? "error" : String(r.mode);
        report.modes[mode] = (report.modes[mode] ?? 0) + 1;
        if (v.problem !== undefined) {
          const mode = "error" in r ? null : r.mode;
          report.unsafe.push({
            step: index,
            path: step.path,
            mode,
            category: `${mode ?? "null"}:${v.problem.kind}`,
            reason: v.problem.reason,
            text: "error" in r ? "" : cut(r.text),
          });
        }
        if (v.anomaly !== undefined) report.anomalies.push({ step: index, reason: v.anomaly });
        const payload: Payload = { name: req.name, effect: v.effect };
        if (step.persist === false) {
          turn.calls++;
          pending.push(payload);
          if (!turnEntry) tree.unpersistedRead();
        } else appendResult(grouped([payload], false));
        return;
      }
      case "writeTool":
        call(index);
        report.writes++;
        turn.calls++;
        // pi's write tool: the content as UTF-8, through links, creating directories
        fs.write(writeNameOf(step.path), step.content);
        if (step.persist === "deferred") deferred.push([]);
        else if (step.persist !== false) appendResult([]);
        return;
      case "editTool": {
        call(index);
        report.edits++;
        turn.calls++;
        // pi's edit tool: through links, the file must exist, exact then normalised matching
        const out = fs.edit(editToolArgs(step));
        if (step.persist === false) report.editsUnanswered++;
        else if (!out.ok) report.editsRefused++;
        if (out.ok && out.fuzzy) report.editsFuzzy++;
        if (step.persist === "deferred") deferred.push([]);
        else if (step.persist !== false) appendResult([]);
        return;
      }
      case "bash": {
        call(index);
        report.bash++;
        const before = fs.clone();
        fs.runBash(step.command);
        // what it showed: the precise reading (commands.ts; the parts of a chain in order, each
        // view from the files as they were when it ran), or the strictest one: every file whole,
        // as it is now (SPEC §5.10)
        const precise = bashShown(step.command, before, fs);
        if (precise === undefined) report.toolsStrict++;
        toolResult(step, precise ?? strictView(fs), readBash(step.command).kind === "unknown");
        return;
      }
      case "grep": {
        call(index);
        report.grep++;
        const precise = grepShown(step, fs);
        if (precise === undefined) report.toolsStrict++;
        toolResult(step, precise ?? strictView(fs), false);
        return;
      }
      case "write":
      case "remove":
      case "symlink":
        applyFileStep(fs, step);
        return;
      case "storeFault":
        // not a session entry: the reads around it can be calls of one turn (SPEC §10)
        return;
      case "message":
      case "invalidate":
        tree.append("other");
        endTurn();
        return;
      case "compact":
        tree.append("compact");
        endTurn();
        return;
      case "label":
        tree.label(step.name);
        endTurn();
        return;
      case "navigate":
        tree.navigate(step.to);
        endTurn();
        return;
      case "fork":
        tree.fork();
        endTurn();
        return;
      case "restart":
        endTurn();
        return;
    }
  });
  return report;
}

/** Applies what a step does to the files, on a file model (reads and tree steps do nothing). */
function applyFileStep(fs: FsModel, step: Scenario["steps"][number]): void {
  switch (step.op) {
    case "write":
      fs.write(step.path, step.content);
      return;
    case "remove":
      fs.remove(step.path);
      return;
    case "symlink":
      fs.symlink(step.path, step.target);
      return;
    case "writeTool":
      fs.write(writeNameOf(step.path), step.content);
      return;
    case "editTool":
      fs.edit(editToolArgs(step));
      return;
    case "bash":
      fs.runBash(step.command);
      return;
  }
}
