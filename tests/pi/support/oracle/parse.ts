// Parsers for what the model is shown by a `read`: pi's own read output
// (SPEC §7.2: content lines, then possibly a `[Showing lines X-Y of Z ...]`
// or `[N more lines in file ...]` notice, or the first-line-too-large
// message) and the readcache answers (SPEC §8: the three markers, the diff
// payload and the partial answer of §8.4). Written from the specification,
// not from src/.

/** What a plain (pi) read output shows. */
export type ShownOutput =
  | {
    kind: "lines";
    /** 1-based number of the first line shown. */
    start: number;
    /** The lines shown, in order. */
    lines: string[];
    /** Lines in the file, as the output states or implies. */
    total: number;
    /** Which notice ended the output. */
    notice: "none" | "showing" | "showing-bytes" | "more";
  }
  | {
    kind: "first-line-too-large";
    /** The line that was too large. */
    line: number;
  };

const FIRST_LINE_TOO_LARGE =
  /^\[Line (\d+) is \d+(?:\.\d)?(?:B|KB|MB), exceeds 50\.0KB limit\. Use bash: sed -n '(\d+)p' [\s\S]* \| head -c 51200\]$/;
const SHOWING =
  /\n\n\[Showing lines (\d+)-(\d+) of (\d+)( \(50\.0KB limit\))?\. Use offset=(\d+) to continue\.\]$/;
const MORE = /\n\n\[(\d+) more lines in file\. Use offset=(\d+) to continue\.\]$/;

/**
 * Parses pi's read output for a request that starts at line `start`
 * (`offset ?? 1`). Returns `undefined` when the text is not in pi's format or
 * its notice contradicts itself (line numbers that do not add up).
 */
export function parseShown(text: string, start: number): ShownOutput | undefined {
  const big = FIRST_LINE_TOO_LARGE.exec(text);
  if (big) {
    const line = Number(big[1]);
    return line === start && Number(big[2]) === line
      ? { kind: "first-line-too-large", line }
      : undefined;
  }
  const showing = SHOWING.exec(text);
  if (showing) {
    const [x, y, z, next] = [showing[1], showing[2], showing[3], showing[5]].map(Number);
    const lines = text.slice(0, showing.index).split("\n");
    if (x !== start || y - x + 1 !== lines.length || next !== y + 1 || y > z) return undefined;
    return {
      kind: "lines",
      start,
      lines,
      total: z,
      notice: showing[4] === undefined ? "showing" : "showing-bytes",
    };
  }
  const more = MORE.exec(text);
  if (more) {
    const [n, next] = [Number(more[1]), Number(more[2])];
    const lines = text.slice(0, more.index).split("\n");
    const end = start + lines.length - 1;
    if (next !== end + 1 || n < 1) return undefined;
    return { kind: "lines", start, lines, total: end + n, notice: "more" };
  }
  const lines = text.split("\n");
  return { kind: "lines", start, lines, total: start + lines.length - 1, notice: "none" };
}

/** One line of a hunk. */
export interface HunkLine {
  /** ` ` context, `-` removed, `+` added. */
  op: " " | "-" | "+";
  /** The line text, without its terminator. */
  text: string;
  /** Followed by `\ No newline at end of file`. */
  noEol: boolean;
}

/** One hunk of a unified diff. */
export interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: HunkLine[];
}

/** A readcache answer that relies on what the model already holds. */
export type CachedAnswer =
  | { kind: "unchanged"; total: number }
  | { kind: "unchanged_range"; start: number; end: number; total: number }
  | { kind: "unchanged_outside"; start: number; end: number }
  | { kind: "diff"; changed: number; total: number; hunks: Hunk[] }
  | {
    kind: "range_diff";
    changed: number;
    start: number;
    end: number;
    total: number;
    hunks: Hunk[];
  }
  | {
    /**
     * SPEC §8.4: the held stretches named by the marker, the other stretches
     * shown under their headers, then pi's continuation notice if any.
     */
    kind: "partial";
    /** The marker's line count. */
    total: number;
    /** The stretches the marker says are unchanged, as listed. */
    held: Stretch[];
    /** The stretches shown, in order, each with exactly its lines. */
    shown: ShownStretch[];
    /** pi's continuation notice after the last line, or `null` when none follows. */
    notice: Notice | null;
  };

/** Lines `start..end` (1-based, inclusive). */
export interface Stretch {
  start: number;
  end: number;
}

