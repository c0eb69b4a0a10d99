/**
 * What the model believes after its own `edit` (SPEC §5.9): pi's edit tool
 * (0.73) as pure functions over text — its argument shapes, its exact and
 * normalised ("fuzzy") matching, BOM and line-ending handling and its errors —
 * and the model's belief: its newest view with each replacement applied, when
 * that is determined.
 *
 * Every function here is pure.
 *
 * Specified by SPEC.md §5.9.
 *
 * @module
 */
import { sha256Hex } from "./hash.ts";
import type { LineStretch, ReadCacheEditMetaV1 } from "./meta.ts";
import { countLines } from "./range.ts";
import { type LineView, newestViewsOf, TO_END } from "./view.ts";

/**
 * One replacement of an edit call: `oldText` must occur once in the file.
 *
 * @example
 * ```ts
 * import type { EditReplacement } from "@readcache/core";
 * const r: EditReplacement = { oldText: "const a = 1;", newText: "const a = 2;" };
 * ```
 */
export interface EditReplacement {
  /** Text to find (exactly once). */
  oldText: string;
  /** Text to put in its place. */
  newText: string;
}

/**
 * The arguments of an edit call as pi's edit tool takes them: `edits` as an
 * array, or sent as a JSON string; the legacy top-level `oldText`/`newText`
 * appended as one more replacement. `undefined` when they do not make a
 * valid call (no path, no replacement, a replacement that is not two
 * strings): pi rejects such a call before it touches the file.
 *
 * @example
 * ```ts
 * import { editCallArgs } from "@readcache/core/rules";
 * editCallArgs({ path: "a.ts", oldText: "x", newText: "y" });
 * // { path: "a.ts", edits: [{ oldText: "x", newText: "y" }] }
 * editCallArgs({ path: "a.ts", edits: '[{"oldText":"x","newText":"y"}]' })?.edits.length; // 1
 * ```
 */
export function editCallArgs(
  args: unknown,
): { path: string; edits: EditReplacement[] } | undefined {
  if (typeof args !== "object" || args === null) return undefined;
  const a = args as Record<string, unknown>;
  let edits: unknown = a.edits;
  if (typeof edits === "string") {
    try {
      const parsed = JSON.parse(edits);
      if (Array.isArray(parsed)) edits = parsed;
    } catch {
      // pi keeps the string, and its validation rejects the call
    }
  }
  // the legacy shape adds one replacement to the list (an `edits` that is not a list is dropped)
  const legacy = typeof a.oldText === "string" && typeof a.newText === "string";
  const list: unknown = legacy
    ? [...(Array.isArray(edits) ? edits : []), { oldText: a.oldText, newText: a.newText }]
    : edits;
  if (typeof a.path !== "string" || a.path === "" || !Array.isArray(list) || list.length === 0) {
    return undefined;
  }
  const out: EditReplacement[] = [];
  for (const e of list) {
    if (typeof e !== "object" || e === null) return undefined;
    const r = e as Record<string, unknown>;
    if (typeof r.oldText !== "string" || typeof r.newText !== "string") return undefined;
    if (Object.keys(r).some((k) => k !== "oldText" && k !== "newText")) return undefined;
    out.push({ oldText: r.oldText, newText: r.newText });
  }
  return { path: a.path, edits: out };
}

function lineEndingOf(text: string): "\r\n" | "\n" {
  const lf = text.indexOf("\n");
  if (lf === -1) return "\n";
  const crlf = text.indexOf("\r\n");
  return crlf !== -1 && crlf < lf ? "\r\n" : "\n";
}

function toLF(text: string): string {
  return text.replace(/\r\n/g, "\n").replace(/\r/g, "\n");
}

/** pi's normalisation for its fallback match (trailing spaces, quotes, dashes, spaces, NFKC). */
function fuzzyForm(text: string): string {
  return text.normalize("NFKC").split("\n").map((l) => l.trimEnd()).join("\n")
    .replace(/[\u2018\u2019\u201A\u201B]/g, "'")
    .replace(/[\u201C\u201D\u201E\u201F]/g, '"')
    .replace(/[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]/g, "-")
    .replace(/[\u00A0\u2002-\u200A\u202F\u205F\u3000]/g, " ");
}

function find(
  content: string,
  oldText: string,
): { index: number; length: number; fuzzy: boolean } | undefined {
  const exact = content.indexOf(oldText);
  if (exact !== -1) return { index: exact, length: oldText.length, fuzzy: false };
  const f = fuzzyForm(oldText);
  const at = fuzzyForm(content).indexOf(f);
  return at === -1 ? undefined : { index: at, length: f.length, fuzzy: true };
}

