/**
 * Maps the entries of a pi session branch (`sessionManager.getBranch()`, or
 * the lines of a session JSONL file) onto the replay entry model. Pure; no
 * dependency on pi itself, so a session file can be replayed without pi.
 *
 * Specified by SPEC.md §11.3.
 *
 * @module
 */
import {
  type HostCall,
  messageEntry,
  resultEntries,
  type ToolRole,
} from "../../core/host_calls.ts";
import { READCACHE_CUSTOM_TYPE } from "../../core/meta.ts";
import type { FileChange, ReadCall, ReplayEntry } from "../../core/replay.ts";

export type { FileChange, ReadCall, ReplayEntry };

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
 * Resolves the arguments of a `read` tool call (as the model sent them) into
 * the call's name, identity, offset and limit; `undefined` when they do not
 * resolve. The read service's `resolveCall` is the real one.
 *
 * @example
 * ```ts
 * import type { CallResolver } from "@readcache/core/pi-branch";
 * const resolve: CallResolver = (args) => ({ name: "/w/a.ts", pathKey: "/w/a.ts" });
 * ```
 */
export type CallResolver = (args: unknown) => ReadCall | undefined;

/**
 * Resolves the arguments of a `write` tool call (as the model sent them) into
 * the file written and the SHA-256 of the UTF-8 content; `undefined` when
 * they do not resolve. The read service's `resolveWriteCall` is the real one.
 *
 * @example
 * ```ts
 * import type { WriteResolver } from "@readcache/core/pi-branch";
 * const resolve: WriteResolver = (args) => undefined;
 * ```
 */
export type WriteResolver = (
  args: unknown,
) => { call: ReadCall; hash: string; totalLines?: number; bytes?: number } | undefined;

/** Tools whose calls change files (SPEC §5.8). */
export const FILE_CHANGING_TOOLS: ReadonlySet<string> = new Set(["write", "edit"]);

/**
 * Tools the cache follows itself (`read`, `write`, `edit`, the refresh tool)
 * or that show no file content and change nothing (pi's `ls`, `find`): their
 * results are not checked (SPEC §5.10). Every other tool's result is.
 */
export const FOLLOWED_TOOLS: ReadonlySet<string> = new Set([
  "read",
  "write",
  "edit",
  "ls",
  "find",
  "readcache_refresh",
]);

/** Tools that show file content but change nothing (pi's `grep`): not opaque (SPEC §5.10). */
export const VIEWING_TOOLS: ReadonlySet<string> = new Set(["grep"]);

/**
 * True for a tool whose result is checked against the model's view (SPEC
 * §5.10): any tool but those in {@linkcode FOLLOWED_TOOLS}.
 *
 * @example
 * ```ts
 * import { isCheckedTool } from "@readcache/core/pi-branch";
 * isCheckedTool("bash"); // true
 * isCheckedTool("ls"); // false
 * ```
 */
export function isCheckedTool(name: string): boolean {
  return !FOLLOWED_TOOLS.has(name);
}

/**
 * True for a tool that may change any file in ways the cache cannot follow
 * (SPEC §5.10): a checked tool that is not only a viewer (`bash`, any tool
 * the adapter does not know).
 *
 * @example
 * ```ts
 * import { isOpaqueTool } from "@readcache/core/pi-branch";
 * isOpaqueTool("bash"); // true
 * isOpaqueTool("grep"); // false
 * ```
 */
export function isOpaqueTool(name: string): boolean {
  return isCheckedTool(name) && !VIEWING_TOOLS.has(name);
}

/**
 * The resolvers a converter uses (SPEC §5.6, §5.8): `read` for the arguments
 * of read calls, `write` for write calls (file and content hash), `target`
 * for the file any file-changing call targets. Without one, that part is not
 * converted (reads carry no call; writes are other tool results; assistant
 * messages carry no changes).
 *
 * @example
 * ```ts
 * import type { PiResolvers } from "@readcache/core/pi-branch";
 * const r: PiResolvers = { target: (args) => ({ name: "/w/a.ts", pathKey: "/w/a.ts" }) };
 * ```
 */