/** A stretch of a partial answer shown line by line. */
export interface ShownStretch {
  start: number;
  lines: string[];
}

/** pi's continuation notice as one line (SPEC §7.2), its numbers as written. */
export type Notice =
  | {
    kind: "showing" | "showing-bytes";
    from: number;
    to: number;
    total: number;
    next: number;
  }
  | { kind: "more"; more: number; next: number };

const NOTICE_SHOWING =
  /^\[Showing lines (\d+)-(\d+) of (\d+)( \(50\.0KB limit\))?\. Use offset=(\d+) to continue\.\]$/;
const NOTICE_MORE = /^\[(\d+) more lines in file\. Use offset=(\d+) to continue\.\]$/;

/** Parses one line as pi's continuation notice; `undefined` when it is none. */
export function parseNotice(line: string): Notice | undefined {
  const s = NOTICE_SHOWING.exec(line);
  if (s) {
    return {
      kind: s[4] === undefined ? "showing" : "showing-bytes",
      from: Number(s[1]),
      to: Number(s[2]),
      total: Number(s[3]),
      next: Number(s[5]),
    };
  }
  const m = NOTICE_MORE.exec(line);
  return m ? { kind: "more", more: Number(m[1]), next: Number(m[2]) } : undefined;
}

const N = "[1-9]\\d*";
/** A held stretch in the marker's list: `A-B` (A < B) or `A`. */
const HELD_ITEM = new RegExp(`^(${N})(?:-(${N}))?$`);
const PARTIAL_MARKER = new RegExp(
  `^\\[readcache: unchanged in lines (${N}(?:-${N})?(?:, ${N}(?:-${N})?)*) of (\\d+); ` +
    `the other lines follow\\]$`,
);
const STRETCH_HEADER = new RegExp(`^\\[(?:lines (${N})-(${N})|line (${N}))\\]$`);

/**
 * Parses a partial answer (SPEC §8.4): the marker's held list, then each
 * shown stretch (its header, then exactly its lines), then optionally an
 * empty line and pi's notice, nothing else. A stretch `A-B` must have A < B
 * (one line is written `A` and `[line A]`). Whether the stretches make one
 * window is the checker's business.
 */
export function parsePartial(text: string): CachedAnswer | undefined {
  const lines = text.split("\n");
  const m = PARTIAL_MARKER.exec(lines[0]);
  if (!m) return undefined;
  const held: Stretch[] = [];
  for (const item of m[1].split(", ")) {
    const h = HELD_ITEM.exec(item)!;
    const start = Number(h[1]);
    const end = h[2] === undefined ? start : Number(h[2]);
    if (h[2] !== undefined && end <= start) return undefined;
    held.push({ start, end });
  }
  const shown: ShownStretch[] = [];
  let notice: Notice | null = null;
  let i = 1;
  while (i < lines.length) {
    if (lines[i] === "" && i === lines.length - 2) {
      const n = parseNotice(lines[i + 1]);
      if (n === undefined) return undefined;
      notice = n;
      break;
    }
    const h = STRETCH_HEADER.exec(lines[i]);
    if (!h) return undefined;
    const start = Number(h[1] ?? h[3]);
    const end = h[2] === undefined ? start : Number(h[2]);
    if (h[2] !== undefined && end <= start) return undefined;
    const count = end - start + 1;
    if (i + 1 + count > lines.length) return undefined;
    shown.push({ start, lines: lines.slice(i + 1, i + 1 + count) });
    i += 1 + count;
  }
  return { kind: "partial", total: Number(m[2]), held, shown, notice };
}

const UNCHANGED = /^\[readcache: unchanged, (\d+) lines?\]$/;
const UNCHANGED_RANGE = /^\[readcache: unchanged in lines (\d+)-(\d+) of (\d+)\]$/;
const UNCHANGED_OUTSIDE =
  /^\[readcache: unchanged in lines (\d+)-(\d+); changes exist outside this range\]$/;
const DIFF_HEADER = /^\[readcache: (\d+) lines? changed of (\d+)\]$/;
const RANGE_DIFF_HEADER = /^\[readcache: (\d+) lines? changed in lines (\d+)-(\d+) of (\d+)\]$/;
const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$/;