/** One replacement as applied: where it matched in the LF-normalised content. */
interface Matched {
  at: number;
  length: number;
  newText: string;
  i: number;
}

/**
 * pi's matching of every replacement against the same LF-normalised content:
 * exact first; if any replacement needs the normalised match, the whole
 * content is normalised (and so rewritten). Returns the content matched
 * against and the sorted matches, or pi's error message.
 */
function matchAll(
  normalized: string,
  edits: readonly EditReplacement[],
  path: string,
): { base: string; matches: Matched[]; fuzzy: boolean } | { error: string } {
  const n = edits.length;
  const es = edits.map((e) => ({ oldText: toLF(e.oldText), newText: toLF(e.newText) }));
  for (let i = 0; i < n; i++) {
    if (es[i].oldText.length === 0) {
      return {
        error: n === 1
          ? `oldText must not be empty in ${path}.`
          : `edits[${i}].oldText must not be empty in ${path}.`,
      };
    }
  }
  const fuzzy = es.some((e) => find(normalized, e.oldText)?.fuzzy === true);
  const base = fuzzy ? fuzzyForm(normalized) : normalized;
  const fuzzyBase = fuzzyForm(base);
  const matches: Matched[] = [];
  for (let i = 0; i < n; i++) {
    const m = find(base, es[i].oldText);
    if (m === undefined) {
      return {
        error: n === 1
          ? `Could not find the exact text in ${path}. The old text must match exactly including all whitespace and newlines.`
          : `Could not find edits[${i}] in ${path}. The oldText must match exactly including all whitespace and newlines.`,
      };
    }
    const count = fuzzyBase.split(fuzzyForm(es[i].oldText)).length - 1;
    if (count > 1) {
      return {
        error: n === 1
          ? `Found ${count} occurrences of the text in ${path}. The text must be unique. Please provide more context to make it unique.`
          : `Found ${count} occurrences of edits[${i}] in ${path}. Each oldText must be unique. Please provide more context to make it unique.`,
      };
    }
    matches.push({ at: m.index, length: m.length, newText: es[i].newText, i });
  }
  matches.sort((a, b) => a.at - b.at);
  for (let k = 1; k < matches.length; k++) {
    const p = matches[k - 1];
    const c = matches[k];
    if (p.at + p.length > c.at) {
      return {
        error:
          `edits[${p.i}] and edits[${c.i}] overlap in ${path}. Merge them into one edit or target disjoint regions.`,
      };
    }
  }
  return { base, matches, fuzzy };
}

function replaceAll(base: string, matches: readonly Matched[]): string {
  let out = base;
  for (let k = matches.length - 1; k >= 0; k--) {
    const m = matches[k];
    out = out.slice(0, m.at) + m.newText + out.slice(m.at + m.length);
  }
  return out;
}

/**
 * What pi's edit tool does to a file's text (decoded as UTF-8): strips a BOM,
 * matches every replacement against the LF-normalised text (exact, else
 * normalised, which rewrites the whole text in normalised form), restores
 * the line ending it found first, and puts the BOM back. `fuzzy` tells that
 * the normalised match applied. Errors carry pi's messages (`path` is the
 * path as the model typed it).
 *
 * @example
 * ```ts
 * import { applyPiEdit } from "@readcache/core/rules";
 * applyPiEdit("a\r\nb\r\n", [{ oldText: "b", newText: "c" }], "f.txt");
 * // { ok: true, text: "a\r\nc\r\n", fuzzy: false }
 * applyPiEdit("a\n", [{ oldText: "z", newText: "c" }], "f.txt").ok; // false
 * ```
 */
export function applyPiEdit(
  text: string,
  edits: readonly EditReplacement[],
  path: string,
): { ok: true; text: string; fuzzy: boolean } | { ok: false; error: string } {
  const bom = text.startsWith("\uFEFF") ? "\uFEFF" : "";
  const body = bom === "" ? text : text.slice(1);
  const ending = lineEndingOf(body);
  const m = matchAll(toLF(body), edits, path);
  if ("error" in m) return { ok: false, error: m.error };
  const out = replaceAll(m.base, m.matches);
  if (out === m.base) {
    return {
      ok: false,
      error: edits.length === 1
        ? `No changes made to ${path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected.`
        : `No changes made to ${path}. The replacements produced identical content.`,
    };
  }
  return {
    ok: true,
    text: bom + (ending === "\r\n" ? out.replace(/\n/g, "\r\n") : out),
    fuzzy: m.fuzzy,
  };
}