export interface PiResolvers {
  /** Resolves read call arguments. */
  read?: CallResolver;
  /** Resolves write call arguments. */
  write?: WriteResolver;
  /** Resolves the file a file-changing call targets. */
  target?: CallResolver;
  /** A walk of the session starts (the resolvers may keep what they learn until the next). */
  walk?: () => void;
}

/**
 * The `read` tool calls of an assistant message entry, by tool call id.
 *
 * @example
 * ```ts
 * import { readCallsOf } from "@readcache/core/pi-branch";
 * readCallsOf({ type: "message", id: "a", parentId: null, message: { role: "assistant",
 *   content: [{ type: "toolCall", id: "c1", name: "read", arguments: { path: "a.ts" } }] } });
 * // [["c1", { path: "a.ts" }]]
 * ```
 */
export function readCallsOf(entry: PiEntryLike): [string, unknown][] {
  if (entry.type !== "message") return [];
  const msg = asRecord(entry.message);
  if (msg?.role !== "assistant" || !Array.isArray(msg.content)) return [];
  const out: [string, unknown][] = [];
  for (const block of msg.content) {
    const b = asRecord(block);
    if (b?.type === "toolCall" && b.name === "read" && typeof b.id === "string") {
      out.push([b.id, b.arguments]);
    }
  }
  return out;
}

/**
 * Converts one pi session entry (SPEC §11.3). A successful `read` tool result
 * becomes a `read` event with its raw `details.readcache` (absent for a read
 * served without metadata), its tool call id, and the resolved call when
 * `args` (the call's arguments) and a read resolver are given (`resolvers`:
 * a read resolver, or {@linkcode PiResolvers}); a successful `write` tool
 * result a `wrote` event when `args` and the write resolver are given and
 * resolve (SPEC §5.8); an assistant message calling `write` or `edit` an
 * `other` event with its `changes` when the target resolver is given; a
 * `pi-readcache` custom entry an `invalidate` event; a `compaction` entry the barrier; a
 * result of another tool (or a failed read) `other` with `toolResult`;
 * everything else `other`. Metadata is passed through raw: replay validates it.
 *
 * @example
 * ```ts
 * import { piEntryToReplay } from "@readcache/core/pi-branch";
 * piEntryToReplay({ type: "custom", id: "x", parentId: null, customType: "pi-readcache", data: {} }).kind;
 * // "invalidate"
 * ```
 */
export function piEntryToReplay(
  entry: PiEntryLike,
  args?: unknown,
  resolvers?: CallResolver | PiResolvers,
): ReplayEntry {
  const r: PiResolvers = typeof resolvers === "function" ? { read: resolvers } : resolvers ?? {};
  return convertEntry(entry, args, r.read, r.write, r.target);
}

