// Reading a recorded pi session for `deno task bench:real` (bench/pi/real.ts): the session log in
// pi's old linear format (v1/v2: no entry ids, `firstKeptEntryIndex` counting the header as 0, some
// lines holding two objects glued `}{`), its manifest, and what the pi of that time showed for a
// read, so that a replay can tell whether its rebuilt file is the file the model was shown.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Replacement } from "../../cli/savings_model.ts";
export type { Replacement };

/** Which pi read/edit behaviour a session was recorded with (the folder's README, "Rebuilding"). */
export type Generation = "2025-11" | "2025-12";

/** The fields of `manifest.json` the bench uses. */
export interface Manifest {
  cwd: string;
  /** `~` of the recording machine; default: the first two segments of `cwd` (`/Users/<name>`). */
  home?: string;
  piToolGeneration: Generation;
  reads?: number;
  readsRebuiltExactly?: number;
  readsRebuiltExactlyWithResync?: number;
  outsideRepo?: string[];
  /** No manifest: the cwd is the header's, files are rebuilt from the session's outputs only. */
  fromOutputs?: boolean;
}

/** One object of the log, with its index (the header is 0) and its 1-based line. */
export interface LogEntry {
  index: number;
  line: number;
  // deno-lint-ignore no-explicit-any
  value: any;
}

/** A session folder: `session.jsonl`, `manifest.json` and `files/`. */
export interface SessionDir {
  dir: string;
  manifest: Manifest;
  entries: LogEntry[];
}

/** Splits one line of the log into its JSON objects (a line may hold several, glued `}{`). */
export function splitObjects(line: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{" || c === "[") {
      if (depth === 0) start = i;
      depth++;
    } else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) out.push(line.slice(start, i + 1));
    }
  }
  return out;
}

/**
 * What is wrong with a session the bench was pointed at, in words for the user (no stack trace).
 */
export class SessionInputError extends Error {
  override name = "SessionInputError";
}

/**
 * Reads a session: a folder with `session.jsonl` (and `manifest.json`, `files/`), or a pi
 * session file. Without a manifest the cwd comes from the session's header, reads render as pi
 * 2025-12 renders them (today's pi differs only in its notices' final period) and every file is
 * rebuilt from what the session's own outputs showed (`manifest.fromOutputs`).
 */
export function loadSessionDir(dir: string): SessionDir {
  const file = dir.endsWith(".jsonl") ? dir : join(dir, "session.jsonl");
  let raw: string;
  try {
    raw = readFileSync(file, "utf8");
  } catch {
    throw new SessionInputError(
      `${dir}: no ${dir.endsWith(".jsonl") ? "such file" : "session.jsonl in it"} (give a pi ` +
        "session file, or a folder with session.jsonl, manifest.json and files/)",
    );
  }
  const entries: LogEntry[] = [];
  for (const [i, text] of raw.split("\n").entries()) {
    if (text.trim() === "") continue;
    for (const o of splitObjects(text)) {
      try {
        entries.push({ index: entries.length, line: i + 1, value: JSON.parse(o) });
      } catch {
        throw new SessionInputError(`${file}: line ${i + 1} is not JSON: not a pi session file`);
      }
    }
  }
  const header = entries[0]?.value;
  if (header?.type !== "session") {
    throw new SessionInputError(`${file}: the first line is not a pi session header`);
  }
  const manifestPath = join(dir.endsWith(".jsonl") ? dirname(dir) : dir, "manifest.json");
  let manifest: Manifest;
  if (!dir.endsWith(".jsonl") && existsSync(manifestPath)) {
    try {
      manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as Manifest;
    } catch {
      throw new SessionInputError(`${manifestPath}: not JSON`);
    }
  } else if (typeof header.cwd === "string" && header.cwd.startsWith("/")) {
    manifest = { cwd: header.cwd, piToolGeneration: "2025-12", fromOutputs: true };
  } else throw new SessionInputError(`${file}: its header names no absolute cwd`);
  if (manifest.piToolGeneration !== "2025-11" && manifest.piToolGeneration !== "2025-12") {
    throw new SessionInputError(
      `${manifestPath}: piToolGeneration must be "2025-11" or "2025-12", not ${
        JSON.stringify(manifest.piToolGeneration)
      }`,
    );
  }
  if (typeof manifest.cwd !== "string" || !manifest.cwd.startsWith("/")) {
    throw new SessionInputError(`${manifestPath}: cwd must be an absolute path`);
  }
  return { dir, manifest, entries };
}