/**
 * Lines of the view a replacement touched, in the view's numbering: from the
 * line where the match starts to the line holding the first character after
 * it (a match ending with a line break can join the next line to its
 * replacement). `newEnd` is where that stretch ends in the belief.
 *
 * @example
 * ```ts
 * import type { TouchedLines } from "@readcache/core/rules";
 * const t: TouchedLines = { start: 2, end: 3, newEnd: 4 };
 * ```
 */
export interface TouchedLines {
  /** First line of the view the replacement touched. */
  start: number;
  /** Last line of the view the replacement touched. */
  end: number;
  /** Where that stretch ends in the belief (`end` shifted by the lines it added or removed). */
  newEnd: number;
}

/**
 * The model's belief after an edit of a view it holds (SPEC §5.9): what pi's
 * edit tool makes of exactly `view` with these replacements, when pi's exact
 * match applies. `undefined` when the belief is not determined that way:
 * the view mixes line endings or holds a lone CR (pi would rewrite lines the
 * model did not touch), a replacement holds a CR, any replacement needs pi's
 * normalised match, or pi would refuse the edit (not found, found twice,
 * overlapping, no change). `touched` lists, in order, the lines each
 * replacement touched.
 *
 * @example
 * ```ts
 * import { editBelief } from "@readcache/core/rules";
 * editBelief("a\nb\nc\n", [{ oldText: "b\n", newText: "b1\nb2\n" }]);
 * // { text: "a\nb1\nb2\nc\n", touched: [{ start: 2, end: 3, newEnd: 4 }] }
 * editBelief("a\u201Cb\n", [{ oldText: 'a"b', newText: "x" }]); // undefined (normalised match)
 * ```
 */
export function editBelief(
  view: string,
  edits: readonly EditReplacement[],
): { text: string; touched: TouchedLines[] } | undefined {
  if (edits.some((e) => e.oldText.includes("\r") || e.newText.includes("\r"))) return undefined;
  const bom = view.startsWith("\uFEFF") ? "\uFEFF" : "";
  const body = bom === "" ? view : view.slice(1);
  const ending = lineEndingOf(body);
  const normalized = toLF(body);
  // uniform line endings only: restoring them must give back every untouched line as it was
  const back = ending === "\r\n" ? normalized.replace(/\n/g, "\r\n") : normalized;
  if (back !== body) return undefined;
  const m = matchAll(normalized, edits, "");
  if ("error" in m || m.fuzzy) return undefined;
  const out = replaceAll(m.base, m.matches);
  if (out === m.base) return undefined;
  const touched: TouchedLines[] = [];
  let line = 1;
  let pos = 0;
  let shift = 0;
  const lineAt = (to: number) => {
    for (; pos < to; pos++) if (normalized.charCodeAt(pos) === 10) line++;
    return line;
  };
  for (const x of m.matches) {
    const start = lineAt(x.at);
    // the line holding the first character after the match: a match that ends with a line
    // break joins the next line to its replacement unless the replacement ends with one too
    const end = lineAt(x.at + x.length);
    shift += countLines(x.newText) - countLines(m.base.slice(x.at, x.at + x.length));
    touched.push({ start, end, newEnd: end + shift });
  }
  return { text: bom + (ending === "\r\n" ? out.replace(/\n/g, "\r\n") : out), touched };
}

/**
 * The metadata of an edit whose belief is determined (SPEC §5.9), and the
 * believed content: `base` is the content of the model's newest view of the
 * file (hash and text), `keyViews`/`nameViews` its views under the file's
 * identity and the name the edit used, `contents` the lines of the other
 * contents those views show. A line is held as the base's when the newest
 * views under both are the base, or another content whose line reads the
 * same (the stretch then names that content). When pi's exact match applies
 * to the base but a line a replacement touched is not held, the metadata
 * holds no stretches (and there is no believed content): only the lines from
 * the first touched one on become unknown.
 * `undefined` when {@linkcode editBelief} gives no belief.
 *
 * @example
 * ```ts
 * import { planEditMeta, sha256Hex, TO_END } from "@readcache/core/rules";
 * const text = "a\nb\nc\n";
 * const views = [{ seq: 1, start: 1, end: TO_END, hash: sha256Hex(text) }];
 * planEditMeta({ pathKey: "/w/f", base: { hash: sha256Hex(text), text }, keyViews: views,
 *   nameViews: views, edits: [{ oldText: "b", newText: "B" }] })?.meta.from; // 2
 * ```
 */
