/**
 * `readcache status` for a Claude Code transcript: the same report as for pi
 * (`src/core/status.ts`), from the branch the Claude Code host replays
 * (SPEC §11.9).
 *
 * - The branch is the transcript's chain from its newest row back to the
 *   latest barrier, converted by `ClaudeTranscriptIndex` exactly as the host
 *   converts it while Claude Code runs.
 * - The next read of each part is what the host would answer now for a
 *   `Read` of those lines: the core's decision on the file's bytes (files
 *   with CR line ends or a BOM are not cached: Claude Code's lines differ),
 *   objects loaded from `<project>/.claude/readcache/`, nothing stored.
 *   Sizes are of what the model would get: Claude Code's numbered lines.
 *
 * @module
 */
import { join } from "node:path";
import { claudeReadText } from "../src/adapters/claude/host.ts";
import { type ClaudeRowLike, ClaudeTranscriptIndex } from "../src/adapters/claude/transcript.ts";
import { decidePlan, DEFAULT_DECISION_CONFIG, planRead } from "../src/core/decision.ts";
import { BranchKnowledge } from "../src/core/knowledge.ts";
import type { ReplayEntry } from "../src/core/replay.ts";
import {
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
  pathKeyOnDisk,
  readRegularFile,
} from "../src/shell/read_service.ts";
import { FsObjectStore } from "../src/store/fs_object_store.ts";
import { EXIT_OK, EXIT_PROBLEM, messageOf, printJson, stdoutStyle } from "./support/output.ts";
import { statusJson, statusReport } from "./support/status_report.ts";
import { type ClaudeSessionFile, projectDir } from "./support/sessions.ts";

const encoder = new TextEncoder();

/** Claude Code's numbered rendering of lines `start`.. (what the model gets). */
function numbered(lines: readonly string[], start: number): number {
  return encoder.encode(claudeReadText({ content: lines.join("\n"), startLine: start })).length;
}

/**
 * Words of the core's status written for pi, with Claude Code as the host.
 *
 * @example
 * ```ts
 * import { forClaude } from "./claude_status.ts";
 * forClaude("2 served by pi itself (not cached)"); // "2 served by Claude Code itself (not cached)"
 * ```
 */
export function forClaude(text: string): string {
  return text.replaceAll("by pi itself", "by Claude Code itself")
    .replaceAll("pi's output limit", "Claude Code's output limit");
}

/** How the host would answer the next `Read` of `part` now (read-only). */
async function predictNextRead(
  knowledge: BranchKnowledge,
  part: HeldPart,
  name: string,
  store: FsObjectStore,
  cwd: string,
): Promise<NextRead> {
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
    const text = new TextDecoder().decode(read.bytes);
    const lines = text.split("\n");
    const ranged = part.scope !== "full";
    const start = ranged ? part.start : 1;
    const end = Math.min(lines.length, ranged ? part.end : lines.length);
    const plainBytes = numbered(lines.slice(start - 1, end), start);
    const bom = read.bytes[0] === 0xef && read.bytes[1] === 0xbb && read.bytes[2] === 0xbf;
    if (bom || text.includes("\r")) return { mode: null, reason: "binary", plainBytes };
    const plan = planRead({
      displayPath: name,
      pathKey: part.pathKey,
      ...(ranged ? { offset: part.start, limit: part.end - part.start + 1 } : {}),
      bytes: read.bytes,
      knowledge: knowledge.file(part.pathKey, name),
    });
    const inside = isInsideProject(part.pathKey, cwd);
    const objects = new Map<string, Uint8Array | undefined>();
    for (const hash of plan.needs) objects.set(hash, inside ? await store.get(hash) : undefined);
    const d = decidePlan(plan, objects);
    if (d.mode === null) return { mode: null, reason: d.reason, plainBytes };
    if (d.mode === "full" || d.mode === "baseline_fallback") {
      return { mode: d.mode, reason: d.reason, bytes: plainBytes, plainBytes };
    }
    const answer = d.text.split("\n");
    const next: NextRead = {
      mode: d.mode,
      reason: d.reason,
      bytes: numbered(answer, 1 - answer.length),
      plainBytes,
    };
    const m = d.mode === "diff" ? /^\[readcache: (\d+) lines? changed/.exec(d.text) : null;
    if (m) next.changedLines = Number(m[1]);
    return next;
  } catch (e) {
    return { mode: null, reason: "error", error: messageOf(e) };
  }
}