/** Parses a unified diff body (`--- a/..`, `+++ b/..`, hunks). */
export function parseUnifiedDiff(lines: string[]): Hunk[] | undefined {
  if (lines.length < 2 || !lines[0].startsWith("--- ") || !lines[1].startsWith("+++ ")) {
    return undefined;
  }
  const hunks: Hunk[] = [];
  let cur: Hunk | undefined;
  for (const line of lines.slice(2)) {
    const h = HUNK_HEADER.exec(line);
    if (h) {
      cur = {
        oldStart: Number(h[1]),
        oldLines: h[2] === undefined ? 1 : Number(h[2]),
        newStart: Number(h[3]),
        newLines: h[4] === undefined ? 1 : Number(h[4]),
        lines: [],
      };
      hunks.push(cur);
      continue;
    }
    if (cur === undefined) return undefined;
    const op = line[0];
    if (op === " " || op === "-" || op === "+") {
      cur.lines.push({ op, text: line.slice(1), noEol: false });
    } else if (line.startsWith("\\")) {
      const prev = cur.lines[cur.lines.length - 1];
      if (prev === undefined || prev.noEol) return undefined;
      prev.noEol = true;
    } else {
      return undefined;
    }
  }
  for (const h of hunks) {
    const old = h.lines.filter((l) => l.op !== "+").length;
    const neu = h.lines.filter((l) => l.op !== "-").length;
    if (old !== h.oldLines || neu !== h.newLines) return undefined;
  }
  return hunks;
}

/** Parses a readcache answer text; `undefined` when it is none of SPEC §8's forms. */
export function parseCached(text: string): CachedAnswer | undefined {
  let m = UNCHANGED.exec(text);
  if (m) return { kind: "unchanged", total: Number(m[1]) };
  m = UNCHANGED_RANGE.exec(text);
  if (m) {
    return { kind: "unchanged_range", start: Number(m[1]), end: Number(m[2]), total: Number(m[3]) };
  }
  m = UNCHANGED_OUTSIDE.exec(text);
  if (m) return { kind: "unchanged_outside", start: Number(m[1]), end: Number(m[2]) };
  if (PARTIAL_MARKER.test(text.split("\n", 1)[0])) return parsePartial(text);
  const nl = text.indexOf("\n");
  if (nl < 0) return undefined;
  const r = RANGE_DIFF_HEADER.exec(text.slice(0, nl));
  if (r) {
    const hunks = parseUnifiedDiff(text.slice(nl + 1).split("\n"));
    if (hunks === undefined) return undefined;
    return {
      kind: "range_diff",
      changed: Number(r[1]),
      start: Number(r[2]),
      end: Number(r[3]),
      total: Number(r[4]),
      hunks,
    };
  }
  m = DIFF_HEADER.exec(text.slice(0, nl));
  if (!m) return undefined;
  const hunks = parseUnifiedDiff(text.slice(nl + 1).split("\n"));
  if (hunks === undefined) return undefined;
  return { kind: "diff", changed: Number(m[1]), total: Number(m[2]), hunks };
}

interface LineRecord {
  text: string;
  eol: boolean;
}

function records(text: string): LineRecord[] {
  if (text === "") return [];
  const parts = text.split("\n");
  const last = parts.pop()!;
  const out = parts.map((t) => ({ text: t, eol: true }));
  if (last !== "") out.push({ text: last, eol: false });
  return out;
}

/**
 * Applies hunks to `base` strictly: every context and removed line must be
 * there (text and line terminator), at the position the hunk header states,
 * and the `+` side's positions must add up. Returns the patched text or the
 * reason it does not apply.
 */
export function applyHunks(base: string, hunks: Hunk[]): { text: string } | { error: string } {
  const src = records(base);
  const out: LineRecord[] = [];
  let pos = 0;
  for (const [k, h] of hunks.entries()) {
    const at = h.oldLines === 0 ? h.oldStart : h.oldStart - 1;
    if (at < pos || at > src.length) {
      return { error: `hunk ${k + 1} starts at old line ${h.oldStart}, outside the base` };
    }
    out.push(...src.slice(pos, at));
    pos = at;
    const newAt = h.newLines === 0 ? h.newStart : h.newStart - 1;
    if (newAt !== out.length) {
      return { error: `hunk ${k + 1} header says new line ${h.newStart}, but it lands elsewhere` };
    }
    for (const l of h.lines) {
      const rec = { text: l.text, eol: !l.noEol };
      if (l.op === "+") {
        out.push(rec);
        continue;
      }
      const have = src[pos];
      if (have === undefined || have.text !== rec.text || have.eol !== rec.eol) {
        return {
          error: `hunk ${k + 1}: base line ${pos + 1} is ${
            have === undefined ? "past the end" : JSON.stringify(have.text)
          }, the diff expects ${JSON.stringify(l.text)}`,
        };
      }
      if (l.op === " ") out.push(rec);
      pos++;
    }
  }
  out.push(...src.slice(pos));
  return { text: out.map((r) => r.text + (r.eol ? "\n" : "")).join("") };
}

