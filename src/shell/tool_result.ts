/**
 * What another tool's result leaves the model holding (SPEC §5.10): after a
 * shell command, a search or any tool the adapter does not know, every file
 * whose content on disk differs from the model's newest view of it is
 * unknown from that result on. This works out the record a result carries
 * (`ReadCacheToolMetaV1`, as `details.readcache`), so replay and a restart
 * see it.
 *
 * Specified by SPEC.md §5.10.
 *
 * @module
 */
import type { BranchKnowledge } from "../core/knowledge.ts";
import { type DecisionConfig, DEFAULT_DECISION_CONFIG } from "../core/decision.ts";
import { sha256Hex } from "../core/hash.ts";
import type { ReadCacheToolMetaV1, ToolShownV1 } from "../core/meta.ts";
import type { ObjectStore } from "../core/object_store.ts";
import { countLines } from "../core/range.ts";
import { isSensitivePath } from "../core/sensitive.ts";
import {
  classifyShellCommand,
  gitDiffNewSide,
  grepShownLines,
  grepToolLines,
  type MidCallPrints,
  printedWhileChanging,
  searchRows,
  shownLinesOf,
} from "../core/shell_view.ts";
import { type CallSnapshot, snapshotCall, touchedSince } from "./call_snapshot.ts";
import { type LineView, newestViewsOf, TO_END, viewsShowContent } from "../core/view.ts";
import { lstat, realpath, stat } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve } from "node:path";
import {
  isAtOrUnder,
  isInsideProject,
  pathKeyOnDisk,
  readRegularFile,
  type ReadServiceDeps,
} from "./read_service.ts";

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function decode(bytes: Uint8Array): string | undefined {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

async function load(stores: readonly ObjectStore[], hash: string): Promise<string[] | undefined> {
  for (const store of stores) {
    try {
      const bytes = await store.get(hash);
      if (bytes === undefined || sha256Hex(bytes) !== hash) continue;
      return decode(bytes)?.split("\n");
    } catch {
      // next store
    }
  }
  return undefined;
}

/**
 * True when the file at `path` (read once) holds, on every line each list of
 * views shows known content of, that content.
 */
async function agrees(
  path: string,
  viewLists: readonly (readonly LineView[])[],
  stores: readonly ObjectStore[],
  cap: number,
): Promise<boolean> {
  let read;
  try {
    read = await readRegularFile(path, cap);
  } catch {
    return false; // gone or unreadable: not what the model holds
  }
  if (read.kind !== "ok") return false;
  const hash = sha256Hex(read.bytes);
  const others = new Set<string>();
  for (const views of viewLists) {
    for (const p of newestViewsOf(views, 1, TO_END)) {
      if (p.hash !== null && p.hash !== hash) others.add(p.hash);
    }
  }
  if (others.size === 0) return true;
  const text = decode(read.bytes);
  if (text === undefined) return false;
  const contents = new Map<string, string[] | undefined>();
  for (const h of others) contents.set(h, await load(stores, h));
  const lines = text.split("\n");
  return viewLists.every((views) => viewsShowContent(views, hash, lines, (h) => contents.get(h)));
}

/**
 * What a tool result printed, for the lines it may show (SPEC §5.10):
 * `shell`, the output of a shell command (run in `cwd`, the working
 * directory when omitted); `grep`, the output of pi's `grep` tool, which
 * searched `path` (`path:N: text` lines); `opaque`, the output of a tool
 * the adapter cannot see into (it may change files and print any of them).
 *
 * @example
 * ```ts
 * import type { ToolOutput } from "@readcache/core/service";
 * const out: ToolOutput = { kind: "shell", command: "cat a.txt", output: "hello\n" };
 * ```
 */
export type ToolOutput =
  | { kind: "shell"; command: string; cwd?: string; output: string }
  | { kind: "grep"; path?: string; output: string }
  | { kind: "opaque"; output: string };

/**
 * The record a tool result carries (SPEC §5.10): every identity the model
 * holds known content of (`BranchKnowledge.heldIdentities`, in flight
 * included) whose file now differs from its newest views there, read once
 * each (non-blocking, at most `maxFileBytes`; a file that is gone, not a
 * regular file or too large counts as changed); and, given the result's
 * `output`, the lines it showed exactly as the file now holds them (a
 * recognised shell view, pi's grep lines; never of a sensitive file), whose
 * content is kept in the store for later diffs. Also every held identity
 * the call may have printed while it, or another call of its message,
 * changed files ("printed while changing": a non-empty output), unless
 * `call.snapshot` shows nothing touched it since the call started. Reads
 * files and the store, writes only the store. Call it when the tool's
 * result comes back, before the next read.
 *
 * @example
 * ```ts ignore
 * const meta = await toolResultMeta(knowledge, { cwd, home, store },
 *   { kind: "shell", command: "cat a.txt", output });
 * // { v: 1, kind: "tool", changed: [], shown: [{ pathKey: "/w/a.txt", ..., start: 1 }] }
 * ```
 */
export async function toolResultMeta(
  knowledge: BranchKnowledge,
  deps: ReadServiceDeps,
  output?: ToolOutput,
  call: ToolCallContext = {},
): Promise<ReadCacheToolMetaV1> {
  const cfg: DecisionConfig = { ...DEFAULT_DECISION_CONFIG, ...deps.config };
  const { keys, names } = knowledge.heldIdentities();
  const isKey = new Set(keys);
  const isName = new Set(names);
  const changed: string[] = [];
  const inFlight = knowledge.inFlight.length > 0;
  // another call of the message may change files while this one prints (its id unknown: any)
  const opaqueCalls = knowledge.turnOpaqueCalls();
  const besideChanges = call.callId === undefined
    ? opaqueCalls.length > 0
    : opaqueCalls.some((id) => id !== call.callId);
  const printed = await printedWhileChangingOf(output, deps.cwd, besideChanges);
  // an identity that is a pathKey and a name (a file read by its real path) is read once
  for (const id of new Set([...keys, ...names])) {
    // printed while the call changed files: the model may hold what it printed (SPEC §5.10)
    if (printed(id) && (call.snapshot === undefined || await touchedSince(call.snapshot, id))) {
      changed.push(id);
      continue;
    }
    const { keyViews, nameViews } = knowledge.file(id, id);
    const viewLists = [
      ...(isKey.has(id) ? [keyViews] : []),
      ...(isName.has(id) ? [nameViews] : []),
    ];
    // a read of this message whose result never reaches the session leaves the older views
    if (inFlight) {
      const replayed = knowledge.replayedViews(id, id);
      if (isKey.has(id)) viewLists.push(replayed.keyViews);
      if (isName.has(id)) viewLists.push(replayed.nameViews);
    }
    if (!await agrees(id, viewLists, storesOf(id, deps, cfg), cfg.maxFileBytes)) changed.push(id);
  }
  const shown = output === undefined ? [] : await shownBy(output, deps, cfg);
  return shown.length === 0
    ? { v: 1, kind: "tool", changed: changed.sort() }
    : { v: 1, kind: "tool", changed: changed.sort(), shown };
}

/**
 * What a host knows of the call a result answers (SPEC §5.10): its id (to
 * tell it from the other calls of its message) and the statuses of the
 * files the model held when it started ({@linkcode snapshotCall}, taken
 * before it ran). Without a snapshot, every file the call may have printed
 * while it changed files counts as touched.
 *
 * @example
 * ```ts ignore
 * const call: ToolCallContext = { callId: "call_1", snapshot: await snapshotCall(ids, cwd) };
 * ```
 */
export interface ToolCallContext {
  /** The call's id, as in the assistant message's `opaque` list. */
  callId?: string;
  /** The statuses of the held files when the call started. */
  snapshot?: CallSnapshot;
}

/**
 * The statuses of every file the model holds (`BranchKnowledge.heldIdentities`,
 * in flight included), for {@linkcode ToolCallContext}: call it when a tool
 * call starts, before it runs (`racyWindowMs`: see `snapshotCall`). Reads
 * file statuses only.
 *
 * @example
 * ```ts ignore
 * const snapshot = await toolCallSnapshot(knowledge, { cwd, home, store });
 * // ... the call runs ...
 * const meta = await toolResultMeta(knowledge, deps, output, { callId, snapshot });
 * ```
 */
export function toolCallSnapshot(
  knowledge: BranchKnowledge,
  deps: Pick<ReadServiceDeps, "cwd">,
  racyWindowMs?: number,
): Promise<CallSnapshot> {
  const { keys, names } = knowledge.heldIdentities();
  return snapshotCall([...keys, ...names], deps.cwd, racyWindowMs);
}

/** What pi (and the hosts that mimic it) print for a command that printed nothing. */
const NOTHING_PRINTED = /^(\(no output\))?\s*(Command exited with code [0-9]+)?$/;

/**
 * Which identities a call may have printed while it changed files (SPEC
 * §5.10, "Printed while changing"): for a shell command, the files its
 * printing parts name when a changing part may run after or beside them
 * (a directory: every file under it; each name and its real path), or every
 * identity when it runs a program the cache cannot see into; the same for a
 * tool the adapter cannot see into. Nothing when the output is empty.
 */
async function printedWhileChangingOf(
  output: ToolOutput | undefined,
  cwd: string,
  besideChanges: boolean,
): Promise<(id: string) => boolean> {
  const none = () => false;
  if (output === undefined || NOTHING_PRINTED.test(output.output.trim())) return none;
  const printed: MidCallPrints = output.kind === "opaque"
    ? { kind: "all" }
    : output.kind === "grep"
    ? besideChanges ? { kind: "paths", paths: [output.path ?? "."] } : { kind: "none" }
    : printedWhileChanging(output.command, { besideChanges });
  if (printed.kind === "none") return none;
  if (printed.kind === "all") return () => true;
  const base = output.kind === "shell" ? output.cwd ?? cwd : cwd;
  const prefixes = new Set<string>();
  for (const path of printed.paths) {
    const name = resolve(base, path);
    prefixes.add(name);
    prefixes.add(await realpath(name).catch(() => name));
  }
  return (id) => [...prefixes].some((p) => isAtOrUnder(id, p));
}

/** Where contents of a file are looked up and kept (SPEC §13.2); the first is where new go. */
function storesOf(pathKey: string, deps: ReadServiceDeps, cfg: DecisionConfig): ObjectStore[] {
  const inside = cfg.persistOutsideProject || isInsideProject(pathKey, deps.cwd);
  return [...(inside ? [deps.store] : []), ...(deps.volatileStore ? [deps.volatileStore] : [])];
}

/** The lines `output` showed, per file, checked against each file as it is now. */
async function shownBy(
  out: ToolOutput,
  deps: ReadServiceDeps,
  cfg: DecisionConfig,
): Promise<ToolShownV1[]> {
  if (out.kind === "shell") {
    const { view, multi } = classifyShellCommand(out.command);
    const base = out.cwd ?? deps.cwd;
    if (view !== undefined) {
      const name = resolve(base, view.path);
      return await shownOf(name, (text) => shownLinesOf(view.lines, text, out.output), deps, cfg);
    }
    if (multi === undefined || out.output === "") return [];
    if (multi.kind === "rows") return await rowsShown(multi, out.output, base, deps, cfg);
    if (multi.kind === "concat") return await concatShown(multi.paths, out.output, base, deps, cfg);
    return await gitDiffShown(resolve(base, multi.dir), out.output, deps, cfg);
  }
  if (out.kind === "opaque") return [];
  // pi's grep: paths relative to the directory searched, or the file's name when it was a file
  const rows = grepToolLines(out.output);
  if (rows.length === 0) return [];
  const searched = resolve(deps.cwd, out.path ?? ".");
  const searchedFile = (await stat(searched).catch(() => undefined))?.isFile() === true;
  return await rowsOfFilesShown(
    rows.map((r) => ({
      ...r,
      name: searchedFile ? searched : isAbsolute(r.path) ? r.path : resolve(searched, r.path),
    })),
    deps,
    cfg,
  );
}

/** Numbered rows of files (`N` and its text, per file name), each checked against its file. */
async function rowsOfFilesShown(
  rows: readonly { name: string; line: number; text: string }[],
  deps: ReadServiceDeps,
  cfg: DecisionConfig,
): Promise<ToolShownV1[]> {
  const byFile = new Map<string, { line: number; text: string }[]>();
  for (const r of rows) {
    const of = byFile.get(r.name);
    if (of === undefined) byFile.set(r.name, [r]);
    else of.push(r);
  }
  const shown: ToolShownV1[] = [];
  for (const [name, fileRows] of byFile) {
    shown.push(...await shownOf(name, (text) => grepShownLines(fileRows, text), deps, cfg));
  }
  return shown;
}

/** Rows of a search over several paths (`grep -rn`, `rg -n`), each checked against its file. */
async function rowsShown(
  search: { paths: string[]; bare: boolean },
  output: string,
  base: string,
  deps: ReadServiceDeps,
  cfg: DecisionConfig,
): Promise<ToolShownV1[]> {
  const searched = search.paths.map((p) => resolve(base, p));
  // one path searched without -H: bare `N:text` rows when it is a file
  const bareFile = search.bare &&
    (await stat(searched[0]).catch(() => undefined))?.isFile() === true;
  const rows = searchRows(output, bareFile)
    .map((r) => ({ ...r, name: bareFile ? searched[0] : resolve(base, r.path) }))
    // a row names a file under a path searched, or it is not the search's
    .filter((r) => searched.some((p) => isAtOrUnder(r.name, p)));
  return await rowsOfFilesShown(rows, deps, cfg);
}

/**
 * `cat F1 F2 ...`: each file whole when the output is exactly the files one
 * after another and every file but the last ends with a line break (so the
 * model can tell where one ends once it knows its length).
 */
async function concatShown(
  paths: string[],
  output: string,
  base: string,
  deps: ReadServiceDeps,
  cfg: DecisionConfig,
): Promise<ToolShownV1[]> {
  const names = paths.map((p) => resolve(base, p));
  const texts: string[] = [];
  for (const name of names) {
    const read = await readRegularFile(name, cfg.maxFileBytes).catch(() => undefined);
    const text = read?.kind === "ok" ? decode(read.bytes) : undefined;
    // line breaks with a carriage return are ambiguous (SPEC §5.10)
    if (text === undefined || text.includes("\r")) return [];
    texts.push(text);
  }
  if (texts.slice(0, -1).some((t) => t !== "" && !t.endsWith("\n"))) return [];
  const all = texts.join("");
  if (output !== all && output + "\n" !== all) return [];
  const shown: ToolShownV1[] = [];
  for (const [i, name] of names.entries()) {
    // its own bytes, checked again as it is read for the record
    shown.push(
      ...await shownOf(
        name,
        (text) => text === texts[i] && text !== "" ? [{ start: 1, end: TO_END }] : [],
        deps,
        cfg,
      ),
    );
  }
  return shown;
}

/** The new side of `git diff` hunks, each line checked against the working file. */
async function gitDiffShown(
  dir: string,
  output: string,
  deps: ReadServiceDeps,
  cfg: DecisionConfig,
): Promise<ToolShownV1[]> {
  // git names files from the repository's top directory
  let top: string | undefined;
  for (let d = dir; top === undefined; d = dirname(d)) {
    if (await lstat(join(d, ".git")).then(() => true, () => false)) top = d;
    else if (dirname(d) === d) return [];
  }
  const rows = gitDiffNewSide(output)
    .flatMap((f) => f.rows.map((r) => ({ ...r, name: resolve(top, f.path) })));
  return await rowsOfFilesShown(rows, deps, cfg);
}

/** The stretches `linesOf` finds in the file `name` as it is now, as records; its content kept. */
async function shownOf(
  name: string,
  linesOf: (text: string) => { start: number; end: number }[],
  deps: ReadServiceDeps,
  cfg: DecisionConfig,
): Promise<ToolShownV1[]> {
  let pathKey: string;
  let read;
  try {
    pathKey = pathKeyOnDisk(name);
    if (isSensitivePath(pathKey, cfg.sensitivePatterns)) return [];
    if (isSensitivePath(name, cfg.sensitivePatterns)) return [];
    read = await readRegularFile(name, cfg.maxFileBytes);
  } catch {
    return [];
  }
  if (read.kind !== "ok") return [];
  const text = decode(read.bytes);
  if (text === undefined || text.includes("\0")) return [];
  const stretches = linesOf(text);
  if (stretches.length === 0) return [];
  const hash = sha256Hex(read.bytes);
  const store = storesOf(pathKey, deps, cfg)[0];
  try {
    if (store !== undefined && !(await store.has?.(hash) ?? false)) {
      await store.put(hash, read.bytes);
    }
  } catch {
    // supporting data only: a later diff against it falls back to the plain read
  }
  const totalLines = countLines(text);
  return stretches.map((s) => ({
    pathKey,
    name,
    hash,
    totalLines,
    start: s.start,
    ...(s.end === TO_END ? {} : { end: s.end }),
  }));
}
