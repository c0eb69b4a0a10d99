/**
 * `readcache gc [--dry-run] [--max-age DAYS] [--max-bytes N] [--cwd DIR]`:
 * the only command that writes. It removes from the project's object store:
 *
 * - objects no pi session of the project refers to (a reference is a
 *   `servedHash` or `baseHash` in any `details.readcache` of any entry, on
 *   every branch); with `--max-age`, references older than that many days
 *   (by the entry's timestamp) no longer count;
 * - damaged objects (their bytes do not hash to their name: never usable);
 * - with `--max-bytes`, then the least recently referenced objects until the
 *   rest fits;
 * - temporary files older than one hour (interrupted writes);
 * - saved replays (`state/`, SPEC §6.5) that are damaged, saved by another
 *   format (never continued), or of a session file that is gone; with
 *   `--max-age`, those not saved for that many days (a saved replay is a
 *   cache: without it the next start walks the branch once).
 *
 * When no session of the project is found (most likely the wrong directory),
 * every object is kept.
 *
 * Objects written in the last hour are always kept (a running pi stores a
 * copy before the read that uses it reaches the session file). Safe while pi
 * runs: a read whose base is gone is sent in full. Never follows a link: the
 * store's directories are checked first (a linked directory stops gc), and
 * only regular files named like the store's own are removed, each checked
 * with `lstat` again right before `unlink` (which removes a name, never a
 * link's target).
 *
 * @module
 */