/** {@linkcode piEntryToReplay} with its resolvers apart (no object per entry on the walk). */
function convertEntry(
  entry: PiEntryLike,
  args: unknown,
  resolve: CallResolver | undefined,
  resolveWrite: WriteResolver | undefined,
  resolveTarget: CallResolver | undefined,
): ReplayEntry {
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
    if (msg?.role === "toolResult") {
      const callId = typeof msg.toolCallId === "string" ? msg.toolCallId : undefined;
      if (typeof msg.toolName !== "string") {
        return resultEntries({ id, parentId, callId, tool: "", call: FOLLOWED_CALL, ok: false })[0];
      }
      const tool = msg.toolName;
      const role = roleOf(tool);
      const ok = msg.isError !== true;
      const meta = role === "read" || role === "change" || isCheckedTool(tool)
        ? asRecord(msg.details)?.readcache
        : undefined;
      if (role === "read") {
        const read = ok && args !== undefined && resolve !== undefined ? resolve(args) : undefined;
        return resultEntries({ id, parentId, callId, tool, call: READ_CALL, ok, read, meta })[0];
      }
      if (role === "change") {
        // a write's content is proof (SPEC §5.8); a write that is not proof of content, and an
        // edit, failed or not, changed the file as far as replay knows (SPEC §5.9)
        const proof = tool === "write" && ok && args !== undefined
          ? resolveWrite?.(args)
          : undefined;
        const target = proof === undefined && args !== undefined
          ? resolveTarget?.(args)
          : undefined;
        const call = { role, targets: target === undefined ? undefined : [target] };
        // only a successful edit carries the model's belief (SPEC §5.9)
        const belief = tool === "edit" ? meta : undefined;
        return resultEntries({ id, parentId, callId, tool, call, ok, proof, meta: belief })[0];
      }
      // a shell command, a search, a tool we do not know: what it showed or changed (SPEC
      // §5.10); failed or not, it ran
      return resultEntries({ id, parentId, callId, tool, call: { role }, ok, meta })[0];
    }
    // pi never runs the calls of a message that ended in an error or was aborted, and leaves
    // that message out of the model's context: its calls change nothing (SPEC §11.3)
    if (
      msg?.role === "assistant" && Array.isArray(msg.content) &&
      msg.stopReason !== "error" && msg.stopReason !== "aborted"
    ) {
      let calls: HostCall[] | undefined; // made only when a call is not a read (the usual call)
      for (const block of msg.content) {
        const b = asRecord(block);
        if (b?.type !== "toolCall" || typeof b.name !== "string" || typeof b.id !== "string") {
          continue;
        }
        if (b.name === "read") continue;
        const role = roleOf(b.name);
        if (role === "change") {
          const target = resolveTarget?.(b.arguments);
          (calls ??= []).push({
            id: b.id,
            role,
            targets: target === undefined ? undefined : [target],
            edit: b.name === "edit",
          });
        } else if (role === "shell") {
          (calls ??= []).push({ id: b.id, role, command: asRecord(b.arguments)?.command });
        } else (calls ??= []).push({ id: b.id, role });
      }
      if (calls !== undefined) return messageEntry(id, parentId, calls);
    }
  }
  return { id, parentId, kind: "other" };
}

/** The calls a read result and a result of no known tool answer, as {@linkcode resultEntries} needs them. */
const READ_CALL = { role: "read" } as const;
const FOLLOWED_CALL = { role: "followed" } as const;

/** What pi's tool `name` does to files (SPEC §5.10, §11.3). */
function roleOf(name: string): ToolRole {
  if (name === "read") return "read";
  if (FILE_CHANGING_TOOLS.has(name)) return "change";
  if (FOLLOWED_TOOLS.has(name)) return "followed";
  if (VIEWING_TOOLS.has(name)) return "search";
  return name === "bash" ? "shell" : "opaque";
}

/**
 * Converts branches of one session, caching each entry's conversion by object
 * identity (pi keeps its entry objects), so converting the growing branch of a
 * live session before every read costs one map lookup per old entry. With a
 * resolver, the call a read result answers is resolved once, when the result
 * is first converted (SPEC §5.6); make a new converter when the session is
 * reopened.
 *
 * @example
 * ```ts
 * import { PiBranchConverter } from "@readcache/core/pi-branch";
 * const convert = new PiBranchConverter();
 * convert.branch([{ type: "message", id: "a", parentId: null, message: { role: "user" } }]);
 * // [{ id: "a", parentId: null, kind: "other" }]
 * ```
 */
export class PiBranchConverter {
  readonly #converted = new WeakMap<PiEntryLike, ReplayEntry>();
  readonly #resolve: CallResolver | undefined;
  readonly #walk: (() => void) | undefined;
  /** What conversions use: the read resolver memoised per pass, the others as given. */
  readonly #resolvers: PiResolvers;
  /** Resolutions made during one conversion pass (one moment): same arguments, same answer. */
  #memo = new Map<string, ReadCall | undefined>();

