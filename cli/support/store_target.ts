/**
 * The object store `readcache doctor` and `readcache gc` look after, and the
 * sessions whose reads refer to its contents: pi's store
 * (`<project>/.pi/readcache`, pi's session files of the project) or, with
 * `--opencode`, the OpenCode plugin's (`<project>/.opencode/readcache`, the
 * project's sessions in OpenCode's database). Reads only.
 *
 * @module
 */
import { join } from "node:path";
import { FsObjectStore } from "../../src/store/fs_object_store.ts";
import type { OpenCodeSessionExport } from "../../src/adapters/opencode/export_file.ts";
import { messageOf } from "./output.ts";
import {
  openCodeDatabasePath,
  openCodeSessionsFromStorage,
  OpenCodeStorageError,
} from "./opencode.ts";
import { metaReferences, objectReferences, sessionsOf } from "./sessions.ts";

/**
 * A project's store and where its sessions are.
 *
 * @example
 * ```ts ignore
 * const t = storeTarget("/work/app", true);
 * t.store.root; // "/work/app/.opencode/readcache"
 * ```
 */
export interface StoreTarget {
  /** The host whose store it is. */
  host: "pi" | "opencode";
  /** The store. */
  store: FsObjectStore;
  /** The host's directory in the project (`.pi` or `.opencode`). */
  hostDir: ".pi" | ".opencode";
}

/**
 * The sessions of a project as far as the store is concerned: where they
 * were looked for, how many, and the time each stored content was last
 * referred to.
 *
 * @example
 * ```ts
 * import type { SessionReferences } from "./store_target.ts";
 * const r: SessionReferences = { where: "/d/opencode.db", sessions: 1, skipped: 0,
 *   unreadable: [], refs: new Map(), noun: "OpenCode session" };
 * ```
 */
export interface SessionReferences {
  /** Where the sessions were looked for (pi's sessions directory, OpenCode's database). */
  where: string;
  /** Sessions of the project read. */
  sessions: number;
  /** Session files of other projects (or not sessions) passed over. */
  skipped: number;
  /** What could not be read; then any stored content may be referred to. */
  unreadable: { path: string; why: string }[];
  /** Content hash -> when it was last referred to (ms). */
  refs: Map<string, number>;
  /** What one session is called in the output. */
  noun: "pi session" | "OpenCode session";
}

/**
 * The store of the project `cwd`: pi's, or the OpenCode plugin's.
 *
 * @example
 * ```ts ignore
 * storeTarget("/work/app", false).store.root; // "/work/app/.pi/readcache"
 * ```
 */
export function storeTarget(cwd: string, opencode: boolean): StoreTarget {
  return opencode
    ? {
      host: "opencode",
      store: new FsObjectStore(join(cwd, ".opencode", "readcache"), { projectRoot: cwd }),
      hostDir: ".opencode",
    }
    : { host: "pi", store: FsObjectStore.forCwd(cwd), hostDir: ".pi" };
}

/**
 * The stored contents an OpenCode session refers to (`metadata.readcache` of
 * its tool parts), each at the time of its message.
 *
 * @example
 * ```ts
 * import { openCodeReferences } from "./store_target.ts";
 * openCodeReferences({ info: { id: "ses_1" }, messages: [] }, 0).size; // 0
 * ```
 */
export function openCodeReferences(
  session: OpenCodeSessionExport,
  fallbackMs: number,
  into: Map<string, number> = new Map(),
): Map<string, number> {
  for (const m of session.messages) {
    const created = (m.info as { time?: { created?: unknown } }).time?.created;
    const when = typeof created === "number" ? created : fallbackMs;
    for (const p of m.parts) {
      const rc = (p.state?.metadata as { readcache?: unknown } | undefined)?.readcache;
      if (typeof rc === "object" && rc !== null) {
        metaReferences(rc as Record<string, unknown>, when, into);
      }
    }
  }
  return into;
}

/**
 * The sessions of the project `cwd` and what they refer to: pi's session
 * files (`sessionsDir` overrides where pi keeps them), or with `opencode` the
 * project's sessions in OpenCode's database. A database that is missing or
 * cannot be read is `unreadable`: then any stored content may be referred
 * to.
 *
 * @example
 * ```ts ignore
 * const r = await sessionReferences("/work/app", true);
 * ```
 */
export async function sessionReferences(
  cwd: string,
  opencode: boolean,
  sessionsDir?: string,
  onFile?: (done: number, total: number) => void,
): Promise<SessionReferences> {
  const refs = new Map<string, number>();
  if (!opencode) {
    const found = await sessionsOf(cwd, sessionsDir, onFile);
    for (const s of found.files) objectReferences(s.entries, s.mtimeMs, refs);
    return {
      where: found.dir,
      sessions: found.files.length,
      skipped: found.skipped,
      unreadable: found.unreadable,
      refs,
      noun: "pi session",
    };
  }
  try {
    const { database, sessions } = await openCodeSessionsFromStorage(cwd);
    for (const s of sessions) openCodeReferences(s.session, s.mtimeMs, refs);
    return {
      where: database,
      sessions: sessions.length,
      skipped: 0,
      unreadable: [],
      refs,
      noun: "OpenCode session",
    };
  } catch (e) {
    if (!(e instanceof OpenCodeStorageError)) throw e;
    const path = openCodeDatabasePath();
    return {
      where: path,
      sessions: 0,
      skipped: 0,
      unreadable: [{ path, why: e.code === "NO_DATABASE" ? "it does not exist" : messageOf(e) }],
      refs,
      noun: "OpenCode session",
    };
  }
}
