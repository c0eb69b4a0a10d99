/**
 * One interface from any host's history to the replay (SPEC §11): a host's
 * converter describes each tool call by what it does to files
 * ({@linkcode HostCall}) and each finished call by how it ended
 * ({@linkcode HostResult}); {@linkcode messageEntry} and
 * {@linkcode resultEntries} make the replay entries. The rules that turn
 * calls into changes, views and opaque calls (SPEC §5.8-§5.10) live here
 * once; what stays with a host is reading its own records (rows, parts,
 * entries), naming its tools and finding its barriers.
 *
 * @module
 */
import type { FileChange, ReadCall, ReplayEntry } from "./replay.ts";
import { classifyShellCommand } from "./shell_view.ts";

/**
 * What a host's tool does to files, as the cache follows it:
 * - `read`: the host's read tool (its result is a read, SPEC §5.6);
 * - `change`: a tool that changes the files it names (a write, proof of
 *   content when its result carries one, SPEC §5.8; an edit, a belief when
 *   its result carries one, SPEC §5.9);
 * - `followed`: shows no file content and changes nothing (listing names,
 *   a to-do list, the refresh tool);
 * - `search`: shows lines of files, changes none (SPEC §5.10);
 * - `shell`: runs `command` (a read-only command shows files at most, any
 *   other may change any file, SPEC §5.10);
 * - `opaque`: may show or change any file (a tool the cache does not know).
 *
 * @example
 * ```ts
 * import type { ToolRole } from "@readcache/core/replay";
 * const role: ToolRole = "search"; // grep
 * ```
 */
export type ToolRole = "read" | "change" | "followed" | "search" | "shell" | "opaque";

/**
 * One tool call of an assistant message, as a host describes it.
 *
 * @example
 * ```ts
 * import type { HostCall } from "@readcache/core/replay";
 * const call: HostCall = { id: "c1", role: "shell", command: "cat a.txt" };
 * ```
 */
export interface HostCall {
  /** The call's id. */
  id: string;
  /** What the tool does to files. */
  role: ToolRole;
  /** A `shell` call's command (anything else: a command the cache cannot read). */
  command?: unknown;
  /**
   * A `change` call's files, resolved; none: it changes no file the cache
   * can name (nothing is recorded for it). A second file's change has the
   * call id `<id>#1`, and so on.
   */
  targets?: readonly ReadCall[];
  /**
   * A `change` call that is the host's edit tool: several edits of one file
   * in one message can be one belief (SPEC §5.9 rule 4). Anything else counts
   * as a write.
   */
  edit?: boolean;
}

/**
 * What a call means for the turn it is in (SPEC §5.10): its file is `read`,
 * it makes a `change` the cache follows, it `shows` files without changing
 * them, it may change any file (`opaque`), or `none` of these.
 *
 * @example
 * ```ts
 * import { callEffect } from "@readcache/core/replay";
 * callEffect({ id: "c1", role: "shell", command: "cat a.txt" }); // "shows"
 * callEffect({ id: "c2", role: "shell", command: "make" }); // "opaque"
 * callEffect({ id: "c3", role: "shell", command: "ls" }); // "none"
 * ```
 */
export function callEffect(call: HostCall): "read" | "change" | "shows" | "opaque" | "none" {
  switch (call.role) {
    case "read":
      return "read";
    case "change":
      return call.targets !== undefined && call.targets.length > 0 ? "change" : "none";
    case "followed":
      return "none";
    case "search":
      return "shows";
    case "shell": {
      if (typeof call.command !== "string") return "opaque";
      const c = classifyShellCommand(call.command);
      if (!c.readOnly) return "opaque";
      return c.showsContent === false ? "none" : "shows";
    }
    default:
      return "opaque";
  }
}

/**
 * The replay entry of an assistant message with these calls (SPEC §5.8,
 * §5.10): an `other` entry with the files its calls change, the calls that
 * may change any file and those that may show any file, each list only when
 * it has members (a message of reads only is a bare `other`).
 *
 * @example
 * ```ts
 * import { messageEntry } from "@readcache/core/replay";
 * messageEntry("m1", null, [{ id: "c1", role: "shell", command: "make" }]);
 * // { id: "m1", parentId: null, kind: "other", opaque: ["c1"] }
 * ```
 */
export function messageEntry(
  id: string,
  parentId: string | null,
  calls: readonly HostCall[],
): ReplayEntry {
  // made only when a call needs them: most messages call only reads (no array per message)
  let changes: FileChange[] | undefined;
  let opaque: string[] | undefined;
  let shows: string[] | undefined;
  for (const c of calls) {
    switch (callEffect(c)) {
      case "change":
        c.targets!.forEach((call, i) => {
          const callId = i === 0 ? c.id : `${c.id}#${i}`;
          (changes ??= []).push(
            c.edit === true ? { callId, call, tool: "edit" } : { callId, call, tool: "write" },
          );
        });
        break;
      case "opaque":
        (opaque ??= []).push(c.id);
        break;
      case "shows":
        (shows ??= []).push(c.id);
    }
  }
  if (opaque === undefined && shows === undefined) {
    return changes === undefined
      ? { id, parentId, kind: "other" }
      : { id, parentId, kind: "other", changes };
  }
  return {
    id,
    parentId,
    kind: "other",
    ...(changes !== undefined ? { changes } : {}),
    ...(opaque !== undefined ? { opaque } : {}),
    ...(shows !== undefined ? { shows } : {}),
  };
}

