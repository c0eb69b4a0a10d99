/**
 * What one pi session file read, sent and would have sent, for `readcache savings` (cli/savings.ts
 * runs it for each pi session; cli/claude_savings.ts and cli/opencode_savings.ts are the other
 * hosts' readers, cli/savings_figures.ts the figures they all fill in).
 *
 * - A session WITH the read cache (its read results carry
 *   `details.readcache`): what was sent is measured (the text of each read
 *   result); what pi's own `read` would have sent is the status estimate
 *   (`PlainReadEstimate`, SPEC §11.4: a short answer costs the lines it
 *   covers times the bytes per line of the file's latest full read), where
 *   what the model wrote with pi's `write` counts like a full read of it (it
 *   holds what it wrote, SPEC §5.8), so a file written and then read back
 *   "unchanged" shows what that saved.
 * - A session WITHOUT it, when bench:real's replay through pi cannot run (or with `--no-replay`;
 *   cli/savings_replay.ts runs that replay): what pi sent is measured; what the read cache would
 *   have sent is computed by replaying the session's own read results through
 *   the read decision, branch by branch, compactions included. The content of
 *   the file at each read is taken from the session itself: a whole-file read
 *   that pi did not cut shows the whole file; any other read (a range, a cut
 *   read) uses the latest earlier whole-file text of that file whose lines
 *   give exactly that read's text. When there is none, the content cannot be
 *   known: the read counts as sent in full on both sides and is reported
 *   separately. As a check, each answer the replay sends in full is compared
 *   with the text pi really sent.
 *
 * @module
 */
import { homedir } from "node:os";
import { resolve } from "node:path";
import { type PiEntryLike, piEntryToReplay, readCallsOf } from "../src/adapters/pi/branch.ts";
import { renderBaselineRead } from "../src/core/baseline.ts";
import { decidePlan, planRead } from "../src/core/decision.ts";
import { BranchKnowledge } from "../src/core/knowledge.ts";
import { parseReadCacheMeta, type ReadCacheMetaV1 } from "../src/core/meta.ts";
import type { ReplayEntry } from "../src/core/replay.ts";
import { PlainReadEstimate } from "../src/core/status.ts";
import { locateRead, resolveCall, resolveWriteCall } from "../src/shell/read_service.ts";
import {
  emptySessionSavings,
  piSessionHead,
  readCounter,
  type SessionSavings,
} from "./savings_figures.ts";

import type { SessionFile } from "./support/sessions.ts";

const encoder = new TextEncoder();
const utf8 = (s: string) => encoder.encode(s).length;

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null ? v as Record<string, unknown> : undefined;
}

/** A successful `read` tool result: its text, whether it holds an image, and its details. */
function readResult(
  e: PiEntryLike,
):
  | { text: string; image: boolean; details: Record<string, unknown> | undefined; callId: string }
  | undefined {
  if (e.type !== "message") return undefined;
  const msg = asRecord(e.message);
  if (msg?.role !== "toolResult" || msg.toolName !== "read" || msg.isError === true) {
    return undefined;
  }
  const content = Array.isArray(msg.content) ? msg.content : [];
  let text = "";
  let image = false;
  for (const part of content) {
    const p = asRecord(part);
    if (p?.type === "text" && typeof p.text === "string") text += p.text;
    if (p?.type === "image") image = true;
  }
  if (typeof msg.content === "string") text = msg.content;
  return {
    text,
    image,
    details: asRecord(msg.details),
    callId: typeof msg.toolCallId === "string" ? msg.toolCallId : "",
  };
}

/** The id of a successful `write` tool result, when `e` is one. */
function writeResultId(e: PiEntryLike): string | undefined {
  if (e.type !== "message") return undefined;
  const msg = asRecord(e.message);
  if (msg?.role !== "toolResult" || msg.toolName !== "write" || msg.isError === true) {
    return undefined;
  }
  return typeof msg.toolCallId === "string" ? msg.toolCallId : undefined;
}

/** The arguments of the `write` tool calls of an assistant message entry, by tool call id. */
function writeCallsOf(e: PiEntryLike): [string, unknown][] {
  if (e.type !== "message") return [];
  const msg = asRecord(e.message);
  if (msg?.role !== "assistant" || !Array.isArray(msg.content)) return [];
  const out: [string, unknown][] = [];
  for (const block of msg.content) {
    const b = asRecord(block);
    if (b?.type === "toolCall" && b.name === "write" && typeof b.id === "string") {
      out.push([b.id, b.arguments]);
    }
  }
  return out;
}

/**
 * What pi's own `read` of the whole file would have sent right after the
 * model wrote `args.content` to it, as read cache metadata of a full read:
 * for the estimate of pi's side, a file the model wrote counts like a file
 * it read whole (SPEC §5.8: what the model wrote is what it holds).
 * `undefined` when the arguments do not resolve.
 */
function writtenAsFullRead(
  args: unknown,
  deps: { cwd: string; home: string },
): ReadCacheMetaV1 | undefined {
  const a = asRecord(args);
  const w = resolveWriteCall(args, deps);
  if (w === undefined || typeof a?.content !== "string" || typeof a.path !== "string") {
    return undefined;
  }
  try {
    const shown = renderBaselineRead({ text: a.content, displayPath: a.path });
    if (shown.shownEnd < shown.shownStart) return undefined;
    return {
      v: 1,
      pathKey: w.call.pathKey,
      scopeKey: "full",
      servedHash: w.hash,
      mode: "full",
      totalLines: shown.totalLines,
      rangeStart: shown.shownStart,
      rangeEnd: shown.shownEnd,
      bytes: utf8(shown.text),
    };
  } catch {
    return undefined;
  }
}

