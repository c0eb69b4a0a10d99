// The oracle's own model of the working directory: regular files and
// symbolic links under relative names, driven by the scenario steps `write`,
// `remove`, `symlink`, `writeTool` and `editTool` exactly as the runners apply
// them to a real directory (`writeFileSync` and pi's write and edit tools
// follow links, `rmSync` removes the link itself, `symlink` is `ln -sfn`).
// An edit is pi's own edit tool: its argument preparation and its text
// functions (pi's `edit-diff.js`, loaded from the pi package: BOM, line
// endings, exact then normalised matching, its errors), composed the way its
// `execute` composes them. It also resolves what the model typed the way pi's
// read tool does (one leading `@`, relative to cwd, `.`/`..` folded
// lexically, `path:N-M` shorthand) and the way its write and edit tools do
// (the same without the shorthand). Independent of src/: nothing here is
// imported from the implementation.
import { createEditToolDefinition } from "@mariozechner/pi-coding-agent";
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
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { spawnSync } from "node:child_process";

/** One replacement of an edit call. */
export interface Replacement {
  oldText: string;
  newText: string;
}

/** pi's edit helpers (`dist/core/tools/edit-diff.js`; the package index does not export them). */
interface PiEditDiff {
  stripBom(text: string): { bom: string; text: string };
  detectLineEnding(text: string): "\r\n" | "\n";
  normalizeToLF(text: string): string;
  restoreLineEndings(text: string, ending: "\r\n" | "\n"): string;
  normalizeForFuzzyMatch(text: string): string;
  fuzzyFindText(content: string, oldText: string): { found: boolean; usedFuzzyMatch: boolean };
  applyEditsToNormalizedContent(
    content: string,
    edits: Replacement[],
    path: string,
  ): { baseContent: string; newContent: string };
}

/** pi's own edit helpers, from the installed pi package. */
export const PI_EDIT: PiEditDiff = await import(
  new URL("./core/tools/edit-diff.js", import.meta.resolve("@mariozechner/pi-coding-agent")).href
);

/** pi's output truncation (`dist/core/tools/truncate.js`): what its bash tool keeps of an output. */
interface PiTruncate {
  truncateTail(content: string): { truncated: boolean };
}

/** pi's own truncation helpers, from the installed pi package. */
export const PI_TRUNCATE: PiTruncate = await import(
  new URL("./core/tools/truncate.js", import.meta.resolve("@mariozechner/pi-coding-agent")).href
);

/** pi's edit tool, for its argument preparation (`prepareArguments`). */
const PI_EDIT_TOOL = createEditToolDefinition("/");

/** The arguments an `editTool` step sends, in the shape the step gives them. */
export function editToolArgs(step: {
  path: string;
  edits?: Replacement[] | string;
  oldText?: string;
  newText?: string;
}): Record<string, unknown> {
  const args: Record<string, unknown> = { path: step.path };
  if (step.edits !== undefined) args.edits = structuredClone(step.edits);
  if (step.oldText !== undefined) args.oldText = step.oldText;
  if (step.newText !== undefined) args.newText = step.newText;
  return args;
}

/**
 * An edit call's arguments as pi's edit tool takes them: its own
 * `prepareArguments` (an `edits` list sent as a JSON string is parsed, the
 * legacy `oldText`/`newText` appended as one more replacement), then the
 * checks its schema makes (a path, a non-empty list of `{oldText, newText}`
 * strings, nothing else). `undefined` for a call pi rejects before it runs.
 */
export function editCallOf(
  args: Record<string, unknown>,
): { path: string; edits: Replacement[] } | undefined {
  const prepared = PI_EDIT_TOOL.prepareArguments!(structuredClone(args)) as Record<
    string,
    unknown
  >;
  const { path, edits } = prepared;
  if (typeof path !== "string" || !Array.isArray(edits) || edits.length === 0) return undefined;
  if (Object.keys(prepared).some((k) => k !== "path" && k !== "edits")) return undefined;
  const out: Replacement[] = [];
  for (const e of edits) {
    if (typeof e !== "object" || e === null) return undefined;
    const { oldText, newText, ...rest } = e as Record<string, unknown>;
    if (typeof oldText !== "string" || typeof newText !== "string") return undefined;
    if (Object.keys(rest).length > 0) return undefined;
    out.push({ oldText, newText });
  }
  return { path, edits: out };
}