/** The text blocks of a message's content, joined. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((c) => c?.type === "text" && typeof c.text === "string" ? c.text : "").join(
    "",
  );
}

const MAX_LINES = 2000;
const MAX_BYTES = 50 * 1024;
const MAX_LINE_CHARS_2025_11 = 2000;
const utf8 = new TextEncoder();

/** What pi of `gen` showed for a read of `text` (or the error it gave). */
export function renderOldRead(
  text: string,
  offset: number | undefined,
  limit: number | undefined,
  gen: Generation,
): { text: string } | { error: string } {
  const lines = text.split("\n");
  const start = offset ? Math.max(0, offset - 1) : 0;
  if (start >= lines.length) {
    return { error: `Offset ${offset} is beyond end of file (${lines.length} lines total)` };
  }
  if (gen === "2025-11") {
    // the window (or the first 2000 lines), each line cut at 2000 characters
    const end = Math.min(start + (limit ?? MAX_LINES), lines.length);
    let out = lines.slice(start, end).map((l) => l.slice(0, MAX_LINE_CHARS_2025_11)).join("\n");
    if (end < lines.length) {
      out += `\n\n... (${lines.length - end} more lines not shown. Use offset=${
        end + 1
      } to continue reading)`;
    }
    return { text: out };
  }
  // 2025-12: head truncation to 2000 lines or 50 KB of whole lines; notices without a final period
  const end = limit !== undefined ? Math.min(start + limit, lines.length) : lines.length;
  const selected = lines.slice(start, end);
  let shown = 0;
  let bytes = 0;
  let byBytes = false;
  const all = selected.join("\n");
  if (selected.length <= MAX_LINES && utf8.encode(all).length <= MAX_BYTES) {
    shown = selected.length;
  } else {
    for (; shown < selected.length && shown < MAX_LINES; shown++) {
      const b = utf8.encode(selected[shown]).length + (shown > 0 ? 1 : 0);
      if (bytes + b > MAX_BYTES) {
        byBytes = true;
        break;
      }
      bytes += b;
    }
    if (shown === 0) {
      return { text: `[Line ${start + 1} exceeds the 50.0KB limit]` }; // never compared exactly
    }
    const last = start + shown;
    const size = byBytes ? " (50.0KB limit)" : "";
    return {
      text: `${selected.slice(0, shown).join("\n")}\n\n[Showing lines ${
        start + 1
      }-${last} of ${lines.length}${size}. Use offset=${last + 1} to continue]`,
    };
  }
  if (limit !== undefined && end < lines.length) {
    return {
      text: `${all}\n\n[${lines.length - end} more lines in file. Use offset=${
        end + 1
      } to continue]`,
    };
  }
  return { text: all };
}

/** A shown read split into its lines and what its continuation notice says. */
export interface ShownRead {
  lines: string[];
  /** The file's line count, when a notice gives it. */
  total?: number;
}

/** Splits what a read showed into its lines and its notice. */
export function parseShownRead(shown: string, gen: Generation): ShownRead {
  if (gen === "2025-11") {
    const m = /\n\n\.\.\. \((\d+) more lines not shown\. Use offset=(\d+) to continue reading\)$/
      .exec(shown);
    if (m) {
      return {
        lines: shown.slice(0, m.index).split("\n"),
        total: Number(m[2]) - 1 + Number(m[1]),
      };
    }
    return { lines: shown.split("\n") };
  }
  const showing =
    /\n\n\[Showing lines \d+-\d+ of (\d+)(?: \([^)]*\))?\. Use offset=\d+ to continue\]$/
      .exec(shown);
  if (showing) {
    return { lines: shown.slice(0, showing.index).split("\n"), total: Number(showing[1]) };
  }
  const more = /\n\n\[(\d+) more lines in file\. Use offset=(\d+) to continue\]$/.exec(shown);
  if (more) {
    return {
      lines: shown.slice(0, more.index).split("\n"),
      total: Number(more[2]) - 1 + Number(more[1]),
    };
  }
  return { lines: shown.split("\n") };
}

/**
 * The file as a read showed it, where the rebuild `text` differs (the folder's README, step 5,
 * `--resync`): a whole-file read that shows the whole file replaces the text; a window read
 * patches its lines when the file's line count it shows equals the rebuild's. `undefined` when
 * the read cannot be adopted (a line count that differs, a line pi of 2025-11 may have cut).
 */
export function resyncFromShown(
  text: string | undefined,
  shown: string,
  offset: number | undefined,
  gen: Generation,
): string | undefined {
  // pi's note for a first line over 50 KB shows no line of the file
  if (/^\[Line \d+ (?:is|exceeds) /.test(shown)) return undefined;
  const s = parseShownRead(shown, gen);
  if (gen === "2025-11" && s.lines.some((l) => l.length >= MAX_LINE_CHARS_2025_11)) {
    return undefined;
  }
  const start = offset ? Math.max(1, offset) : 1;
  if (s.total === undefined && start === 1) return s.lines.join("\n");
  const total = s.total ?? start - 1 + s.lines.length;
  if (text === undefined) return undefined;
  const lines = text.split("\n");
  if (lines.length !== total) return undefined;
  lines.splice(start - 1, s.lines.length, ...s.lines);
  return lines.join("\n");
}

/** The replacements of an edit call's arguments (pi's current `edits` list, or the old pair). */
export function replacementsOf(args: unknown): Replacement[] | undefined {
  if (typeof args !== "object" || args === null) return undefined;
  const a = args as Record<string, unknown>;
  const out: Replacement[] = [];
  if (Array.isArray(a.edits)) {
    for (const e of a.edits) {
      if (typeof e?.oldText !== "string" || typeof e?.newText !== "string") return undefined;
      out.push({ oldText: e.oldText, newText: e.newText });
    }
  }
  if (typeof a.oldText === "string" && typeof a.newText === "string") {
    out.push({ oldText: a.oldText, newText: a.newText });
  }
  return out.length > 0 ? out : undefined;
}

function occurrences(text: string, part: string): number {
  if (part === "") return 0;
  let n = 0;
  for (let i = text.indexOf(part); i !== -1; i = text.indexOf(part, i + part.length)) n++;
  return n;
}

/**
 * What pi of `gen` wrote for a successful edit of `text`, or `undefined` when an old text does
 * not occur exactly once (the rebuild has drifted from the real file). 2025-11 used
 * `String.replace`, so `$$`, `$&`, `` $` `` and `$'` in the new text were substitution patterns.
 */
export function applyOldEdit(
  text: string,
  edits: Replacement[],
  gen: Generation,
): string | undefined {
  let out = text;
  for (const e of edits) {
    if (occurrences(out, e.oldText) !== 1) return undefined;
    if (gen === "2025-11") out = out.replace(e.oldText, e.newText);
    else {
      const i = out.indexOf(e.oldText);
      out = out.slice(0, i) + e.newText + out.slice(i + e.oldText.length);
    }
  }
  return out;
}
