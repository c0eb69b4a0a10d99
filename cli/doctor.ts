/**
 * `readcache doctor [--cwd DIR]`: checks the object store of a project and
 * changes nothing (with `--claude`, also the Claude Code service as
 * installed: its hooks, the files they run, its directory). Every object is re-hashed; file types, permissions and
 * sizes are checked; temporary leftovers and objects no session of the
 * project refers to are counted; each problem is printed with its fix. Exit
 * code 1 when there is a problem (damaged, unreadable, not a regular file,
 * too large, readable by others, or a store pi cannot use).
 *
 * @module
 */
import { join } from "node:path";
import { bytesInWords } from "../src/core/status.ts";
import {
  claudeServiceCheck,
  claudeServiceLines,
  type ClaudeServiceReport,
} from "./claude_doctor.ts";
import {
  EXIT_OK,
  EXIT_PROBLEM,
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
  shellQuote,
  STALE_TMP_MS,
  STATE_NAME,
  type StoreEntry,
  TMP_NAME,
  unsafeStoreDir,
} from "./support/store_scan.ts";

/**
 * Options of {@linkcode doctorCommand}.
 *
 * @example
 * ```ts
 * import type { DoctorOptions } from "./doctor.ts";
 * const o: DoctorOptions = { cwd: "/work/app", json: true };
 * ```
 */
export interface DoctorOptions {
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
}

/**
 * One thing found: a `problem` (exit code 1) or a `note` (something
 * `readcache gc` can free, or that needs no action).
 *
 * @example
 * ```ts
 * import type { Finding } from "./doctor.ts";
 * const f: Finding = { severity: "problem", path: "/w/.pi/readcache/objects/x", what: "is damaged",
 *   fix: "rm /w/.pi/readcache/objects/x" };
 * ```
 */
export interface Finding {
  /** `problem` or `note`. */
  severity: "problem" | "note";
  /** The path concerned. */
  path: string;
  /** What is wrong, in words. */
  what: string;
  /** What to do. */
  fix: string;
}

/** Why an entry of the store is not the store's own, in words. */
const notOurs = (type: StoreEntry["type"]) =>
  type === "file" ? "the store never names a file so" : `it is ${aType(type)}`;

const octal = (mode: number) => mode.toString(8).padStart(4, "0");

/**
 * Runs `readcache doctor`; returns the exit code.
 *
 * @example
 * ```ts ignore
 * const code = await doctorCommand({ cwd: "/work/app" });
 * ```
 */