/** Every `Read` result of the transcript (every branch), as read entries, for the totals. */
function everyRead(rows: readonly ClaudeRowLike[]): ReplayEntry[] {
  const reads = new Set<string>();
  const out: ReplayEntry[] = [];
  for (const row of rows) {
    const content = row.message?.content;
    if (!Array.isArray(content)) continue;
    for (const b of content as Record<string, unknown>[]) {
      if (row.type === "assistant" && b.type === "tool_use" && b.name === "Read") {
        reads.add(String(b.id));
      } else if (
        row.type === "user" && b.type === "tool_result" && reads.has(String(b.tool_use_id)) &&
        b.is_error !== true
      ) {
        const result = (row.toolUseResult ?? {}) as { file?: { readcache?: unknown } };
        out.push({
          id: `${row.uuid}:${b.tool_use_id}`,
          parentId: null,
          kind: "read",
          meta: result.file?.readcache,
        });
      }
    }
  }
  return out;
}

/**
 * Prints the status of a Claude Code transcript (see the module
 * documentation); returns the exit code (0, or 1 when the store has a problem).
 *
 * @example
 * ```ts ignore
 * const code = await claudeStatus(file, { json: false });
 * ```
 */
export async function claudeStatus(
  file: ClaudeSessionFile,
  options: { cwd?: string; json?: boolean },
): Promise<number> {
  const first = file.rows.find((r) => typeof (r as { cwd?: unknown }).cwd === "string") as
    | { cwd: string }
    | undefined;
  const sessionId =
    (file.rows.find((r) => typeof (r as { sessionId?: unknown }).sessionId === "string") as {
      sessionId?: string;
    } | undefined)?.sessionId ?? null;
  let fallback = Deno.cwd();
  if (first !== undefined) {
    try {
      if ((await Deno.stat(first.cwd)).isDirectory) fallback = first.cwd;
    } catch {
      // the session's directory is gone: the current directory, unless --cwd says otherwise
    }
  }
  const cwd = await projectDir(options.cwd, fallback);
  const index = new ClaudeTranscriptIndex();
  for (const row of file.rows) index.add(row);
  const branch = index.branch({ pathKey: pathKeyOnDisk })?.entries ?? [];
  const all = everyRead(file.rows);
  const names = new Map<string, string>();
  for (const e of branch) if (e.kind === "read" && e.call) names.set(e.call.pathKey, e.call.name);
  const knowledge = new BranchKnowledge();
  knowledge.sync(branch);
  const store = new FsObjectStore(join(cwd, ".claude", "readcache"), { projectRoot: cwd });
  const held: StatusReport["held"] = [];
  for (const part of heldParts(branch)) {
    const name = names.get(part.pathKey) ?? part.pathKey;
    held.push({ ...part, next: await predictNextRead(knowledge, part, name, store, cwd) });
  }
  const { report, problem } = await statusReport({
    sessionFile: file.path,
    cwd,
    branch,
    all,
    held,
    store,
  });
  if (options.json) {
    const common = statusJson(
      report,
      all,
      (next) => forClaude(describeNextRead(next)),
      (reads) => forClaude(describeReads(reads)),
    );
    printJson({
      host: "claude",
      sessionFile: file.path,
      sessionId,
      cwd,
      clearsToolResults: index.clearsToolResults,
      ...common,
    });
    return problem ? EXIT_PROBLEM : EXIT_OK;
  }
  const lines = forClaude(formatStatusReport(report, stdoutStyle())).split("\n");
  const at = lines.findIndex((l) => l.startsWith("active branch: "));
  if (at >= 0) {
    lines.splice(at, 0, `Claude Code session: ${sessionId ?? "?"}`);
    if (index.clearsToolResults) {
      lines.splice(
        at + 1,
        0,
        "  (its requests let the server clear old tool results: the host serves plain reads)",
      );
    }
  }
  console.log(lines.join("\n"));
  return problem ? EXIT_PROBLEM : EXIT_OK;
}
