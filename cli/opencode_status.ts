/**
 * `readcache status` for an OpenCode session: the same report as for pi
 * (`src/core/status.ts`), from the branch the OpenCode plugin replays.
 *
 * - The branch is the session's messages before its revert point, converted
 *   by `OpenCodeBranchConverter` exactly as the plugin converts them while
 *   OpenCode runs (compaction barrier, pruned outputs, edits, writes).
 * - The next read of each part is what the plugin would answer now: OpenCode's
 *   own read of the file rendered from its bytes (`renderOpenCodeRead`), the
 *   core's decision for those lines, and the plugin's rule that only files
 *   whose lines OpenCode and the cache count alike are cached; nothing is
 *   stored. Objects come from `<project>/.opencode/readcache/`.
 * - Line counts are OpenCode's: the cache counts an empty line after a final
 *   line break, OpenCode does not, so the counts of what the model holds are
 *   taken from what OpenCode showed (its `total N lines` or the plugin's
 *   marker) where a read says so.
 *
 * @module
 */
import { join } from "node:path";
import {
  cacheableView,
  coreRequest,
  openCodeAnswerText,
  scopeMatchesView,
} from "../src/adapters/opencode/answer.ts";
import { decodeOpenCodeText, renderOpenCodeRead } from "../src/adapters/opencode/baseline.ts";
import {
  messagesBeforeRevert,
  OpenCodeBranchConverter,
  type OpenCodeMessageLike,
} from "../src/adapters/opencode/branch.ts";
import { decidePlan, DEFAULT_DECISION_CONFIG, planRead } from "../src/core/decision.ts";
import { BranchKnowledge } from "../src/core/knowledge.ts";
import { parseReadCacheMeta } from "../src/core/meta.ts";
import {
  bytesInWords,
  describeNextRead,
  describeReads,
  formatStatusReport,
  type HeldPart,
  heldParts,
  type NextRead,
  type StatusReport,
} from "../src/core/status.ts";
import {
  detectImageMimeType,
  isInsideProject,
  readRegularFile,
} from "../src/shell/read_service.ts";
import { FsObjectStore } from "../src/store/fs_object_store.ts";
import { EXIT_OK, EXIT_PROBLEM, messageOf, printJson, stdoutStyle } from "./support/output.ts";
import { statusJson, statusReport } from "./support/status_report.ts";
import { projectDir } from "./support/sessions.ts";
import type { OpenCodeSessionFile } from "./support/sessions.ts";

const encoder = new TextEncoder();
const utf8 = (s: string) => encoder.encode(s).length;

/**
 * Why OpenCode's own read would answer, for the reasons only OpenCode has
 * (the others are the core's, `describeNextRead`).
 */
const OPENCODE_PLAIN_BECAUSE: Record<string, string> = {
  opencode_lines_differ: "its line breaks (CR LF or CR), a byte order mark or a line over 2000 " +
    "characters make OpenCode's lines differ from the cache's, so the plugin leaves it alone",
  opencode_scope_differs: "OpenCode would show other lines than the cache can answer for",
};

/**
 * The next read of a held part in words, for OpenCode: the core's words with
 * OpenCode as the host, and OpenCode's own reasons.
 *
 * @example
 * ```ts
 * import { describeOpenCodeNextRead } from "./opencode_status.ts";
 * describeOpenCodeNextRead({ mode: "unchanged", reason: "hash_match", bytes: 32, plainBytes: 900 });
 * // 'a short "unchanged" note (32 bytes instead of 900 bytes)'
 * ```
 */
export function describeOpenCodeNextRead(next: NextRead): string {
  if (next.mode === null && next.reason === "offset_out_of_range") {
    return "an error: these lines are no longer in the file (OpenCode says the offset is out of " +
      "range)";
  }
  const own = next.mode === null ? OPENCODE_PLAIN_BECAUSE[next.reason] : undefined;
  if (own !== undefined) {
    const inFull = next.plainBytes !== undefined ? ` (${bytesInWords(next.plainBytes)})` : "";
    return `in full by OpenCode itself${inFull}: ${own}`;
  }
  return forOpenCode(describeNextRead(next));
}

/**
 * Words of the core's status written for pi, with OpenCode as the host.
 *
 * @example
 * ```ts
 * import { forOpenCode } from "./opencode_status.ts";
 * forOpenCode("2 served by pi itself (not cached)"); // "2 served by OpenCode itself (not cached)"
 * ```
 */
export function forOpenCode(text: string): string {
  return text.replaceAll("by pi itself", "by OpenCode itself")
    .replaceAll("pi's output limit", "OpenCode's output limit");
}

