// The model's view of one file name, rebuilt from the read outputs in its
// context: line number -> text, newest output wins, a missing entry is
// UNKNOWN; plus where the file ends, when the model has seen its end (a plain
// output that reached the end of the file, an unchanged marker, a diff).
// Line counts merely stated by a notice (`of Z`, `N more lines`) are not an
// observed end and change nothing: the model still holds the lines it holds. `Effect` is what one read output tells the model; `applyEffect`
// folds it into a view using nothing but the output itself (no file access),
// so the same fold works for the context at read time and for the context
// after a turn ended (when unpersisted outputs have left it).
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
  | { kind: "range_diff"; start: number; end: number; hunks: Hunk[] };

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