export async function doctorCommand(options: DoctorOptions): Promise<number> {
  const cwd = await projectDir(options.cwd, Deno.cwd());
  const target = storeTarget(cwd, options.opencode === true, options.claude === true);
  const store = target.store;
  const root = store.root;
  const objectsDir = join(root, "objects");
  const tmpDir = join(root, "tmp");
  const findings: Finding[] = [];
  const problem = (path: string, what: string, fix: string) =>
    findings.push({ severity: "problem", path, what, fix });
  const note = (path: string, what: string, fix: string) =>
    findings.push({ severity: "note", path, what, fix });

  const health = await store.health();
  if (!health.ok) problem(health.path, health.what, health.fix);
  const unsafe = await unsafeStoreDir(cwd, target.hostDir);
  let exists = false;
  const objects = { count: 0, bytes: 0, intact: 0 };
  const referenced = { count: 0, bytes: 0 };
  const unreferenced = { count: 0, bytes: 0, paths: [] as string[] };
  const tmp = { stale: 0, recent: 0, bytes: 0 };
  /** Saved replays (SPEC §6.5) in `state/`: usable ones, and those gc removes. */
  const replays = { count: 0, bytes: 0, usable: 0, damaged: 0, outdated: 0, orphaned: 0 };
  let sessionInfo = { dir: "", files: 0, skipped: 0, unreadable: 0 };
  const noun = options.claude === true
    ? "Claude Code session"
    : options.opencode === true
    ? "OpenCode session"
    : "pi session";
  const gcWith = options.claude === true
    ? "readcache gc --claude"
    : options.opencode === true
    ? "readcache gc --opencode"
    : undefined;

  if (unsafe === undefined) {
    try {
      exists = (await Deno.lstat(root)).isDirectory;
    } catch {
      exists = false;
    }
  }
  if (exists) {
    for (const dir of [root, objectsDir, tmpDir, join(root, "state")]) {
      let st: Deno.FileInfo;
      try {
        st = await Deno.lstat(dir);
      } catch {
        continue;
      }
      const mode = (st.mode ?? 0) & 0o777;
      if ((mode & 0o077) !== 0) {
        problem(
          dir,
          `can be read by other users (mode ${octal(mode)}); the store keeps copies of your files`,
          `chmod 700 ${shellQuote(dir)}`,
        );
      }
    }

    const seen = new Map<string, StoreEntry>();
    const entries = await listStoreDir(objectsDir) ?? [];
    const progress = new Progress("objects re-hashed", entries.length, options.json === true);
    for (const e of entries) {
      progress.tick();
      const m = OBJECT_NAME.exec(e.name);
      if (m === null) {
        note(
          e.path,
          `is not a copy the read cache wrote (${notOurs(e.type)}); the read cache ignores it`,
          `move it out of ${shellQuote(objectsDir)}`,
        );
        continue;
      }
      if (e.type !== "file") {
        const to = e.linkTarget === undefined ? "" : ` (to ${e.linkTarget})`;
        problem(
          e.path,
          `is ${aType(e.type)}${to}, not a regular file; the read cache never opens it, so that ` +
            "file is sent in full",
          `rm ${shellQuote(e.path)}`,
        );
        continue;
      }
      objects.count++;
      objects.bytes += e.size;
      seen.set(m[1], e);
      if ((e.mode & 0o077) !== 0) {
        problem(
          e.path,
          `can be read by other users (mode ${octal(e.mode)}); the store writes its copies 0600`,
          `chmod 600 ${shellQuote(e.path)}`,
        );
      }
      const check = await checkObject(e.path, m[1], store.maxObjectBytes);
      switch (check.state) {
        case "intact":
          objects.intact++;
          break;
        case "damaged":
          problem(
            e.path,
            "is damaged: its content does not match its name, so it is never used and that " +
              "file is sent in full",
            `rm ${shellQuote(e.path)}   (or readcache gc, which removes damaged copies)`,
          );
          break;
        case "too_large":
          problem(
            e.path,
            `is larger than ${bytesInWords(store.maxObjectBytes)}, the most the store loads`,
            `rm ${shellQuote(e.path)}`,
          );
          break;
        case "not_a_file":
          problem(e.path, "is not a regular file", `rm ${shellQuote(e.path)}`);
          break;
        case "unreadable":
          problem(
            e.path,
            `cannot be read (${check.why}), so that file is sent in full`,
            `chmod 600 ${shellQuote(e.path)}, or rm ${shellQuote(e.path)}`,
          );
      }
    }
    progress.done();

    const found = await sessionReferences(
      cwd,
      options.opencode === true,
      options.sessions,
      progressCallback("session files read", options.json === true),
      options.claude === true,
    );
    sessionInfo = {
      dir: found.where,
      files: found.sessions,
      skipped: found.skipped,
      unreadable: found.unreadable.length,
    };
    for (const u of found.unreadable) {
      if (options.opencode === true) {
        problem(
          u.path,
          `is OpenCode's database and cannot be read (${u.why}): the stored copies OpenCode's ` +
            "sessions refer to cannot be known, and readcache gc removes no copy for being " +
            "unreferenced",
          "set XDG_DATA_HOME or OPENCODE_DB as OpenCode runs with, then run readcache doctor " +
            "--opencode again",
        );
        continue;
      }
      problem(
        u.path,
        `is a session file that cannot be read (${u.why}): the stored copies it refers to ` +
          "cannot be known, and readcache gc stops before removing any copy",
        `chmod u+r ${shellQuote(u.path)}   (or move it out of ${shellQuote(found.where)})`,
      );
    }
    const refs = found.refs;
    for (const [hash, e] of seen) {
      if (refs.has(hash)) {
        referenced.count++;
        referenced.bytes += e.size;
      } else {
        unreferenced.count++;
        unreferenced.bytes += e.size;
        unreferenced.paths.push(e.path);
      }
    }
    // (with sessions that cannot be read, gc keeps every copy: nothing to tidy)
    if (unreferenced.count > 0 && found.unreadable.length === 0) {
      note(
        objectsDir,
        `${plural(unreferenced.count, "stored copy", "stored copies")} (${
          bytesInWords(unreferenced.bytes)
        }) no ${noun} of this project refers to`,
        gcWith !== undefined
          ? `${gcWith}   (with --dry-run it shows what it would remove)`
          : "readcache gc   (readcache gc --dry-run shows what it would remove)",
      );
    }

    const now = Date.now();
    for (const e of await listStoreDir(tmpDir) ?? []) {
      if (e.type === "file" && TMP_NAME.test(e.name)) {
        if (now - e.mtimeMs > STALE_TMP_MS) {
          tmp.stale++;
          tmp.bytes += e.size;
        } else tmp.recent++;
      } else {
        note(
          e.path,
          `is not a temporary file of the read cache (${
            notOurs(e.type)
          }); the read cache ignores it`,
          `move it out of ${shellQuote(tmpDir)}`,
        );
      }
    }
    const stateDir = join(root, "state");
    for (const e of await listStoreDir(stateDir) ?? []) {
      if (e.type !== "file" || !STATE_NAME.test(e.name)) {
        note(
          e.path,
          `is not a saved replay of the read cache (${notOurs(e.type)}); the read cache ignores it`,
          `move it out of ${shellQuote(stateDir)}`,
        );
        continue;
      }
      replays.count++;
      replays.bytes += e.size;
      const c = await checkSavedReplay(e.path, store.maxObjectBytes);
      if (c.state === "usable") replays.usable++;
      else if (c.state === "damaged") replays.damaged++;
      else if (c.state === "outdated") replays.outdated++;
      else if (c.state === "orphaned") replays.orphaned++;
    }
    const spent = replays.damaged + replays.outdated + replays.orphaned;
    if (spent > 0) {
      const why = [
        replays.damaged > 0 ? `${replays.damaged} damaged` : "",
        replays.outdated > 0 ? `${replays.outdated} of an older format` : "",
        replays.orphaned > 0 ? `${replays.orphaned} of session files that are gone` : "",
      ].filter((w) => w !== "").join(", ");
      note(
        stateDir,
        `${plural(spent, "saved replay")} never used again (${why})`,
        `${gcWith ?? "readcache gc"}   (with --dry-run it shows what it would remove)`,
      );
    }
    if (tmp.stale > 0) {
      note(
        tmpDir,
        `${plural(tmp.stale, "temporary file")} (${
          bytesInWords(tmp.bytes)
        }) left by interrupted writes`,
        gcWith !== undefined
          ? `${gcWith}   (the ${
            options.claude === true ? "host" : "plugin"
          } also removes them on its next write)`
          : "readcache gc   (pi also removes them on its next write)",
      );
    }
  }

  // the Claude Code service as installed: its hooks, its files, its directory (read-only)
  let service: ClaudeServiceReport | undefined;
  if (options.claude === true) {
    service = await claudeServiceCheck();
    findings.push(...service.findings);
  }

  const problems = findings.filter((f) => f.severity === "problem");
  const notes = findings.filter((f) => f.severity === "note");
  if (options.json) {
    printJson({
      cwd,
      host: target.host,
      store: {
        path: root,
        exists,
        usable: health.ok,
        unsafeDirectory: unsafe ?? null,
      },
      objects,
      referenced,
      unreferenced,
      tmp,
      savedReplays: replays,
      sessions: sessionInfo,
      ...(service === undefined ? {} : {
        service: {
          configDir: service.configDir,
          dir: service.serviceDir,
          installed: service.installed,
          running: service.running,
          pid: service.pid,
        },
      }),
      problems,
      notes,
    });
    return problems.length > 0 ? EXIT_PROBLEM : EXIT_OK;
  }

  const style = stdoutStyle();
  const out: string[] = [style.heading("readcache doctor"), `store: ${root}`];
  if (unsafe !== undefined) {
    out.push(`  ${unsafe.path} is ${aType(unsafe.type)}: nothing inside it was looked at.`);
  } else if (!exists) {
    out.push(
      "  no store yet: nothing has been cached in this project (pass --cwd DIR to look at " +
        "another project).",
    );
  } else {
    out.push(
      `  ${plural(objects.count, "stored copy", "stored copies")}, ${
        bytesInWords(objects.bytes)
      }; ${objects.intact} of ${objects.count} re-hashed intact`,
    );
    out.push(
      `  ${plural(sessionInfo.files, noun)} of this project in ${sessionInfo.dir}` +
        skippedWords(sessionInfo.skipped),
    );
    const those = sessionInfo.files === 1
      ? "that session"
      : sessionInfo.files === 0
      ? "a session of this project"
      : "those sessions";
    out.push(
      `  ${plural(referenced.count, "stored copy", "stored copies")} referred to by ${those} (${
        bytesInWords(referenced.bytes)
      }), ${unreferenced.count} not (${bytesInWords(unreferenced.bytes)})`,
    );
    if (replays.count > 0) {
      out.push(
        `  ${plural(replays.count, "saved replay")} (${
          bytesInWords(replays.bytes)
        }; ${replays.usable} usable): where a session's replay was saved, so that pi starts fast`,
      );
    }
    if (tmp.recent > 0) out.push(`  ${plural(tmp.recent, "write")} in progress`);
  }
  if (service !== undefined) out.push(...claudeServiceLines(service));
  if (problems.length > 0) {
    out.push("", style.bad(`${plural(problems.length, "problem")}:`));
    for (const p of problems) {
      out.push(`  ${p.path} ${p.what}`);
      out.push(`    fix: ${p.fix}`);
    }
  }
  if (notes.length > 0) {
    out.push("", style.heading("can be tidied (not problems):"));
    for (const n of notes) {
      out.push(`  ${n.path}: ${n.what}`);
      out.push(`    fix: ${n.fix}`);
    }
  }
  if (problems.length === 0) out.push("", style.good("no problems found."));
  console.log(out.join("\n"));
  return problems.length > 0 ? EXIT_PROBLEM : EXIT_OK;
}
