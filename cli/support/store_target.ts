/**
 * The object store `readcache doctor` and `readcache gc` look after, and the
 * sessions whose reads refer to its contents: pi's store
 * (`<project>/.pi/readcache`, pi's session files of the project) or, with
 * `--opencode`, the OpenCode plugin's (`<project>/.opencode/readcache`, the
 * project's sessions in OpenCode's database). Reads only.
 *
 * @module
 */
import { parseClaudeTranscript } from "../../src/adapters/claude/transcript.ts";
import { claudeConfigDir } from "./claude_dirs.ts";
import { join } from "node:path";
import { FsObjectStore } from "../../src/store/fs_object_store.ts";
import type { OpenCodeSessionExport } from "../../src/adapters/opencode/export_file.ts";
import { CliError, EXIT_USAGE, messageOf } from "./output.ts";
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
  host: "pi" | "opencode" | "claude";
  /** The store. */
  store: FsObjectStore;
  /** The host's directory in the project (`.pi`, `.opencode` or `.claude`). */
  hostDir: ".pi" | ".opencode" | ".claude";
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
  noun: "pi session" | "OpenCode session" | "Claude Code session";
}

/**
 * The store of the project `cwd`: pi's, the OpenCode plugin's or the Claude Code host's (one of
 * them: `--opencode` with `--claude` is a usage error).
 *
 * @example
 * ```ts ignore
 * storeTarget("/work/app", false).store.root; // "/work/app/.pi/readcache"
 * ```
 */
export function storeTarget(cwd: string, opencode: boolean, claude = false): StoreTarget {
  if (claude && opencode) {
    throw new CliError(
      "--claude and --opencode each name one agent's store; give one of them (or neither, for " +
        "pi's).",
      EXIT_USAGE,
    );
  }
  if (claude) {
    return {
      host: "claude",
      store: new FsObjectStore(join(cwd, ".claude", "readcache"), { projectRoot: cwd }),
      hostDir: ".claude",
    };
  }
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
  claude = false,
): Promise<SessionReferences> {
  const refs = new Map<string, number>();
  if (claude) return await claudeReferences(cwd, sessionsDir);
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

/**
 * Claude Code's directory of a project's transcripts: `<config>/projects/`
 * and the project directory with every character but letters and digits
 * written as `-` (as Claude Code names it).
 *
 * @example
 * ```ts
 * import { claudeProjectDir } from "./store_target.ts";
 * claudeProjectDir("/work/my.app", "/h/.claude"); // "/h/.claude/projects/-work-my-app"
 * ```
 */
export function claudeProjectDir(cwd: string, configDir: string): string {
  return join(configDir, "projects", cwd.replace(/[^A-Za-z0-9]/g, "-"));
}

/**
 * The stored contents the project's Claude Code transcripts refer to (every
 * `readcache` record in a row's `toolUseResult`), each at the time of its row;
 * subagents' transcripts included. `sessionsDir` overrides where they are.
 */
async function claudeReferences(cwd: string, sessionsDir?: string): Promise<SessionReferences> {
  const dir = sessionsDir ?? claudeProjectDir(cwd, claudeConfigDir());
  const refs = new Map<string, number>();
  const unreadable: { path: string; why: string }[] = [];
  let sessions = 0;
  const walk = async (d: string): Promise<void> => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(d)];
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) unreadable.push({ path: d, why: messageOf(e) });
      return;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory) await walk(p);
      if (!e.isFile || !e.name.endsWith(".jsonl")) continue;
      let text: string;
      try {
        text = await Deno.readTextFile(p);
      } catch (err) {
        unreadable.push({ path: p, why: messageOf(err) });
        continue;
      }
      sessions++;
      for (const row of parseClaudeTranscript(text)) {
        const r = row as { toolUseResult?: unknown; timestamp?: unknown };
        const t = typeof r.timestamp === "string" ? Date.parse(r.timestamp) : NaN;
        const when = Number.isFinite(t) ? t : 0;
        const result = r.toolUseResult as { readcache?: unknown; file?: { readcache?: unknown } };
        for (const rc of [result?.readcache, result?.file?.readcache]) {
          if (typeof rc === "object" && rc !== null) {
            metaReferences(rc as Record<string, unknown>, when, refs);
          }
        }
      }
    }
  };
  await walk(dir);
  return {
    where: dir,
    sessions,
    skipped: 0,
    unreadable,
    refs,
    noun: "Claude Code session",
  };
}
