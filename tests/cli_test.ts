// The `readcache` command line, run as a user runs it (a child process of `deno run cli/main.ts`)
// over session files written by a real pi 0.73.1 (tests/fixtures/sessions/, see its README).
// Every figure is checked against a value this test computes itself from the JSONL or the disk,
// never by calling the code under test; read-only commands must leave every file byte-identical.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cliArgs, jsonOf, type Run, runCli } from "./support/cli_run.ts";
import { parseSessionJsonl, PiBranchConverter } from "../src/adapters/pi/branch.ts";
import { BranchKnowledge } from "../src/core/knowledge.ts";
import { activeBranch, REPLAY_STATE_FORMAT } from "../src/core/replay.ts";
import { bytesInWords, formatStatusReport, PLAIN_STYLE, tallyReads } from "../src/core/status.ts";
import { callResolvers, resolveCall, serveRead } from "../src/shell/read_service.ts";
import { FsObjectStore } from "../src/store/fs_object_store.ts";
import { formatSavings } from "../cli/savings_report.ts";
import {
  type SessionSavings as SavingsSession,
  topFiles,
  totalsOf,
} from "../cli/savings_figures.ts";
import { savingsHtml } from "../cli/savings_html.ts";
import { plural } from "../cli/support/output.ts";
import { objectReferences } from "../cli/support/sessions.ts";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const FIXTURES = join(REPO, "tests/fixtures/sessions");
const HOUR = 60 * 60 * 1000;

// ---- the world: a project, its store and pi's sessions directory, from the fixtures ----------

interface World {
  root: string;
  work: string;
  agent: string;
  sessions: string;
  plain: string;
  readcache: string;
  objects: string;
}

async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    if (e.isDirectory) await copyTree(join(from, e.name), join(to, e.name));
    else await Deno.copyFile(join(from, e.name), join(to, e.name));
  }
}

/** True when `name --version` runs here. */
function commandWorks(name: string): Promise<boolean> {
  return new Deno.Command(name, { args: ["--version"], stdout: "null", stderr: "null" })
    .output().then((o) => o.success, () => false);
}

async function makeWorld(): Promise<World> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "readcache-cli-" }));
  const work = join(root, "work");
  const agent = join(root, "agent");
  await copyTree(join(FIXTURES, "work"), work);
  const objects = join(work, ".pi/readcache/objects");
  for (const d of [".pi", ".pi/readcache", ".pi/readcache/objects", ".pi/readcache/tmp"]) {
    await Deno.mkdir(join(work, d), { mode: 0o700 });
    await Deno.chmod(join(work, d), 0o700);
  }
  const old = new Date(Date.now() - 3 * HOUR);
  for await (const e of Deno.readDir(join(FIXTURES, "store/objects"))) {
    await Deno.copyFile(join(FIXTURES, "store/objects", e.name), join(objects, e.name));
    await Deno.chmod(join(objects, e.name), 0o600);
    await Deno.utime(join(objects, e.name), old, old);
  }
  // pi's own naming: <agent>/sessions/--<cwd without the leading slash, / replaced by ->--/
  const sessions = join(agent, "sessions", `--${work.slice(1).replaceAll("/", "-")}--`);
  await Deno.mkdir(sessions, { recursive: true });
  const place = (name: string, mtime: Date) =>
    placeSession({ work, sessions }, name, SESSION_FILES[name], mtime);
  const plain = await place("plain.jsonl", new Date(Date.now() - 2 * HOUR));
  const readcache = await place("readcache.jsonl", new Date(Date.now() - HOUR));
  return { root, work, agent, sessions, plain, readcache, objects };
}

/** The names pi gave the fixture sessions (fork.jsonl's parentSession names readcache's). */
const SESSION_FILES: Record<string, string> = {
  "plain.jsonl": "2026-11-23T15-07-58-351Z_01a208f3-160e-72b5-8686-ba2de1245b15.jsonl",
  "readcache.jsonl": "2026-11-23T15-07-59-474Z_01a208f3-1a71-72f0-97d2-a951f7008660.jsonl",
  "fork.jsonl": "2026-11-23T15-08-00-066Z_01a208f3-1cc2-757a-be2c-863a8e150111.jsonl",
  "legacy.jsonl": "2026-11-23T15-08-03-000Z_01a208f3-2000-7000-8000-000000000002.jsonl",
};

/** Copies a fixture session into pi's sessions directory, placeholders replaced. */
async function placeSession(
  w: Pick<World, "work" | "sessions">,
  name: string,
  file: string,
  mtime: Date,
): Promise<string> {
  const text = (await Deno.readTextFile(join(FIXTURES, name))).replaceAll("@CWD@", w.work)
    .replaceAll("@SESSIONS@", w.sessions);
  const path = join(w.sessions, file);
  await Deno.writeTextFile(path, text);
  await Deno.utime(path, mtime, mtime);
  return path;
}

function cli(
  w: World,
  args: string[],
  env: Record<string, string> = {},
  cwd: string = w.work,
): Promise<Run> {
  // savings' replay through pi is the pi suite's to test (tests/pi/bench_real_test.ts): the core
  // suite never fetches pi
  if (args[0] === "savings") args = [...args, "--no-replay"];
  return runCli(args, cwd, {
    PI_CODING_AGENT_DIR: w.agent,
    PI_CODING_AGENT_SESSION_DIR: "",
    INIT_CWD: "",
    ...env,
  });
}

/** Every path under `dir` with its type, mode and content hash (links: their target). */
async function snapshot(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (d: string) => {
    for await (const e of Deno.readDir(d)) {
      const p = join(d, e.name);
      const st = await Deno.lstat(p);
      const mode = ((st.mode ?? 0) & 0o777).toString(8);
      if (st.isSymlink) out.set(p, `link ${await Deno.readLink(p)}`);
      else if (st.isDirectory) {
        out.set(p, `dir ${mode}`);
        await walk(p);
      } else {
        const hash = createHash("sha256").update(await Deno.readFile(p)).digest("hex");
        out.set(p, `file ${mode} ${hash}`);
      }
    }
  };
  await walk(dir);
  return out;
}

async function assertUnchanged(w: World, run: () => Promise<unknown>): Promise<void> {
  const before = await snapshot(w.root);
  await run();
  assert.deepEqual(await snapshot(w.root), before, "a read-only command changed a file");
}

// ---- what the test computes itself from the JSONL ---------------------------------------------

interface RawEntry {
  type: string;
  id?: string;
  parentId?: string | null;
  parentSession?: string;
  customType?: string;
  data?: { kind?: string; pathKey?: string; scopeKey?: string };
  message?: {
    role?: string;
    toolName?: string;
    toolCallId?: string;
    isError?: boolean;
    content?: { type: string; text?: string }[];
    details?: { readcache?: RawMeta };
  };
}

interface RawMeta {
  pathKey: string;
  scopeKey: string;
  servedHash: string;
  mode: string;
  totalLines: number;
  rangeStart: number;
  rangeEnd: number;
  bytes: number;
  debug?: unknown;
}

async function rawEntries(file: string): Promise<RawEntry[]> {
  return (await Deno.readTextFile(file)).trim().split("\n").map((l) => JSON.parse(l) as RawEntry);
}

const isRead = (e: RawEntry) =>
  e.type === "message" && e.message?.role === "toolResult" && e.message.toolName === "read" &&
  e.message.isError !== true;

const textOf = (e: RawEntry) =>
  (e.message?.content ?? []).map((c) => c.type === "text" ? c.text ?? "" : "").join("");

const utf8 = (s: string) => new TextEncoder().encode(s).length;

/** Root-to-leaf entries, the leaf being the last entry of the file. */
function branchOf(entries: RawEntry[]): RawEntry[] {
  const byId = new Map(entries.filter((e) => e.id).map((e) => [e.id!, e]));
  const out: RawEntry[] = [];
  for (let e = entries.at(-1); e !== undefined; e = byId.get(e.parentId ?? "")) out.push(e);
  return out.reverse();
}

/** The SPEC §11.4 estimate, written out again from its definition. */
function estimate(reads: RawEntry[]): { served: number; plain: number; tokens: number } {
  const perLine = new Map<string, number>();
  let served = 0;
  let plain = 0;
  for (const r of reads) {
    const m = r.message!.details!.readcache!;
    const lines = m.rangeEnd - m.rangeStart + 1;
    served += m.bytes;
    if (m.mode === "full" || m.mode === "baseline_fallback") {
      perLine.set(m.pathKey, m.bytes / lines);
      plain += m.bytes;
    } else plain += Math.max(m.bytes, Math.round((perLine.get(m.pathKey) ?? 0) * lines));
  }
  return { served, plain, tokens: Math.max(0, Math.round((plain - served) / 4)) };
}

function countModes(reads: RawEntry[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of reads) {
    const m = r.message?.details?.readcache?.mode ?? "plain";
    out[m] = (out[m] ?? 0) + 1;
  }
  return out;
}

const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

// ---- status -------------------------------------------------------------------------------------

interface StatusJson {
  sessionFile: string;
  cwd: string;
  leafId: string;
  branch: {
    entries: number;
    compactions: number;
    reads: { reads: number; byMode: Record<string, number>; servedBytes: number } & {
      estimatedPlainBytes: number;
      estimatedTokensSaved: number;
    };
  };
  wholeSession: {
    entries: number;
    compactions: number;
    reads: { reads: number; byMode: Record<string, number>; estimatedTokensSaved: number };
  };
  held: {
    path: string;
    pathKey: string;
    scope: string;
    start: number;
    end: number;
    totalLines: number;
    words: string;
    next: { mode: string | null; reason: string; bytes: number; plainBytes: number } | null;
  }[];
  store: { path: string; objects: number; bytes: number; problem?: unknown };
}