  /**
   * `resolve` resolves read call arguments (a function, or the resolvers for
   * reads, writes and file-changing calls); without a read resolver, reads
   * carry no call (SPEC §5.6, §5.8).
   */
  constructor(resolve?: CallResolver | PiResolvers) {
    const r: PiResolvers = typeof resolve === "function" ? { read: resolve } : resolve ?? {};
    this.#resolve = r.read;
    this.#walk = r.walk;
    this.#resolvers = {
      read: r.read === undefined ? undefined : this.#resolveOnce,
      write: r.write,
      target: r.target,
    };
  }

  /** Converts a branch (root to leaf). */
  branch(branch: readonly PiEntryLike[]): ReplayEntry[] {
    this.#memo = new Map();
    this.#walk?.();
    const byId = new Map<string, PiEntryLike>();
    return branch.map((e) => {
      byId.set(e.id, e);
      return this.#entry(e, (id) => byId.get(id));
    });
  }

  /**
   * A lookup for `BranchKnowledge.syncTip`: converts the entry with an id on
   * demand, walking parents through `getEntry` (pi's
   * `sessionManager.getEntry`) to find the call a tool result answers.
   */
  lookup(
    getEntry: (id: string) => PiEntryLike | undefined,
  ): (id: string) => ReplayEntry | undefined {
    this.#memo = new Map();
    this.#walk?.();
    // syncTip converts each entry once (it keeps what it synced), so no per-entry cache here;
    // the parent a tool result looks up for its call is the next entry the walk asks for
    let lastId: string | undefined;
    let last: PiEntryLike | undefined;
    const get = (id: string): PiEntryLike | undefined => {
      if (id !== lastId) {
        last = getEntry(id);
        lastId = id;
      }
      return last;
    };
    const { read, write, target } = this.#resolvers;
    const withArgs = this.#resolve !== undefined;
    return (id) => {
      const e = get(id);
      if (e === undefined) return undefined;
      return convertEntry(e, withArgs ? this.#argsOf(e, get) : undefined, read, write, target);
    };
  }

  #entry(e: PiEntryLike, byId: (id: string) => PiEntryLike | undefined): ReplayEntry {
    let r = this.#converted.get(e);
    if (r === undefined) {
      const args = this.#resolve === undefined ? undefined : this.#argsOf(e, byId);
      const { read, write, target } = this.#resolvers;
      r = convertEntry(e, args, read, write, target);
      this.#converted.set(e, r);
    }
    return r;
  }

  readonly #resolveOnce = (args: unknown): ReadCall | undefined => {
    const a = asRecord(args);
    // a whole-file read (the common case) is keyed by its path alone: no string is built
    const key = a === undefined
      ? ""
      : a.offset === undefined && a.limit === undefined && typeof a.path === "string"
      ? a.path
      : `\u0000${a.path}\u0000${a.offset}\u0000${a.limit}`;
    const memo = this.#memo;
    let call = memo.get(key);
    if (call === undefined && !memo.has(key)) {
      call = this.#resolve?.(args);
      memo.set(key, call);
    }
    return call;
  };

  /**
   * Arguments of the `read` (or, with a write resolver, `write`) call a tool
   * result answers: in the nearest assistant message above it.
   */
  #argsOf(e: PiEntryLike, byId: (id: string) => PiEntryLike | undefined): unknown {
    const msg = e.type === "message" ? asRecord(e.message) : undefined;
    if (msg?.role !== "toolResult" || typeof msg.toolCallId !== "string") return undefined;
    const tool = msg.toolName;
    const r = this.#resolvers;
    const wanted = tool === "read" ||
      (tool === "write" && (r.write !== undefined || r.target !== undefined)) ||
      (tool === "edit" && r.target !== undefined);
    if (!wanted) return undefined;
    // the assistant message is a few entries up; the bound only guards a corrupt parent cycle
    for (let id = e.parentId, steps = 0; id !== null && steps < 10_000; steps++) {
      const p = byId(id);
      if (p === undefined) return undefined;
      const pm = p.type === "message" ? asRecord(p.message) : undefined;
      if (pm?.role === "assistant") {
        if (!Array.isArray(pm.content)) return undefined;
        for (const block of pm.content) {
          const b = asRecord(block);
          if (b?.type === "toolCall" && b.name === tool && b.id === msg.toolCallId) {
            return b.arguments;
          }
        }
        return undefined;
      }
      id = p.parentId;
    }
    return undefined;
  }
}