/** A held part with OpenCode's line counts (see the module documentation). */
function withOpenCodeLines(part: HeldPart, totals: ReadonlyMap<string, number>): HeldPart {
  const shown = totals.get(`${part.pathKey}\u0000${part.totalLines}`);
  if (shown === undefined || shown !== part.totalLines - 1) return part;
  const out = { ...part, totalLines: shown };
  if (out.end > shown) out.end = Math.max(out.start, shown);
  return out;
}

const SHOWN_TOTAL =
  /total (\d+) lines\)|Showing lines \d+-\d+ of (\d+)\.|^\[readcache: unchanged, (\d+) lines?\]|^\[readcache: unchanged in lines \d+-\d+ of (\d+)\]|^\[readcache: \d+ lines? changed (?:in lines \d+-\d+ )?of (\d+)\]/m;

/**
 * OpenCode's line count of each file as the reads with read cache metadata
 * showed it, by `pathKey` and the cache's count.
 */
function shownTotals(messages: readonly OpenCodeMessageLike[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of messages) {
    for (const p of m.parts) {
      if (p.type !== "tool" || p.tool !== "read" || p.state?.status !== "completed") continue;
      const meta = parseReadCacheMeta(
        (p.state.metadata as { readcache?: unknown } | undefined)?.readcache,
      );
      const match = meta === undefined ? null : SHOWN_TOTAL.exec(p.state.output ?? "");
      if (meta === undefined || match === null) continue;
      const n = Number(match.slice(1).find((g) => g !== undefined));
      if (Number.isSafeInteger(n)) out.set(`${meta.pathKey}\u0000${meta.totalLines}`, n);
    }
  }
  return out;
}

/**
 * How the OpenCode plugin would answer the next read of `part` now, computed
 * read-only: OpenCode's own read rendered from the file's bytes, the core's
 * decision for the lines it shows, the objects loaded from `store` (files
 * inside the project only), nothing written.
 *
 * @example
 * ```ts ignore
 * const next = await predictOpenCodeNextRead(knowledge, part, "/w/a.txt", store, "/w");
 * next.mode; // "unchanged"
 * ```
 */
export async function predictOpenCodeNextRead(
  knowledge: BranchKnowledge,
  part: HeldPart,
  name: string,
  store: FsObjectStore,
  cwd: string,
): Promise<NextRead> {
  const ranged = part.scope !== "full";
  const offset = ranged ? part.start : undefined;
  const limit = ranged ? part.end - part.start + 1 : undefined;
  let read;
  try {
    read = await readRegularFile(name, DEFAULT_DECISION_CONFIG.maxFileBytes);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || (e as { code?: string }).code === "ENOENT") {
      return { mode: null, reason: "missing" };
    }
    return { mode: null, reason: "error", error: `it cannot be read (${messageOf(e)})` };
  }
  if (read.kind !== "ok") return { mode: null, reason: read.kind };
  if (detectImageMimeType(read.bytes) !== undefined) return { mode: null, reason: "image" };
  try {
    const text = decodeOpenCodeText(read.bytes);
    const view = renderOpenCodeRead({ path: name, text, offset, limit });
    if (view === undefined) return { mode: null, reason: "offset_out_of_range" };
    const plainBytes = utf8(view.text);
    if (!cacheableView(view, read.bytes, text)) {
      return { mode: null, reason: "opencode_lines_differ", plainBytes };
    }
    const plan = planRead({
      displayPath: name,
      pathKey: part.pathKey,
      ...coreRequest(view, limit),
      bytes: read.bytes,
      knowledge: knowledge.file(part.pathKey, name),
    });
    const inside = isInsideProject(part.pathKey, cwd);
    const objects = new Map<string, Uint8Array | undefined>();
    for (const hash of plan.needs) objects.set(hash, inside ? await store.get(hash) : undefined);
    const d = decidePlan(plan, objects);
    if (d.mode === null) return { mode: null, reason: d.reason, plainBytes };
    const meta = d.details.readcache;
    if (meta === undefined || !scopeMatchesView(meta, view)) {
      return { mode: null, reason: "opencode_scope_differs", plainBytes };
    }
    if (d.mode === "full" || d.mode === "baseline_fallback") {
      return { mode: d.mode, reason: d.reason, bytes: plainBytes, plainBytes };
    }
    const answer = openCodeAnswerText(d, view);
    if (answer === undefined) return { mode: null, reason: "opencode_scope_differs", plainBytes };
    const next: NextRead = { mode: d.mode, reason: d.reason, bytes: utf8(answer), plainBytes };
    const m = d.mode === "diff" ? /^\[readcache: (\d+) lines? changed/.exec(answer) : null;
    if (m) next.changedLines = Number(m[1]);
    return next;
  } catch (e) {
    return { mode: null, reason: "error", error: messageOf(e) };
  }
}

