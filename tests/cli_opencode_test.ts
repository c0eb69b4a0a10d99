// `readcache status` and `readcache savings` on OpenCode sessions (issue #21): a file written by
// `opencode export <sessionID>` (told apart from pi's JSONL by content) and OpenCode's own
// database (`--opencode`), both captured from a real OpenCode 1.18.33 with the read cache plugin
// (tests/fixtures/opencode/, scripts/opencode/capture_session.ts). The CLI runs as a user runs
// it (a subprocess); the tests assert what the user sees, the exit codes and the --json fields,
// and that reading changes no byte of the export, the database (also while OpenCode would hold
// it open in WAL mode), the project or its store.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { jsonOf, type Run, runCli } from "./support/cli_run.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const FIXTURES = join(REPO, "tests/fixtures/opencode");
/** The length of the project path the fixtures were captured with (`@CWD@`). */
const CWD_LENGTH = 80;

interface World {
  root: string;
  /** The project directory: the same length as when captured, so byte counts stay true. */
  app: string;
  /** The export, with the project path put back. */
  exportFile: string;
  /** XDG_DATA_HOME holding opencode/opencode.db. */
  data: string;
  db: string;
}

async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    if (e.isDirectory) await copyTree(join(from, e.name), join(to, e.name));
    else await Deno.copyFile(join(from, e.name), join(to, e.name));
  }
}

async function makeWorld(): Promise<World> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "rc-oc-" }));
  const app = join(root, "app".padEnd(CWD_LENGTH - root.length - 1, "_"));
  assert.equal(app.length, CWD_LENGTH, `the temporary directory ${root} is too long`);
  await copyTree(join(FIXTURES, "work"), app);
  await copyTree(join(FIXTURES, "store"), join(app, ".opencode/readcache"));
  const put = (text: string) =>
    text.replaceAll("@CWD_NO_SLASH@", app.slice(1)).replaceAll("@CWD@", app);
  const exportFile = join(root, "session.json");
  await Deno.writeTextFile(exportFile, put(await Deno.readTextFile(join(FIXTURES, "export.json"))));
  const data = join(root, "xdg-data");
  const db = join(data, "opencode", "opencode.db");
  await Deno.mkdir(join(data, "opencode"), { recursive: true });
  await Deno.copyFile(join(FIXTURES, "opencode.db"), db);
  const sql = new DatabaseSync(db);
  // the capture script put `@CWD@` in these columns; put the project back (in the test's copy)
  const columns = [["session", "directory"], ["session", "path"], ["message", "data"], [
    "part",
    "data",
  ]];
  for (const [table, column] of columns) {
    sql.prepare(
      `UPDATE ${table} SET ${column} = replace(replace(${column}, '@CWD_NO_SLASH@', ?), '@CWD@', ?)`,
    ).run(app.slice(1), app);
  }
  sql.close();
  return { root, app, exportFile, data, db };
}

function cli(w: World, args: string[], cwd: string = w.app): Promise<Run> {
  return runCli(args, cwd, {
    XDG_DATA_HOME: w.data,
    OPENCODE_DB: "",
    PI_CODING_AGENT_DIR: join(w.root, "no-pi"),
    PI_CODING_AGENT_SESSION_DIR: "",
    INIT_CWD: "",
    NO_COLOR: "1",
  });
}

/** Every file under `dir` with its content hash. */
async function snapshot(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (d: string) => {
    for await (const e of Deno.readDir(d)) {
      const p = join(d, e.name);
      if (e.isDirectory) await walk(p);
      else {
        const st = await Deno.lstat(p);
        const hash = createHash("sha256").update(await Deno.readFile(p)).digest("hex");
        out.set(p, `${hash} ${st.mtime?.getTime()}`);
      }
    }
  };
  await walk(dir);
  return out;
}

/** The lines of `text` that start with one of `starts`, in order. */
function linesStarting(text: string, ...starts: string[]): string[] {
  return text.split("\n").filter((l) => starts.some((s) => l.startsWith(s)));
}

