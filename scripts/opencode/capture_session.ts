// Captures a small real OpenCode session for the `readcache` CLI's tests, with the real binary
// (scripts/opencode/opencode_bin.ts), the read cache plugin of this checkout and the scripted
// mock model, into tests/fixtures/opencode/:
//
//   deno run -A scripts/opencode/capture_session.ts [--plugin-rev REV]
//
// READCACHE_KEEP=1 keeps the temporary directory; `--plugin-rev REV` loads the plugin as
// committed in REV instead of the working tree's (the committed fixtures: see
// tests/fixtures/opencode/README.md).
//
// The session: read notes.txt and src/app.py (whole), read src/app.py again (the plugin answers
// "unchanged"), lines 3-5 of notes.txt (unchanged for a line range), OpenCode's edit of
// src/app.py, read src/app.py (whole again: an edit makes the file unknown), then lines 2-3 of
// src/app.py (unchanged for a line range).
//
// Written:
// - `export.json`: what `opencode export <sessionID>` printed (stdout), with the project
//   directory (CWD_LENGTH characters long) replaced by `@CWD@` (and without its leading slash by
//   `@CWD_NO_SLASH@`); the CLI tests copy the project into a temporary directory whose path has
//   the same length and put it back, so the byte counts in the read metadata stay true;
// - `work/`: the project files as they were at the end of the session;
// - `store/objects/`: what the plugin stored in `<project>/.opencode/readcache/objects/`;
// - `opencode.db`: OpenCode's own database (`$XDG_DATA_HOME/opencode/opencode.db`, SQLite in WAL
//   mode) as the session left it, checkpointed into one file (journal mode DELETE) with the
//   project directory replaced by `@CWD@` in every row that names it, and the rows of the tables
//   the CLI never reads about events (`event`, `event_sequence`) deleted, then vacuumed;
// - `storage.txt`: the files under `$XDG_DATA_HOME/opencode` after the session, for the record.
import { DatabaseSync } from "node:sqlite";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { startMockChat } from "./mock_chat.ts";
import { OPENCODE_VERSION, openCodeBinary, openCodeConfigHome } from "./opencode_bin.ts";
import { installedPlugin, PLUGIN_URL, startOpenCode } from "./opencode_server.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
const OUT = join(REPO, "tests/fixtures/opencode");

const lines = (n: number, f: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => f(i + 1)).join("\n") + "\n";

/** The length of the project directory's path in the fixtures (where `@CWD@` stands). */
export const CWD_LENGTH = 80;

/** The project files at the start, by path relative to the project. */
export const FILES: Record<string, string> = {
  "notes.txt": lines(8, (i) => `note ${i}: remember item ${i}`),
  "src/app.py": lines(24, (i) => `value_${i} = ${i} * 2  # step ${i}`),
};

async function listTree(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for await (const e of Deno.readDir(d)) {
      const p = join(d, e.name);
      if (e.isDirectory) await walk(p);
      else out.push(`${relative(dir, p)} ${(await Deno.lstat(p)).size}`);
    }
  };
  await walk(dir).catch(() => {});
  return out.sort();
}