/**
 * Works out the figures of one session file (see the module documentation).
 * Reads nothing but the file's own entries (the project's directory, when it
 * exists, only to resolve paths as pi did).
 *
 * @example
 * ```ts ignore
 * const s = analyseSession(await readSessionFile("session.jsonl"));
 * console.log(s.piBytes, s.readcacheBytes);
 * ```
 */
export function analyseSession(session: SessionFile): SessionSavings {
  const cwd = session.header?.cwd ?? "/";
  const deps = { cwd, home: homedir() };
  const args = new Map<string, unknown>();
  const writes = new Map<string, unknown>();
  for (const e of session.entries) {
    for (const [id, a] of readCallsOf(e)) args.set(id, a);
    for (const [id, a] of writeCallsOf(e)) writes.set(id, a);
  }
  const withReadcache = session.entries.some((e) =>
    parseReadCacheMeta(asRecord(readResult(e)?.details)?.readcache) !== undefined
  );
  const out = emptySessionSavings(piSessionHead(session, withReadcache));
  if (!withReadcache) out.estimate = "session";
  const byMode = out.byMode;
  const counter = readCounter(out);
  const count = counter.count;

  // replay state for sessions without the read cache
  const estimate = new PlainReadEstimate();
  const knowledge = new BranchKnowledge();
  const replayed = new Map<string, ReplayEntry>();
  const stored = new Map<string, Uint8Array>();
  const contents = new Map<string, string[]>();
  const lookup = (id: string) => replayed.get(id);

  for (const e of session.entries) {
    const r = readResult(e);
    if (r === undefined) {
      if (!withReadcache) replayed.set(e.id, piEntryToReplay(e));
      const written = withReadcache ? writeResultId(e) : undefined;
      if (written !== undefined) {
        // a later short answer for a file the model wrote is charged at the bytes per line of
        // what it wrote, as after a full read (pi's side of the estimate)
        const meta = writtenAsFullRead(writes.get(written), deps);
        if (meta !== undefined) estimate.add(meta);
      }
      continue;
    }
    out.reads++;
    const a = asRecord(args.get(r.callId));
    const call = a === undefined ? undefined : resolveCall(a, deps);
    const key = call?.pathKey ?? (typeof a?.path === "string" ? resolve(cwd, a.path) : "(unknown)");
    const bytes = utf8(r.text);
    if (r.image) out.images++;
    if (withReadcache) {
      const meta = parseReadCacheMeta(r.details?.readcache);
      if (meta === undefined) {
        byMode.plain++;
        count(key, bytes, bytes);
      } else {
        byMode[meta.mode]++;
        count(key, estimate.add(meta), bytes);
      }
      continue;
    }

    // without the read cache: what would it have answered?
    const asPlain = () => {
      const entry: ReplayEntry = { id: e.id, parentId: e.parentId, kind: "read", meta: undefined };
      if (r.callId !== "") entry.callId = r.callId;
      if (call !== undefined) entry.call = call;
      replayed.set(e.id, entry);
    };
    if (r.image || call === undefined || typeof a?.path !== "string") {
      byMode.plain++;
      count(key, bytes, bytes);
      asPlain();
      continue;
    }
    let displayPath = a.path;
    try {
      displayPath = locateRead({ path: a.path }, deps).target.displayPath;
    } catch {
      // keep the path as typed
    }
    const ranged = call.offset !== undefined || call.limit !== undefined;
    const render = (text: string): string | undefined => {
      try {
        return renderBaselineRead({ text, displayPath, offset: call.offset, limit: call.limit })
          .text;
      } catch {
        return undefined;
      }
    };
    let content: string | undefined;
    if (!ranged && r.details?.truncation === undefined && render(r.text) === r.text) {
      content = r.text;
    } else {
      content = (contents.get(call.pathKey) ?? []).findLast((c) => render(c) === r.text);
    }
    if (content === undefined) {
      out.unknown.reads++;
      out.unknown.bytes += bytes;
      byMode.plain++;
      count(key, bytes, bytes);
      asPlain();
      continue;
    }
    const seen = contents.get(call.pathKey) ?? [];
    if (!ranged && seen.at(-1) !== content) seen.push(content);
    contents.set(call.pathKey, seen);
    knowledge.syncTip(e.parentId, lookup);
    const plan = planRead({
      displayPath,
      pathKey: call.pathKey,
      offset: call.offset,
      limit: call.limit,
      bytes: encoder.encode(content),
      knowledge: knowledge.file(call.pathKey, call.name),
    });
    const d = decidePlan(plan, new Map(plan.needs.map((h) => [h, stored.get(h)])));
    if (d.store) stored.set(d.store.hash, d.store.bytes);
    if (d.mode === null || d.mode === "full" || d.mode === "baseline_fallback") {
      out.checked.reads++;
      if (d.text === r.text) out.checked.matched++;
    }
    byMode[d.mode ?? "plain"]++;
    count(key, bytes, utf8(d.text));
    const entry: ReplayEntry = {
      id: e.id,
      parentId: e.parentId,
      kind: "read",
      meta: d.details.readcache,
      call,
    };
    if (r.callId !== "") entry.callId = r.callId;
    replayed.set(e.id, entry);
  }
  counter.done();
  return out;
}