/** What an edit call did. */
export type EditOutcome =
  | {
    ok: true;
    /** The replacements sent. */
    edits: Replacement[];
    /** pi needed its normalised match (the whole file was rewritten normalised). */
    fuzzy: boolean;
  }
  | { ok: false; error: string };

/** A node of the model: a regular file or a symbolic link. */
export type FsNode =
  | { kind: "file"; bytes: Uint8Array }
  | { kind: "link"; target: string };

/** Scenario file content: text, or `{base64}` for raw bytes. */
export type VectorContent = string | { base64: string };

const ENCODER = new TextEncoder();
const LOSSY = new TextDecoder("utf-8", { ignoreBOM: true });
const STRICT = new TextDecoder("utf-8", { ignoreBOM: true, fatal: true });

/** Bytes of a vector content. */
export function contentBytes(c: VectorContent): Uint8Array {
  return typeof c === "string"
    ? ENCODER.encode(c)
    : Uint8Array.from(atob(c.base64), (ch) => ch.charCodeAt(0));
}

/** A vector content for bytes: text when they are strict UTF-8, else base64. */
export function bytesContent(bytes: Uint8Array): VectorContent {
  const text = strictText(bytes);
  if (text !== undefined) return text;
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return { base64: btoa(s) };
}

/** The text of strict UTF-8 bytes, or `undefined` when they are not UTF-8. */
export function strictText(bytes: Uint8Array): string | undefined {
  try {
    return STRICT.decode(bytes);
  } catch {
    return undefined;
  }
}

/** What the file holds, as pi sees text: lines split on `\n` only. */
export interface FileText {
  /** Decoded text (invalid bytes as U+FFFD, BOM kept). */
  text: string;
  /** `text.split("\n")`. */
  lines: string[];
  /** Whether the bytes are strict UTF-8 without NUL (eligible for caching). */
  utf8: boolean;
}

/** Decodes file bytes the way pi's read tool does. */
export function fileText(bytes: Uint8Array): FileText {
  const strict = strictText(bytes);
  const text = strict ?? LOSSY.decode(bytes);
  return { text, lines: text.split("\n"), utf8: strict !== undefined && !strict.includes("\0") };
}

/**
 * Folds a relative path lexically: `.` and empty segments dropped, `..`
 * removes the previous segment. The result never starts with `./`; a path
 * that climbs out of the directory keeps its leading `..` segments.
 */
export function normalizeRel(p: string): string {
  const out: string[] = [];
  for (const seg of p.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === ".." && out.length > 0 && out[out.length - 1] !== "..") out.pop();
    else out.push(seg);
  }
  return out.join("/");
}

function dirOf(rel: string): string {
  const i = rel.lastIndexOf("/");
  return i < 0 ? "" : rel.slice(0, i);
}

/** `target` of a link at `link` (relative to the link's directory) as a cwd-relative name. */
export function linkTargetName(link: string, target: string): string {
  const d = dirOf(link);
  return normalizeRel(d === "" ? target : `${d}/${target}`);
}

/** The link target string that makes a link at `link` point at `name` (`ln -s` style). */
export function relativeTarget(link: string, name: string): string {
  const from = dirOf(link).split("/").filter((s) => s !== "");
  const to = name.split("/");
  let i = 0;
  while (i < from.length && i < to.length - 1 && from[i] === to[i]) i++;
  return [...from.slice(i).map(() => ".."), ...to.slice(i)].join("/");
}

/**
 * The name the model used for a path it typed: one leading `@` removed, then
 * resolved against cwd lexically (pi's read tool: `path.resolve`).
 */
export function nameOf(typed: string): string {
  return normalizeRel(typed.startsWith("@") ? typed.slice(1) : typed);
}

/**
 * Outcomes of `bash` steps by command and directory state: generating,
 * sanitising, shrinking and checking a session run the same commands on the
 * same files again and again (a real run each time would dominate the time).
 */
const BASH_MEMO = new Map<string, BashOutcome>();

/** What a command run by `bash -c` left in the directory, and its exit status. */
interface BashOutcome {
  nodes: [string, FsNode][];
  dirs: string[];
  status: number;
}

