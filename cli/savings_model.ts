// The model's context, for the savings check of `readcache savings` and `deno task bench:real`
// (bench/pi/real.ts), kept apart from the cache's code (nothing here imports src/): per file, the
// newest line the model was shown at each line number, from which the ideal answer of a read is
// computed and every cached answer a replay gave is checked. Definitions: bench/README.md, "Real
// sessions".

/** One replacement of an edit call. */
export interface Replacement {
  oldText: string;
  newText: string;
}

/**
 * How a line the model holds came to be in its view, besides a read that showed it: it was kept
 * (or made) by the model's own edit (`edit`; `edit-lost` when the cache recorded no belief for
 * it; `edit-batch` when another call of the same message also changed the file), sent in its own
 * write, or kept across an edit or write of the file that failed (`failed`) or got no result
 * (`unanswered`). Used only to say where the gap is.
 */
export type Via = "write" | "edit" | "edit-lost" | "edit-batch" | "failed" | "unanswered";
const VIA_RANK: Record<Via, number> = {
  write: 1,
  edit: 2,
  "edit-lost": 3,
  "edit-batch": 4,
  failed: 5,
  unanswered: 6,
};

/** The stronger of two {@linkcode Via} labels. */
export function strongerVia(a: Via | undefined, b: Via | undefined): Via | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return VIA_RANK[a] >= VIA_RANK[b] ? a : b;
}

/** The model's newest view of one file, line by line (`undefined`: not known). */
export interface FileView {
  /** `lines[i]` is line `i + 1` as the model last saw it. */
  lines: (string | undefined)[];
  /** `via[i]`: how line `i + 1` stayed in the view since a read last showed it. */
  via: (Via | undefined)[];
  /** The file's line count as the model last learnt it. */
  total?: number;
}

/** The model's context: views of files since the latest compaction (strict barrier). */
export class ModelContext {
  readonly #files = new Map<string, FileView>();

  /** A compaction: nothing before it counts. */
  compact(): void {
    this.#files.clear();
  }

  /** The model was shown text of the file that cannot be placed line by line: nothing of it counts. */
  forget(path: string): void {
    this.#files.delete(path);
  }

  view(path: string): FileView | undefined {
    return this.#files.get(path);
  }

  /** A read showed lines `start..start + shown.length - 1` of a file of `total` lines. */
  read(path: string, start: number, shown: readonly string[], total: number): void {
    const v = this.#files.get(path) ?? { lines: [], via: [] };
    // every read of pi tells the line count (its notice, or the end of what it shows)
    if (v.lines.length > total) v.lines.length = total;
    if (v.via.length > total) v.via.length = total;
    shown.forEach((l, i) => {
      v.lines[start - 1 + i] = l;
      v.via[start - 1 + i] = undefined;
    });
    v.total = total;
    this.#files.set(path, v);
  }

  /**
   * A bash command or pi's grep showed lines `start..` of a file exactly as it is
   * (cli/savings_bash.ts); `total` when it also showed where the file ends.
   */
  shown(path: string, start: number, shown: readonly string[], total?: number): void {
    const v = this.#files.get(path) ?? { lines: [], via: [] };
    if (total !== undefined) {
      if (v.lines.length > total) v.lines.length = total;
      if (v.via.length > total) v.via.length = total;
      v.total = total;
    }
    shown.forEach((l, i) => {
      v.lines[start - 1 + i] = l;
      v.via[start - 1 + i] = undefined;
    });
    this.#files.set(path, v);
  }

  /** A successful write: the model sent the whole content. */
  wrote(path: string, content: string): void {
    const lines = content.split("\n");
    this.#files.set(path, { lines, via: lines.map(() => "write"), total: lines.length });
  }

  /**
   * An edit or write of the file that failed (pi writes nothing then) or got no result (the
   * turn was cut; it never ran). The file did not change, so the view stays; only the labels
   * change, so that the gap after it is counted apart.
   */
  notChanged(path: string, how: "failed" | "unanswered"): void {
    const v = this.#files.get(path);
    if (v) v.via = v.lines.map((_, i) => strongerVia(v.via[i], how));
  }