/**
 * Options of {@linkcode openCodeStatus}.
 *
 * @example
 * ```ts
 * import type { OpenCodeStatusOptions } from "./opencode_status.ts";
 * const o: OpenCodeStatusOptions = { json: true };
 * ```
 */
export interface OpenCodeStatusOptions {
  /** The project directory (default: the session's own, else the current directory). */
  cwd?: string;
  /** Print JSON instead of words. */
  json?: boolean;
}

/**
 * Prints the status of an OpenCode session (see the module documentation);
 * returns the exit code (0, or 1 when the store has a problem).
 *
 * @example
 * ```ts ignore
 * const code = await openCodeStatus(await readOpenCodeFile("session.json"), {});
 * ```
 */
export async function openCodeStatus(
  file: OpenCodeSessionFile,
  options: OpenCodeStatusOptions,
): Promise<number> {
  const { info, messages } = file.session;
  let fallback = Deno.cwd();
  if (info.directory !== undefined) {
    try {
      if ((await Deno.stat(info.directory)).isDirectory) fallback = info.directory;
    } catch {
      // the session's directory is gone: the current directory, unless --cwd says otherwise
    }
  }
  const cwd = await projectDir(options.cwd, fallback);
  const directory = info.directory ?? cwd;
  const convert = new OpenCodeBranchConverter();
  const branch = convert.convert(messages, { directory, revert: info.revert }).entries;
  const all = convert.convert(messages, { directory }).entries;
  const visible = messagesBeforeRevert(messages, info.revert);
  const reverted = messages.length - visible.length;

  // the name of the latest read of each file on the branch
  const names = new Map<string, string>();
  for (const e of branch) if (e.kind === "read" && e.call) names.set(e.call.pathKey, e.call.name);

  const knowledge = new BranchKnowledge();
  knowledge.sync(branch);
  const store = new FsObjectStore(join(cwd, ".opencode", "readcache"), { projectRoot: cwd });
  const totals = shownTotals(messages);
  const held: StatusReport["held"] = [];
  for (const raw of heldParts(branch)) {
    const part = withOpenCodeLines(raw, totals);
    const name = names.get(part.pathKey) ?? part.pathKey;
    held.push({ ...part, next: await predictOpenCodeNextRead(knowledge, part, name, store, cwd) });
  }
  const { report, problem } = await statusReport({
    sessionFile: file.path,
    cwd,
    branch,
    all,
    held,
    store,
  });
  const revert = info.revert ?? null;
  if (options.json) {
    const common = statusJson(
      report,
      all,
      describeOpenCodeNextRead,
      (reads) => forOpenCode(describeReads(reads)),
    );
    printJson({
      host: "opencode",
      sessionFile: file.path,
      sessionId: info.id,
      title: info.title ?? null,
      cwd,
      revert,
      ...common,
      branch: { messages: visible.length, ...common.branch },
      wholeSession: { messages: messages.length, ...common.wholeSession },
    });
    return problem ? EXIT_PROBLEM : EXIT_OK;
  }
  const style = stdoutStyle();
  let text = formatStatusReport(report, style);
  for (const h of held) {
    if (h.next === undefined) continue;
    text = text.replace(
      `    next read: ${describeNextReadPainted(h.next, style)}`,
      `    next read: ${describeNextReadPainted(h.next, style, describeOpenCodeNextRead(h.next))}`,
    );
  }
  const lines = forOpenCode(text).split("\n");
  const at = lines.findIndex((l) => l.startsWith("active branch: "));
  if (at >= 0) {
    lines[at] = lines[at].replace(
      /^active branch: \d+ (entries|entry)/,
      `active branch: ${visible.length} ${visible.length === 1 ? "message" : "messages"}` +
        (reverted > 0 ? ` (${reverted} after the revert point left out)` : ""),
    );
    lines.splice(
      at,
      0,
      `OpenCode session: ${info.id}${info.title ? ` "${info.title}"` : ""}`,
    );
  }
  console.log(
    lines.join("\n").replace("In the whole session file", "In the whole session")
      .replace("(every branch, across compactions", "(reverted messages too, across compactions"),
  );
  return problem ? EXIT_PROBLEM : EXIT_OK;
}

/** The next-read words as `formatStatusReport` paints them (`words` instead, when given). */
function describeNextReadPainted(
  next: NextRead,
  style: ReturnType<typeof stdoutStyle>,
  words: string = describeNextRead(next),
): string {
  const paint = next.mode === "unchanged" || next.mode === "unchanged_range" ||
      next.mode === "diff"
    ? style.good
    : next.reason === "missing" || next.reason === "error"
    ? style.bad
    : style.warn;
  return paint(words);
}