/** Added plus removed lines of a diff. */
export function changedLines(hunks: Hunk[]): number {
  let n = 0;
  for (const h of hunks) for (const l of h.lines) if (l.op !== " ") n++;
  return n;
}

// ------------------------------------------------------------ OpenCode's framing

/**
 * What the OpenCode port's read showed, parsed from OpenCode's framing
 * (docs/opencode-integration-notes.md): `<path>P</path>`, `<type>file</type>`,
 * `<content>`, then `N: line` for each shown line (numbers consecutive from
 * the first), an empty line and `(End of file - total N lines)`,
 * `(Showing lines S-E of N. Use offset=E+1 to continue.)` or
 * `(Output capped at 50 KB. Showing lines S-E. Use offset=E+1 to continue.)`,
 * then `</content>`. `undefined` when the text is not in that format or its
 * numbers do not add up.
 */
export function parseOpenCodeRead(
  text: string,
): {
  start: number;
  lines: string[];
  footer: { kind: "end"; total: number } | { kind: "showing"; total: number } | {
    kind: "capped";
  };
} | undefined {
  const head = /^<path>[^\n]*<\/path>\n<type>file<\/type>\n<content>\n/.exec(text);
  if (!head || !text.endsWith("\n</content>")) return undefined;
  const body = text.slice(head[0].length, -"\n</content>".length);
  const tail = /\n\n(\([^\n]*\))$/.exec(body);
  if (!tail) return undefined;
  const footer = tail[1];
  const numbered = tail.index === 0 ? [] : body.slice(0, tail.index).split("\n");
  const lines: string[] = [];
  let start = 0;
  for (const [k, l] of numbered.entries()) {
    const m = /^(\d+): /.exec(l);
    if (!m) return undefined;
    if (k === 0) start = Number(m[1]);
    else if (Number(m[1]) !== start + k) return undefined;
    lines.push(l.slice(m[0].length));
  }
  const end = start + lines.length - 1;
  let f = /^\(End of file - total (\d+) lines\)$/.exec(footer);
  if (f) {
    const total = Number(f[1]);
    if (lines.length > 0 && end !== total) return undefined;
    return { start: lines.length > 0 ? start : total + 1, lines, footer: { kind: "end", total } };
  }
  if (lines.length === 0) return undefined;
  f = /^\(Showing lines (\d+)-(\d+) of (\d+)\. Use offset=(\d+) to continue\.\)$/.exec(footer);
  if (f) {
    const [s, e, total, next] = [f[1], f[2], f[3], f[4]].map(Number);
    if (s !== start || e !== end || next !== end + 1 || total <= end) return undefined;
    return { start, lines, footer: { kind: "showing", total } };
  }
  f = /^\(Output capped at 50 KB\. Showing lines (\d+)-(\d+)\. Use offset=(\d+) to continue\.\)$/
    .exec(footer);
  if (f) {
    const [s, e, next] = [f[1], f[2], f[3]].map(Number);
    if (s !== start || e !== end || next !== end + 1) return undefined;
    return { start, lines, footer: { kind: "capped" } };
  }
  return undefined;
}

/**
 * The OpenCode port's answer written as pi would have written the same
 * content, so the checker (written for pi's text) can judge it. OpenCode
 * counts lines without pi's empty line after a final line break, and its
 * plain read does not show whether the file ends with one: `endsWithBreak` is
 * that bit of the file OpenCode read (recorded by the port when the read ran)
 * and `piLines` its line count as pi counts it (used only for the total of a
 * read OpenCode capped at 50 KB, which OpenCode does not state). So the
 * oracle credits the model with knowing whether the file ends with a line
 * break; no OpenCode answer relies on that but a diff, which states it itself
 * (`\ No newline at end of file`). Markers and diff headers get pi's count
 * (OpenCode's plus that bit), plain reads pi's text and notice; the lines
 * themselves are never taken from the file. A text that is not in OpenCode's
 * format is returned as it is (the checker then finds it unparseable).
 */
