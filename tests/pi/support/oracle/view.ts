// The model's view of one file name, rebuilt from the read outputs in its
// context: line number -> text, newest output wins, a missing entry is
// UNKNOWN; plus where the file ends, when the model has seen its end (a plain
// output that reached the end of the file, an unchanged marker, a diff).
// Line counts merely stated by a notice (`of Z`, `N more lines`) are not an
// observed end and change nothing: the model still holds the lines it holds. `Effect` is what one read output tells the model; `applyEffect`
// folds it into a view using nothing but the output itself (no file access),
// so the same fold works for the context at read time and for the context
// after a turn ended (when unpersisted outputs have left it).
//
// An edit call the model made (and whose success it was told) is folded the
// same way: `applyEdit` is what the model believes it wrote, rebuilt from its
// view and the replacements it sent (see there).
import { PI_EDIT, type Replacement } from "./fs_model.ts";
import { applyHunks, type Hunk } from "./parse.ts";

/** What the model holds of one file name. */
export interface View {
  /** Known lines (1-based); a missing number is UNKNOWN. */
  lines: Map<number, string>;
  /** The last line, when the newest output that showed the end of the file says so; else `null`. */
  end: number | null;
}

/** What one read output tells the model about the file it named. */
export type Effect =
  | { kind: "nothing" }
  | { kind: "unknown" }
  | {
    kind: "shown";
    start: number;
    /** The lines shown; `null` marks a line shown in a form that is not its text (non-UTF-8). */
    lines: (string | null)[];
    /** The output reached the end of the file (no truncation or continuation notice). */
    eof: boolean;
  }
  | { kind: "unchanged"; total: number }
  | { kind: "unchanged_range"; start: number; end: number }
  | { kind: "diff"; hunks: Hunk[]; total: number }
  | { kind: "range_diff"; start: number; end: number; hunks: Hunk[] }
  /** A successful edit call of the model: its replacements (see {@linkcode applyEdit}). */
  | { kind: "edit"; edits: Replacement[] };

/** An empty view (the model holds nothing of the file). */
export function emptyView(): View {
  return { lines: new Map(), end: null };
}

function setEnd(v: View, end: number): void {
  for (const k of [...v.lines.keys()]) if (k > end) v.lines.delete(k);
  v.end = end;
}

/** The text of a view's lines 1..end when the end is known and every line is, else `undefined`. */
export function viewText(v: View): string | undefined {
  if (v.end === null) return undefined;
  const out: string[] = [];
  for (let i = 1; i <= v.end; i++) {
    const l = v.lines.get(i);
    if (l === undefined) return undefined;
    out.push(l);
  }
  return out.join("\n");
}

/** Lines of a text as pi counts them. */
export function textLines(text: string): string[] {
  return text.split("\n");
}

/** Folds one output into a view (mutates and returns it). */
export function applyEffect(v: View, e: Effect): View {
  switch (e.kind) {
    case "nothing":
      return v;
    case "unknown":
      v.lines.clear();
      v.end = null;
      return v;
    case "shown":
      e.lines.forEach((l, i) => {
        if (l === null) v.lines.delete(e.start + i);
        else v.lines.set(e.start + i, l);
      });
      if (e.eof) setEnd(v, e.start + e.lines.length - 1);
      return v;
    case "unchanged":
      setEnd(v, e.total);
      return v;
    case "unchanged_range":
      return v;
    case "edit":
      return applyEdit(v, e.edits);
    case "range_diff": {
      const r = applyRangeDiff(v, e.start, e.end, e.hunks);
      for (let i = e.start; i <= e.end; i++) v.lines.delete(i);
      if (r !== undefined && !("error" in r)) {
        r.lines.forEach((l, i) => v.lines.set(e.start + i, l));
      }
      return v;
    }
    case "diff": {
      const base = viewText(v);
      const r = base === undefined ? undefined : applyHunks(base, e.hunks);
      v.lines.clear();
      v.end = null;
      if (r !== undefined && "text" in r) {
        const lines = textLines(r.text);
        lines.forEach((l, i) => v.lines.set(i + 1, l));
        v.end = lines.length;
      }
      return v;
    }
  }
}

/** A view folded from effects, oldest first. */
export function foldView(effects: Iterable<Effect>): View {
  let v = emptyView();
  for (const e of effects) v = applyEffect(v, e);
  return v;
}

/** Describes the first line in `from..to` where the view does not hold `current`. */
export function firstMismatch(
  v: View,
  current: string[],
  from: number,
  to: number,
): string | undefined {
  for (let i = from; i <= to; i++) {
    const have = v.lines.get(i);
    if (have === undefined) return `line ${i} is unknown to the model`;
    if (i > current.length) return `line ${i} is past the end of the file`;
    if (have !== current[i - 1]) {
      return `line ${i}: the model holds ${JSON.stringify(have)}, the file has ${
        JSON.stringify(current[i - 1])
      }`;
    }
  }
  return undefined;
}

