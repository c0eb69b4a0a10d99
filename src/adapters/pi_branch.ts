/**
 * Maps the entries of a pi session branch (`sessionManager.getBranch()`, or
 * the lines of a session JSONL file) onto the replay entry model. Pure; no
 * dependency on pi itself, so a session file can be replayed without pi.
 *
 * @module
 */
import { READCACHE_CUSTOM_TYPE } from "../meta.ts";
import type { ReplayEntry } from "../replay.ts";

/**
 * The fields of a pi session entry replay looks at. pi's own `SessionEntry`
 * values fit this shape.
 *
 * @example
 * ```ts
 * import type { PiEntryLike } from "@readcache/core/pi-branch";
 * const e: PiEntryLike = { type: "compaction", id: "c1", parentId: "m9", firstKeptEntryId: "m4" };
 * ```
 */
export interface PiEntryLike {
  /** Entry type: `message`, `custom`, `compaction`, `branch_summary`, ... */
  type: string;
  /** Entry id. */
  id: string;
  /** Parent entry id, `null` for a root. */
  parentId: string | null;
  /** For `custom` entries: the extension's entry type. */
  customType?: string;
  /** For `custom` entries: the extension's data. */
  data?: unknown;
  /** For `compaction` entries: where pi's rebuilt context starts (ignored for trust). */
  firstKeptEntryId?: string;
  /** For `message` entries: the agent message. */
  message?: unknown;
}

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null ? v as Record<string, unknown> : undefined;
}

/**
 * Converts one pi session entry. A successful `read` tool result carrying
 * `details.readcache` becomes a `read` event (its tool call id is kept); a
 * `pi-readcache` custom entry an `invalidate` event; a `compaction` entry the
 * barrier; everything else (including failed reads and results of other
 * tools) is `other`. Metadata is passed through raw: replay validates it.
 *
 * @example
 * ```ts
 * import { piEntryToReplay } from "@readcache/core/pi-branch";
 * piEntryToReplay({ type: "custom", id: "x", parentId: null, customType: "pi-readcache", data: {} }).kind;
 * // "invalidate"
 * ```
 */
export function piEntryToReplay(entry: PiEntryLike): ReplayEntry {
  const { id, parentId } = entry;
  if (entry.type === "compaction") {
    return entry.firstKeptEntryId === undefined
      ? { id, parentId, kind: "compaction" }
      : { id, parentId, kind: "compaction", firstKeptEntryId: entry.firstKeptEntryId };
  }
  if (entry.type === "custom" && entry.customType === READCACHE_CUSTOM_TYPE) {
    return { id, parentId, kind: "invalidate", data: entry.data };
  }
  if (entry.type === "message") {
    const msg = asRecord(entry.message);
    const meta = asRecord(msg?.details)?.readcache;
    if (
      msg?.role === "toolResult" && msg.toolName === "read" && msg.isError !== true &&
      meta !== undefined
    ) {
      return typeof msg.toolCallId === "string"
        ? { id, parentId, kind: "read", meta, callId: msg.toolCallId }
        : { id, parentId, kind: "read", meta };
    }
  }
  return { id, parentId, kind: "other" };
}

/**
 * Converts a branch (root to leaf). Entries are converted once and cached by
 * object identity, so converting the growing branch of a live session before
 * every read costs one map lookup per unchanged entry.
 *
 * @example
 * ```ts
 * import { piBranchToReplay } from "@readcache/core/pi-branch";
 * piBranchToReplay([{ type: "message", id: "a", parentId: null, message: { role: "user" } }]);
 * // [{ id: "a", parentId: null, kind: "other" }]
 * ```
 */
export function piBranchToReplay(branch: readonly PiEntryLike[]): ReplayEntry[] {
  return branch.map((e) => {
    let r = converted.get(e);
    if (r === undefined) {
      r = piEntryToReplay(e);
      converted.set(e, r);
    }
    return r;
  });
}

const converted = new WeakMap<PiEntryLike, ReplayEntry>();

/**
 * Parses the text of a pi session JSONL file into its entries (the header and
 * lines that are not entries are skipped; a malformed line is skipped, as pi
 * does). Pair with {@linkcode piBranchToReplay} and `activeBranch` to replay a
 * session file without pi.
 *
 * @example
 * ```ts
 * import { parseSessionJsonl } from "@readcache/core/pi-branch";
 * parseSessionJsonl('{"type":"session","id":"s"}\n{"type":"message","id":"a","parentId":null}\n').length; // 1
 * ```
 */
export function parseSessionJsonl(text: string): PiEntryLike[] {
  const out: PiEntryLike[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      continue;
    }
    const r = asRecord(v);
    if (
      !r || typeof r.type !== "string" || r.type === "session" || typeof r.id !== "string" ||
      !(r.parentId === null || typeof r.parentId === "string")
    ) continue;
    out.push(r as unknown as PiEntryLike);
  }
  return out;
}
