// The model's view of one file name, rebuilt from the read outputs in its
// context: line number -> text, newest output wins, a missing entry is
// UNKNOWN; plus where the file ends, when the model has seen its end (a plain
// output that reached the end of the file, an unchanged marker, a diff).
// Line counts merely stated by a notice (`of Z`, `N more lines`) are not an
// observed end and change nothing: the model still holds the lines it holds.
// A partial answer (SPEC §8.4) sets the lines it shows and keeps the ones it
// says are unchanged; it shows where the file ends when its window reaches
// the line count its marker states and no notice follows it (as a plain
// output ends). `Effect` is what one read output tells the model; `applyEffect`
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
  /**
   * A partial answer: the stretches it shows are set, the lines it names as
   * unchanged stay; `end` is the file's last line when the answer showed it
   * (its window reaches the marker's count and no notice follows), else `null`.
   */
  | { kind: "partial"; shown: { start: number; lines: string[] }[]; end: number | null }
  /** A successful edit call of the model: its replacements (see {@linkcode applyEdit}). */
  | { kind: "edit"; edits: Replacement[] }
  /**
   * No line of the file contains `text` (a search printed every line that
   * does, SPEC §5.10): a known line that contains it is out of date, so
   * unknown; the other known lines stay.
   */
  | { kind: "absent"; text: string }
  /**
   * The file has no line from `line` on (a tool printed nothing from there):
   * known lines past it are gone, and so is line `line` unless it is the
   * empty last line of a file that ends with a line break; where the file
   * ends is unknown when the view put it past `line`.
   */
  | { kind: "dropFrom"; line: number };

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
    case "partial":
      for (const st of e.shown) st.lines.forEach((l, i) => v.lines.set(st.start + i, l));
      if (e.end !== null) setEnd(v, e.end);
      return v;
    case "edit":
      return applyEdit(v, e.edits);
    case "absent":
      for (const [k, l] of [...v.lines]) if (l.includes(e.text)) v.lines.delete(k);
      return v;
    case "dropFrom": {
      for (const k of [...v.lines.keys()]) {
        if (k > e.line || (k === e.line && v.lines.get(k) !== "")) v.lines.delete(k);
      }
      if (v.end !== null && v.end > e.line) v.end = null;
      return v;
    }
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