  /**
   * A successful edit: each replacement applied to the newest view, where the old text is found
   * exactly once within lines the model holds (a maximal stretch of known lines). Otherwise the
   * lines from the match on are unknown: from `truthLine` (where pi matched in the file), or the
   * whole file when that is not known either. `label` says how the gap after it is counted.
   */
  edited(
    path: string,
    edits: readonly Replacement[],
    truthLine: number | undefined,
    label: "edit" | "edit-lost" | "edit-batch" = "edit",
  ): void {
    const v = this.#files.get(path);
    if (v === undefined) return;
    v.via = v.lines.map((_, i) => strongerVia(v.via[i], label));
    for (const e of edits) {
      const matches = matchesInKnown(v.lines, e.oldText);
      if (matches.length !== 1) {
        // the old text more than once in the model's view: the lines before the earliest place
        // the edit can be (its first occurrence, or a line the model does not know) stay known
        // (SPEC §5.9); not in the view at all: from the edit's line in the file, else line 1
        const earliest = matches.length < 2 ? undefined : earliestPlace(v.lines, matches[0]);
        const from = earliest === undefined
          ? truthLine ?? 1
          : Math.min(earliest, truthLine ?? Infinity);
        if (v.lines.length > from - 1) v.lines.length = from - 1;
        if (v.via.length > from - 1) v.via.length = from - 1;
        v.total = undefined;
        return;
      }
      const { first, last, text } = touchedLines(matches[0], e.oldText);
      const i = text.indexOf(e.oldText);
      const next = (text.slice(0, i) + e.newText + text.slice(i + e.oldText.length)).split("\n");
      const removed = last - first + 1;
      v.lines.splice(first - 1, removed, ...next);
      v.via.splice(first - 1, removed, ...next.map(() => label));
      if (v.total !== undefined) v.total += next.length - removed;
    }
  }
}

/** Where `part` occurs in the known lines: each match's stretch (from line `first`), and its offset. */
interface KnownMatch {
  first: number;
  text: string;
  at: number;
}

/** Every match of `part` in the stretches of known lines, in order (none for an empty `part`). */
function matchesInKnown(lines: readonly (string | undefined)[], part: string): KnownMatch[] {
  const matches: KnownMatch[] = [];
  if (part === "") return matches;
  let i = 0;
  while (i < lines.length) {
    if (lines[i] === undefined) {
      i++;
      continue;
    }
    let j = i;
    while (j < lines.length && lines[j] !== undefined) j++;
    const text = (lines.slice(i, j) as string[]).join("\n");
    for (let k = text.indexOf(part); k !== -1; k = text.indexOf(part, k + part.length)) {
      matches.push({ first: i + 1, text, at: k });
    }
    i = j;
  }
  return matches;
}

/**
 * The lines a single match touches, `first..last`, and their text: from the match's first line
 * to the line of its last character.
 */
function touchedLines(m: KnownMatch, part: string): { first: number; last: number; text: string } {
  const firstLine = m.first + countNewlines(m.text.slice(0, m.at));
  const lastLine = m.first + countNewlines(m.text.slice(0, m.at + part.length));
  const sub = m.text.split("\n").slice(firstLine - m.first, lastLine - m.first + 1);
  return { first: firstLine, last: lastLine, text: sub.join("\n") };
}

/**
 * Where an edit whose old text occurs more than once in the known lines can be at the earliest:
 * the line of its first match, or the first line the model does not know if that comes first.
 */
function earliestPlace(lines: readonly (string | undefined)[], firstMatch: KnownMatch): number {
  const firstAt = firstMatch.first + countNewlines(firstMatch.text.slice(0, firstMatch.at));
  const unknown = lines.findIndex((l) => l === undefined);
  return unknown >= 0 && unknown + 1 < firstAt ? unknown + 1 : firstAt;
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf("\n"); i !== -1; i = s.indexOf("\n", i + 1)) n++;
  return n;
}

const utf8 = new TextEncoder();
const bytes = (s: string) => utf8.encode(s).length;

/** How the lines a read shows stand in the model's context. */
export interface Holding {
  /** Lines whose newest view equals the file's line. */
  held: number;
  /** Lines the model saw with other text. */
  stale: number;
  /** Lines the model has no view of. */
  unknown: number;
}

/** The ideal answer's size and how the lines stood. */
export interface Ideal extends Holding {
  bytes: number;
  /** The strongest {@linkcode Via} of the held lines. */
  via?: Via;
}

/** The marker for lines `s..e` of `t` the model holds (or for the whole file). */
export function markerText(s: number, e: number, t: number, wholeFile: boolean): string {
  return wholeFile
    ? `[readcache: unchanged, ${t} lines]`
    : `[readcache: unchanged in lines ${s}-${e} of ${t}]`;
}

/**
 * The fewest bytes an answer can have that tells the model nothing false (bench/README.md):
 * for the lines `start..end` pi's read shows of `file` (`total` lines), one marker for every
 * maximal stretch of lines the model holds (or that stretch's plain text when shorter), the plain
 * text of every other line, joined by newlines, plus pi's `notice` (the text pi puts after the
 * lines, with its leading blank line). A request held throughout is one marker and nothing else.
 */