export function planEditMeta(input: {
  pathKey: string;
  base: { hash: string; text: string };
  keyViews: readonly LineView[];
  nameViews: readonly LineView[];
  edits: readonly EditReplacement[];
  /**
   * The lines of the contents the model's newest views show (loaded from the store; a content
   * left out or `undefined` is not known); the base's are taken from `base`.
   */
  contents?: ReadonlyMap<string, readonly string[] | undefined>;
}): { meta: ReadCacheEditMetaV1; text: string | undefined } | undefined {
  const belief = editBelief(input.base.text, input.edits);
  const baseLines = input.base.text.split("\n");
  const contents = new Map(input.contents ?? []);
  contents.set(input.base.hash, baseLines);
  // everything the model may hold: its newest views under the identity and, apart, under the
  // name it used (a file it also knows by another name, or changed through one, can differ)
  const keyAll = newestViewsOf(input.keyViews, 1, TO_END);
  const nameAll = newestViewsOf(input.nameViews, 1, TO_END);
  const keyPieces = knownViews(keyAll);
  const namePieces = knownViews(nameAll);
  const pieces = agreeingViews(keyPieces, namePieces);
  const heldBy = heldByText(input.base.hash, baseLines, pieces, contents);
  const held = joinStretches(heldBy);
  const views = [linesInView(keyPieces, contents), linesInView(namePieces, contents)];
  // where the model's view could hold each replacement's text (SPEC §5.9 rule 3: once, and the
  // same place under both)
  const places = input.edits.map((e) => {
    const [a, b] = views.map((v) => placesInView(v, toLF(e.oldText)));
    const once = a.count === 1 && b.count === 1 && a.at === b.at;
    return {
      count: once ? 1 : a.count + b.count === 0 ? 0 : 2,
      earliest: Math.min(a.earliest, b.earliest),
    };
  });
  // lines the model holds that the cache cannot see (a content it cannot load, or lines whose
  // newest view is unknown: a read without metadata, an edit it could not follow) could hold
  // the text too: no count can be trusted, and the text could begin at the first of them
  const unseen = Math.min(
    ...[...keyAll, ...nameAll].filter((p) =>
      p.hash === null ? p.vacant !== true : contents.get(p.hash) === undefined
    ).map((p) => p.start),
  );
  if (belief !== undefined && (Number.isFinite(unseen) || places.some((p) => p.count !== 1))) {
    return unlocated(input, Math.min(unseen, ...places.map((p) => p.earliest)));
  }
  // SPEC §5.9 rule 2 over everything the model holds: lines it holds as another content with
  // other line endings leave it unsure which endings its new lines get
  if (
    belief !== undefined &&
    !endingsAgree(input.base.hash, baseLines, [...keyPieces, ...namePieces], views)
  ) {
    return unlocated(input, belief.touched[0].start);
  }
  if (belief === undefined) {
    // no belief; but the lines before the earliest place the model's view could hold a
    // replacement stay as they were, unless one is found only by pi's normalising match (then
    // the model may mean any place)
    const t = toLF(input.base.text);
    const fuzzy = input.edits.some((e) => {
      const old = toLF(e.oldText);
      return !t.includes(old) && fuzzyForm(t).includes(fuzzyForm(old));
    });
    if (fuzzy) return undefined;
    return unlocated(input, Math.min(...places.map((p) => p.earliest)));
  }
  const inHeld = (t: TouchedLines) => held.some(([s, e]) => s <= t.start && t.end <= e);
  const from = belief.touched[0].start;
  if (!belief.touched.every(inHeld)) {
    // no belief, but pi's exact match leaves every line before the first match as it was
    return unlocated(input, Math.min(from, ...places.map((p) => p.earliest)));
  }
  // lines added (or removed) by the replacements that end before line x / at or before line x
  const shift = (x: number, through: boolean) => {
    let s = 0;
    for (const t of belief.touched) if (through ? t.end <= x : t.end < x) s = t.newEnd - t.end;
    return s;
  };
  const stretch = (start: number, end: number): LineStretch =>
    end === TO_END ? { start } : { start, end };
  const kept = heldBy.filter((h) => h.end >= from);
  return {
    meta: {
      v: 1,
      kind: "edit",
      pathKey: input.pathKey,
      baseHash: input.base.hash,
      servedHash: sha256Hex(belief.text),
      totalLines: countLines(belief.text),
      from,
      held: kept.map((h) =>
        h.hash === input.base.hash
          ? stretch(h.start, h.end)
          : { ...stretch(h.start, h.end), hash: h.hash }
      ),
      shown: kept.map((h) =>
        stretch(
          h.start + shift(h.start, false),
          h.end === TO_END ? TO_END : h.end + shift(h.end, true),
        )
      ),
    },
    text: belief.text,
  };
}