/** A view folded from effects, oldest first (onto `from`, which it changes; default: empty). */
export function foldView(effects: Iterable<Effect>, from: View = emptyView()): View {
  let v = from;
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
 * The first line an edit of `oldText` (LF line breaks) that the model cannot
 * place in its view could touch, by the model's own reasoning: pi's edit
 * succeeded, so the text is in the file once (exactly, or after pi's
 * normalisation); taking the lines it holds from line 1 on as the file has
 * them, the text can start no earlier than its first occurrence in that
 * stretch, or than the first place from which the rest of the stretch (with
 * the line break after its last line) is a beginning of the text, which would
 * run on into the line after it, not known. The trivial place is the end of
 * the stretch: the first line not known. (A stretch that reaches where the
 * model saw the file end is treated alike: its text is nowhere in a file the
 * model holds whole, so the model's view is out of date somewhere it cannot
 * tell; taking only the lines after it as unknown is what the model's view
 * still supports, and anything stricter would flag answers true of the file
 * and of every line the model holds.) With `normalised`, pi's normalised form
 * counts too (the earlier of the two): the model does not know which match pi
 * used. Line 1 not known: line 1.
 *
 * The stretch is compared the way pi matches: line 1's BOM off, a line's CR
 * ending and its line break one `\n`, any other CR a line break.
 */
function earliestPlace(v: View, oldText: string, normalised: boolean): number {
  if (!v.lines.has(1)) return 1;
  let k = 1;
  while (v.lines.has(k + 1)) k++;
  // the stretch as pi's text, in pieces, each with the view line it comes from
  const pieces: { line: number; text: string }[] = [];
  for (let i = 1; i <= k; i++) {
    let l = v.lines.get(i)!;
    if (i === 1 && l.startsWith("\uFEFF")) l = l.slice(1);
    if (l.endsWith("\r")) l = l.slice(0, -1);
    for (const t of PI_EDIT.normalizeToLF(l).split("\n")) pieces.push({ line: i, text: t });
  }
  const place = (norm: (t: string) => string): number => {
    const old = norm(oldText);
    const starts: number[] = [];
    let text = "";
    for (const [j, p] of pieces.entries()) {
      if (j > 0) text += "\n";
      starts.push(text.length);
      text += norm(p.text);
    }
    text += "\n";
    let q = text.indexOf(old);
    if (q === -1) {
      // a proper beginning of the text at the end of the stretch (the empty one at the very end)
      q = Math.max(0, text.length - old.length + 1);
      while (!old.startsWith(text.slice(q))) q++;
    }
    if (q === text.length) return k + 1;
    let j = 0;
    while (j + 1 < starts.length && starts[j + 1] <= q) j++;
    return pieces[j].line;
  };
  const exact = place((t) => t);
  return normalised ? Math.min(exact, place(PI_EDIT.normalizeForFuzzyMatch)) : exact;
}

/** The view with lines `from` on unknown, and where the file ends (mutates and returns it). */
function unknownFrom(v: View, from: number): View {
  for (const k of [...v.lines.keys()]) if (k >= from) v.lines.delete(k);
  v.end = null;
  return v;
}

/**
 * What the model believes after a successful edit call of its own (SPEC
 * §5.9): its view with each replacement applied at the place its view shows
 * the `oldText`, the lines after it shifted by the lines added or removed.
 * The model's reasoning: the lines it holds are the file's, where it saw the
 * file end the file ends, the lines it does not hold could be anything.
 *
 * - The model matches the way it reads: a line's CR ending (a CRLF file) and
 *   line 1's BOM are not text it types. Each `oldText` that occurs exactly
 *   once in the view's stretches of consecutive known lines is placed there;
 *   if the exact text is nowhere, pi's fallback normalisation is tried, as pi
 *   does.
 * - A normalised match placed in a view of part of the file is one of two
 *   possibilities: the exact text could be in lines the model does not hold,
 *   where pi would have matched it first. The model holds only what both
 *   give (the view with the normalised match applied, and the view with that
 *   replacement as one it cannot place, its exact text only): where they
 *   agree line by line. In a view of the whole file the exact text is
 *   nowhere, so the normalised match is what pi did.
 * - A replacement the model cannot place (nowhere in the view, or more than
 *   once: pi succeeded, so the file is not what the view shows around it) or
 *   replacements that overlap in the view: the model does not know where its
 *   edit landed, but not everywhere is possible. The lines before the
 *   earliest place it could start ({@linkcode earliestPlace}), and before the
 *   first line touched by any replacement of the call, stay as they are; from
 *   there on every line is UNKNOWN, and where the file ends. (Making the whole
 *   name unknown would be stricter than the model's own knowledge: a cached
 *   answer about the lines before, true of the file, would be flagged.)
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
  const copy = (): View => ({ lines: new Map(v.lines), end: v.end });
  const keys = [...v.lines.keys()];
  const whole = v.end !== null && keys.length === v.end && keys.every((k) => k <= v.end!);
  const a = editedView(copy(), edits, true);
  let out = a.view;
  if (a.normalised && !whole) {
    const b = editedView(copy(), edits, false).view;
    out = { lines: new Map(), end: a.view.end === b.end ? b.end : null };
    for (const [k, l] of a.view.lines) if (b.lines.get(k) === l) out.lines.set(k, l);
  }
  v.lines = out.lines;
  v.end = out.end;
  return v;
}

/**
 * {@linkcode applyEdit} with pi's normalised match tried (`normalised`) or
 * not; tells whether a replacement was placed by it.
 */
function editedView(
  v: View,
  edits: readonly Replacement[],
  normalised: boolean,
): { view: View; normalised: boolean } {
  const unknown = () => {
    v.lines.clear();
    v.end = null;
    return { view: v, normalised: false };
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
  /** The earliest line a replacement the model cannot place could touch. */
  let from = Infinity;
  for (const e of edits) {
    const oldText = PI_EDIT.normalizeToLF(e.oldText);
    const newText = PI_EDIT.normalizeToLF(e.newText);
    if (oldText === "") return unknown(); // pi refuses it: not a successful edit
    let hits = runs.flatMap((r, k) =>
      occurrences(r.text, oldText).map((from) => ({ run: k, from, to: from + oldText.length }))
    );
    let fuzzy = false;
    const f = PI_EDIT.normalizeForFuzzyMatch(oldText);
    if (hits.length === 0 && normalised && runs.every((r) => r.fuzzy !== undefined) && f !== "") {
      hits = runs.flatMap((r, k) =>
        occurrences(r.fuzzy!, f).map((from) => ({ run: k, from, to: from + f.length }))
      );
      fuzzy = true;
    }
    if (hits.length !== 1) {
      from = Math.min(from, earliestPlace(v, oldText, normalised));
      continue;
    }
    located.push({ ...hits[0], fuzzy, newText });
  }
  const matchedIn = (x: Located) => x.fuzzy ? runs[x.run].fuzzy! : runs[x.run].text;
  const firstTouched = (x: Located) => runs[x.run].start + lineOf(matchedIn(x), x.from);
  const overlap = runs.some((_, k) => {
    const here = located.filter((x) => x.run === k).sort((a, b) => a.from - b.from);
    return here.some((x, j) => j > 0 && here[j - 1].to > x.from);
  });
  const usedNormalised = located.some((x) => x.fuzzy);
  if (from !== Infinity || overlap) {
    return {
      view: unknownFrom(v, Math.min(from, ...located.map(firstTouched))),
      normalised: usedNormalised,
    };
  }
  // per run, the touched stretches of lines and what they become
  type Touch = { first: number; last: number; lines: (string | null)[] };
  const touches: Touch[] = [];
  for (const [k, r] of runs.entries()) {
    const here = located.filter((x) => x.run === k).sort((a, b) => a.from - b.from);
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
  return { view: v, normalised: usedNormalised };
}
