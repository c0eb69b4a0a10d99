/**
 * `readcache savings` for an OpenCode session: the figures of
 * `analyseSession` (cli/pi_savings.ts), counted the same way from OpenCode's
 * message parts.
 *
 * - Every completed `read` part counts once, in message order (reverted
 *   messages still in the session and pruned outputs included: they were
 *   sent); what was sent is its output text as stored (`state.output`, which
 *   is what the model got).
 * - A session WITH the read cache (a read carries `metadata.readcache`): what
 *   OpenCode's own `read` would have sent is the status estimate
 *   (`PlainReadEstimate`), a file the model wrote counting like a full read
 *   of what it wrote (SPEC §5.8); reads without metadata count as sent in
 *   full on both sides.
 * - A session WITHOUT it is not replayed through the read decision, unlike a
 *   pi session: OpenCode's read output does not show the file exactly (it
 *   never says whether the file ends with a line break, and drops CR and a
 *   BOM), so the content at each read cannot be known. Its reads count as
 *   sent in full on both sides, and the report says so.
 *
 * @module
 */
import { openCodeReadCall, openCodeWriteProof } from "../src/adapters/opencode/calls.ts";
import { parseReadCacheMeta } from "../src/core/meta.ts";
import { PlainReadEstimate } from "../src/core/status.ts";
import { emptySessionSavings, readCounter, type SessionSavings } from "./savings_figures.ts";
import type { OpenCodeSessionFile } from "./support/sessions.ts";

const encoder = new TextEncoder();

/**
 * Works out the figures of one OpenCode session (see the module
 * documentation). Reads nothing but the session itself (paths are resolved
 * against its directory as OpenCode resolved them).
 *
 * @example
 * ```ts
 * import { analyseOpenCodeSession } from "./opencode_savings.ts";
 * const s = analyseOpenCodeSession({ path: "s.json", mtimeMs: 0, bytes: 0,
 *   session: { info: { id: "ses_1", directory: "/w" }, messages: [] } });
 * s.reads; // 0
 * ```
 */
export function analyseOpenCodeSession(file: OpenCodeSessionFile): SessionSavings {
  const { info, messages } = file.session;
  const directory = info.directory ?? "/";
  const reads: { key: string; bytes: number; meta: ReturnType<typeof parseReadCacheMeta> }[] = [];
  const estimate = new PlainReadEstimate();
  const events: (
    | { kind: "read"; index: number }
    | { kind: "wrote"; key: string; bytes: number; lines: number }
  )[] = [];
  for (const m of messages) {
    for (const p of m.parts) {
      if (p.type !== "tool" || p.state?.status !== "completed") continue;
      if (p.tool === "read") {
        const call = openCodeReadCall(p.state.input, directory);
        const meta = parseReadCacheMeta(
          (p.state.metadata as { readcache?: unknown } | undefined)?.readcache,
        );
        const key = meta?.pathKey ?? call?.pathKey ?? "(unknown)";
        events.push({ kind: "read", index: reads.length });
        reads.push({ key, bytes: encoder.encode(p.state.output ?? "").length, meta });
      } else if (p.tool === "write" && p.state.time?.compacted === undefined) {
        const proof = openCodeWriteProof(p.state.input, directory);
        if (proof !== undefined) {
          events.push({
            kind: "wrote",
            key: proof.call.pathKey,
            bytes: proof.bytes,
            lines: proof.totalLines,
          });
        }
      }
    }
  }
  const withReadcache = reads.some((r) => r.meta !== undefined);
  const started = info.time?.created;
  const out = emptySessionSavings({
    file: file.path,
    host: "opencode",
    id: info.id,
    cwd: info.directory ?? null,
    started: typeof started === "number" ? new Date(started).toISOString() : null,
    withReadcache,
    notReplayed: !withReadcache,
    reads: reads.length,
  });
  const counter = readCounter(out);
  for (const e of events) {
    if (e.kind === "wrote") {
      if (withReadcache) estimate.wrote(e.key, e.bytes, e.lines);
      continue;
    }
    const r = reads[e.index];
    const own = r.meta === undefined ? r.bytes : estimate.add(r.meta);
    if (r.meta === undefined) out.byMode.plain++;
    else out.byMode[r.meta.mode]++;
    // without the read cache a read counts as sent in full on both sides (not replayed)
    counter.count(r.key, own, r.bytes);
  }
  counter.done();
  return out;
}