/** A stretch of lines and the content the model's newest views show there. */
interface HeldPiece {
  start: number;
  /** May be {@linkcode TO_END}. */
  end: number;
  hash: string;
}

/**
 * Where the newest views (with known content) under the identity and under
 * the name are one content, sorted.
 */
function agreeingViews(key: readonly HeldPiece[], name: readonly HeldPiece[]): HeldPiece[] {
  const out: HeldPiece[] = [];
  for (const k of key) {
    for (const u of name) {
      if (u.hash !== k.hash) continue;
      const start = Math.max(k.start, u.start);
      const end = Math.min(k.end, u.end);
      if (start <= end) out.push({ start, end, hash: k.hash });
    }
  }
  return out.sort((a, b) => a.start - b.start);
}

/**
 * The base's lines the model holds (SPEC §5.9 rule 3): where its newest view
 * is the base, or another content whose line is the base's line. A stretch
 * of another content runs to the end of the file only when that content ends
 * where the base ends.
 */
function heldByText(
  baseHash: string,
  base: readonly string[],
  pieces: readonly HeldPiece[],
  contents: ReadonlyMap<string, readonly string[] | undefined>,
): HeldPiece[] {
  const out: HeldPiece[] = [];
  const push = (p: HeldPiece) => {
    const last = out.at(-1);
    if (last !== undefined && last.hash === p.hash && last.end + 1 === p.start) last.end = p.end;
    else out.push({ ...p });
  };
  for (const p of pieces) {
    if (p.hash === baseHash) {
      push(p);
      continue;
    }
    const lines = contents.get(p.hash);
    if (lines === undefined) continue;
    const last = Math.min(p.end, lines.length, base.length);
    let run: HeldPiece | undefined;
    for (let n = p.start; n <= last + 1; n++) {
      const same = n <= last && lines[n - 1] === base[n - 1];
      if (same) {
        if (run === undefined) run = { start: n, end: n, hash: p.hash };
        else run.end = n;
        continue;
      }
      if (run !== undefined) {
        // the whole rest of both contents: the view knows where the base ends
        if (p.end === TO_END && run.end === last && lines.length === base.length) run.end = TO_END;
        push(run);
        run = undefined;
      }
    }
  }
  return out;
}

/**
 * True when the lines the model holds end like the base's: none with a CR
 * for an LF base; for a CRLF base, only the base's own lines, and under each
 * name at least one that shows its CR (the last line alone has none: the
 * model could not know its new lines end with one).
 */
function endingsAgree(
  baseHash: string,
  base: readonly string[],
  pieces: readonly HeldPiece[],
  views: readonly ReadonlyMap<number, string>[],
): boolean {
  if (!base.some((l) => l.includes("\r"))) {
    return !views.some((v) => [...v.values()].some((l) => l.includes("\r")));
  }
  return pieces.every((p) => p.hash === baseHash) &&
    views.every((v) => [...v.values()].some((l) => l.endsWith("\r")));
}

/** The stretches of newest views (SPEC §5.5) with a content hash. */
function knownViews(
  pieces: readonly { start: number; end: number; hash: string | null }[],
): HeldPiece[] {
  return pieces.flatMap((v) =>
    v.hash === null ? [] : [{ start: v.start, end: v.end, hash: v.hash }]
  );
}

/** Held pieces as position stretches, touching ones joined. */
function joinStretches(pieces: readonly HeldPiece[]): [number, number][] {
  const out: [number, number][] = [];
  for (const p of pieces) {
    const last = out.at(-1);
    if (last !== undefined && p.start <= last[1] + 1) last[1] = Math.max(last[1], p.end);
    else out.push([p.start, p.end]);
  }
  return out;
}

/** Every line the model holds, of any content, by line number. */
function linesInView(
  pieces: readonly HeldPiece[],
  contents: ReadonlyMap<string, readonly string[] | undefined>,
): Map<number, string> {
  const out = new Map<number, string>();
  for (const p of pieces) {
    const lines = contents.get(p.hash);
    if (lines === undefined) continue;
    for (let n = p.start; n <= Math.min(p.end, lines.length); n++) out.set(n, lines[n - 1]);
  }
  return out;
}