/**
 * Applies a range diff (SPEC §8.2: hunks in file line numbers over lines
 * `start..end`) to the view's lines `start..end`; every one of them must be
 * known. Returns the new lines, or why it does not apply.
 */
export function applyRangeDiff(
  v: View,
  start: number,
  end: number,
  hunks: Hunk[],
): { lines: string[] } | { error: string } | undefined {
  const held: string[] = [];
  for (let i = start; i <= end; i++) {
    const l = v.lines.get(i);
    if (l === undefined) return { error: `line ${i} is unknown to the model` };
    held.push(l);
  }
  const shifted = hunks.map((h) => ({
    ...h,
    oldStart: h.oldStart - (start - 1),
    newStart: h.newStart - (start - 1),
  }));
  const r = applyHunks(held.join("\n") + "\n", shifted);
  if ("error" in r) return r;
  const lines = textLines(r.text);
  lines.pop(); // the slice ends with a line terminator
  return { lines };
}

/** One replacement located in the view: where it matched in a run's text. */
interface Located {
  /** Index of the run. */
  run: number;
  /** Offsets of the match in the run's text (exact) or in its normalised form (fuzzy). */
  from: number;
  to: number;
  fuzzy: boolean;
  newText: string;
}

/** A stretch of consecutive known lines, as the model matches text in it. */
interface Run {
  start: number;
  end: number;
  /** The lines joined with LF, each line's CR ending and line 1's BOM taken off. */
  text: string;
  /** The same through pi's normalisation for its fallback match (line count kept), if it keeps lines. */
  fuzzy: string | undefined;
}

function occurrences(text: string, sub: string): number[] {
  const out: number[] = [];
  for (let i = text.indexOf(sub); i !== -1; i = text.indexOf(sub, i + 1)) out.push(i);
  return out;
}

function lineOf(text: string, offset: number): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * What the model believes after a successful edit call of its own (SPEC
 * §5.9): its view with each replacement applied at the place its view shows
 * the `oldText`, the lines after it shifted by the lines added or removed.
 *
 * - The model matches the way it reads: a line's CR ending (a CRLF file) and
 *   line 1's BOM are not text it types. Each `oldText` must occur exactly
 *   once in the view's stretches of consecutive known lines (pi's fallback
 *   normalisation is tried when the exact text is nowhere, as pi does);
 *   anywhere else, or twice, or replacements that overlap, and the model does
 *   not know where its edit landed: the whole view becomes UNKNOWN.
 * - Touched lines (from the line where a match starts to the line holding
 *   the first character after it) hold the replacement: for an exact match
 *   the text around the match stays as the view had it; for a normalised
 *   match only a replacement of whole lines is what the model typed (the
 *   rest of a touched line would be pi's normalised form, not what the model
 *   saw: UNKNOWN). The new lines end with CR like the others when every line
 *   the model holds does (a CRLF file); with mixed endings the new lines are
 *   UNKNOWN. Line 1 keeps its BOM.
 * - Untouched lines keep what the view holds (also after a normalised match,
 *   though pi rewrote the whole file normalised: the model does not know).
 */