const defaultConverter = new PiBranchConverter();

/**
 * Converts a branch (root to leaf) without resolving calls (reads count under
 * their `pathKey` as name). Entries are cached by object identity.
 *
 * @example
 * ```ts
 * import { piBranchToReplay } from "@readcache/core/pi-branch";
 * piBranchToReplay([{ type: "message", id: "a", parentId: null, message: { role: "user" } }]);
 * // [{ id: "a", parentId: null, kind: "other" }]
 * ```
 */
export function piBranchToReplay(branch: readonly PiEntryLike[]): ReplayEntry[] {
  return defaultConverter.branch(branch);
}

/**
 * The JSON objects of one line: one, or several glued together (`{...}{...}`, a
 * missing line break); a line that is not JSON gives none.
 */
function objectsOfLine(line: string): unknown[] {
  try {
    return [JSON.parse(line)];
  } catch {
    // split at the top-level boundaries between objects, then parse each part
  }
  const parts: unknown[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let start = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) {
      try {
        parts.push(JSON.parse(line.slice(start, i + 1)));
      } catch {
        return [];
      }
      start = i + 1;
    }
  }
  return line.slice(start).trim() === "" ? parts : [];
}

/**
 * Parses the text of a pi session JSONL file into its entries, in every format
 * pi reads (SPEC §11.3): version 3, and the older linear versions 1 and 2
 * migrated in memory as pi migrates them (each entry gets an id and its
 * predecessor as parent, a compaction's `firstKeptEntryIndex`, which counts the
 * header as 0, becomes `firstKeptEntryId`, the role `hookMessage` becomes
 * `custom`). A line holding two objects glued together counts as both; a line
 * that is not JSON, and the header, are skipped. The file is never written.
 * Pair with {@linkcode piBranchToReplay} and `activeBranch` to replay a session
 * file without pi.
 *
 * @example
 * ```ts
 * import { parseSessionJsonl } from "@readcache/core/pi-branch";
 * parseSessionJsonl('{"type":"session","id":"s"}\n{"type":"message","id":"a","parentId":null}\n').length; // 1
 * parseSessionJsonl('{"type":"session","id":"s"}\n{"type":"message"}\n')[0].id; // "1" (version 1)
 * ```
 */
export function parseSessionJsonl(text: string): PiEntryLike[] {
  const objects: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    for (const v of objectsOfLine(line)) {
      const r = asRecord(v);
      if (r && !Array.isArray(v)) objects.push(r);
    }
  }
  const header = objects.find((o) => o.type === "session");
  const version = typeof header?.version === "number" ? header.version : 1;
  if (version < 2) {
    // version 1 is linear: ids by position (the header is 0), each entry's parent the one before
    let parent: string | null = null;
    const idAt = (i: number) => objects[i]?.type === "session" ? undefined : String(i);
    objects.forEach((o, i) => {
      if (o.type === "session") return;
      o.id = String(i);
      o.parentId = parent;
      parent = o.id as string;
      if (o.type === "compaction" && typeof o.firstKeptEntryIndex === "number") {
        const kept = idAt(o.firstKeptEntryIndex);
        if (kept !== undefined) o.firstKeptEntryId = kept;
      }
    });
  }
  const out: PiEntryLike[] = [];
  for (const r of objects) {
    if (version < 3 && r.type === "message") {
      const msg = asRecord(r.message);
      if (msg?.role === "hookMessage") r.message = { ...msg, role: "custom" };
    }
    if (
      typeof r.type !== "string" || r.type === "session" || typeof r.id !== "string" ||
      !(r.parentId === null || typeof r.parentId === "string")
    ) continue;
    out.push(r as unknown as PiEntryLike);
  }
  return out;
}