const HELD = [
  "  the whole of notes.txt (8 lines)",
  '    next read: a short "unchanged" note (31 bytes instead of 389 bytes)',
  "  lines 3-5 of notes.txt",
  '    next read: a short "unchanged" note (40 bytes instead of 276 bytes)',
  "  the whole of src/app.py (24 lines)",
  '    next read: a short "unchanged" note (32 bytes instead of 937 bytes)',
  "  lines 2-3 of src/app.py",
  '    next read: a short "unchanged" note (41 bytes instead of 255 bytes)',
];

Deno.test("status on an OpenCode export: what the model holds in OpenCode's line counts, next reads, figures", async () => {
  const w = await makeWorld();
  try {
    const r = await cli(w, ["status", w.exportFile]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    const out = r.stdout;
    assert.match(out, /^readcache status\nsession: .*session\.json\nproject: /);
    assert.match(out, /\nOpenCode session: ses_\w+ "/);
    assert.match(out, /\nactive branch: 18 messages, never compacted\n/);
    assert.match(out, /\nThe model holds now \(2 files, in 4 parts\):\n/);
    assert.deepEqual(linesStarting(out, "  the whole", "  lines", "    next read"), HELD);
    // read, read, unchanged, unchanged lines, edit, the whole file again (the edit made it
    // unknown), unchanged lines
    assert.ok(
      out.includes(
        'On this branch (6 reads: 2 sent in full, 1 answered "unchanged", 2 answered ' +
          '"unchanged" for a line range, 1 sent in full again (no safe short answer))',
      ),
      out,
    );
    assert.ok(out.includes("In the whole session (reverted messages too, across compactions"));
    assert.match(out, /\nobject store: .*\/\.opencode\/readcache: 3 stored copies, 1\.5 KB$/m);
    assert.doesNotMatch(out, /\bpi\b/, "nothing about pi in an OpenCode report");

    // the project changes: the next reads follow, as the plugin would answer
    await Deno.writeTextFile(
      join(w.app, "src/app.py"),
      (await Deno.readTextFile(join(w.app, "src/app.py"))) + "value_25 = 50\n",
    );
    await Deno.writeTextFile(join(w.app, "notes.txt"), "note 1\r\nnote 2\r\n");
    const after = (await cli(w, ["status", w.exportFile])).stdout;
    assert.deepEqual(linesStarting(after, "    next read"), [
      "    next read: in full by OpenCode itself (193 bytes): its line breaks (CR LF or CR), a " +
      "byte order mark or a line over 2000 characters make OpenCode's lines differ from the " +
      "cache's, so the plugin leaves it alone",
      "    next read: an error: these lines are no longer in the file (OpenCode says the offset " +
      "is out of range)",
      "    next read: only the changes, as a diff of 1 added or removed line (352 bytes instead " +
      "of 955 bytes)",
      '    next read: a short "unchanged" note: these lines are the same, the file changed ' +
      "elsewhere (69 bytes instead of 255 bytes)",
    ]);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("status --json on an OpenCode export: the fields of pi's, with the host and session id", async () => {
  const w = await makeWorld();
  try {
    const r = await cli(w, ["status", w.exportFile, "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const j = jsonOf<{
      host: string;
      sessionId: string;
      cwd: string;
      revert: unknown;
      branch: {
        messages: number;
        compactions: number;
        reads: { reads: number; byMode: Record<string, number>; servedBytes: number };
      };
      wholeSession: { messages: number; reads: { reads: number } };
      held: {
        path: string;
        scope: string;
        start: number;
        end: number;
        totalLines: number;
        next: { mode: string; bytes: number; words: string };
      }[];
      store: { path: string; objects: number };
    }>(r);
    assert.equal(j.host, "opencode");
    assert.match(j.sessionId, /^ses_/);
    assert.equal(j.cwd, w.app);
    assert.equal(j.revert, null);
    assert.equal(j.branch.messages, 18);
    assert.equal(j.branch.compactions, 0);
    assert.equal(j.branch.reads.reads, 6);
    assert.deepEqual(
      { ...j.branch.reads.byMode },
      { full: 2, unchanged: 1, unchanged_range: 2, diff: 0, baseline_fallback: 1, partial: 0 },
    );
    // what the plugin sent, measured from the session: the outputs the model got
    const e = JSON.parse(await Deno.readTextFile(w.exportFile)) as {
      messages: { parts: { tool?: string; state?: { output?: string } }[] }[];
    };
    const sent = e.messages.flatMap((m) => m.parts).filter((p) => p.tool === "read")
      .reduce((n, p) => n + new TextEncoder().encode(p.state!.output!).length, 0);
    assert.equal(j.branch.reads.servedBytes, sent);
    assert.equal(j.wholeSession.messages, 18);
    assert.deepEqual(
      j.held.map((h) => [h.path, h.scope, h.start, h.end, h.totalLines, h.next.mode]),
      [
        ["notes.txt", "full", 1, 8, 8, "unchanged"],
        ["notes.txt", "r:3:5", 3, 5, 8, "unchanged_range"],
        ["src/app.py", "full", 1, 24, 24, "unchanged"],
        ["src/app.py", "r:2:3", 2, 3, 24, "unchanged_range"],
      ],
    );
    assert.equal(j.held[2].next.words, 'a short "unchanged" note (32 bytes instead of 937 bytes)');
    assert.equal(j.store.objects, 3);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("savings on an OpenCode export and on OpenCode's database: the same figures", async () => {
  const w = await makeWorld();
  try {
    const r = await cli(w, ["savings", w.exportFile]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^readcache savings: 1 session from .*session\.json\n/);
    assert.match(
      r.stdout,
      / app_+\.\.\. \w{6} \(OpenCode\) {2}on +6 +3\.3 KB +2\.3 KB {2}.* 30% less\n/,
    );
    assert.ok(
      r.stdout.includes("total: 6 reads; OpenCode 3.3 KB, readcache 2.3 KB: 1023 bytes less (30%)"),
      r.stdout,
    );
    assert.ok(r.stdout.includes("what OpenCode would have sent is an estimate"));
    assert.doesNotMatch(r.stdout, /\bpi\b/);

    type Savings = {
      sessions: {
        host: string;
        withReadcache: boolean;
        notReplayed: boolean;
        reads: number;
        piBytes: number;
        readcacheBytes: number;
        byMode: Record<string, number>;
      }[];
      totals: {
        hosts: { pi: number; opencode: number };
        reads: number;
        piBytes: number;
        readcacheBytes: number;
      };
    };
    const fromFile = jsonOf<Savings>(await cli(w, ["savings", w.exportFile, "--json"]));
    const fromDb = jsonOf<Savings>(await cli(w, ["savings", "--opencode", "--json"]));
    const ofProject = jsonOf<Savings>(
      await cli(w, ["savings", "--opencode", "--cwd", w.app, "--json"]),
    );
    assert.equal(fromFile.sessions[0].host, "opencode");
    assert.equal(fromFile.sessions[0].withReadcache, true);
    assert.equal(fromFile.sessions[0].notReplayed, false);
    assert.deepEqual(fromFile.totals.hosts, { pi: 0, opencode: 1, claude: 0 });
    for (const other of [fromDb, ofProject]) {
      const { file: _a, ...a } = fromFile.sessions[0] as unknown as Record<string, unknown>;
      const { file: _b, ...b } = other.sessions[0] as unknown as Record<string, unknown>;
      assert.deepEqual(b, a);
    }
    // the status of the same session agrees on what was sent and the estimate
    const st = jsonOf<
      { wholeSession: { reads: { servedBytes: number; estimatedPlainBytes: number } } }
    >(
      await cli(w, ["status", w.exportFile, "--json"]),
    );
    assert.equal(fromFile.totals.readcacheBytes, st.wholeSession.reads.servedBytes);
    assert.equal(fromFile.totals.piBytes, st.wholeSession.reads.estimatedPlainBytes);

    // a directory: .json files count when they are OpenCode exports, others are left alone
    const dir = join(w.root, "exports");
    await Deno.mkdir(dir);
    await Deno.copyFile(w.exportFile, join(dir, "a.json"));
    await Deno.writeTextFile(join(dir, "package.json"), '{"name": "x"}\n');
    const d = await cli(w, ["savings", dir, "--no-replay"]);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /^readcache savings: 1 session in /);
    assert.doesNotMatch(d.stdout, /skipped/);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("savings on an OpenCode session without readcache: not replayed, and says why", async () => {
  const w = await makeWorld();
  try {
    const e = JSON.parse(await Deno.readTextFile(w.exportFile)) as {
      messages: { parts: { tool?: string; state?: { metadata?: Record<string, unknown> } }[] }[];
    };
    for (const p of e.messages.flatMap((m) => m.parts)) delete p.state?.metadata?.readcache;
    const plain = join(w.root, "plain.json");
    await Deno.writeTextFile(plain, JSON.stringify(e));
    const r = await cli(w, ["savings", plain, "--no-replay"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\(OpenCode\) {2}off +6 /);
    assert.match(
      r.stdout,
      /1 OpenCode session without readcache \("off"\): not replayed, because OpenCode's read output does not show the file exactly \(not whether it ends with a line break, nor CR or a byte order mark\); 6 reads \([\d.]+ KB\) count as sent in full on both sides/,
    );
    assert.match(r.stdout, /reads: 6 served by OpenCode itself/);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("status --opencode: the newest session of the project from OpenCode's database, or by id", async () => {
  const w = await makeWorld();
  try {
    const fromFile = jsonOf<{ held: unknown[]; branch: unknown; sessionId: string }>(
      await cli(w, ["status", w.exportFile, "--json"]),
    );
    const r = await cli(w, ["status", "--opencode", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const fromDb = jsonOf<
      { held: unknown[]; branch: unknown; sessionFile: string; sessionId: string }
    >(r);
    assert.equal(fromDb.sessionFile, `${w.db}#${fromFile.sessionId}`);
    assert.deepEqual(fromDb.held, fromFile.held);
    assert.deepEqual(fromDb.branch, fromFile.branch);
    const byId = await cli(w, ["status", "--opencode", fromFile.sessionId], w.root);
    assert.equal(byId.code, 0, byId.stderr);
    assert.deepEqual(linesStarting(byId.stdout, "  the whole", "  lines", "    next read"), HELD);

    // another directory has no session: says where it looked and which project has one
    const none = await cli(w, ["status", "--opencode"], w.root);
    assert.equal(none.code, 0, "nothing found is an answer");
    assert.match(none.stdout, new RegExp(`No OpenCode session of ${w.root} in ${w.db}\\.`));
    assert.ok(none.stdout.includes(`--opencode --cwd ${w.app}`), none.stdout);
    const unknown = await cli(w, ["status", "--opencode", "ses_nope"]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /No OpenCode session ses_nope in /);
    // no database at all (OpenCode has kept nothing here): nothing found, 0
    await Deno.remove(w.db);
    const missing = await cli(w, ["status", "--opencode"]);
    assert.equal(missing.code, 0);
    assert.match(missing.stdout, /No OpenCode database at .*opencode\.db: OpenCode 1\.18 keeps/);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("reading never writes: the export, the database (also in WAL mode, held open), the project", async () => {
  const w = await makeWorld();
  try {
    const before = await snapshot(w.root);
    for (
      const args of [
        ["status", w.exportFile],
        ["status", w.exportFile, "--json"],
        ["savings", w.exportFile],
        ["status", "--opencode"],
        ["savings", "--opencode", "--json"],
      ]
    ) {
      const r = await cli(w, args);
      assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
    }
    assert.deepEqual(await snapshot(w.root), before, "a read-only command changed a file");
    assert.deepEqual([...Deno.readDirSync(join(w.data, "opencode"))].map((e) => e.name), [
      "opencode.db",
    ]);

    // as while OpenCode runs: WAL mode, a write still in the log, the database held open
    const live = new DatabaseSync(w.db);
    live.exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;");
    live.prepare("UPDATE session SET title = ?").run("renamed while open");
    const held = await snapshot(w.data);
    assert.ok([...held.keys()].some((p) => p.endsWith("opencode.db-wal")));
    const r = await cli(w, ["status", "--opencode", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(jsonOf<{ title: string }>(r).title, "renamed while open", "the log is read");
    assert.deepEqual(await snapshot(w.data), held, "the live database, its log or index changed");
    live.close();
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("bad input: a JSON that is neither a pi session nor an OpenCode export, named what is wrong", async () => {
  const w = await makeWorld();
  try {
    const put = async (name: string, text: string) => {
      await Deno.writeTextFile(join(w.root, name), text);
      return join(w.root, name);
    };
    const cases: [string, RegExp][] = [
      [
        await put("text.json", "hello\n"),
        /is not a pi session file \(its first line is not a session header .*\) nor an OpenCode export \(JSON with "info" and "messages"; it is not JSON/,
      ],
      [
        await put("array.json", "[1, 2]\n"),
        /nor an OpenCode export .*the JSON is an array, not an object with "info" and "messages"/,
      ],
      [
        await put("fields.json", '{"info": {"id": "ses_1"}, "messages": {}}'),
        /is not an OpenCode export: the JSON object has no "messages" array \(its fields: info, messages\)/,
      ],
      [
        await put("noinfo.json", '{"messages": []}'),
        /is not an OpenCode export: the JSON object has no "info" object with the session's "id"/,
      ],
      [
        await put(
          "badmsg.json",
          '{"info": {"id": "s"}, "messages": [{"info": {"id": "m"}, "parts": []}]}',
        ),
        /is not an OpenCode export: messages\[0\]\.info has no string "id" and "role"/,
      ],
    ];
    for (const [file, message] of cases) {
      for (const cmd of ["status", "savings"]) {
        const r = await cli(w, [cmd, file]);
        assert.equal(r.code, 2, `${cmd} ${file}: ${r.stdout}${r.stderr}`);
        assert.match(r.stderr, message, `${cmd} ${file}`);
        assert.match(r.stderr, /Pass /, "says what to do");
      }
    }
    // --cwd of savings goes with --opencode; --sessions is pi's
    assert.equal((await cli(w, ["savings", "--cwd", w.app])).code, 2);
    assert.equal((await cli(w, ["status", "--opencode", "--sessions", w.root])).code, 2);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("--help of status and savings names OpenCode with an example", async () => {
  const w = await makeWorld();
  try {
    const status = await cli(w, ["status", "--help"]);
    assert.equal(status.code, 0);
    assert.match(status.stdout, /--opencode/);
    assert.match(status.stdout, /\$ readcache status --opencode/);
    assert.match(status.stdout, /opencode export ses_\S+ > s\.json && readcache status s\.json/);
    const savings = await cli(w, ["savings", "--help"]);
    assert.match(savings.stdout, /\$ readcache savings --opencode --cwd/);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("doctor and gc --opencode: the plugin's store, kept for the sessions in OpenCode's database", async () => {
  const w = await makeWorld();
  const store = join(w.app, ".opencode/readcache");
  for (const d of [join(w.app, ".opencode"), store, join(store, "objects")]) {
    await Deno.chmod(d, 0o700);
  }
  // the session's copies, written two days ago; and one no session refers to
  const old = new Date(Date.now() - 2 * 24 * 3600 * 1000);
  const kept: string[] = [];
  for await (const e of Deno.readDir(join(store, "objects"))) {
    kept.push(e.name);
    // as the plugin writes them (a checkout gives the fixtures the umask's mode)
    await Deno.chmod(join(store, "objects", e.name), 0o600);
    await Deno.utime(join(store, "objects", e.name), old, old);
  }
  const orphanText = "a file no session read\n";
  const orphan = `sha256-${createHash("sha256").update(orphanText).digest("hex")}.txt`;
  await Deno.writeTextFile(join(store, "objects", orphan), orphanText, { mode: 0o600 });
  await Deno.utime(join(store, "objects", orphan), old, old);

  const doctor = await cli(w, ["doctor", "--opencode", "--json"]);
  assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr);
  const d = jsonOf<{
    host: string;
    store: { path: string };
    objects: { count: number; intact: number };
    referenced: { count: number };
    unreferenced: { count: number };
    sessions: { dir: string; files: number };
  }>(doctor);
  assert.equal(d.host, "opencode");
  assert.equal(d.store.path, store);
  assert.deepEqual([d.objects.count, d.objects.intact], [kept.length + 1, kept.length + 1]);
  assert.deepEqual([d.referenced.count, d.unreferenced.count], [kept.length, 1]);
  assert.deepEqual([d.sessions.dir, d.sessions.files], [w.db, 1]);
  const text = await cli(w, ["doctor", "--opencode"]);
  assert.match(text.stdout, /1 OpenCode session of this project in /);
  assert.match(text.stdout, /1 stored copy \(.*\) no OpenCode session of this project refers to/);
  assert.match(text.stdout, /fix: readcache gc --opencode/);

  const before = await snapshot(w.data);
  const dry = await cli(w, ["gc", "--opencode", "--dry-run", "--json"]);
  assert.equal(dry.code, 0, dry.stderr);
  const planned = jsonOf<{ removed: { path: string; why: string }[] }>(dry).removed;
  assert.deepEqual(planned, [{
    path: join(store, "objects", orphan),
    bytes: orphanText.length,
    why: "unreferenced",
  }]);
  const gc = await cli(w, ["gc", "--opencode"]);
  assert.equal(gc.code, 0, gc.stderr);
  assert.match(gc.stdout, /removed 1 stored copy .*; kept 3 copies/);
  const left = [];
  for await (const e of Deno.readDir(join(store, "objects"))) left.push(e.name);
  assert.deepEqual(left.sort(), kept.sort());
  // OpenCode's database is only read
  assert.deepEqual(await snapshot(w.data), before);
});

Deno.test("gc --opencode without OpenCode's database removes no copy for being unreferenced, and says why", async () => {
  const w = await makeWorld();
  await Deno.remove(w.db);
  const store = join(w.app, ".opencode/readcache/objects");
  const old = new Date(Date.now() - 2 * 24 * 3600 * 1000);
  for await (const e of Deno.readDir(store)) await Deno.utime(join(store, e.name), old, old);
  const gc = await cli(w, ["gc", "--opencode"]);
  assert.equal(gc.code, 1);
  assert.match(gc.stdout, /cannot read OpenCode's database .*opencode\.db \(it does not exist\)/);
  assert.match(gc.stdout, /fix: set XDG_DATA_HOME or OPENCODE_DB as OpenCode runs with/);
  assert.match(gc.stdout, /removed 0 stored copies/);
  const doctor = await cli(w, ["doctor", "--opencode"]);
  assert.equal(doctor.code, 1);
  assert.match(doctor.stdout, /is OpenCode's database and cannot be read \(it does not exist\)/);
  assert.doesNotMatch(doctor.stdout, /can be tidied/);
});

Deno.test("savings on an OpenCode session without the plugin: not judged, never '0 bytes wasted'", async () => {
  const w = await makeWorld();
  try {
    // the same session as if recorded without the plugin: no readcache records anywhere
    const strip = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(strip);
      if (typeof v !== "object" || v === null) return v;
      return Object.fromEntries(
        Object.entries(v).filter(([k]) => k !== "readcache").map(([k, x]) => [k, strip(x)]),
      );
    };
    const plain = join(w.root, "plain.json");
    await Deno.writeTextFile(
      plain,
      JSON.stringify(strip(JSON.parse(await Deno.readTextFile(w.exportFile)))),
    );
    const r = await cli(w, ["savings", plain]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /off +6 .*not judged \(not replayed\)/);
    const rows = linesStarting(r.stdout, `  ${w.app}`);
    assert.ok(rows.length > 0, r.stdout);
    for (const row of rows) assert.match(row, /not judged +0 bytes$/, row);
    assert.doesNotMatch(
      r.stdout,
      /\d+ +\d+ +0 bytes +0 bytes/,
      "a read it did not judge as no waste",
    );
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});