Deno.test("status --latest: the newest session, what the model holds, next reads, figures from the JSONL", async () => {
  const w = await makeWorld();
  try {
    let r!: Run;
    await assertUnchanged(w, async () => r = await cli(w, ["status", "--latest", "--json"]));
    assert.equal(r.code, 0, r.stderr);
    const s = jsonOf<StatusJson>(r);
    assert.equal(s.sessionFile, w.readcache, "--latest is the newest by modification time");
    assert.equal(s.cwd, w.work);

    const entries = await rawEntries(w.readcache);
    const body = entries.filter((e) => e.type !== "session");
    const branch = branchOf(body);
    assert.equal(s.leafId, body.at(-1)!.id);
    assert.equal(s.branch.entries, branch.length);
    assert.equal(s.wholeSession.entries, body.length);
    assert.equal(s.branch.compactions, branch.filter((e) => e.type === "compaction").length);

    // reads by mode, bytes and the estimate: on the branch and in the whole file
    const allReads = body.filter(isRead);
    const branchReads = branch.filter(isRead);
    assert.equal(s.wholeSession.reads.reads, allReads.length);
    assert.equal(s.branch.reads.reads, branchReads.length);
    assert.ok(allReads.length > branchReads.length, "the fixture has reads off the branch");
    for (const [mode, n] of Object.entries(countModes(allReads))) {
      assert.equal(s.wholeSession.reads.byMode[mode], n, `whole file, ${mode}`);
    }
    for (const [mode, n] of Object.entries(countModes(branchReads))) {
      assert.equal(s.branch.reads.byMode[mode], n, `branch, ${mode}`);
    }
    assert.equal(s.branch.reads.servedBytes, branchReads.reduce((n, e) => n + utf8(textOf(e)), 0));
    const est = estimate(branchReads);
    assert.equal(s.branch.reads.estimatedPlainBytes, est.plain);
    assert.equal(s.branch.reads.estimatedTokensSaved, est.tokens);
    assert.equal(s.wholeSession.reads.estimatedTokensSaved, estimate(allReads).tokens);

    // held: the scopes of the reads after the last compaction on the branch (no refresh here)
    const afterCompaction = branch.slice(branch.findLastIndex((e) => e.type === "compaction") + 1)
      .filter(isRead).map((e) => e.message!.details!.readcache!);
    const expected = new Set(afterCompaction.map((m) => `${m.pathKey} ${m.scopeKey}`));
    assert.deepEqual(new Set(s.held.map((h) => `${h.pathKey} ${h.scope}`)), expected);

    // next read: from the file on disk against the content the model was shown
    for (const h of s.held) {
      const last = afterCompaction.findLast((m) =>
        m.pathKey === h.pathKey && m.scopeKey === h.scope
      )!;
      const now = await Deno.readFile(h.pathKey);
      const lines = new TextDecoder().decode(now).split("\n");
      assert.equal(h.totalLines, last.totalLines);
      if (sha256(now) === last.servedHash) {
        assert.equal(h.next?.mode, h.scope === "full" ? "unchanged" : "unchanged_range", h.path);
        continue;
      }
      const base = new TextDecoder().decode(
        await Deno.readFile(join(w.objects, `sha256-${last.servedHash}.txt`)),
      ).split("\n");
      if (h.scope === "full") assert.equal(h.next?.mode, "diff", h.path);
      else {
        const same = base.slice(h.start - 1, h.end).join("\n") ===
          lines.slice(h.start - 1, h.end).join("\n");
        assert.equal(h.next?.mode, same ? "unchanged_range" : "baseline_fallback", h.path);
      }
    }
    assert.deepEqual(
      s.held.map((h) => `${h.path} ${h.next?.mode}`).sort(),
      [
        "notes.txt diff",
        "src/app.py unchanged",
        "src/app.py unchanged_range",
        "src/util.py unchanged_range",
      ],
    );
    const app = s.held.find((h) => h.path === "src/app.py" && h.scope === "full")!;
    assert.equal(app.next?.bytes, utf8(`[readcache: unchanged, ${app.totalLines} lines]`));
    assert.equal(app.next?.plainBytes, (await Deno.readFile(join(w.work, "src/app.py"))).length);

    // the store: what is on disk
    let objects = 0;
    let bytes = 0;
    for await (const e of Deno.readDir(w.objects)) {
      objects++;
      bytes += (await Deno.stat(join(w.objects, e.name))).size;
    }
    assert.deepEqual(s.store, { path: join(w.work, ".pi/readcache"), objects, bytes });
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("status: plain words, no internal names; read-only; a session file and --cwd", async () => {
  const w = await makeWorld();
  try {
    let r!: Run;
    await assertUnchanged(w, async () => r = await cli(w, ["status", w.readcache], {}, w.root));
    assert.equal(r.code, 0, r.stderr);
    const text = r.stdout;
    assert.ok(text.includes("the whole of src/app.py (81 lines)"), text);
    assert.ok(text.includes("lines 50-60 of src/app.py"), text);
    assert.ok(text.includes("lines 10-14 of src/util.py"), text);
    assert.ok(
      text.includes('next read: a short "unchanged" note (32 bytes instead of 1.6 KB)'),
      text,
    );
    assert.ok(text.includes("next read: only the changes, as a diff"), text);
    assert.ok(text.includes("compacted once"), text);
    for (
      const jargon of [
        "replay window",
        "baseline_fallback",
        "unchanged_range",
        "r:50:60",
        "r:",
        "scope",
      ]
    ) {
      assert.ok(!text.includes(jargon), `"${jargon}" in:\n${text}`);
    }
    assert.ok(!text.includes("\x1b["), "no colour when stdout is not a terminal");

    // the same session from elsewhere, with the project given
    const other = await cli(w, ["status", w.readcache, "--cwd", w.work, "--json"], {}, w.root);
    assert.equal(other.code, 0, other.stderr);
    assert.equal(jsonOf<StatusJson>(other).held.length, 4);

    // --latest follows the modification time, as pi does
    const later = new Date();
    await Deno.utime(w.plain, later, later);
    const plain = jsonOf<StatusJson>(await cli(w, ["status", "--latest", "--json"]));
    assert.equal(plain.sessionFile, w.plain);
    assert.deepEqual(plain.held, [], "pi without readcache: nothing vouched for");
    assert.equal(plain.branch.reads.byMode.plain, undefined);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("status: a store problem is reported with its fix and exits 1", async () => {
  const w = await makeWorld();
  try {
    await Deno.chmod(w.objects, 0o755);
    const elsewhere = join(w.root, "elsewhere");
    await Deno.rename(join(w.work, ".pi"), elsewhere);
    await Deno.symlink(elsewhere, join(w.work, ".pi"));
    const r = await cli(w, ["status", "--latest"]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /problem: .*\.pi is a symbolic link/);
    assert.match(r.stdout, /fix: Remove the link/);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("formatStatusReport (shared with /readcache-status): plain words for every mode", () => {
  const text = formatStatusReport({
    cwd: "/w",
    branchEntries: 3,
    compactions: 2,
    held: [
      { pathKey: "/w/a.ts", scope: "r:5:9", start: 5, end: 9, totalLines: 20 },
      {
        pathKey: "/elsewhere/b.ts",
        scope: "full",
        start: 1,
        end: 1,
        totalLines: 1,
        next: { mode: "baseline_fallback", reason: "newer_view_differs", plainBytes: 10 },
      },
    ],
    inFlight: 1,
    branch: tallyReads([]),
    store: { path: "/w/.pi/readcache", objects: 0, bytes: 0 },
  });
  assert.ok(text.includes("lines 5-9 of a.ts"), text);
  assert.ok(text.includes("the whole of /elsewhere/b.ts (1 line)"), text);
  assert.ok(text.includes("next read: in full again (10 bytes): the model has since been shown"));
  assert.ok(text.includes("compacted 2 times"));
  assert.ok(text.includes("1 read answered in this turn not yet saved in the session"));
  for (const jargon of ["replay", "baseline_fallback", "newer_view", "r:5:9"]) {
    assert.ok(!text.includes(jargon), `"${jargon}" in:\n${text}`);
  }
});

// ---- doctor ---------------------------------------------------------------------------------

interface DoctorJson {
  store: { path: string; exists: boolean; usable: boolean };
  objects: { count: number; bytes: number; intact: number };
  referenced: { count: number };
  unreferenced: { count: number; bytes: number; paths: string[] };
  tmp: { stale: number; recent: number };
  sessions: { dir: string; files: number };
  problems: { path: string; what: string; fix: string }[];
  notes: { path: string; what: string; fix: string }[];
}

/** The hashes referred to by `details.readcache` in the session files (the test's own reading). */
async function referencedHashes(w: World): Promise<Set<string>> {
  const out = new Set<string>();
  for (const f of [w.plain, w.readcache]) {
    for (const e of await rawEntries(f)) {
      const m = e.message?.details?.readcache as
        | { servedHash?: string; baseHash?: string }
        | undefined;
      if (m?.servedHash) out.add(m.servedHash);
      if (m?.baseHash) out.add(m.baseHash);
    }
  }
  return out;
}

async function addObject(w: World, content: string, mtime: Date): Promise<string> {
  const path = join(w.objects, `sha256-${sha256(content)}.txt`);
  await Deno.writeTextFile(path, content, { mode: 0o600 });
  await Deno.utime(path, mtime, mtime);
  return path;
}

Deno.test("doctor: a clean store exits 0 and changes nothing; figures from the disk", async () => {
  const w = await makeWorld();
  try {
    const old = new Date(Date.now() - 3 * HOUR);
    const extra = await addObject(w, "nobody refers to this\n", old);
    let r!: Run;
    await assertUnchanged(w, async () => r = await cli(w, ["doctor", "--json"]));
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const d = jsonOf<DoctorJson>(r);
    const names = [...Deno.readDirSync(w.objects)].map((e) => e.name);
    const refs = await referencedHashes(w);
    assert.equal(d.objects.count, names.length);
    assert.equal(d.objects.intact, names.length);
    assert.equal(
      d.referenced.count,
      names.filter((n) => refs.has(n.slice(7, 71))).length,
    );
    assert.deepEqual(d.unreferenced.paths, [extra]);
    assert.equal(d.sessions.files, 2);
    assert.equal(d.sessions.dir, w.sessions);
    assert.deepEqual(d.problems, []);
    assert.equal(d.notes.length, 1);
    assert.match(d.notes[0].fix, /readcache gc/);

    const text = await cli(w, ["doctor"]);
    assert.equal(text.code, 0);
    assert.match(text.stdout, /no problems found/);
    assert.equal(text.stderr, "", "no progress bar when stderr is not a terminal");
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("doctor: damaged, readable by others, a link, a leftover: exit 1, a fix for each, nothing changed", async () => {
  const w = await makeWorld();
  try {
    const names = [...Deno.readDirSync(w.objects)].map((e) => join(w.objects, e.name)).sort();
    await Deno.writeTextFile(names[0], "tampered\n"); // damaged
    await Deno.chmod(names[1], 0o644); // readable by others
    const link = join(w.objects, `sha256-${"ab".repeat(32)}.txt`);
    await Deno.symlink("/etc/hostname", link);
    const tmp = join(w.work, ".pi/readcache/tmp", `123-${"0".repeat(24)}.tmp`);
    await Deno.writeTextFile(tmp, "half");
    await Deno.utime(tmp, new Date(Date.now() - 2 * HOUR), new Date(Date.now() - 2 * HOUR));
    let r!: Run;
    await assertUnchanged(w, async () => r = await cli(w, ["doctor", "--json"]));
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const d = jsonOf<DoctorJson>(r);
    const byPath = new Map(d.problems.map((p) => [p.path, p]));
    assert.match(byPath.get(names[0])!.what, /damaged/);
    assert.match(byPath.get(names[0])!.fix, /^rm /);
    assert.match(byPath.get(names[1])!.what, /mode 0644/);
    assert.equal(byPath.get(names[1])!.fix, `chmod 600 ${names[1]}`);
    assert.match(byPath.get(link)!.what, /symbolic link \(to \/etc\/hostname\)/);
    assert.equal(d.problems.length, 3);
    assert.equal(d.tmp.stale, 1);
    assert.ok(d.notes.some((n) => /interrupted writes/.test(n.what)));

    const text = await cli(w, ["doctor"]);
    assert.equal(text.code, 1);
    assert.match(text.stdout, /3 problems:/);
    assert.equal(
      text.stdout.split("\n").filter((l) => l.startsWith("    fix: ")).length,
      4,
      text.stdout,
    ); // 3 problems + 1 note
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

// ---- gc ---------------------------------------------------------------------------------------

interface GcJson {
  dryRun: boolean;
  removed: { path: string; bytes: number; why: string }[];
  kept: { objects: number; bytes: number; recent: number };
  overBudget: boolean;
}

Deno.test("gc: --dry-run changes nothing; gc removes unreferenced, damaged and stale, keeps the rest", async () => {
  const w = await makeWorld();
  try {
    const old = new Date(Date.now() - 3 * HOUR);
    const unreferenced = await addObject(w, "nobody refers to this\n", old);
    const recent = await addObject(w, "written a minute ago\n", new Date(Date.now() - 60_000));
    const referenced = [...Deno.readDirSync(w.objects)].map((e) => join(w.objects, e.name))
      .filter((p) => p !== unreferenced && p !== recent).sort();
    await Deno.writeTextFile(referenced[0], "tampered\n");
    await Deno.utime(referenced[0], old, old);
    const stale = join(w.work, ".pi/readcache/tmp", `123-${"0".repeat(24)}.tmp`);
    const fresh = join(w.work, ".pi/readcache/tmp", `124-${"1".repeat(24)}.tmp`);
    await Deno.writeTextFile(stale, "half");
    await Deno.utime(stale, old, old);
    await Deno.writeTextFile(fresh, "being written");

    let dry!: Run;
    await assertUnchanged(w, async () => dry = await cli(w, ["gc", "--dry-run", "--json"]));
    assert.equal(dry.code, 0, dry.stderr);
    const plan = jsonOf<GcJson>(dry);
    assert.equal(plan.dryRun, true);
    const expected = [
      `${referenced[0]} damaged`,
      `${stale} interrupted_write`,
      `${unreferenced} unreferenced`,
    ].sort();
    assert.deepEqual(plan.removed.map((x) => `${x.path} ${x.why}`).sort(), expected);

    const r = await cli(w, ["gc", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(jsonOf<GcJson>(r).removed.map((x) => `${x.path} ${x.why}`).sort(), expected);
    const left = new Set([...Deno.readDirSync(w.objects)].map((e) => join(w.objects, e.name)));
    assert.deepEqual(left, new Set([...referenced.slice(1), recent]));
    assert.deepEqual([...Deno.readDirSync(dirname(fresh))].map((e) => e.name), [
      `124-${"1".repeat(24)}.tmp`,
    ]);
    // nothing else in the project or the sessions moved
    assert.equal(
      await Deno.readTextFile(join(w.work, "notes.txt")),
      await Deno.readTextFile(join(FIXTURES, "work/notes.txt")),
    );

    // a second run has nothing left to do
    assert.deepEqual(jsonOf<GcJson>(await cli(w, ["gc", "--json"])).removed, []);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("gc --max-bytes: keeps the most recently referenced first", async () => {
  const w = await makeWorld();
  try {
    // the newest reference of each object, from the entries' timestamps
    const newest = new Map<string, number>();
    for (const f of [w.plain, w.readcache]) {
      for (const line of (await Deno.readTextFile(f)).trim().split("\n")) {
        const e = JSON.parse(line);
        const m = e.message?.details?.readcache;
        for (const h of [m?.servedHash, m?.baseHash]) {
          if (h) newest.set(h, Math.max(newest.get(h) ?? 0, Date.parse(e.timestamp)));
        }
      }
    }
    const objects = [...Deno.readDirSync(w.objects)].map((e) => {
      const path = join(w.objects, e.name);
      return { path, size: Deno.statSync(path).size, last: newest.get(e.name.slice(7, 71))! };
    }).sort((a, b) => b.last - a.last);
    const budget = objects[0].size + objects[1].size;
    const r = await cli(w, ["gc", "--max-bytes", String(budget), "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const g = jsonOf<GcJson>(r);
    assert.deepEqual(
      g.removed.map((x) => x.path).sort(),
      objects.slice(2).map((o) => o.path).sort(),
    );
    assert.ok(g.removed.every((x) => x.why === "over_max_bytes"));
    assert.equal(g.kept.bytes, budget);

    assert.equal((await cli(w, ["gc", "--max-age", "0"])).code, 2);
    assert.equal((await cli(w, ["gc", "--max-bytes", "lots"])).code, 2);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("gc --max-age: references older than the limit no longer keep a copy", async () => {
  const w = await makeWorld();
  try {
    // the entries before the compaction of the readcache session become 40 days old
    const now = Date.now();
    const lines = (await Deno.readTextFile(w.readcache)).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    const compaction = lines.findIndex((e) => e.type === "compaction");
    lines.forEach((e, i) => {
      if (i > 0 && i < compaction) e.timestamp = new Date(now - 40 * 24 * HOUR).toISOString();
    });
    await Deno.writeTextFile(w.readcache, lines.map((e) => JSON.stringify(e)).join("\n") + "\n");
    const newest = new Map<string, number>();
    for (const e of lines) {
      const m = e.message?.details?.readcache;
      for (const h of [m?.servedHash, m?.baseHash]) {
        if (h) newest.set(h, Math.max(newest.get(h) ?? 0, Date.parse(e.timestamp)));
      }
    }
    const expected = [...Deno.readDirSync(w.objects)].map((e) => e.name)
      .filter((n) => (newest.get(n.slice(7, 71)) ?? 0) < now - 30 * 24 * HOUR)
      .map((n) => join(w.objects, n)).sort();
    assert.ok(expected.length > 0, "the fixture has a copy only referred to before the compaction");
    const r = await cli(w, ["gc", "--max-age", "30", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const g = jsonOf<GcJson>(r);
    assert.deepEqual(g.removed.map((x) => x.path).sort(), expected);
    assert.ok(g.removed.every((x) => x.why === "unreferenced"));
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("gc: never through a link; a linked store removes nothing and exits 1", async () => {
  const w = await makeWorld();
  try {
    const real = join(w.root, "real-objects");
    await Deno.rename(w.objects, real);
    await Deno.symlink(real, w.objects);
    await addObject(w, "nobody refers to this\n", new Date(Date.now() - 3 * HOUR));
    let r!: Run;
    await assertUnchanged(w, async () => r = await cli(w, ["gc"]));
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /objects is a symbolic link, not a directory: gc never works through a link/,
    );
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("gc while pi reads: every read stays correct (a missing base is a full read)", async () => {
  const w = await makeWorld();
  try {
    // many unreferenced objects, so gc is busy for a while
    const old = new Date(Date.now() - 3 * HOUR);
    for (let i = 0; i < 300; i++) await addObject(w, `filler ${i}\n`.repeat(50), old);
    const store = FsObjectStore.forCwd(w.work);
    const entries = parseSessionJsonl(await Deno.readTextFile(w.readcache));
    const deps = { cwd: w.work, home: "/nonexistent-home" };
    const all = new PiBranchConverter((a) => resolveCall(a, deps)).branch(entries);
    const branch = activeBranch(all, all.at(-1)!.id);
    const notes = await Deno.readTextFile(join(w.work, "notes.txt"));
    const child = new Deno.Command(Deno.execPath(), {
      args: cliArgs(["gc", "--max-bytes", "0"]),
      cwd: w.work,
      env: { PI_CODING_AGENT_DIR: w.agent, PI_CODING_AGENT_SESSION_DIR: "", INIT_CWD: "" },
      stdout: "null",
      stderr: "inherit",
    }).spawn();
    let running = true;
    const status = child.status.then((s) => (running = false, s));
    let reads = 0;
    let during = 0;
    while (running || reads < 5) {
      // as pi does between two reads: the event loop runs (a read alone never waits on it)
      await new Promise((r) => setTimeout(r, 0));
      const knowledge = new BranchKnowledge();
      knowledge.sync(branch);
      const served = await serveRead({ path: "notes.txt" }, knowledge, { ...deps, store });
      const d = served.decision;
      reads++;
      if (running) during++;
      // a diff while the base is there, the whole file once gc removed it; never anything else
      if (d.mode === "diff") {
        assert.match(d.text, /^\[readcache: 2 lines changed of 21\]\n--- a\/notes.txt/);
      } else {
        assert.equal(d.mode, "baseline_fallback");
        assert.equal(d.text, notes);
      }
      for (const e of Deno.readDirSync(w.objects)) {
        const hash = e.name.slice(7, 71);
        const bytes = await store.get(hash);
        if (bytes !== undefined) assert.equal(sha256(bytes), hash);
      }
    }
    const s = await status;
    assert.equal(s.code, 0, "gc failed (its message is above)");
    assert.ok(during >= 1, "reads ran while gc was running");
    // after gc: the base is gone, and the copy the reads stored just now was kept (written < 1 h ago)
    const after = new Set([...Deno.readDirSync(w.objects)].map((e) => e.name.slice(7, 71)));
    assert.ok(after.has(sha256(notes)), "the copy stored during gc survives it");
    const knowledge = new BranchKnowledge();
    knowledge.sync(branch);
    const last = await serveRead({ path: "notes.txt" }, knowledge, { ...deps, store });
    assert.equal(last.decision.mode, "baseline_fallback");
    assert.equal(last.decision.text, notes);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

// ---- savings ------------------------------------------------------------------------------------

interface SavingsJson {
  sessions: {
    file: string;
    withReadcache: boolean;
    reads: number;
    piBytes: number;
    readcacheBytes: number;
    byMode: Record<string, number>;
    unknown: { reads: number; bytes: number };
    checked: { reads: number; matched: number };
    estimate?: "replay" | "session";
    notJudged?: Record<string, { reads: number; bytes: number }>;
    safety?: { checked: number; violations: number };
  }[];
  totals: {
    sessions: number;
    reads: number;
    piBytes: number;
    readcacheBytes: number;
    estimatedTokensSaved: number;
  };
  topFiles: {
    path: string;
    reads: number;
    repeats: number;
    wastedBytes: number;
    savedBytes: number;
  }[];
}

Deno.test("savings: measured and replayed figures equal the test's own sums; read-only", async () => {
  const w = await makeWorld();
  try {
    let r!: Run;
    await assertUnchanged(w, async () => r = await cli(w, ["savings", "--json"]));
    assert.equal(r.code, 0, r.stderr);
    const s = jsonOf<SavingsJson>(r);
    assert.equal(s.totals.sessions, 2);
    const plainOut = s.sessions.find((x) => x.file === w.plain)!;
    const rcOut = s.sessions.find((x) => x.file === w.readcache)!;

    // with readcache: what it sent is the text of its read results; pi's side is the estimate
    const rcReads = (await rawEntries(w.readcache)).filter(isRead);
    assert.equal(rcOut.withReadcache, true);
    assert.equal(rcOut.reads, rcReads.length);
    assert.equal(rcOut.readcacheBytes, rcReads.reduce((n, e) => n + utf8(textOf(e)), 0));
    assert.equal(rcOut.piBytes, estimate(rcReads).plain);

    // without: pi's side is measured; readcache's side, worked out by hand for this session:
    // p1 full, p2 full, p3 unchanged, p4 unchanged in lines 50-60, p5 the same diff readcache sent
    // in the other session for the same edit, p6 a range of a file never read whole (unknown),
    // compaction, p7 full again, p8 unchanged
    const plainReads = (await rawEntries(w.plain)).filter(isRead);
    const texts = plainReads.map(textOf);
    const diffText = textOf(rcReads.find((e) => e.message?.details?.readcache?.mode === "diff")!);
    const appLines = texts[0].split("\n").length;
    const expected = utf8(texts[0]) + utf8(texts[1]) +
      utf8(`[readcache: unchanged, ${appLines} lines]`) +
      utf8(`[readcache: unchanged in lines 50-60 of ${appLines}]`) + utf8(diffText) +
      utf8(texts[5]) + utf8(texts[6]) + utf8(`[readcache: unchanged, ${appLines} lines]`);
    assert.equal(plainOut.withReadcache, false);
    assert.equal(plainOut.reads, 8);
    assert.equal(plainOut.piBytes, texts.reduce((n, t) => n + utf8(t), 0));
    assert.equal(plainOut.readcacheBytes, expected);
    // --no-replay: the read decision over the session's own reads; p6 cannot be known
    assert.equal(plainOut.estimate, "session");
    assert.deepEqual(plainOut.unknown, { reads: 1, bytes: utf8(texts[5]) });
    assert.deepEqual(plainOut.checked, { reads: 3, matched: 3 });
    assert.deepEqual(plainOut.byMode, {
      full: 3,
      unchanged: 2,
      unchanged_range: 1,
      diff: 1,
      baseline_fallback: 0,
      partial: 0,
      plain: 1,
    });

    assert.equal(s.totals.reads, rcReads.length + plainReads.length);
    assert.equal(s.totals.piBytes, plainOut.piBytes + rcOut.piBytes);
    assert.equal(
      s.totals.estimatedTokensSaved,
      Math.round((s.totals.piBytes - s.totals.readcacheBytes) / 4),
    );
    // repeats by file: reads of src/app.py in both sessions, minus the first in each
    const app = s.topFiles.find((f) => f.path.endsWith("/src/app.py"))!;
    const countApp = async (f: string) => {
      const es = await rawEntries(f);
      const calls = new Set(
        es.flatMap((e) =>
          ((e.message?.content ?? []) as unknown as {
            type: string;
            id?: string;
            arguments?: { path?: string };
          }[])
            .filter((c) => c.type === "toolCall" && c.arguments?.path === "src/app.py").map((c) =>
              c.id
            )
        ),
      );
      return es.filter((e) => isRead(e) && calls.has(e.message!.toolCallId)).length;
    };
    const a1 = await countApp(w.plain);
    const a2 = await countApp(w.readcache);
    assert.equal(app.reads, a1 + a2);
    assert.equal(app.repeats, a1 + a2 - 2);
    assert.equal(s.topFiles[0].path, app.path, "src/app.py wastes the most");
    // wasted: p3, p4 and p8 would have been the short notes
    assert.equal(
      app.wastedBytes,
      utf8(texts[2]) + utf8(texts[3]) + utf8(texts[7]) -
        2 * utf8(`[readcache: unchanged, ${appLines} lines]`) -
        utf8(`[readcache: unchanged in lines 50-60 of ${appLines}]`),
    );

    // the terminal table: one bar per session, no colour when piped
    const text = await cli(w, ["savings", w.sessions]);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stdout.match(/\u2588/g) === null, false);
    assert.equal(text.stdout.split("\n").filter((l) => /% less$/.test(l)).length, 2, text.stdout);
    assert.match(text.stdout, /cannot be known: 1 read \(180 bytes\)/);
    assert.match(
      text.stdout,
      /read results only \(a lower figure than the replay through pi\), because --no-replay was given/,
    );
    assert.ok(!text.stdout.includes("\x1b["));
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

/** Checks that `xml` is well-formed: tags nest and close, attributes are quoted. */
function assertWellFormed(xml: string): { tags: string[] } {
  const stack: string[] = [];
  const tags: string[] = [];
  const re =
    /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|<|&(?!amp;|lt;|gt;|quot;|#39;)/g;
  for (const m of xml.matchAll(re)) {
    if (m[2] === undefined) {
      throw new Error(`stray '${m[0]}' at ${m.index}: ${xml.slice(m.index!, m.index! + 40)}`);
    }
    if (m[1] === "/") {
      const open = stack.pop();
      if (open !== m[2]) throw new Error(`</${m[2]}> closes <${open}>`);
    } else {
      tags.push(m[2]);
      if (m[4] !== "/") stack.push(m[2]);
    }
  }
  assert.deepEqual(stack, [], "unclosed tags");
  return { tags };
}

Deno.test("savings --html: a self-contained page whose SVG is well-formed, one bar pair per session", async () => {
  const w = await makeWorld();
  try {
    const page = join(w.root, "savings.html");
    const r = await cli(w, ["savings", "--html", page]);
    assert.equal(r.code, 0, r.stderr);
    const html = await Deno.readTextFile(page);
    assert.ok(!/<script|src=|href=/i.test(html), "no script, no external resource");
    const svg = html.slice(html.indexOf("<svg"), html.indexOf("</svg>") + 6);
    const { tags } = assertWellFormed(svg);
    assert.equal(tags[0], "svg");
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.equal(tags.filter((t) => t === "rect").length, 4);
    for (const m of svg.matchAll(/<rect [^>]*width="(\d+)" height="(\d+)"/g)) {
      assert.ok(Number(m[1]) >= 0 && Number(m[2]) > 0);
    }
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

// ---- usage, help, colour ----------------------------------------------------------------------

Deno.test("exit codes: usage errors 2, help 0 with an example for every command", async () => {
  const w = await makeWorld();
  try {
    const runs = await Promise.all([
      cli(w, ["status", "--bogus"]),
      cli(w, ["status", w.plain, "--latest"]),
      cli(w, ["status", join(w.root, "missing.jsonl")]),
      cli(w, ["status", join(w.work, "notes.txt")]),
      cli(w, ["status", "--cwd", join(w.root, "nope")]),
      cli(w, ["nope"]),
      cli(w, ["savings", join(w.root, "missing")]),
      cli(w, ["savings", "--top", "0"]),
      cli(w, ["status", "--bogus-too"]),
      cli(w, ["doctor", "--sessions", join(w.root, "nope")]),
      cli(w, ["gc", "--sessions", join(w.root, "nope")]),
      cli(w, ["status", "--latest", "--sessions", join(w.root, "nope")]),
      cli(w, ["savings", "--html", join(w.root, "nope", "page.html")]),
      cli(w, ["gc", "--max-age", "0"]),
      cli(w, ["status", w.work]), // a directory
      cli(w, ["savings", w.sessions, join(w.work, "notes.txt")]),
      cli(w, ["gc", "--claude", "--opencode"]), // one agent's store at a time
      cli(w, ["doctor", "--claude", "--opencode"]),
    ]);
    for (const [i, r] of runs.entries()) {
      assert.equal(r.code, 2, `run ${i}: ${r.stdout}${r.stderr}`);
      // every message says what to do
      assert.match(r.stderr, WHAT_TO_DO, `run ${i}: ${r.stderr}`);
    }
    assert.match(runs[1].stderr, /either a session file or --latest/);
    assert.match(
      runs[2].stderr,
      /no such file\. Pass the path of a session file \(pi's or Claude Code's \.jsonl/,
    );
    assert.match(runs[3].stderr, /is not a pi session file/);
    assert.match(runs[9].stderr, /--sessions\) does not exist/);
    // nothing found is an answer, not a usage error: 0, in words on stdout, with what to pass
    const none = await cli(w, ["status", "--latest"], {}, w.root); // no session of that directory
    assert.equal(none.code, 0, none.stderr);
    assert.match(none.stdout, /No pi session of .* in .*--/);
    assert.match(none.stdout, /pass that directory with --cwd DIR/);
    // with --json, stdout is JSON either way: nothing found, and a usage error (stderr says it too)
    const noneJson = await cli(w, ["status", "--latest", "--json"], {}, w.root);
    assert.equal(noneJson.code, 0, noneJson.stderr);
    const found = JSON.parse(noneJson.stdout);
    assert.equal(found.nothingFound, true);
    assert.match(found.message, /No pi session of .*--cwd DIR/);
    const badJson = await cli(w, ["status", join(w.work, "nope.jsonl"), "--json"]);
    assert.equal(badJson.code, 2);
    assert.match(badJson.stderr, /no such file/);
    assert.equal(JSON.parse(badJson.stdout).error.exitCode, 2);
    // help is not a usage error: no arguments, `help` and `help COMMAND` print it and exit 0
    for (const args of [[], ["help"], ["help", "status"]]) {
      const h = await cli(w, args);
      assert.equal(h.code, 0, `readcache ${args.join(" ")}: ${h.stderr}`);
      assert.match(h.stdout, args.length === 2 ? /Usage: readcache status/ : /Usage: readcache /);
    }
    for (const cmd of ["status", "doctor", "gc", "savings"]) {
      const h = await cli(w, [cmd, "--help"]);
      assert.equal(h.code, 0);
      assert.match(h.stdout, new RegExp(`Examples:\\n  \\$ readcache ${cmd}`));
      assert.match(h.stdout, /--json/);
      // the exit codes, documented for every command
      assert.match(h.stdout, /Exit codes, the same for every command: 0 it did its job, "nothing/);
      assert.match(h.stdout, /2 the command line was wrong[\s\S]*is missing, cannot be read/);
      assert.match(h.stdout, /1 it found problems and\s+reports each with its fix/);
      assert.match(h.stdout, /Every command takes --json\./);
    }
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

/** What every error message ends with: what to do. */
const WHAT_TO_DO =
  /\b(Pass|pass|Run|run|Make|make|give|Give|add --help|fix|chmod|leave --sessions out)\b/;

Deno.test("exit codes: a session file named on the command line, the same for status and savings", async () => {
  const w = await makeWorld();
  try {
    const notSession = join(w.work, "notes.txt");
    const missing = join(w.root, "missing.jsonl");
    const emptyFile = join(w.root, "empty.jsonl");
    await Deno.writeTextFile(emptyFile, "");
    // a file that exists but cannot be read, even by root: the kernel refuses to read it at 0
    const unreadable = "/proc/self/mem";
    const unreadableToUser = join(w.root, "locked.jsonl");
    await Deno.copyFile(w.readcache, unreadableToUser);
    await Deno.chmod(unreadableToUser, 0o000);
    const bad = [notSession, missing, emptyFile, unreadable];
    if (Deno.uid() !== 0) bad.push(unreadableToUser); // root reads it anyway
    for (const file of bad) {
      const status = await cli(w, ["status", file]);
      const savings = await cli(w, ["savings", file]);
      const savingsJson = await cli(w, ["savings", file, "--json"]);
      assert.equal(status.code, 2, `status ${file}: ${status.stderr}`);
      assert.equal(savings.code, 2, `savings ${file}: ${savings.stdout}${savings.stderr}`);
      assert.equal(savingsJson.code, 2, `savings --json ${file}`);
      assert.equal(savings.stdout, "", "nothing printed but the error");
      assert.match(status.stderr, WHAT_TO_DO, status.stderr);
      assert.match(savings.stderr, WHAT_TO_DO, savings.stderr);
      if (file !== missing) {
        // the same reason in both, said the same way (a missing path may be a file or a directory
        // for savings, which says so)
        const why = (t: string) => t.replace(/^readcache: /, "").split(". ")[0];
        assert.equal(why(savings.stderr), why(status.stderr), file);
      }
    }
    const mem = await cli(w, ["savings", unreadable]);
    assert.match(mem.stderr, /Cannot read the session file \/proc\/self\/mem: /);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("exit codes: files found in a directory: not sessions skipped, unreadable ones a problem (1)", async () => {
  const w = await makeWorld();
  try {
    // two files in pi's sessions directory that are not pi sessions: skipped, exit 0
    await Deno.writeTextFile(join(w.sessions, "notes.jsonl"), "not json\n");
    await Deno.writeTextFile(join(w.sessions, "other.jsonl"), '{"type":"other"}\n');
    const r = await cli(w, ["savings"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /readcache savings: 2 session files in /);
    assert.match(r.stdout, /\(2 files skipped: not pi session files\)/);
    const one = await cli(w, ["savings", join(w.sessions, "..")], {});
    assert.equal(one.code, 0);
    await Deno.remove(join(w.sessions, "other.jsonl"));
    assert.match((await cli(w, ["savings"])).stdout, /\(1 file skipped: not a pi session file\)/);

    // a directory named on the command line with no session in it: nothing to measure, 2 (as
    // status says of a project without sessions), with what to pass
    const empty = join(w.root, "empty");
    await Deno.mkdir(empty);
    const none = await cli(w, ["savings", empty]);
    assert.equal(none.code, 0, none.stdout + none.stderr);
    assert.match(none.stdout, /no pi session files found\. Pass session files or directories/);
    const noneJson = await cli(w, ["savings", empty, "--json"]);
    assert.equal(noneJson.code, 0);
    const noStatus = await cli(w, ["status", "--latest", "--sessions", empty]);
    assert.equal(noStatus.code, none.code, "status and savings agree on 'no sessions'");

    // pi's sessions directory missing (pi never ran): nothing found, 0, with what to do
    const gone = await cli(w, ["savings"], { PI_CODING_AGENT_DIR: join(w.root, "no-agent") });
    assert.equal(gone.code, 0);
    assert.match(gone.stdout, /No pi sessions directory at .*\. Pass session files/);

    // a session file found in a directory that cannot be read: a problem (1), the others counted;
    // doctor says so with a fix, gc keeps every copy and exits 1. Root reads any file: not here.
    if (Deno.uid() !== 0) {
      const locked = join(w.sessions, "2026-11-23T15-09-00-000Z_locked.jsonl");
      await Deno.copyFile(w.readcache, locked);
      await Deno.chmod(locked, 0o000);
      const s = await cli(w, ["savings"]);
      assert.equal(s.code, 1, s.stdout + s.stderr);
      assert.match(s.stdout, /readcache savings: 2 session files in /);
      assert.match(
        s.stdout,
        /1 problem:\n {2}.*locked\.jsonl cannot be read \(permission denied\)/,
      );
      assert.match(s.stdout, /fix: chmod u\+r /);
      const d = await cli(w, ["doctor"]);
      assert.equal(d.code, 1, d.stdout);
      assert.match(d.stdout, /locked\.jsonl is a session file that cannot be read/);
      await addObject(w, "nobody refers to this\n", new Date(Date.now() - 3 * HOUR));
      const objects = [...Deno.readDirSync(w.objects)].length;
      const g = await cli(w, ["gc"]);
      assert.equal(g.code, 1, g.stdout);
      assert.match(
        g.stdout,
        /so the copies that file refers to cannot be known: every stored copy is kept/,
      );
      assert.equal([...Deno.readDirSync(w.objects)].length, objects, "gc removed nothing");
    }
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("status --latest outside any project with sessions: says where it looked, suggests --cwd", async () => {
  const w = await makeWorld();
  try {
    const elsewhere = join(w.root, "checkout");
    await Deno.mkdir(elsewhere);
    const r = await cli(w, ["status", "--latest"], {}, elsewhere);
    assert.equal(r.code, 0);
    assert.equal(
      r.stdout.trim(),
      `readcache: No pi session of ${elsewhere} in ${
        join(w.agent, "sessions", `--${elsewhere.slice(1).replaceAll("/", "-")}--`)
      }. Run readcache in the project directory pi ran in, or pass that directory with --cwd DIR ` +
        `(pi's newest session is of ${w.work}: readcache status --cwd ${w.work}), or pass ` +
        "--sessions DIR when pi keeps its sessions elsewhere, or pass a session file.",
    );
    // and the suggestion works
    const ok = await cli(w, ["status", "--cwd", w.work], {}, elsewhere);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, new RegExp(`session: ${w.readcache}`));
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("colour only on a terminal, never with NO_COLOR", async () => {
  const script = await commandWorks("script");
  if (!script) return; // util-linux `script` gives the child a terminal; without it, nothing to check
  const w = await makeWorld();
  try {
    const run = async (noColor: boolean) => {
      const cmd = [Deno.execPath(), ...cliArgs(["doctor"])].map((a) => `'${a}'`).join(" ");
      const out = await new Deno.Command("script", {
        args: ["-qec", cmd, "/dev/null"],
        cwd: w.work,
        env: {
          PI_CODING_AGENT_DIR: w.agent,
          INIT_CWD: "",
          ...(noColor ? { NO_COLOR: "1" } : { NO_COLOR: "" }),
        },
        stdout: "piped",
        stderr: "piped",
      }).output();
      return new TextDecoder().decode(out.stdout);
    };
    const sgr = new RegExp(String.raw`\u001b\[[0-9;]*m`); // a colour or weight
    const tty = await run(false);
    assert.ok(tty.includes("\x1b[1mreadcache doctor"), JSON.stringify(tty));
    assert.match(tty, /\r\[#+\.*\] \d+\/4 objects re-hashed/, "the progress bar on a terminal");
    const noColor = await run(true);
    assert.ok(noColor.includes("readcache doctor"), noColor);
    assert.ok(!sgr.test(noColor), JSON.stringify(noColor));
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("npm launcher (cli/readcache.mjs under Node): arguments, output and exit codes pass through", async () => {
  const node = await commandWorks("node");
  if (!node) return; // no Node here: the launcher is for machines that have it
  const w = await makeWorld();
  try {
    const run = async (args: string[]) => {
      const out = await new Deno.Command("node", {
        args: [join(REPO, "cli/readcache.mjs"), ...args],
        cwd: w.work,
        env: {
          PI_CODING_AGENT_DIR: w.agent,
          PI_CODING_AGENT_SESSION_DIR: "",
          INIT_CWD: "",
          READCACHE_DENO: Deno.execPath(),
        },
        stdout: "piped",
        stderr: "piped",
      }).output();
      return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
    };
    const version = await run(["--version"]);
    assert.deepEqual(version, { code: 0, stdout: "0.1.0\n" });
    assert.equal((await run(["status", "--bogus"])).code, 2);
    const status = await run(["status", "--latest", "--json"]);
    assert.equal(status.code, 0);
    assert.equal(jsonOf<StatusJson>({ ...status, stderr: "" }).sessionFile, w.readcache);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

// ---- a session made by /fork, and one written by pi-readcache 0.2 ------------------------------

/** The scopes the model holds: reads after the last compaction on the branch, less refreshes. */
function heldScopes(branch: RawEntry[]): Set<string> {
  const held = new Map<string, string>();
  for (const e of branch.slice(branch.findLastIndex((e) => e.type === "compaction") + 1)) {
    const m = isRead(e) ? e.message?.details?.readcache : undefined;
    if (m) held.set(`${m.pathKey} ${m.scopeKey}`, m.pathKey);
    if (e.type === "custom" && e.customType === "pi-readcache" && e.data?.kind === "invalidate") {
      for (const [key, path] of held) {
        if (
          path === e.data.pathKey &&
          (e.data.scopeKey === "full" || key === `${path} ${e.data.scopeKey}`)
        ) held.delete(key);
      }
    }
  }
  return new Set(held.keys());
}

/** byMode of `savings --json` without the zero counts. */
const nonZero = (m: Record<string, number>) =>
  Object.fromEntries(Object.entries(m).filter(([, n]) => n !== 0));

Deno.test("fork: a session made by pi's /fork is read from its own file only; status and savings from the JSONL", async () => {
  const w = await makeWorld();
  try {
    const fork = await placeSession(
      w,
      "fork.jsonl",
      SESSION_FILES["fork.jsonl"],
      new Date(Date.now() - HOUR / 2),
    );
    const entries = await rawEntries(fork);
    const body = entries.filter((e) => e.type !== "session");
    const parentBody = (await rawEntries(w.readcache)).filter((e) => e.type !== "session");

    // what pi wrote: the header names the original; the copied entries are the original's
    assert.equal(entries[0].type, "session");
    assert.equal(entries[0].parentSession, w.readcache);
    const parentById = new Map(parentBody.map((e) => [e.id, e]));
    const copied = body.filter((e) => parentById.has(e.id));
    assert.ok(copied.length > 0 && copied.length < body.length, "a copied branch, then its own");
    assert.deepEqual(body.slice(0, copied.length), copied, "the copy comes first");
    for (const e of copied) assert.deepEqual(e, parentById.get(e.id));
    const forkReads = body.filter(isRead);
    const ownReads = body.slice(copied.length).filter(isRead);
    const parentReads = parentBody.filter(isRead);
    assert.ok(ownReads.length > 0, "reads made in the fork");
    assert.ok(
      parentReads.some((e) => !copied.includes(parentById.get(e.id)!)) &&
        parentReads.length !== forkReads.length,
      "reads of the original the fork never saw",
    );

    let r!: Run;
    await assertUnchanged(w, async () => r = await cli(w, ["status", fork, "--json"]));
    assert.equal(r.code, 0, r.stderr);
    const s = jsonOf<StatusJson>(r);
    assert.equal(s.sessionFile, fork);
    assert.equal(s.cwd, w.work);
    const branch = branchOf(body);
    assert.equal(s.leafId, body.at(-1)!.id);
    assert.equal(s.wholeSession.entries, body.length, "the fork's entries, not the original's");
    assert.equal(s.branch.entries, branch.length);
    assert.equal(s.branch.compactions, 1);
    assert.equal(s.wholeSession.reads.reads, forkReads.length);
    assert.deepEqual(nonZero(s.wholeSession.reads.byMode), countModes(forkReads));
    assert.deepEqual(nonZero(s.branch.reads.byMode), countModes(branch.filter(isRead)));
    assert.equal(s.branch.reads.servedBytes, forkReads.reduce((n, e) => n + utf8(textOf(e)), 0));
    assert.equal(s.branch.reads.estimatedPlainBytes, estimate(branch.filter(isRead)).plain);
    assert.equal(s.branch.reads.estimatedTokensSaved, estimate(branch.filter(isRead)).tokens);
    const held = new Set(s.held.map((h) => `${h.pathKey} ${h.scope}`));
    assert.deepEqual(held, heldScopes(branch));
    // lines 50-60 of src/app.py were read again only in the original, after the fork point
    assert.ok(!held.has(`${join(w.work, "src/app.py")} r:50:60`), [...held].join("\n"));
    const parent = jsonOf<StatusJson>(await cli(w, ["status", w.readcache, "--json"]));
    assert.ok(parent.held.some((h) => h.path === "src/app.py" && h.scope === "r:50:60"));
    assert.equal(parent.wholeSession.reads.reads, parentReads.length);

    // --latest: the fork is the newest session of the project
    const latest = jsonOf<StatusJson>(await cli(w, ["status", "--latest", "--json"]));
    assert.equal(latest.sessionFile, fork);

    // savings over the fork alone: its reads, once
    await assertUnchanged(w, async () => r = await cli(w, ["savings", fork, "--json"]));
    assert.equal(r.code, 0, r.stderr);
    const sv = jsonOf<SavingsJson>(r);
    assert.equal(sv.totals.sessions, 1);
    assert.equal(sv.sessions[0].file, fork);
    assert.equal(sv.sessions[0].withReadcache, true);
    assert.equal(sv.sessions[0].reads, forkReads.length);
    assert.deepEqual(nonZero(sv.sessions[0].byMode), countModes(forkReads));
    assert.equal(sv.sessions[0].readcacheBytes, s.branch.reads.servedBytes);
    assert.equal(sv.sessions[0].piBytes, estimate(forkReads).plain);
    assert.equal(sv.totals.reads, forkReads.length);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("pi-readcache 0.2 metadata: counts like ours, the extra debug field ignored, its refreshes honoured", async () => {
  const w = await makeWorld();
  try {
    const legacy = await placeSession(
      w,
      "legacy.jsonl",
      SESSION_FILES["legacy.jsonl"],
      new Date(Date.now() - HOUR / 2),
    );
    const body = (await rawEntries(legacy)).filter((e) => e.type !== "session");
    const ours = (await rawEntries(w.readcache)).filter((e) => e.type !== "session");
    const reads = body.filter(isRead);
    assert.ok(reads.length > 0);
    assert.ok(reads.every((e) => typeof e.message?.details?.readcache?.debug === "object"));
    const refreshes = body.filter((e) => e.type === "custom" && e.customType === "pi-readcache");
    assert.equal(refreshes.length, 2);
    // without debug, the read results are ours byte for byte
    const strip = (e: RawEntry) => {
      const c = structuredClone(e);
      delete c.message?.details?.readcache?.debug;
      return c;
    };
    assert.deepEqual(reads.map(strip), ours.filter(isRead));

    let r!: Run;
    await assertUnchanged(w, async () => r = await cli(w, ["status", legacy, "--json"]));
    assert.equal(r.code, 0, r.stderr);
    const s = jsonOf<StatusJson>(r);
    const branch = branchOf(body);
    assert.equal(s.sessionFile, legacy);
    assert.equal(s.leafId, refreshes.at(-1)!.id);
    assert.equal(s.wholeSession.entries, body.length);
    assert.equal(s.branch.entries, branch.length);
    assert.equal(s.wholeSession.reads.reads, reads.length);
    assert.deepEqual(nonZero(s.wholeSession.reads.byMode), countModes(reads));
    assert.deepEqual(nonZero(s.branch.reads.byMode), countModes(branch.filter(isRead)));
    assert.equal(s.branch.reads.estimatedPlainBytes, estimate(branch.filter(isRead)).plain);
    assert.equal(s.wholeSession.reads.estimatedTokensSaved, estimate(reads).tokens);
    // the same figures as the session our extension wrote
    const o = jsonOf<StatusJson>(await cli(w, ["status", w.readcache, "--json"]));
    assert.deepEqual(s.branch.reads, o.branch.reads);
    assert.deepEqual(s.wholeSession.reads, o.wholeSession.reads);
    // held: ours less the refreshed scopes (all of notes.txt, lines 50-60 of src/app.py)
    const held = new Set(s.held.map((h) => `${h.pathKey} ${h.scope}`));
    assert.deepEqual(held, heldScopes(branch));
    assert.deepEqual(
      s.held.map((h) => `${h.path} ${h.scope}`).sort(),
      ["src/app.py full", "src/util.py r:10:14"],
    );
    assert.equal(o.held.length, 4);

    // savings: the same as for ours, and the test's own sums
    await assertUnchanged(
      w,
      async () => r = await cli(w, ["savings", legacy, w.readcache, "--json"]),
    );
    assert.equal(r.code, 0, r.stderr);
    const sv = jsonOf<SavingsJson>(r);
    assert.equal(sv.totals.sessions, 2);
    const l = sv.sessions.find((x) => x.file === legacy)!;
    const m = sv.sessions.find((x) => x.file === w.readcache)!;
    assert.equal(l.withReadcache, true);
    assert.equal(l.reads, reads.length);
    assert.deepEqual(nonZero(l.byMode), countModes(reads));
    assert.equal(l.readcacheBytes, reads.reduce((n, e) => n + utf8(textOf(e)), 0));
    assert.equal(l.piBytes, estimate(reads).plain);
    assert.deepEqual({ ...l, file: "" }, { ...m, file: "" });
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

// ---- a file the model wrote, then read back ----------------------------------------------------

/**
 * A session in which the model writes `path` with pi's `write` tool and then reads it back, the
 * read answered by the read service from the branch so far, as the extension answers it.
 */
async function writeThenReadSession(
  w: World,
  path: string,
  content: string,
): Promise<{ file: string; readText: string }> {
  await Deno.mkdir(dirname(join(w.work, path)), { recursive: true });
  await Deno.writeTextFile(join(w.work, path), content); // what pi's write tool does
  const t = (i: number) => new Date(Date.parse("2026-11-23T16:00:00.000Z") + i * 1000);
  const entries: Record<string, unknown>[] = [];
  const add = (e: Record<string, unknown>) => {
    const i = entries.length;
    entries.push({
      ...e,
      id: `e${i}`,
      parentId: i === 0 ? null : `e${i - 1}`,
      timestamp: t(i).toISOString(),
    });
  };
  const assistant = (content: unknown[]) =>
    add({ type: "message", message: { role: "assistant", content, stopReason: "toolUse" } });
  add({ type: "message", message: { role: "user", content: [{ type: "text", text: "write" }] } });
  assistant([{ type: "toolCall", id: "call_w1", name: "write", arguments: { path, content } }]);
  add({
    type: "message",
    message: {
      role: "toolResult",
      toolCallId: "call_w1",
      toolName: "write",
      content: [{ type: "text", text: `Successfully wrote ${content.length} bytes to ${path}` }],
      isError: false,
    },
  });
  assistant([{ type: "toolCall", id: "call_r1", name: "read", arguments: { path } }]);
  // the extension's answer: the read service over the branch so far
  const deps = { cwd: w.work, home: "/nonexistent-home" };
  const converted = new PiBranchConverter(callResolvers(deps)).branch(
    parseSessionJsonl(entries.map((e) => JSON.stringify(e)).join("\n")),
  );
  const knowledge = new BranchKnowledge();
  knowledge.sync(activeBranch(converted, converted.at(-1)!.id));
  const served = await serveRead({ path }, knowledge, {
    ...deps,
    store: FsObjectStore.forCwd(w.work),
  });
  add({
    type: "message",
    message: {
      role: "toolResult",
      toolCallId: "call_r1",
      toolName: "read",
      content: [{ type: "text", text: served.decision.text }],
      details: served.decision.details,
      isError: false,
    },
  });
  const header = {
    type: "session",
    version: 3,
    id: "01a20900-0000-7000-8000-00000000a001",
    timestamp: t(0).toISOString(),
    cwd: w.work,
  };
  const file = join(
    w.sessions,
    "2026-11-23T16-00-00-000Z_01a20900-0000-7000-8000-00000000a001.jsonl",
  );
  await Deno.writeTextFile(
    file,
    [header, ...entries].map((e) => JSON.stringify(e)).join("\n") + "\n",
  );
  return { file, readText: served.decision.text };
}

Deno.test("savings: a file the model wrote and read back unchanged counts its saved bytes (issue #20)", async () => {
  const w = await makeWorld();
  try {
    const content = Array.from({ length: 40 }, (_, i) => `def f${i}():\n    return ${i}\n`).join(
      "",
    );
    const { file, readText } = await writeThenReadSession(w, "src/new.py", content);
    const lines = content.split("\n").length;
    assert.equal(readText, `[readcache: unchanged, ${lines} lines]`, "the extension's answer");

    // status lists it as held: the model holds what it wrote
    const st = jsonOf<StatusJson>(await cli(w, ["status", file, "--json"]));
    assert.deepEqual(st.held.map((h) => `${h.path} ${h.scope}`), ["src/new.py full"]);

    // savings: pi's side is lines times the bytes per line of what the model wrote (here: all of
    // it, as pi's read of the whole file would have sent it); readcache's is the short note
    let r!: Run;
    await assertUnchanged(w, async () => r = await cli(w, ["savings", file, "--json"]));
    assert.equal(r.code, 0, r.stderr);
    const s = jsonOf<SavingsJson>(r);
    const sent = utf8(readText);
    const plain = Math.round((utf8(content) / lines) * lines);
    assert.equal(plain, utf8(content));
    assert.equal(s.sessions[0].withReadcache, true);
    assert.deepEqual(nonZero(s.sessions[0].byMode), { unchanged: 1 });
    assert.equal(s.sessions[0].readcacheBytes, sent);
    assert.equal(s.sessions[0].piBytes, plain);
    const f = s.topFiles.find((x) => x.path === join(w.work, "src/new.py"))!;
    assert.equal(f.savedBytes, plain - sent);
    assert.ok(f.savedBytes > 0);

    const text = await cli(w, ["savings", file]);
    const row = text.stdout.split("\n").find((l) => l.includes("/src/new.py"))!;
    assert.match(row, new RegExp(`\\s${bytesInWords(plain - sent).replace(".", "\\.")}$`), row);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

// ---- plurals and wording: every line of the four commands, for one and for many -------------

/** Countable nouns of the CLI's output, singular and plural (longest first). */
const NOUNS: [string, string][] = [
  ["session file", "session files"],
  ["stored copy", "stored copies"],
  ["other file", "other files"],
  ["other entry", "other entries"],
  ["replayed answer", "replayed answers"],
  ["temporary file", "temporary files"],
  ["pi session", "pi sessions"],
  ["read", "reads"],
  ["session", "sessions"],
  ["file", "files"],
  ["copy", "copies"],
  ["problem", "problems"],
  ["token", "tokens"],
  ["entry", "entries"],
  ["line", "lines"],
  ["write", "writes"],
  ["byte", "bytes"],
  ["time", "times"],
];

/** Counts whose noun does not agree with them ("1 reads", "2 copy"), and verbs after "1 read". */
function grammarErrors(text: string): string[] {
  const errors: string[] = [];
  const count = /(?<![\w.,\-/:])(\d{1,3}(?:,\d{3})+|\d+)(?![\w.,\-/:%]) ([a-z]+)(?: ([a-z]+))?/g;
  for (const line of text.split("\n")) {
    for (const m of line.matchAll(count)) {
      const n = Number(m[1].replaceAll(",", ""));
      const two = `${m[2]} ${m[3] ?? ""}`;
      const word = [two, m[2]].find((w) => NOUNS.some((pair) => pair.includes(w)));
      if (word === undefined) continue;
      const hit = NOUNS.find((pair) => pair.includes(word))!;
      if ((n === 1) !== (word === hit[0])) errors.push(`"${n} ${word}" in: ${line}`);
    }
    for (
      const bad of [
        /\b1 read \([^)]*\) show\b/,
        /\b1 read .*they count\b/,
        /\b1 of \d+ replayed answers? sent in full equal\b/,
        /\b([02-9]|\d\d+) reads \([^)]*\) shows\b/,
        /\b([02-9]|\d\d+) of \d+ replayed answers sent in full equals\b/,
      ]
    ) {
      if (bad.test(line)) errors.push(`${bad} in: ${line}`);
    }
  }
  return errors;
}

function assertGrammar(text: string, what: string): void {
  const errors = grammarErrors(text);
  assert.deepEqual(errors, [], `${what}:\n${text}`);
}

Deno.test("grammarErrors: finds what it should", () => {
  assert.deepEqual(grammarErrors("1 reads, 2 read, 1 session files, 3 stored copy, 1 of 2 reads"), [
    '"1 reads" in: 1 reads, 2 read, 1 session files, 3 stored copy, 1 of 2 reads',
    '"2 read" in: 1 reads, 2 read, 1 session files, 3 stored copy, 1 of 2 reads',
    '"1 session files" in: 1 reads, 2 read, 1 session files, 3 stored copy, 1 of 2 reads',
    '"3 stored copy" in: 1 reads, 2 read, 1 session files, 3 stored copy, 1 of 2 reads',
  ]);
  assert.equal(grammarErrors("cannot be known: 1 read (9 bytes) show part; they count").length, 2);
  assert.deepEqual(
    grammarErrors("lines 50-60 of a, 1.6 KB, 2026-11-23 15:07 app 1a, 0 bytes, 1 byte, 46%"),
    [],
  );
});

Deno.test("plurals: doctor, gc and status with one of everything and with many", async () => {
  for (const many of [false, true]) {
    const w = await makeWorld();
    try {
      const n = many ? 2 : 1;
      const old = new Date(Date.now() - 3 * HOUR);
      const all = [...Deno.readDirSync(w.objects)].map((e) => join(w.objects, e.name)).sort();
      if (!many) {
        // one session, one stored copy (referred to by it)
        await Deno.remove(w.plain);
        const refs = new Set<string>();
        for (const e of await rawEntries(w.readcache)) {
          const m = e.message?.details?.readcache;
          if (m) refs.add(m.servedHash);
        }
        for (const p of all.slice(1)) await Deno.remove(p);
        const keep = all[0];
        assert.ok(refs.has(keep.slice(-68, -4)), "the copy left is referred to");
      }
      const objects = [...Deno.readDirSync(w.objects)].map((e) => join(w.objects, e.name)).sort();
      for (let i = 0; i < n; i++) {
        await Deno.chmod(objects[i], 0o644); // a problem each
        await Deno.writeTextFile(join(w.sessions, `not-a-session-${i}.jsonl`), "{}\n"); // skipped
        const tmp = join(w.work, ".pi/readcache/tmp");
        const stale = join(tmp, `12${i}-${String(i).repeat(24)}.tmp`);
        await Deno.writeTextFile(stale, "half");
        await Deno.utime(stale, old, old);
        await Deno.writeTextFile(join(tmp, `13${i}-${String(i + 5).repeat(24)}.tmp`), "now");
        await Deno.writeTextFile(join(w.objects, `README-${i}`), "not a copy"); // left alone
      }
      const doctorOne = await cli(w, ["doctor"]);
      assert.equal(doctorOne.code, 1);
      assertGrammar(doctorOne.stdout, "doctor");
      const s = many ? "s" : "";
      const copies = many ? "copies" : "copy";
      for (
        const want of [
          `  ${objects.length} stored ${objects.length === 1 ? "copy" : "copies"}, `,
          `of this project in ${w.sessions} (${n} other file${s} skipped: ${
            many ? "of other projects or not pi sessions" : "of another project or not a pi session"
          })`,
          ` referred to by ${many ? "those sessions" : "that session"} (`,
          `  ${n} write${s} in progress`,
          `\n${n} problem${s}:\n`,
          `: ${n} temporary file${s} (`,
        ]
      ) assert.ok(doctorOne.stdout.includes(want), `"${want}" in:\n${doctorOne.stdout}`);

      // gc: first with nothing to remove but leftovers, then with unreferenced and recent copies
      const dry = await cli(w, ["gc", "--dry-run"]);
      assertGrammar(dry.stdout, "gc --dry-run");
      assert.ok(
        dry.stdout.includes(
          `would remove 0 stored copies (0 bytes), ${n} temporary file${s} and 0 saved replays; kept ${
            plural(objects.length, "copy", "copies")
          }`,
        ),
        dry.stdout,
      );
      assert.ok(dry.stdout.includes(`  ${n} other entr${many ? "ies" : "y"} left alone`));
      for (let i = 0; i < n; i++) await addObject(w, `nobody refers to this ${i}\n`, old);
      const doctorMore = await cli(w, ["doctor"]);
      assertGrammar(doctorMore.stdout, "doctor");
      assert.ok(
        doctorMore.stdout.includes(`: ${n} stored ${copies} (`) &&
          doctorMore.stdout.includes(`, ${n} not (`),
        `the copies no session refers to:\n${doctorMore.stdout}`,
      );
      for (let i = 0; i < n; i++) {
        await addObject(w, `written a minute ago ${i}\n`, new Date(Date.now() - 60_000));
      }
      const gc = await cli(w, ["gc"]);
      assert.equal(gc.code, 0, gc.stdout + gc.stderr);
      assertGrammar(gc.stdout, "gc");
      assert.ok(gc.stdout.includes(`removed ${n} stored ${copies} (`), gc.stdout);
      assert.ok(gc.stdout.includes(`  ${n} ${copies} written in the last hour kept`), gc.stdout);

      const status = await cli(w, ["status", "--latest"]);
      assertGrammar(status.stdout, "status");
    } finally {
      await Deno.remove(w.root, { recursive: true });
    }
  }
});

/** A session's figures for the pure formatters: `reads` reads, all sent in full. */
function fakeSession(over: Partial<SavingsSession> & { reads: number }): SavingsSession {
  return {
    file: "/s/--w-app--/2026-11-23T15-07-58-351Z_01a208f3-160e-72b5-8686-ba2de1245b15.jsonl",
    id: "01a208f3-160e-72b5-8686-ba2de1245b15",
    cwd: "/w/app",
    started: "2026-11-23T15:07:58.351Z",
    withReadcache: true,
    images: 0,
    piBytes: 1000,
    readcacheBytes: 600,
    byMode: {
      full: over.reads,
      unchanged: 0,
      unchanged_range: 0,
      diff: 0,
      baseline_fallback: 0,
      partial: 0,
      plain: 0,
    },
    unknown: { reads: 0, bytes: 0 },
    checked: { reads: 0, matched: 0 },
    files: [{
      path: "/w/app/a.py",
      reads: over.reads,
      repeats: over.reads - 1,
      piBytes: 1000,
      readcacheBytes: 600,
      wastedBytes: 0,
      savedBytes: 400,
    }],
    ...over,
  };
}

/** The text of an HTML page, tags removed and entities decoded. */
const pageText = (html: string) =>
  html.replace(/<style>[\s\S]*?<\/style>/, "").replace(/<title>[^<]*<\/title>/g, "")
    .replace(/<[^>]+>/g, "").replaceAll("&quot;", '"').replaceAll("&#39;", "'")
    .replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");

Deno.test("plurals: savings, text and page, with one of everything and with many", () => {
  const report = (sessions: SavingsSession[], skipped: number, problems: number) => ({
    sessions,
    totals: totalsOf(sessions),
    top: topFiles(sessions, 10),
    roots: ["/s"],
    fromFiles: false,
    skipped,
    problems: Array.from({ length: problems }, (_, i) => ({
      path: `/s/x${i}.jsonl`,
      what: "cannot be read (permission denied): it was not counted",
      fix: `chmod u+r /s/x${i}.jsonl`,
    })),
  });
  // one: a session with readcache of one read saving 4 bytes (1 token), a replayed one with one
  // read replayed in full and one that cannot be known
  const oneOn = fakeSession({ reads: 1, piBytes: 104, readcacheBytes: 100 });
  const oneReplayed = fakeSession({
    reads: 1,
    withReadcache: false,
    estimate: "session",
    piBytes: 104,
    readcacheBytes: 104,
    unknown: { reads: 1, bytes: 104 },
    checked: { reads: 1, matched: 1 },
  });
  const texts = {
    onlyOn: formatSavings(report([oneOn], 1, 1), PLAIN_STYLE, false),
    onlyReplayed: formatSavings(report([oneReplayed], 0, 0), PLAIN_STYLE, false),
    one: formatSavings(report([oneOn, oneReplayed], 1, 1), PLAIN_STYLE, false),
    many: formatSavings(
      report(
        [
          fakeSession({ reads: 2 }),
          fakeSession({ reads: 3 }),
          fakeSession({
            reads: 4,
            withReadcache: false,
            estimate: "session",
            unknown: { reads: 2, bytes: 90 },
            checked: { reads: 3, matched: 1 },
          }),
          fakeSession({
            reads: 2,
            withReadcache: false,
            estimate: "session",
            unknown: { reads: 0, bytes: 0 },
            checked: { reads: 2, matched: 2 },
          }),
        ],
        2,
        2,
      ),
      PLAIN_STYLE,
      false,
    ),
    none: formatSavings(report([], 0, 0), PLAIN_STYLE, false),
  };
  for (const [name, text] of Object.entries(texts)) assertGrammar(text, `savings (${name})`);
  const has = (text: string, ...parts: string[]) => {
    for (const p of parts) assert.ok(text.includes(p), `"${p}" in:\n${text}`);
  };
  has(
    texts.onlyOn,
    "readcache savings: 1 session file in /s",
    "  (1 file skipped: not a pi session file)",
    "total: 1 read; pi 104 bytes, readcache 100 bytes: 4 bytes less (4%), about 1 token\n",
    '  1 session with readcache ("on"): ',
    "\n1 problem:\n",
  );
  has(
    texts.onlyReplayed,
    '  1 session without readcache ("replayed"): ',
    "  check: 1 of 1 replayed answer sent in full equals pi's own text exactly",
    "  cannot be known: 1 read (104 bytes) shows part of a file whose whole content the session " +
      "never showed before; it counts as sent in full on both sides",
  );
  has(
    texts.many,
    "readcache savings: 4 session files in /s",
    "  (2 files skipped: not pi session files)",
    "total: 11 reads; ",
    '  2 sessions with readcache ("on"): ',
    '  2 sessions without readcache ("replayed"): ',
    "  check: 3 of 5 replayed answers sent in full equal pi's own text exactly",
    "  cannot be known: 2 reads (90 bytes) show part of a file whose whole content the session " +
      "never showed before; they count as sent in full on both sides",
    "\n2 problems:\n",
  );
  assert.ok(!texts.many.includes(" 1 of "), "1 of N: the verb agrees with 1 (not here)");
  has(
    formatSavings(
      report(
        [
          fakeSession({
            reads: 3,
            withReadcache: false,
            estimate: "session",
            checked: { reads: 3, matched: 1 },
          }),
        ],
        0,
        0,
      ),
      PLAIN_STYLE,
      false,
    ),
    "  check: 1 of 3 replayed answers sent in full equals pi's own text exactly",
  );
  has(texts.none, "readcache savings: 0 session files in /s", "no pi session files found. Pass");
  // replayed through pi: the estimate, its check and the reads not judged, one and many
  const byReplay = (n: number) =>
    fakeSession({
      reads: n + 1,
      withReadcache: false,
      estimate: "replay",
      safety: { checked: n, violations: 0 },
      notJudged: {
        unapplied: { reads: n, bytes: 50 * n },
        "replay-failed": { reads: 1, bytes: 0 },
      },
    });
  for (const n of [1, 2]) {
    const text = formatSavings(report([byReplay(n)], 0, 0), PLAIN_STYLE, false);
    assertGrammar(text, `savings (replayed ${n})`);
    has(
      text,
      '  1 session without readcache ("replayed"): what pi sent is measured; what readcache ' +
        "would have sent is an estimate: the session's own calls run again through pi",
      `  check: ${n === 1 ? "1 short answer" : "2 short answers"} checked against what the ` +
        "model had been shown: 0 wrong",
      `  not judged: ${n + 1} reads (${50 * n} bytes), left out of both sides: ${n} came after ` +
        "a shell command the replay cannot apply",
      "; 1 succeeded in the session but failed in the replay",
    );
    const page = pageText(savingsHtml([byReplay(n)], totalsOf([byReplay(n)]), []));
    assertGrammar(page, `page (replayed ${n})`);
    has(page, "not judged: ", "the replay of deno task bench:real");
  }
  // readcache sending more than pi: said so, not "-5% less"
  const more = formatSavings(
    report([fakeSession({ reads: 2, piBytes: 100, readcacheBytes: 105 })], 0, 0),
    PLAIN_STYLE,
    false,
  );
  has(more, " 5% more\n", "total: 2 reads; pi 100 bytes, readcache 105 bytes: 5 bytes more (5%)");

  // the page: the same counts in its words
  for (
    const [sessions, name] of [
      [[oneOn, oneReplayed], "one"],
      [[oneOn], "only on"],
      [[fakeSession({ reads: 2 }), fakeSession({ reads: 3, withReadcache: false })], "many"],
    ] as const
  ) {
    const totals = totalsOf(sessions);
    const text = pageText(savingsHtml(sessions, totals, topFiles(sessions, 10)));
    assertGrammar(text, `page (${name})`);
  }
  const onePage = pageText(savingsHtml([oneOn, oneReplayed], totalsOf([oneOn, oneReplayed]), []));
  has(
    onePage,
    "2 session files, 2 reads: ",
    "about 1 token saved",
    "on: 1 session ran with readcache",
    "replayed: 1 session ran without readcache",
    "1 read (104 bytes) shows part of a file whose whole content the session never showed before; " +
      "it counts as sent in full on both sides.",
  );
});

Deno.test("gc and doctor count as referred to the contents held stretches name (partial answers, edits)", () => {
  const [a, b, c] = ["a", "b", "c"].map((x) => x.repeat(64));
  const refs = objectReferences([
    {
      type: "message",
      timestamp: "2026-01-02T00:00:00.000Z",
      message: {
        role: "toolResult",
        details: {
          readcache: {
            mode: "partial",
            servedHash: a,
            baseHash: a,
            held: [{ start: 1, end: 2, hash: b }],
          },
        },
      },
    },
    {
      type: "message",
      timestamp: "2026-01-03T00:00:00.000Z",
      message: {
        role: "toolResult",
        details: {
          readcache: { kind: "edit", servedHash: c, baseHash: a, held: [{ start: 1, hash: b }] },
        },
      },
    },
  ] as never, 0);
  assert.deepEqual([...refs.keys()].sort(), [a, b, c]);
  assert.equal(refs.get(b), Date.parse("2026-01-03T00:00:00.000Z"));
});

Deno.test("gc removes saved replays that are damaged, of an older format or a gone session, and with --max-age old ones; doctor names them", async () => {
  const w = await makeWorld();
  try {
    const state = join(w.work, ".pi/readcache/state");
    await Deno.mkdir(state, { mode: 0o700 });
    const old = new Date(Date.now() - 30 * 24 * HOUR);
    const save = async (key: string, body: string, damaged = false) => {
      const bytes = new TextEncoder().encode(body);
      const header = damaged ? "0".repeat(64) : sha256(bytes);
      const path = join(state, `${sha256(key)}.json`);
      await Deno.writeTextFile(path, `${header}\n${body}`, { mode: 0o600 });
      await Deno.utime(path, old, old);
      return path;
    };
    // the layout the extension writes: a header line, then the packed state
    const saved = (file: string, format: number) =>
      `${JSON.stringify({ format, session: "s", file, home: "/home/me" })}\n{"format":${format}}`;
    const usable = await save("usable", saved(w.readcache, REPLAY_STATE_FORMAT));
    const gone = await save("gone", saved(join(w.sessions, "deleted.jsonl"), REPLAY_STATE_FORMAT));
    const outdated = await save("outdated", saved(w.readcache, 1));
    // the layout before the packed state (one JSON object): outdated as well
    const unpacked = await save(
      "unpacked",
      JSON.stringify({ session: "s", file: w.readcache, home: "/home/me", state: { format: 2 } }),
    );
    const damaged = await save("damaged", saved(w.readcache, REPLAY_STATE_FORMAT), true);

    const doctor = await cli(w, ["doctor"]);
    assert.equal(doctor.code, 0, doctor.stdout);
    assert.match(doctor.stdout, /5 saved replays \([^)]*; 1 usable\)/);
    assert.match(
      doctor.stdout,
      /4 saved replays never used again \(1 damaged, 2 of an older format, 1 of session files that are gone\)/,
    );

    const gc = await cli(w, ["gc", "--json"]);
    assert.equal(gc.code, 0, gc.stdout);
    const removed = jsonOf<{ removed: { path: string; why: string }[] }>(gc).removed
      .filter((r) => r.path.startsWith(state)).map((r) => [r.path, r.why]).sort();
    assert.deepEqual(
      removed,
      [
        [damaged, "replay_damaged"],
        [gone, "replay_orphaned"],
        [outdated, "replay_outdated"],
        [unpacked, "replay_outdated"],
      ].sort(),
    );
    assert.deepEqual([...Deno.readDirSync(state)].map((e) => join(state, e.name)), [usable]);

    // a usable one not saved again within --max-age goes too (the next start walks the branch)
    const aged = await cli(w, ["gc", "--max-age", "1"]);
    assert.equal(aged.code, 0, aged.stdout);
    assert.match(aged.stdout, /saved replay not saved again within --max-age/);
    assert.match(aged.stdout, /and 1 saved replay; kept/);
    assert.deepEqual([...Deno.readDirSync(state)], []);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("doctor and gc --sessions DIR look into the folders under DIR; gc that finds no session keeps every copy", async () => {
  const w = await makeWorld();
  try {
    const old = new Date(Date.now() - 3 * HOUR);
    const extra = await addObject(w, "nobody refers to this\n", old);
    // pi's top sessions folder: one folder per project under it
    const top = join(w.agent, "sessions");
    const doctor = jsonOf<DoctorJson>(await cli(w, ["doctor", "--json", "--sessions", top]));
    assert.equal(doctor.sessions.files, 2);
    assert.deepEqual(doctor.unreferenced.paths, [extra]);
    const gc = jsonOf<GcJson>(await cli(w, ["gc", "--dry-run", "--json", "--sessions", top]));
    assert.deepEqual(gc.removed.map((r) => r.path), [extra]);

    // a folder holding no session of this project: nothing can be told, nothing is removed
    const empty = join(w.root, "empty-sessions");
    await Deno.mkdir(empty);
    const none = await cli(w, ["gc", "--sessions", empty]);
    assert.equal(none.code, 0, none.stdout);
    assert.match(none.stdout, /every stored copy is kept/);
    assert.match(none.stdout, /removed 0 stored copies/);
    await Deno.stat(extra); // still there
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("status of a session whose project directory is gone asks for --cwd instead of reading another directory", async () => {
  const w = await makeWorld();
  try {
    const gone = join(w.root, "moved-away");
    const text = (await Deno.readTextFile(w.readcache)).replaceAll(w.work, gone);
    const file = join(w.root, "elsewhere.jsonl");
    await Deno.writeTextFile(file, text);
    const r = await cli(w, ["status", file]);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      /moved-away, is not there \(moved or deleted\)\. Pass where the project is now with --cwd DIR/,
    );
    const there = await cli(w, ["status", file, "--cwd", w.work]);
    assert.notEqual(there.code, 2, there.stderr);
    assert.match(there.stdout, /readcache status/);
  } finally {
    await Deno.remove(w.root, { recursive: true });
  }
});

Deno.test("a stage over a second says what it is doing, and how long it took; nothing with --json", async () => {
  const { slowStage } = await import("../cli/support/output.ts");
  const said: string[] = [];
  const error = console.error;
  console.error = (...a: unknown[]) => said.push(a.join(" "));
  try {
    const quick = slowStage("quick", false);
    quick.done();
    const slow = slowStage("replaying 2 pi sessions", false);
    const quiet = slowStage("replaying quietly", true);
    await new Promise((r) => setTimeout(r, 1200));
    slow.done();
    quiet.done();
  } finally {
    console.error = error;
  }
  assert.equal(said.length, 2, said.join("\n"));
  assert.equal(said[0], "readcache: replaying 2 pi sessions...");
  assert.match(said[1], /^readcache: done in 1\.\d s$/);
});