if (import.meta.main) {
  const found = await openCodeBinary();
  if ("skip" in found) {
    console.error(`cannot capture: ${found.skip}`);
    Deno.exit(1);
  }
  const root = await Deno.makeTempDir({ prefix: "readcache-opencode-session-" });
  // a project path of CWD_LENGTH characters: OpenCode's read output names the file by its absolute
  // path, so the tests put back a path of the same length and every byte count stays true
  const cwd = join(root, "project".padEnd(CWD_LENGTH - root.length - 1, "_"));
  if (cwd.length !== CWD_LENGTH) {
    throw new Error(`${root} is too long for a ${CWD_LENGTH}-character project path`);
  }
  const home = join(root, "home");
  for (const [name, text] of Object.entries(FILES)) {
    await Deno.mkdir(join(cwd, name, ".."), { recursive: true });
    await Deno.writeTextFile(join(cwd, name), text);
  }
  await Deno.mkdir(home, { recursive: true });
  // `--plugin-rev REV`: the plugin as committed in REV (git archive into the temporary
  // directory, then `npm install --omit=peer` there), not the working tree's
  const at = Deno.args.indexOf("--plugin-rev");
  const plugin = at >= 0
    ? await installedPlugin(join(root, "plugin"), Deno.args[at + 1])
    : PLUGIN_URL;
  const mock = startMockChat();
  const server = await startOpenCode({
    bin: found.bin,
    cwd,
    home,
    configHome: openCodeConfigHome(),
    mock,
    config: { plugin: [plugin] },
  });
  let id = "";
  try {
    const api = server.api;
    ({ id } = await api("POST", "/session", {}) as { id: string });
    const read = (filePath: string, extra: Record<string, unknown> = {}) => ({
      name: "read",
      args: { filePath, ...extra },
    });
    const steps = [
      [read("notes.txt"), read("src/app.py")],
      [read("src/app.py")],
      [read("notes.txt", { offset: 3, limit: 3 })],
      [{
        name: "edit",
        args: {
          filePath: join(cwd, "src/app.py"),
          oldString: "value_7 = 7 * 2  # step 7",
          newString: "value_7 = 70  # step 7, changed",
        },
      }],
      [read("src/app.py")],
      [read("src/app.py", { offset: 2, limit: 2 })],
    ];
    for (const [i, calls] of steps.entries()) {
      mock.queue.push({ calls }, { text: "done" });
      await api("POST", `/session/${id}/message`, {
        parts: [{ type: "text", text: `step ${i + 1}` }],
      });
    }
  } finally {
    await server.stop();
    await mock.close();
  }
  // `opencode export` reads the same data directory, with the server stopped
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: home,
    XDG_CONFIG_HOME: openCodeConfigHome(),
    XDG_DATA_HOME: join(home, ".local/share"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_STATE_HOME: join(home, ".local/state"),
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_SHARE: "1",
    NO_COLOR: "1",
  };
  const out = await new Deno.Command(found.bin, {
    args: ["export", id],
    cwd,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  if (!out.success) {
    console.error(dec.decode(out.stderr));
    Deno.exit(1);
  }
  const exported = dec.decode(out.stdout);
  JSON.parse(exported); // must be JSON
  await Deno.mkdir(join(OUT, "work", "src"), { recursive: true });
  // `path` is the directory without its leading slash
  const scrub = (text: string) =>
    text.replaceAll(cwd, "@CWD@").replaceAll(cwd.slice(1), "@CWD_NO_SLASH@");
  await Deno.writeTextFile(join(OUT, "export.json"), scrub(exported));
  for (const name of Object.keys(FILES)) {
    await Deno.copyFile(join(cwd, name), join(OUT, "work", name));
  }
  const data = join(home, ".local/share/opencode");
  const objects = join(cwd, ".opencode/readcache/objects");
  await Deno.remove(join(OUT, "store"), { recursive: true }).catch(() => {});
  await Deno.mkdir(join(OUT, "store/objects"), { recursive: true });
  for await (const e of Deno.readDir(objects)) {
    if (e.isFile) await Deno.copyFile(join(objects, e.name), join(OUT, "store/objects", e.name));
  }
  // a copy of the database to scrub (the original stays as OpenCode left it)
  const scratch = join(root, "db");
  await Deno.mkdir(scratch);
  for await (const e of Deno.readDir(data)) {
    if (e.name.startsWith("opencode.db")) {
      await Deno.copyFile(join(data, e.name), join(scratch, e.name));
    }
  }
  const db = new DatabaseSync(join(scratch, "opencode.db"));
  db.exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;");
  const swap = (table: string, column: string) =>
    db.prepare(
      `UPDATE ${table} SET ${column} = replace(replace(${column}, ?, '@CWD@'), ?, '@CWD_NO_SLASH@')`,
    ).run(cwd, cwd.slice(1));
  swap("session", "directory");
  swap("session", "path");
  swap("message", "data");
  swap("part", "data");
  swap("project", "worktree");
  db.exec("DELETE FROM event; DELETE FROM event_sequence; VACUUM;");
  db.close();
  await Deno.copyFile(join(scratch, "opencode.db"), join(OUT, "opencode.db"));
  await Deno.writeTextFile(
    join(OUT, "storage.txt"),
    `OpenCode ${OPENCODE_VERSION}: files under $XDG_DATA_HOME/opencode after the session ` +
      `(path and size in bytes):\n` +
      (await listTree(data)).join("\n") + "\n",
  );
  console.log(`captured session ${id} into ${OUT}`);
  if (Deno.env.get("READCACHE_KEEP") === "1") console.log(`kept ${root}`);
  else await Deno.remove(root, { recursive: true }).catch(() => {});
}