/**
 * The content a successful write sent, as proof of content (SPEC §5.8): the
 * file written and the SHA-256 of the UTF-8 bytes.
 *
 * @example
 * ```ts
 * import type { WriteProof } from "@readcache/core/replay";
 * const p: WriteProof = { call: { name: "/w/a.ts", pathKey: "/w/a.ts" }, hash: "ab12..." };
 * ```
 */
export interface WriteProof {
  /** The file written (no offset or limit). */
  call: ReadCall;
  /** SHA-256 of the UTF-8 bytes written. */
  hash: string;
  /** Lines of the content (for status reports). */
  totalLines?: number;
  /** UTF-8 bytes of the content (for status reports). */
  bytes?: number;
}

/**
 * One finished tool call, as a host describes it: its entry id, the call it
 * answers and how it ended.
 *
 * @example
 * ```ts
 * import type { HostResult } from "@readcache/core/replay";
 * const r: HostResult = { id: "r1", parentId: "m1", callId: "c1", tool: "grep",
 *   call: { id: "c1", role: "search" }, ok: true };
 * ```
 */
export interface HostResult {
  /** The entry's id (a second file's entry gets `<id>#1`, and so on). */
  id: string;
  /** The entry before it on the branch. */
  parentId: string | null;
  /** The id of the call it answers, when the host records one. */
  callId?: string;
  /** The host's name of the tool (kept on the entry of a checked tool). */
  tool: string;
  /** The call it answers. */
  call: Pick<HostCall, "role" | "targets">;
  /** Whether the call succeeded. */
  ok: boolean;
  /** A `read`'s call as resolved (its name, identity and range). */
  read?: ReadCall;
  /** A successful write's content (SPEC §5.8). */
  proof?: WriteProof;
  /**
   * The record the host added to the result, raw (replay validates it): a
   * read's metadata, an edit's belief, or what a checked tool showed or
   * changed (SPEC §5.10). Give only what counts: a read's and a change's
   * are used only when `ok`.
   */
  meta?: unknown;
}

/**
 * The replay entries of one finished call (SPEC §5.6, §5.8-§5.10):
 * - a successful `read` with a resolved call or a record: a `read` entry;
 * - a successful `change` with proof: `wrote`; any other `change` naming
 *   files: `changed` per file (the first with the belief of a successful
 *   edit);
 * - a `search`, `shell` or `opaque` call, failed or not: a `tool` entry
 *   with its record, if any (without one, every file counts as changed);
 * - anything else: an `other` tool result.
 *
 * @example
 * ```ts
 * import { resultEntries } from "@readcache/core/replay";
 * resultEntries({ id: "r1", parentId: "m1", callId: "c1", tool: "bash",
 *   call: { role: "shell" }, ok: false });
 * // [{ id: "r1", parentId: "m1", kind: "tool", tool: "bash", callId: "c1" }]
 * ```
 */
export function resultEntries(r: HostResult): ReplayEntry[] {
  const { id, parentId, callId } = r;
  switch (r.call.role) {
    case "read":
      if (r.ok && (r.read !== undefined || r.meta !== undefined)) {
        // one object literal per shape (no properties added later): cheaper for the engine
        const { meta, read: call } = r;
        if (callId === undefined) {
          return [
            call === undefined
              ? { id, parentId, kind: "read", meta }
              : { id, parentId, kind: "read", meta, call },
          ];
        }
        return [
          call === undefined
            ? { id, parentId, kind: "read", meta, callId }
            : { id, parentId, kind: "read", meta, callId, call },
        ];
      }
      break;
    case "change": {
      const p = r.ok ? r.proof : undefined;
      if (p !== undefined) {
        const e: ReplayEntry = { id, parentId, kind: "wrote", call: p.call, hash: p.hash };
        if (callId !== undefined) e.callId = callId;
        if (p.totalLines !== undefined) e.totalLines = p.totalLines;
        if (p.bytes !== undefined) e.bytes = p.bytes;
        return [e];
      }
      const targets = r.call.targets ?? [];
      if (targets.length === 0) break;
      return targets.map((call, i) => {
        const e: ReplayEntry = { id: i === 0 ? id : `${id}#${i}`, parentId, kind: "changed", call };
        if (callId !== undefined) e.callId = i === 0 ? callId : `${callId}#${i}`;
        if (i === 0 && r.ok && r.meta !== undefined) e.meta = r.meta;
        return e;
      });
    }
    case "search":
    case "shell":
    case "opaque": {
      const e: ReplayEntry = { id, parentId, kind: "tool", tool: r.tool };
      if (callId !== undefined) e.callId = callId;
      if (r.meta !== undefined) e.meta = r.meta;
      return [e];
    }
  }
  return [
    callId === undefined
      ? { id, parentId, kind: "other", toolResult: true }
      : { id, parentId, kind: "other", toolResult: true, callId },
  ];
}