export function idealAnswer(
  view: FileView | undefined,
  file: readonly string[],
  start: number,
  end: number,
  notice: string,
): Ideal {
  const total = file.length;
  const h: Holding & { via?: Via } = { held: 0, stale: 0, unknown: 0 };
  const isHeld: boolean[] = [];
  let via: Via | undefined;
  for (let n = start; n <= end; n++) {
    const seen = view?.lines[n - 1];
    if (seen === undefined) h.unknown++;
    else if (seen === file[n - 1]) {
      h.held++;
      via = strongerVia(via, view!.via[n - 1]);
    } else h.stale++;
    isHeld.push(seen !== undefined && seen === file[n - 1]);
  }
  if (via !== undefined) h.via = via;
  const lineCount = end - start + 1;
  const plainBytes = bytes(file.slice(start - 1, end).join("\n")) + bytes(notice);
  if (lineCount <= 0) return { ...h, bytes: bytes(notice) };
  if (h.held === lineCount) {
    const whole = start === 1 && end === total && view?.total === total;
    return { ...h, bytes: Math.min(bytes(markerText(start, end, total, whole)), plainBytes) };
  }
  const pieces: number[] = [];
  let i = 0;
  while (i < lineCount) {
    if (!isHeld[i]) {
      pieces.push(bytes(file[start - 1 + i]));
      i++;
      continue;
    }
    let j = i;
    while (j < lineCount && isHeld[j]) j++;
    const s = start + i;
    const e = start + j - 1;
    const plain = bytes(file.slice(s - 1, e).join("\n"));
    pieces.push(Math.min(plain, bytes(markerText(s, e, total, false))));
    i = j;
  }
  return { ...h, bytes: pieces.reduce((a, b) => a + b, 0) + pieces.length - 1 + bytes(notice) };
}

/** One line of a unified diff's side, with whether a newline ends it. */
interface DiffLine {
  text: string;
  eol: boolean;
}

function diffLines(text: string): DiffLine[] {
  if (text === "") return [];
  const parts = text.split("\n");
  const endsWithNewline = parts[parts.length - 1] === "";
  if (endsWithNewline) parts.pop();
  return parts.map((t, i) => ({ text: t, eol: i < parts.length - 1 || endsWithNewline }));
}

/**
 * Applies the hunks of a unified diff (`@@ -a,b +c,d @@`, lines ` `, `-`, `+`, `\ No newline`)
 * to `base`, whose first line is line `lineOffset + 1` in the hunks' numbering. `undefined` when a
 * hunk does not fit.
 */
export function applyUnifiedDiff(
  base: string,
  hunksText: readonly string[],
  lineOffset: number,
): string | undefined {
  const src = diffLines(base);
  const out: DiffLine[] = [];
  let pos = 0;
  let i = 0;
  while (i < hunksText.length) {
    const m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$/.exec(hunksText[i]);
    if (!m) return undefined;
    const oldStart = Number(m[1]) - lineOffset;
    const oldCount = m[2] === undefined ? 1 : Number(m[2]);
    // an empty old side names the line before it
    const at = oldCount === 0 ? oldStart : oldStart - 1;
    if (at < pos || at > src.length) return undefined;
    while (pos < at) out.push(src[pos++]);
    i++;
    let lastNew: DiffLine | undefined;
    for (; i < hunksText.length && !hunksText[i].startsWith("@@"); i++) {
      const l = hunksText[i];
      if (l.startsWith("\\")) {
        // "\ No newline at end of file": the line before it ends without a newline
        if (lastNew) lastNew.eol = false;
        continue;
      }
      const body = l.slice(1);
      lastNew = undefined;
      if (l[0] === " " || l[0] === "-") {
        if (src[pos]?.text !== body) return undefined;
        pos++;
      } else if (l[0] !== "+") return undefined;
      if (l[0] !== "-") {
        lastNew = { text: body, eol: true };
        out.push(lastNew);
      }
    }
  }
  while (pos < src.length) out.push(src[pos++]);
  return out.map((l) => l.text + (l.eol ? "\n" : "")).join("");
}

/**
 * Checks a cached answer (`unchanged`, `unchanged_range`, `diff` or `partial`) against the
 * model's view:
 * a marker must cover only lines whose newest view equals the file, and the window the read
 * shows; a diff must apply to the view and give the file's lines. Returns what is false, or
 * `undefined`.
 */