/**
 * The commands the generator makes that only read: `cat`, `cat -n`, `sed -n`,
 * `head -n`, `tail -n`, `cat | head`, `grep -n` of one plain name, and
 * `true`. {@linkcode FsModel.runBash} does not run them.
 */
export const READ_ONLY_COMMAND: RegExp =
  /^(?:true|(?:cat(?: -n)?|sed -n '\d+(?:,\d+)?p'|head -n \d+|tail -n \d+|grep -n \w+) [\w./@+-]+|cat [\w./@+-]+ \| head -\d+)$/;

/** A model of the cwd of one scenario run. */
export class FsModel {
  readonly nodes: Map<string, FsNode> = new Map();
  /** Directories that exist: made for files and links written (removing a file keeps them). */
  readonly dirs: Set<string> = new Set([""]);

  /** A model holding the vector's initial files. */
  static fromFiles(files: Record<string, VectorContent>): FsModel {
    const fs = new FsModel();
    for (const [rel, c] of Object.entries(files)) fs.write(rel, c);
    return fs;
  }

  /** A deep copy. */
  clone(): FsModel {
    const fs = new FsModel();
    for (const [k, v] of this.nodes) fs.nodes.set(k, v);
    for (const d of this.dirs) fs.dirs.add(d);
    return fs;
  }

  /**
   * Follows links from `name`: the final regular file's name, or `undefined`
   * when the chain ends at nothing (dangling) or loops.
   */
  resolveFile(name: string): string | undefined {
    let cur = normalizeRel(name);
    for (let hops = 0; hops < 40; hops++) {
      const n = this.nodes.get(cur);
      if (n === undefined) return undefined;
      if (n.kind === "file") return cur;
      cur = linkTargetName(cur, n.target);
    }
    return undefined;
  }