export function openCodeTextAsPi(
  text: string,
  mode: string | null,
  file: { endsWithBreak: boolean; piLines: number } | undefined,
): string {
  const nl = file?.endsWithBreak ? 1 : 0;
  if (mode === "partial") return openCodePartialAsPi(text, nl, file?.piLines) ?? text;
  if (mode === "unchanged" || mode === "unchanged_range" || mode === "diff") {
    const first = text.split("\n", 1)[0];
    const rest = text.slice(first.length);
    const fixed = first
      .replace(
        /^\[readcache: unchanged, (\d+) lines?\]$/,
        (_, t) => `[readcache: unchanged, ${+t + nl} lines]`,
      )
      .replace(
        /^(\[readcache: unchanged in lines \d+-\d+ of )(\d+)\]$/,
        (_, a, t) => `${a}${+t + nl}]`,
      )
      .replace(
        /^(\[readcache: \d+ lines? changed (?:in lines \d+-\d+ )?of )(\d+)\]$/,
        (_, a, t) => `${a}${+t + nl}]`,
      );
    return fixed + rest;
  }
  const p = parseOpenCodeRead(text);
  if (p === undefined) return text;
  const end = p.start + p.lines.length - 1;
  switch (p.footer.kind) {
    case "end":
      return [...p.lines, ...(nl ? [""] : [])].join("\n");
    case "showing":
      return `${p.lines.join("\n")}\n\n[Showing lines ${p.start}-${end} of ${
        p.footer.total + nl
      }. Use offset=${end + 1} to continue.]`;
    case "capped":
      return `${p.lines.join("\n")}\n\n[Showing lines ${p.start}-${end} of ${
        file?.piLines ?? end + 1
      } (50.0KB limit). Use offset=${end + 1} to continue.]`;
  }
}

/**
 * An OpenCode partial answer (SPEC §11.8: the marker, each other line as
 * `N: text`, an empty line, OpenCode's closing notice) written as pi's (§8.4:
 * the marker with pi's count, each shown stretch under its header, pi's
 * notice). When OpenCode's window reaches the end of a file that ends with a
 * line break, pi's window also holds the empty line after it: it is shown
 * (the model knows the file ends with a break, as above). `undefined` when
 * the text is not in that form.
 */
function openCodePartialAsPi(
  text: string,
  nl: number,
  piLines: number | undefined,
): string | undefined {
  const lines = text.split("\n");
  const m = /^\[readcache: unchanged in lines ([\d, -]+) of (\d+); the other lines follow\]$/
    .exec(lines[0]);
  if (!m || lines.length < 4 || lines[lines.length - 2] !== "") return undefined;
  const total = Number(m[2]);
  const shown: { n: number; text: string }[] = [];
  for (const l of lines.slice(1, -2)) {
    const g = /^(\d+): /.exec(l);
    if (!g) return undefined;
    shown.push({ n: Number(g[1]), text: l.slice(g[0].length) });
  }
  const footer = lines[lines.length - 1];
  const held = m[1].split(", ").map((p) => Number(p.split("-").at(-1)));
  const last = Math.max(shown.at(-1)?.n ?? 0, ...held);
  const first = Math.min(
    shown[0]?.n ?? Infinity,
    ...m[1].split(", ").map((p) => Number(p.split("-")[0])),
  );
  let notice = "";
  if (/^\(End of file - total \d+ lines\)$/.test(footer)) {
    if (nl) shown.push({ n: total + 1, text: "" });
  } else if (/^\(Showing lines \d+-\d+ of \d+\. Use offset=\d+ to continue\.\)$/.test(footer)) {
    notice = `\n\n[Showing lines ${first}-${last} of ${total + nl}. Use offset=${
      last + 1
    } to continue.]`;
  } else if (/^\(Output capped at 50 KB\. /.test(footer)) {
    notice = `\n\n[Showing lines ${first}-${last} of ${piLines ?? last + 1} (50.0KB limit). ` +
      `Use offset=${last + 1} to continue.]`;
  } else return undefined;
  const out = [`[readcache: unchanged in lines ${m[1]} of ${total + nl}; the other lines follow]`];
  for (let i = 0; i < shown.length;) {
    let j = i;
    while (j + 1 < shown.length && shown[j + 1].n === shown[j].n + 1) j++;
    const a = shown[i].n;
    const b = shown[j].n;
    out.push(
      a === b ? `[line ${a}]` : `[lines ${a}-${b}]`,
      ...shown.slice(i, j + 1).map((x) => x.text),
    );
    i = j + 1;
  }
  return out.join("\n") + notice;
}