import { lstat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { bytesInWords } from "../src/core/status.ts";
import {
  CliError,
  EXIT_OK,
  EXIT_PROBLEM,
  messageOf,
  plural,
  printJson,
  Progress,
  progressCallback,
  stdoutStyle,
} from "./support/output.ts";
import { projectDir, skippedWords } from "./support/sessions.ts";
import { sessionReferences, storeTarget } from "./support/store_target.ts";
import {
  aType,
  checkObject,
  checkSavedReplay,
  listStoreDir,
  OBJECT_NAME,
  STALE_TMP_MS,
  STATE_NAME,
  type StoreEntry,
  TMP_NAME,
  unsafeStoreDir,
} from "./support/store_scan.ts";

/**
 * Options of {@linkcode gcCommand}.
 *
 * @example
 * ```ts
 * import type { GcOptions } from "./gc.ts";
 * const o: GcOptions = { dryRun: true, maxBytes: 20 * 1024 * 1024 };
 * ```
 */
export interface GcOptions {
  /** Only say what would be removed. */
  dryRun?: boolean;
  /** References older than this many days no longer keep an object. */
  maxAgeDays?: number;
  /** Keep at most this many bytes of objects, most recently referenced first. */
  maxBytes?: number;
  /** The project directory (default: the current directory). */
  cwd?: string;
  /** Where pi keeps sessions, when not in its default place. */
  sessions?: string;
  /** The OpenCode plugin's store, with the project's sessions in OpenCode's database. */
  opencode?: boolean;
  /** The Claude Code host's store, with the project's transcripts (`<config>/projects/...`). */
  claude?: boolean;
  /** Print JSON. */
  json?: boolean;
  /** The clock (tests). */
  now?: number;
}

/** Objects younger than this are never removed. */
export const GC_GRACE_MS: number = 60 * 60 * 1000;

/** Why a file is removed. */
type Why =
  | "unreferenced"
  | "damaged"
  | "over_max_bytes"
  | "interrupted_write"
  | "replay_damaged"
  | "replay_outdated"
  | "replay_orphaned"
  | "replay_old";

const WHY_WORDS: Record<Why, string> = {
  unreferenced: "no session refers to it",
  damaged: "damaged (content does not match its name)",
  over_max_bytes: "least recently referenced, over --max-bytes",
  interrupted_write: "temporary file of an interrupted write",
  replay_damaged: "saved replay, damaged (never read back)",
  replay_outdated: "saved replay of an older format (never continued)",
  replay_orphaned: "saved replay of a session file that is gone",
  replay_old: "saved replay not saved again within --max-age",
};

/** The saved replays to remove (SPEC §6.5): damaged, outdated, orphaned, or older than `cutoff`. */
async function staleReplays(
  stateDir: string,
  now: number,
  cutoff: number,
  cap: number,
): Promise<{ entry: StoreEntry; why: Why }[]> {
  const out: { entry: StoreEntry; why: Why }[] = [];
  for (const e of await listStoreDir(stateDir) ?? []) {
    if (e.type !== "file" || !STATE_NAME.test(e.name) || now - e.mtimeMs < GC_GRACE_MS) continue;
    const c = await checkSavedReplay(e.path, cap);
    if (c.state === "damaged") out.push({ entry: e, why: "replay_damaged" });
    else if (c.state === "outdated") out.push({ entry: e, why: "replay_outdated" });
    else if (c.state === "orphaned") out.push({ entry: e, why: "replay_orphaned" });
    else if (c.state === "usable" && e.mtimeMs < cutoff) out.push({ entry: e, why: "replay_old" });
  }
  return out;
}

/**
 * Runs `readcache gc`; returns the exit code (1 when the store cannot be
 * used, a removal failed, or a session file of the sessions directory cannot
 * be read: then no copy is removed for being unreferenced).
 *
 * @example
 * ```ts ignore
 * const code = await gcCommand({ dryRun: true });
 * ```
 */
export async function gcCommand(options: GcOptions): Promise<number> {
  const now = options.now ?? Date.now();
  const cwd = await projectDir(options.cwd, Deno.cwd());
  const target = storeTarget(cwd, options.opencode === true, options.claude === true);
  const store = target.store;
  const objectsDir = join(store.root, "objects");
  const tmpDir = join(store.root, "tmp");
  const unsafe = await unsafeStoreDir(cwd, target.hostDir);
  if (unsafe !== undefined) {
    throw new CliError(
      `${unsafe.path} is ${
        aType(unsafe.type)
      }, not a directory: gc never works through a link and ` +
        `removed nothing. Run readcache doctor --cwd ${cwd} for the fix.`,
      EXIT_PROBLEM,
    );
  }
  const health = await store.health();
  if (!health.ok && !/read-only/.test(health.what)) {
    throw new CliError(
      `The store cannot be used: ${health.path} ${health.what}. ${health.fix} gc removed nothing.`,
      EXIT_PROBLEM,
    );
  }

  const found = await sessionReferences(
    cwd,
    options.opencode === true,
    options.sessions,
    progressCallback("session files read", options.json === true),
    options.claude === true,
  );
  const refs = found.refs;
  // sessions that cannot be read are a problem only where there are copies they may refer to
  const blind = found.unreadable.length > 0 &&
    ((await listStoreDir(objectsDir)) ?? []).length > 0;
  // no session of the project at all: most likely the wrong directory, not a project whose
  // sessions were all deleted; which copies are used cannot be told, so every one is kept
  const none = found.sessions === 0 && !blind;
  const cutoff = options.maxAgeDays === undefined
    ? -Infinity
    : now - options.maxAgeDays * 24 * 60 * 60 * 1000;

  const remove: { entry: StoreEntry; why: Why }[] = [];
  const keep: { entry: StoreEntry; lastUse: number; recent: boolean }[] = [];
  let leftAlone = 0;
  const entries = await listStoreDir(objectsDir) ?? [];
  const progress = new Progress("objects checked", entries.length, options.json === true);
  for (const e of entries) {
    progress.tick();
    const m = OBJECT_NAME.exec(e.name);
    if (m === null || e.type !== "file") {
      leftAlone++;
      continue;
    }
    const recent = now - e.mtimeMs < GC_GRACE_MS;
    const check = await checkObject(e.path, m[1], store.maxObjectBytes);
    if (check.state === "damaged") {
      remove.push({ entry: e, why: "damaged" });
      continue;
    }
    const ref = refs.get(m[1]);
    // a session file that cannot be read may refer to any copy: keep them all
    if (recent || blind || none) keep.push({ entry: e, lastUse: Infinity, recent });
    else if (ref !== undefined && ref >= cutoff) keep.push({ entry: e, lastUse: ref, recent });
    else remove.push({ entry: e, why: "unreferenced" });
  }
  progress.done();

  let keptBytes = keep.reduce((n, k) => n + k.entry.size, 0);
  let overBudget = false;
  if (!blind && !none && options.maxBytes !== undefined && keptBytes > options.maxBytes) {
    keep.sort((a, b) => b.lastUse - a.lastUse || b.entry.mtimeMs - a.entry.mtimeMs);
    let total = 0;
    const stay: typeof keep = [];
    for (const k of keep) {
      if (k.recent || total + k.entry.size <= options.maxBytes) {
        stay.push(k);
        total += k.entry.size;
      } else remove.push({ entry: k.entry, why: "over_max_bytes" });
    }
    keep.splice(0, keep.length, ...stay);
    keptBytes = total;
    overBudget = total > options.maxBytes;
  }
  for (const e of await listStoreDir(tmpDir) ?? []) {
    if (e.type === "file" && TMP_NAME.test(e.name) && now - e.mtimeMs > STALE_TMP_MS) {
      remove.push({ entry: e, why: "interrupted_write" });
    }
  }
  remove.push(
    ...await staleReplays(join(store.root, "state"), now, cutoff, store.maxObjectBytes),
  );

  const failed: { path: string; error: string }[] = [];
  const removed: typeof remove = [];
  if (!options.dryRun && remove.length > 0) {
    // the directories again, right before removing: a link swapped in meanwhile stops gc
    const now = await unsafeStoreDir(cwd, target.hostDir);
    if (now !== undefined) {
      throw new CliError(
        `${now.path} became ${aType(now.type)} while gc ran: nothing was removed. ` +
          `Run readcache doctor --cwd ${cwd}.`,
        EXIT_PROBLEM,
      );
    }
    for (const r of remove) {
      try {
        const st = await lstat(r.entry.path);
        // the very file that was checked: still a regular file, same inode
        if (!st.isFile() || st.ino !== r.entry.ino) continue;
        await unlink(r.entry.path);
        removed.push(r);
      } catch (e) {
        if ((e as { code?: string }).code === "ENOENT") continue; // gone meanwhile
        failed.push({ path: r.entry.path, error: messageOf(e) });
      }
    }
  }

  const done = options.dryRun ? remove : removed;
  const isReplay = (r: { why: Why }) => r.why.startsWith("replay_");
  const objectsGone = done.filter((r) => r.why !== "interrupted_write" && !isReplay(r));
  const tmpGone = done.filter((r) => r.why === "interrupted_write");
  const replaysGone = done.filter(isReplay);
  const sum = (list: typeof remove) => list.reduce((n, r) => n + r.entry.size, 0);
  if (options.json) {
    printJson({
      cwd,
      host: target.host,
      store: store.root,
      dryRun: options.dryRun === true,
      sessions: {
        dir: found.where,
        files: found.sessions,
        skipped: found.skipped,
        unreadable: found.unreadable,
      },
      removed: done.map((r) => ({ path: r.entry.path, bytes: r.entry.size, why: r.why })),
      kept: { objects: keep.length, bytes: keptBytes, recent: keep.filter((k) => k.recent).length },
      leftAlone,
      overBudget,
      failed,
    });
    return failed.length > 0 || blind ? EXIT_PROBLEM : EXIT_OK;
  }
  const style = stdoutStyle();
  const verb = options.dryRun ? "would remove" : "removed";
  const out: string[] = [
    style.heading(`readcache gc${options.dryRun ? " (dry run: nothing removed)" : ""}`),
    `store: ${store.root}`,
    `  ${plural(found.sessions, found.noun)} of this project in ${found.where}` +
    skippedWords(found.skipped),
  ];
  const again = options.claude === true
    ? "readcache gc --claude"
    : options.opencode === true
    ? "readcache gc --opencode"
    : "readcache gc";
  for (const u of found.unreadable) {
    out.push(
      style.bad(
        options.opencode === true
          ? `  cannot read OpenCode's database ${u.path} (${u.why})`
          : `  cannot read the session file ${u.path} (${u.why})`,
      ),
    );
  }
  if (blind && options.opencode === true) {
    out.push(
      style.bad(
        "  so the copies OpenCode's sessions refer to cannot be known: every stored copy is kept " +
          "(only damaged copies and leftovers of interrupted writes count below)",
      ),
      `  fix: set XDG_DATA_HOME or OPENCODE_DB as OpenCode runs with, then run ${again} again`,
    );
  } else if (blind) {
    out.push(
      style.bad(
        `  so the copies ${
          found.unreadable.length === 1 ? "that file refers to" : "those files refer to"
        } cannot be known: every stored copy is kept (only damaged copies and leftovers of ` +
          "interrupted writes count below)",
      ),
      `  fix: make ${found.unreadable.length === 1 ? "it" : "them"} readable (chmod u+r FILE) ` +
        `or move ${
          found.unreadable.length === 1 ? "it" : "them"
        } out of ${found.where}, then run ${again} again`,
    );
  }
  if (none) {
    out.push(
      style.warn(
        "  no session of this project was found, so which stored copies are still used cannot " +
          "be told: every stored copy is kept (only damaged copies, leftovers of interrupted " +
          "writes and spent saved replays count below)",
      ),
      `  fix: ${
        options.opencode === true
          ? "run readcache in the directory OpenCode ran in, or pass it with --cwd DIR"
          : options.claude === true
          ? "run readcache in the directory Claude Code ran in, or pass it with --cwd DIR"
          : "pass --sessions DIR if pi keeps its sessions elsewhere, or --cwd DIR for another project"
      }`,
    );
  }
  for (const r of done) {
    out.push(`  ${verb} ${r.entry.path} (${bytesInWords(r.entry.size)}): ${WHY_WORDS[r.why]}`);
  }
  out.push(
    style.good(
      `${verb} ${plural(objectsGone.length, "stored copy", "stored copies")} (${
        bytesInWords(sum(objectsGone))
      }), ${plural(tmpGone.length, "temporary file")} and ${
        plural(replaysGone.length, "saved replay")
      }; kept ${plural(keep.length, "copy", "copies")} (${bytesInWords(keptBytes)})`,
    ),
  );
  const recent = keep.filter((k) => k.recent).length;
  if (recent > 0) {
    out.push(`  ${plural(recent, "copy", "copies")} written in the last hour kept in any case`);
  }
  if (overBudget) {
    out.push(
      style.warn(`  still over --max-bytes: copies written in the last hour are never removed`),
    );
  }
  if (leftAlone > 0) {
    out.push(
      `  ${plural(leftAlone, "other entry", "other entries")} left alone (see readcache doctor)`,
    );
  }
  for (const f of failed) {
    out.push(style.bad(`  could not remove ${f.path}: ${f.error}`));
  }
  if (failed.length > 0) out.push("  fix: check the permissions of the store (readcache doctor)");
  console.log(out.join("\n"));
  return failed.length > 0 || blind ? EXIT_PROBLEM : EXIT_OK;
}