  /** Where a write to `name` lands (links followed; the final name may not exist yet). */
  #writeTarget(name: string): string {
    const t = this.writeTarget(name);
    if (t === undefined) throw new Error(`symlink loop at ${name}`);
    return t;
  }

  /**
   * Where a write to `name` lands: links followed, the final name may not
   * exist yet; `undefined` when the links loop or lead into a directory that does not
   * exist (the write fails).
   */
  writeTarget(name: string): string | undefined {
    const start = normalizeRel(name);
    let cur = start;
    for (let hops = 0; hops < 40; hops++) {
      const n = this.nodes.get(cur);
      if (n === undefined || n.kind === "file") {
        // the writer makes the directories of the name it was given, then follows its links: a
        // link into a directory that does not exist fails (ENOENT)
        const d = dirOf(cur);
        const made = dirOf(start);
        const exists = d.startsWith("..") || this.dirs.has(d) || made === d ||
          made.startsWith(`${d}/`);
        return exists ? cur : undefined;
      }
      cur = linkTargetName(cur, n.target);
    }
    return undefined;
  }

  #addDirs(rel: string): void {
    for (let d = dirOf(normalizeRel(rel)); d !== "" && !this.dirs.has(d); d = dirOf(d)) {
      this.dirs.add(d);
    }
  }

  /** Like `existsSync`: true when `name` leads to a regular file. */
  exists(name: string): boolean {
    return this.resolveFile(name) !== undefined;
  }

  /** The bytes `name` leads to, or `undefined`. */
  read(name: string): Uint8Array | undefined {
    const f = this.resolveFile(name);
    if (f === undefined) return undefined;
    const n = this.nodes.get(f);
    return n?.kind === "file" ? n.bytes : undefined;
  }

  /** The decoded content `name` leads to, or `undefined`. */
  text(name: string): FileText | undefined {
    const b = this.read(name);
    return b === undefined ? undefined : fileText(b);
  }

  /**
   * Like `realpathSync` then `canonicalPathKey`: the final file's name when
   * `name` leads to one, else the name itself.
   */
  realName(name: string): string {
    return this.resolveFile(name) ?? normalizeRel(name);
  }

  /** The `write` step: `writeFileSync`, which follows links. */
  write(rel: string, c: VectorContent): void {
    const target = this.#writeTarget(rel);
    this.#addDirs(rel);
    this.#addDirs(target);
    this.nodes.set(target, { kind: "file", bytes: contentBytes(c) });
  }

  /**
   * A `bash` step: the command run by `bash -c` on a copy of the model in a
   * temporary directory, and the model made what the directory then holds
   * (files and links; names that lead outside are left alone).
   */
  runBash(command: string): void {
    // a view (and `true`) changes nothing: no need to run it (a test holds this to a real run)
    if (READ_ONLY_COMMAND.test(command)) return;
    this.run(command);
  }

  /**
   * Like {@linkcode FsModel.runBash}, but always runs the command (a view
   * too), and returns its exit status: how the oracle steps through the
   * parts of a chain (`A && B; C`), each part alone, in the order the shell
   * runs them.
   */
  run(command: string): number {
    const key = `${command}\0${this.#stateKey()}`;
    let out = BASH_MEMO.get(key);
    if (out === undefined) {
      out = this.#runBash(command);
      if (BASH_MEMO.size >= 4000) BASH_MEMO.delete(BASH_MEMO.keys().next().value!);
      BASH_MEMO.set(key, out);
    }
    for (const name of [...this.nodes.keys()]) {
      if (!name.startsWith("..")) this.nodes.delete(name);
    }
    for (const [name, node] of out.nodes) this.nodes.set(name, node);
    for (const d of out.dirs) this.dirs.add(d);
    return out.status;
  }

  /** Whether `other` holds the same names, nodes and directories inside the directory. */
  sameAs(other: FsModel): boolean {
    return this.#stateKey() === other.#stateKey();
  }

  /** Makes this model hold what `other` holds (a copy taken with {@linkcode FsModel.clone}). */
  assign(other: FsModel): void {
    this.nodes.clear();
    this.dirs.clear();
    for (const [k, v] of other.nodes) this.nodes.set(k, v);
    for (const d of other.dirs) this.dirs.add(d);
  }

  /** What the model holds inside the directory, as a key (a hash of every name, node and directory). */
  #stateKey(): string {
    let h1 = 0x811c9dc5;
    let h2 = 0x01000193;
    const mix = (b: number) => {
      h1 = Math.imul(h1 ^ b, 0x01000193);
      h2 = Math.imul(h2 ^ b, 0x5bd1e995) ^ (h2 >>> 13);
    };
    const str = (t: string) => {
      for (let i = 0; i < t.length; i++) mix(t.charCodeAt(i));
      mix(0);
    };
    for (const name of [...this.nodes.keys()].sort()) {
      if (name.startsWith("..")) continue;
      const n = this.nodes.get(name)!;
      str(name);
      if (n.kind === "link") str(`->${n.target}`);
      else {
        mix(n.bytes.length & 0xff);
        mix(n.bytes.length >>> 8);
        for (const b of n.bytes) mix(b);
      }
    }
    for (const d of [...this.dirs].sort()) str(`dir:${d}`);
    return `${(h1 >>> 0).toString(36)}.${(h2 >>> 0).toString(36)}`;
  }

  #runBash(command: string): BashOutcome {
    const dir = mkdtempSync(join(tmpdir(), "readcache-oracle-bash-"));
    try {
      // every directory the runners' cwd has (removing a file keeps its directory)
      for (const d of this.dirs) {
        if (d !== "" && !d.startsWith("..")) mkdirSync(join(dir, d), { recursive: true });
      }
      for (const [name, n] of this.nodes) {
        if (name.startsWith("..")) continue;
        const p = join(dir, name);
        mkdirSync(dirname(p), { recursive: true });
        if (n.kind === "file") writeFileSync(p, n.bytes);
        else symlinkSync(n.target, p);
      }
      const run = spawnSync("bash", ["-c", command], {
        cwd: dir,
        timeout: 10_000,
        stdio: "ignore",
      });
      const nodes: [string, FsNode][] = [];
      const dirs: string[] = [];
      for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
        const p = join(e.parentPath, e.name);
        const name = relative(dir, p);
        if (e.isSymbolicLink()) nodes.push([name, { kind: "link", target: readlinkSync(p) }]);
        else if (e.isFile()) nodes.push([name, { kind: "file", bytes: readFileSync(p) }]);
        else if (e.isDirectory()) dirs.push(name);
      }
      return { nodes, dirs, status: run.status ?? 128 };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** The `remove` step: removes the file or the link itself. */
  remove(rel: string): void {
    this.nodes.delete(normalizeRel(rel));
  }

  /**
   * An `editTool` step: pi's edit tool. The path resolves like a write's
   * (links followed); the file must exist (pi checks access first); its bytes
   * are decoded as UTF-8 (invalid bytes become U+FFFD, a BOM is kept and
   * stripped before matching), the line ending found first is noted, the text
   * normalised to LF and every replacement matched against it with pi's own
   * function (which throws pi's errors: empty, not found, found twice,
   * overlapping, no change); then the line ending and the BOM are restored
   * and the text written as UTF-8.
   */
  edit(args: Record<string, unknown>): EditOutcome {
    const call = editCallOf(args);
    if (call === undefined) return { ok: false, error: "Edit tool input is invalid." };
    const file = this.resolveFile(writeNameOf(call.path));
    const node = file === undefined ? undefined : this.nodes.get(file);
    if (file === undefined || node?.kind !== "file") {
      return { ok: false, error: `Could not edit file: ${call.path}. Error code: ENOENT.` };
    }
    const { bom, text } = PI_EDIT.stripBom(LOSSY.decode(node.bytes));
    const ending = PI_EDIT.detectLineEnding(text);
    const normalized = PI_EDIT.normalizeToLF(text);
    let newContent: string;
    try {
      newContent = PI_EDIT.applyEditsToNormalizedContent(normalized, call.edits, call.path)
        .newContent;
    } catch (e) {
      return { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
    const fuzzy = call.edits.some((e) =>
      PI_EDIT.fuzzyFindText(normalized, PI_EDIT.normalizeToLF(e.oldText)).usedFuzzyMatch
    );
    const out = bom + PI_EDIT.restoreLineEndings(newContent, ending);
    this.nodes.set(file, { kind: "file", bytes: ENCODER.encode(out) });
    return { ok: true, edits: call.edits, fuzzy };
  }

  /** The `symlink` step: creates or replaces `rel` as a link to `target`. */
  symlink(rel: string, target: string): void {
    this.#addDirs(rel);
    this.nodes.set(normalizeRel(rel), { kind: "link", target });
  }
}

/**
 * The name pi's `write` tool writes for a path the model typed (its
 * `resolveToCwd`): one leading `@` removed, resolved against cwd lexically.
 * Unlike a read there is no `path:N-M` shorthand. (`~` is not modelled: the
 * generator never types it.)
 */
export function writeNameOf(typed: string): string {
  return nameOf(typed);
}

/** A read request as the model typed it, resolved like pi's read tool does. */
export interface ResolvedRead {
  /** The name the model knows the file by (cwd-relative, normalized). */
  name: string;
  /** The path typed, minus a parsed `:N-M` suffix (used in messages and diff headers). */
  displayPath: string;
  /** 1-based first line requested (explicit or from the shorthand). */
  offset?: number;
  /** Lines requested. */
  limit?: number;
}

/**
 * Resolves a read request like pi's read tool plus the readcache shorthand
 * (SPEC §4.1): the suffix after the last `:` is a range only when no
 * offset/limit was given, the raw path does not exist and the part before it
 * does. Only well-formed `N` / `N-M` suffixes are recognised here (the
 * generator never emits malformed ones).
 */
export function resolveRead(
  fs: FsModel,
  req: { path: string; offset?: number; limit?: number },
): ResolvedRead {
  const plain: ResolvedRead = {
    name: nameOf(req.path),
    displayPath: req.path,
    offset: req.offset,
    limit: req.limit,
  };
  if (req.offset !== undefined || req.limit !== undefined) return plain;
  if (fs.exists(plain.name)) return plain;
  const i = req.path.lastIndexOf(":");
  if (i <= 0) return plain;
  const before = req.path.slice(0, i);
  const m = /^(\d+)(?:-(\d+))?$/.exec(req.path.slice(i + 1));
  if (!m || !fs.exists(nameOf(before))) return plain;
  const start = Number(m[1]);
  const end = m[2] === undefined ? undefined : Number(m[2]);
  return {
    name: nameOf(before),
    displayPath: before,
    offset: start,
    limit: end === undefined ? undefined : end - start + 1,
  };
}
