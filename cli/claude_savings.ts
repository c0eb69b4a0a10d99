/**
 * `readcache savings` for a Claude Code transcript: the figures of
 * `analyseSession` (cli/savings.ts), counted the same way from the
 * transcript's rows (SPEC §11.9).
 *
 * - Every successful `Read` result counts once, in file order (every branch,
 *   rewound ones included: they were sent); what was sent is the text the
 *   model got (the `tool_result`, with Claude Code's line numbers).
 * - A transcript WITH the read cache (a read carries
 *   `toolUseResult.file.readcache`): what Claude Code's own `Read` would have
 *   sent is estimated as for pi (`PlainReadEstimate`: the lines an answer
 *   covers times the bytes per line the latest full read of the file sent;
 *   a file the model wrote counts like a full read of what it wrote); reads
 *   without metadata count as sent in full on both sides.
 * - A transcript WITHOUT it is not replayed yet: its reads count as sent in
 *   full on both sides, and the report says so.
 *
 * @module
 */
import { claudeFileCall, type ClaudeRowLike } from "../src/adapters/claude/transcript.ts";
import { parseReadCacheMeta } from "../src/core/meta.ts";
import { countLines } from "../src/core/range.ts";
import { PlainReadEstimate } from "../src/core/status.ts";
import { emptySessionSavings, readCounter, type SessionSavings } from "./savings.ts";
import type { ClaudeSessionFile } from "./support/sessions.ts";

const encoder = new TextEncoder();

function record(v: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null ? v as Record<string, unknown> : {};
}

function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b) => record(b).type === "text" ? String(record(b).text ?? "") : "").join(
    "\n",
  );
}

/**
 * Works out the figures of one Claude Code transcript (see the module
 * documentation). Reads nothing but the transcript.
 *
 * @example
 * ```ts
 * import { analyseClaudeSession } from "./claude_savings.ts";
 * analyseClaudeSession({ path: "s.jsonl", mtimeMs: 0, bytes: 0, rows: [] }).reads; // 0
 * ```
 */
export function analyseClaudeSession(file: ClaudeSessionFile): SessionSavings {
  const uses = new Map<string, { name: string; input: unknown }>();
  const events: (
    | { kind: "read"; key: string; bytes: number; meta: ReturnType<typeof parseReadCacheMeta> }
    | { kind: "wrote"; key: string; bytes: number; lines: number }
  )[] = [];
  let first: ClaudeRowLike | undefined;
  for (const row of file.rows) {
    const r = record(row);
    if (first === undefined && typeof r.sessionId === "string" && typeof r.uuid === "string") {
      first = row;
    }
    const content = row.message?.content;
    if (!Array.isArray(content)) continue;
    for (const block of content) {
      const b = record(block);
      if (row.type === "assistant" && b.type === "tool_use" && typeof b.id === "string") {
        uses.set(b.id, { name: String(b.name), input: b.input });
        continue;
      }
      if (row.type !== "user" || b.type !== "tool_result" || b.is_error === true) continue;
      const use = uses.get(String(b.tool_use_id));
      if (use === undefined) continue;
      const call = claudeFileCall(use.name, use.input, (p) => p);
      if (use.name === "Read") {
        const result = record(row.toolUseResult);
        const meta = result.type === "text"
          ? parseReadCacheMeta(record(result.file).readcache)
          : undefined;
        events.push({
          kind: "read",
          key: meta?.pathKey ?? call?.pathKey ?? "(unknown)",
          bytes: encoder.encode(text(b.content)).length,
          meta,
        });
      } else if (use.name === "Write" && call !== undefined) {
        const written = record(use.input).content;
        if (typeof written === "string") {
          // Claude Code would show it numbered: a tab and the number on each line
          const lines = countLines(written);
          const bytes = encoder.encode(written).length + lines * (String(lines).length + 1);
          events.push({ kind: "wrote", key: call.pathKey, bytes, lines });
        }
      }
    }
  }
  const reads = events.filter((e) => e.kind === "read");
  const withReadcache = reads.some((e) => e.meta !== undefined);
  const f = record(first);
  const out = emptySessionSavings({
    file: file.path,
    host: "claude",
    id: typeof f.sessionId === "string" ? f.sessionId : null,
    cwd: typeof f.cwd === "string" ? f.cwd : null,
    started: typeof f.timestamp === "string" ? f.timestamp : null,
    withReadcache,
    notReplayed: !withReadcache,
    reads: reads.length,
  });
  const counter = readCounter(out);
  const estimate = new PlainReadEstimate();
  for (const e of events) {
    if (e.kind === "wrote") {
      if (withReadcache) estimate.wrote(e.key, e.bytes, e.lines);
      continue;
    }
    // the estimate works in the bytes the model got (Claude Code's numbered lines)
    const own = e.meta === undefined ? e.bytes : estimate.add({ ...e.meta, bytes: e.bytes });
    if (e.meta === undefined) out.byMode.plain++;
    else out.byMode[e.meta.mode]++;
    counter.count(e.key, own, e.bytes);
  }
  counter.done();
  return out;
}