/**
 * The length of the longest non-empty end of `text` that is a beginning of
 * `prefixOf` (0 when none), in time linear in both (Knuth-Morris-Pratt).
 */
function longestSuffixPrefix(text: string, prefixOf: string): number {
  const m = prefixOf.length;
  if (m === 0) return 0;
  // fail[k]: the longest proper border of prefixOf[0..k]
  const fail = new Array<number>(m).fill(0);
  for (let k = 1, q = 0; k < m; k++) {
    while (q > 0 && prefixOf[k] !== prefixOf[q]) q = fail[q - 1];
    if (prefixOf[k] === prefixOf[q]) q++;
    fail[k] = q;
  }
  let q = 0;
  for (let k = Math.max(0, text.length - m); k < text.length; k++) {
    if (q === m) q = fail[m - 1];
    while (q > 0 && text[k] !== prefixOf[q]) q = fail[q - 1];
    if (text[k] === prefixOf[q]) q++;
  }
  return q;
}

/**
 * Where the model's view could hold `old` (LF-normalised): how often it occurs
 * in the stretches of lines the model holds, and the earliest line it can
 * start at: its first occurrence in the stretch from line 1, or where that
 * stretch's last lines could begin it (the rest in lines the model does not
 * hold), else the first line not held.
 */
function placesInView(
  view: ReadonlyMap<number, string>,
  old: string,
): { count: number; earliest: number; at: number } {
  const lineText = (n: number) => {
    const l = view.get(n)!.replace(/\r$/, "");
    return n === 1 && l.startsWith("\uFEFF") ? l.slice(1) : l;
  };
  let count = 0;
  let earliest = Infinity;
  let at = Infinity;
  const numbers = [...view.keys()].sort((a, b) => a - b);
  for (let i = 0; i < numbers.length;) {
    // one stretch of held lines: numbers[i]..numbers[j - 1]
    let j = i + 1;
    while (j < numbers.length && numbers[j] === numbers[j - 1] + 1) j++;
    // the stretch as pi matches it (a lone CR breaks a line there too), and for each of its
    // lines the line of the view it comes from
    const first = numbers[i];
    const of: number[] = [];
    const text = numbers.slice(i, j).map((n) => {
      const t = toLF(lineText(n));
      const parts = t.split("\n").length;
      for (let k = 0; k < parts; k++) of.push(n);
      return t;
    }).join("\n");
    // the line each offset of `text` lies in: a binary search over where its lines start
    const starts = [0];
    for (let k = text.indexOf("\n"); k !== -1; k = text.indexOf("\n", k + 1)) starts.push(k + 1);
    const lineAt = (pos: number) => {
      let lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid] <= pos) lo = mid;
        else hi = mid - 1;
      }
      return of[lo];
    };
    if (old !== "") {
      for (let pos = text.indexOf(old); pos !== -1; pos = text.indexOf(old, pos + 1)) {
        count++;
        at = Math.min(at, lineAt(pos));
        earliest = Math.min(earliest, lineAt(pos));
      }
    }
    if (first === 1) {
      // the stretch from line 1: its end could begin the text, which runs on in unknown lines
      const tail = text + "\n";
      let from = numbers[j - 1] + 1;
      // the longest end of the stretch that begins the text (linear: a prefix automaton)
      const longest = longestSuffixPrefix(tail, old);
      if (longest > 0) from = lineAt(Math.min(tail.length - longest, text.length));
      earliest = Math.min(earliest, from);
    }
    i = j;
  }
  if (!view.has(1)) earliest = 1;
  return { count, earliest, at };
}

/**
 * Metadata of an edit the model's view cannot place (SPEC §5.9): no belief,
 * but the lines before `from` stay as they were; `undefined` when that is no
 * line at all.
 */
function unlocated(
  input: { pathKey: string; base: { hash: string; text: string } },
  from: number,
): { meta: ReadCacheEditMetaV1; text: undefined } | undefined {
  if (!Number.isFinite(from) || from <= 1) return undefined;
  return {
    meta: {
      v: 1,
      kind: "edit",
      pathKey: input.pathKey,
      baseHash: input.base.hash,
      servedHash: input.base.hash,
      totalLines: countLines(input.base.text),
      from,
      held: [],
      shown: [],
    },
    text: undefined,
  };
}