export function applyEdit(v: View, edits: readonly Replacement[]): View {
  const unknown = () => {
    v.lines.clear();
    v.end = null;
    return v;
  };
  const known = [...v.lines.keys()].sort((a, b) => a - b);
  if (known.length === 0) return unknown();
  // line endings of the lines the model holds: all LF, all CRLF (the last line of the file
  // has none), or mixed
  const raw = (i: number) => v.lines.get(i)!;
  const noCr = known.every((i) => !raw(i).includes("\r"));
  const crlf = !noCr && known.every((i) => {
    const l = raw(i);
    const body = l.endsWith("\r") ? l.slice(0, -1) : l;
    return !body.includes("\r") && (i === v.end ? body === l : body !== l);
  });
  const bom = v.lines.get(1)?.startsWith("\uFEFF") ?? false;
  const typed = (i: number) => {
    let l = raw(i);
    if (l.endsWith("\r")) l = l.slice(0, -1);
    return i === 1 && bom ? l.slice(1) : l;
  };
  const runs: Run[] = [];
  for (const i of known) {
    const last = runs[runs.length - 1];
    if (last !== undefined && last.end === i - 1) {
      last.end = i;
      last.text += `\n${typed(i)}`;
    } else runs.push({ start: i, end: i, text: typed(i), fuzzy: undefined });
  }
  for (const r of runs) {
    const f = PI_EDIT.normalizeForFuzzyMatch(r.text);
    r.fuzzy = f.split("\n").length === r.end - r.start + 1 ? f : undefined;
  }
  // locate every replacement: exactly once in the view, exact first, then normalised
  const located: Located[] = [];
  for (const e of edits) {
    const oldText = PI_EDIT.normalizeToLF(e.oldText);
    const newText = PI_EDIT.normalizeToLF(e.newText);
    if (oldText === "") return unknown();
    let hits = runs.flatMap((r, k) =>
      occurrences(r.text, oldText).map((from) => ({ run: k, from, to: from + oldText.length }))
    );
    let fuzzy = false;
    if (hits.length === 0) {
      const f = PI_EDIT.normalizeForFuzzyMatch(oldText);
      if (runs.some((r) => r.fuzzy === undefined) || f === "") return unknown();
      hits = runs.flatMap((r, k) =>
        occurrences(r.fuzzy!, f).map((from) => ({ run: k, from, to: from + f.length }))
      );
      fuzzy = true;
    }
    if (hits.length !== 1) return unknown();
    located.push({ ...hits[0], fuzzy, newText });
  }
  // per run, the touched stretches of lines and what they become
  type Touch = { first: number; last: number; lines: (string | null)[] };
  const touches: Touch[] = [];
  for (const [k, r] of runs.entries()) {
    const here = located.filter((x) => x.run === k).sort((a, b) => a.from - b.from);
    for (let j = 1; j < here.length; j++) {
      if (here[j - 1].to > here[j].from) return unknown(); // overlapping in the view
    }
    // group matches that touch a common line
    const groups: Located[][] = [];
    for (const x of here) {
      const g = groups[groups.length - 1];
      const src = (y: Located) => y.fuzzy ? r.fuzzy! : r.text;
      if (g !== undefined) {
        const prev = g[g.length - 1];
        if (lineOf(src(prev), prev.to) >= lineOf(src(x), x.from)) {
          g.push(x);
          continue;
        }
      }
      groups.push([x]);
    }
    const lines = r.text.split("\n");
    for (const g of groups) {
      const src = (y: Located) => y.fuzzy ? r.fuzzy! : r.text;
      const firstLine = lineOf(src(g[0]), g[0].from);
      const lastLine = lineOf(src(g[g.length - 1]), g[g.length - 1].to);
      const region = lines.slice(firstLine, lastLine + 1);
      let out: (string | null)[];
      if (g.every((y) => !y.fuzzy)) {
        // the region's text with the matches replaced, offsets relative to the region
        const base = lines.slice(0, firstLine).reduce((n, l) => n + l.length + 1, 0);
        let text = region.join("\n");
        for (let j = g.length - 1; j >= 0; j--) {
          text = text.slice(0, g[j].from - base) + g[j].newText + text.slice(g[j].to - base);
        }
        out = text.split("\n");
      } else if (g.length === 1) {
        // a normalised match: what the model typed, when it replaced whole lines
        const x = g[0];
        const f = r.fuzzy!;
        const lineStart = f.lastIndexOf("\n", x.from - 1) + 1;
        const nl = f.indexOf("\n", x.to);
        const lineEnd = nl === -1 ? f.length : nl;
        const lastTyped = region[region.length - 1];
        const whole = lineStart === x.from && lineEnd === x.to &&
          lastTyped === lastTyped.trimEnd();
        out = whole ? x.newText.split("\n") : x.newText.split("\n").map(() => null);
      } else {
        // several matches on common lines, one of them normalised: the count is known
        let n = region.length;
        for (const y of g) {
          n += (y.newText.match(/\n/g)?.length ?? 0) -
            (src(y).slice(y.from, y.to).match(/\n/g)?.length ?? 0);
        }
        out = Array.from({ length: n }, () => null);
      }
      const first = r.start + firstLine;
      const last = r.start + lastLine;
      // line endings: CR on every new line but the last, which ends like the last touched line
      if (!noCr) {
        out = crlf
          ? out.map((l, j) =>
            l === null ? null : j < out.length - 1 || raw(last).endsWith("\r") ? `${l}\r` : l
          )
          : out.map(() => null);
      }
      if (first === 1 && bom && out.length > 0 && out[0] !== null) out[0] = `\uFEFF${out[0]}`;
      touches.push({ first, last, lines: out });
    }
  }
  // rebuild the view: untouched lines shifted by what the touched stretches before them added
  touches.sort((a, b) => a.first - b.first);
  const next = new Map<number, string>();
  let shift = 0;
  let t = 0;
  for (const i of known) {
    while (t < touches.length && touches[t].last < i) {
      shift += touches[t].lines.length - (touches[t].last - touches[t].first + 1);
      t++;
    }
    const cur = touches[t];
    if (cur !== undefined && cur.first <= i) {
      if (i === cur.first) {
        cur.lines.forEach((l, j) => {
          if (l !== null) next.set(i + shift + j, l);
        });
      }
      continue;
    }
    next.set(i + shift, raw(i));
  }
  for (; t < touches.length; t++) {
    shift += touches[t].lines.length - (touches[t].last - touches[t].first + 1);
  }
  v.lines = next;
  if (v.end !== null) v.end += shift;
  return v;
}