export function checkCachedAnswer(
  text: string,
  view: FileView | undefined,
  file: readonly string[],
  window: { start: number; end: number },
): string | undefined {
  const total = file.length;
  const heldRange = (s: number, e: number): string | undefined => {
    for (let n = s; n <= e; n++) {
      const seen = view?.lines[n - 1];
      if (seen === undefined) return `line ${n} is not in the model's context`;
      if (seen !== file[n - 1]) return `line ${n} differs from the model's newest view`;
    }
    return undefined;
  };
  const covers = (s: number, e: number): string | undefined =>
    s === window.start && e === window.end
      ? undefined
      : `answers lines ${s}-${e}, the read shows ${window.start}-${window.end}`;
  let m = /^\[readcache: unchanged, (\d+) lines?\]$/.exec(text);
  if (m) {
    const t = Number(m[1]);
    if (t !== total) return `says ${t} lines, the file has ${total}`;
    if (view?.total !== total) return `the model's view has ${view?.total ?? "unknown"} lines`;
    return heldRange(1, total) ?? covers(1, total);
  }
  m = /^\[readcache: unchanged in lines (\d+)-(\d+) of (\d+)\]$/.exec(text);
  if (m) {
    if (Number(m[3]) !== total) return `says ${m[3]} lines, the file has ${total}`;
    return heldRange(Number(m[1]), Number(m[2])) ?? covers(Number(m[1]), Number(m[2]));
  }
  m = /^\[readcache: unchanged in lines (\d+)-(\d+); changes exist outside this range\]$/.exec(
    text,
  );
  if (m) return heldRange(Number(m[1]), Number(m[2])) ?? covers(Number(m[1]), Number(m[2]));
  const lines = text.split("\n");
  // a partial answer (SPEC §8.4): the held stretches, then each other stretch under its header
  const partial = /^\[readcache: unchanged in lines ([\d, -]+) of (\d+); the other lines follow\]$/
    .exec(lines[0]);
  if (partial) {
    if (Number(partial[2]) !== total) return `says ${partial[2]} lines, the file has ${total}`;
    const span = (t: string) => {
      const [a, b] = t.split("-").map(Number);
      return { start: a, end: b ?? a };
    };
    const parts = partial[1].split(", ").map((t) => ({ ...span(t), held: true }));
    let at = 1;
    while (at < lines.length) {
      const h = /^\[lines? (\d+(?:-\d+)?)\]$/.exec(lines[at]);
      if (!h) break;
      const s = span(h[1]);
      const shown = lines.slice(at + 1, at + 1 + s.end - s.start + 1);
      for (let n = s.start; n <= s.end; n++) {
        if (shown[n - s.start] !== file[n - 1]) return `shown line ${n} is not the file's`;
      }
      parts.push({ ...s, held: false });
      at += 1 + s.end - s.start + 1;
    }
    parts.sort((a, b) => a.start - b.start);
    for (let k = 1; k < parts.length; k++) {
      if (parts[k].start !== parts[k - 1].end + 1) return "held and shown stretches leave a gap";
    }
    for (const p of parts) {
      if (p.held) {
        const wrong = heldRange(p.start, p.end);
        if (wrong) return wrong;
      }
    }
    return covers(parts[0].start, parts[parts.length - 1].end);
  }
  const whole = /^\[readcache: (\d+) lines? changed of (\d+)\]$/.exec(lines[0]);
  const range = /^\[readcache: (\d+) lines? changed in lines (\d+)-(\d+) of (\d+)\]$/.exec(
    lines[0],
  );
  if ((!whole && !range) || !lines[1]?.startsWith("--- ") || !lines[2]?.startsWith("+++ ")) {
    return `not a marker or diff this check knows: ${JSON.stringify(text.slice(0, 80))}`;
  }
  const hunks = lines.slice(3);
  const changed = hunks.filter((l) => l.startsWith("+") || l.startsWith("-")).length;
  const t = Number(whole ? whole[2] : range![4]);
  if (t !== total) return `says ${t} lines, the file has ${total}`;
  if (changed !== Number(whole ? whole[1] : range![1])) {
    return `says ${whole ? whole[1] : range![1]} lines changed, the hunks change ${changed}`;
  }
  let s = 1;
  let e = total;
  let viewEnd = view?.total;
  if (range) {
    s = Number(range[2]);
    e = Number(range[3]);
    viewEnd = e;
  } else if (viewEnd === undefined) return "a whole-file diff, the model's view has no known end";
  for (let n = s; n <= viewEnd; n++) {
    if (view?.lines[n - 1] === undefined) {
      return `the diff's base line ${n} is not in the model's context`;
    }
  }
  const base = (view!.lines.slice(s - 1, viewEnd) as string[]).join("\n");
  const now = file.slice(s - 1, e).join("\n");
  const suffix = range ? "\n" : "";
  const applied = applyUnifiedDiff(base + suffix, hunks, s - 1);
  if (applied === undefined) return "the diff does not apply to the model's view";
  if (applied !== now + suffix) {
    return "the diff applied to the model's view does not give the file";
  }
  return covers(s, e);
}
