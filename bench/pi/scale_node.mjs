// `deno task bench:node` (and the second half of `deno task bench`): the pi extension's per-read
// cost under Node, the runtime pi runs in, loaded the way pi loads an extension: pi 0.73.1's own
// extension loader (`loadExtensions`: jiti, with pi's aliases) and its `ExtensionRunner` (the
// context a tool gets, the `tool_call` and `tool_result` hooks pi's agent loop runs around every
// tool call), on pi's real file-backed `SessionManager`.
//
// Workload (as in bench/pi/scale.ts and the issue that set the targets): 200 files of 300 lines,
// one user message + one read per step (3 entries), reads of unchanged files. At 1,000, 20,000
// and 100,000 entries, on a session without any compaction:
//   warm      the instance that has seen the session reads the next file;
//   cold new  a new extension instance on the same session, its first read;
//   reopened  the session reopened from its file (SessionManager.open, as /resume does) and a new
//             instance, its first read (after enough short-lived garbage that what pi allocated
//             while parsing is promoted: pi's parsing is not the read's cost);
//   (both continue from the replay the extension saved while the session grew: SPEC §6.5)
//   nothing saved  a new instance after the saved replays are removed (a session kept before
//             the extension was installed): the walk to the root, and the save that read makes;
//   /tree     the warm instance after the leaf moved half-way up the branch (as /tree to an
//             earlier point, then a new prompt);
//   reloaded  a new instance from pi's loader anew (`loadExtensions`, as pi's /reload and
//             /resume build a new runtime: the module is evaluated again, its code is cold);
// and the same cold cases on a branch of that session that has a compaction 500 entries above
// its leaf (the strict compaction barrier: nothing above it can back an answer). Beside them pi's
// own read, pi's getBranch() and a bare walk of pi's parent links from the leaf to the root
// through getEntry (what any cold read without a compaction pays before doing anything), and
// the heap an instance holds after two reads. Every timed path runs first on a small session of
// its own: "cold" is an instance's state, not code being compiled (no full garbage collection
// comes before a timed read: one discards compiled code).
//
// Needs pi in pi-suite/node_modules (`npx --prefer-offline -y deno@2 install --config pi-suite/deno.json`, which
// `deno task bench:node` does) and Node 20+. Run alone: `node bench/pi/scale_node.mjs` (it
// restarts itself with --expose-gc and NODE_PATH set to pi-suite/node_modules, where the
// extension's zod and diff are, as tests/pi/pi_rpc_e2e_test.ts runs pi). Options:
// `--sizes 1000,20000` (entries), `--json FILE` (the figures as JSON too), `--extension FILE`
// (another copy of src/adapters/pi/extension.ts, to compare two versions on one machine),
// `--pi-readcache DIR` (or PI_READCACHE_DIR=DIR; see below).
//
// Side by side with pi-readcache (the other pi read cache, not on the npm registry): with
// `--pi-readcache DIR`, DIR a checkout of https://github.com/Gurpartap/pi-readcache with its
// dependencies installed (`npm install --omit=dev`), the same run also loads it through pi's
// loader, from the entry its package.json declares for pi (`pi.extensions`), and times the same
// columns for it on the same sessions, the same files and the same reads: each of its instances
// on a runner of its own (one extension per runner, as pi with only it installed), the cold
// reads of both alternating (ours, then it, for the same file), its warm instance beside ours. The
// session is grown by our extension: pi-readcache reads the same `details.readcache` metadata (the
// answer modes of every timed read are counted, and each read of it is checked against ours for
// the same file in the same case: the run prints how many of these pairs answered alike). Then ours / pi-readcache per column. Nothing of
// pi-readcache is in this repository: it runs from DIR only. It builds the whole branch
// (`getBranch()`) and replays it from the latest compaction on every read, so at sizes above
// 20,000 it runs fewer reads per column (the counts are printed).
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { cpus, tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";

const REPO = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
const SUITE_MODULES = join(REPO, "pi-suite", "node_modules");

// ---------------------------------------------------------------------------------------------
// Start: with --expose-gc and the pi suite's node_modules on NODE_PATH (read by Node at startup)

const nodePath = (process.env.NODE_PATH ?? "").split(delimiter);
if (typeof globalThis.gc !== "function" || !nodePath.includes(SUITE_MODULES)) {
  const r = spawnSync(
    process.execPath,
    ["--expose-gc", fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    {
      stdio: "inherit",
      env: {
        ...process.env,
        NODE_PATH: [SUITE_MODULES, ...nodePath.filter(Boolean)].join(delimiter),
      },
    },
  );
  process.exit(r.status ?? 1);
}
const gc = globalThis.gc;

let PI_DIR;
try {
  PI_DIR = realpathSync(join(SUITE_MODULES, "@mariozechner", "pi-coding-agent"));
} catch {
  console.error(
    "pi is not installed in pi-suite/node_modules: run `npx --prefer-offline -y deno@2 install --config pi-suite/deno.json`",
  );
  process.exit(1);
}
const piUrl = (p) => pathToFileURL(join(PI_DIR, p)).href;
const pi = await import(piUrl("dist/index.js"));
const loader = await import(piUrl("dist/core/extensions/loader.js"));
const PI_VERSION = createRequire(join(PI_DIR, "package.json"))("./package.json").version;

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const SIZES = (opt("--sizes") ?? "1000,20000,100000").split(",").map(Number);
// another copy of the extension (to compare two versions of the code on one machine)
const EXTENSION = resolve(
  opt("--extension") ?? join(REPO, "src", "adapters", "pi", "extension.ts"),
);
const JSON_OUT = opt("--json");
const PRC_DIR = opt("--pi-readcache") ?? (process.env.PI_READCACHE_DIR || undefined);
const WARM = 200;
const COLD = 15;
const RELOADED = 7;
const COMPACTION_BACK = 500;
/** Cold at 20,000 and 100,000 entries with a compaction this far up, saved or not. */
const FAR_COMPACTION = 5000;

// ---------------------------------------------------------------------------------------------
// The workload

const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-scale-node-")));
const sessionDir = join(cwd, ".sessions");
/** Where the extension saves a session's replay (SPEC §6.5). */
const STATE_DIR = join(cwd, ".pi", "readcache", "state");
process.on("exit", () => rmSync(cwd, { recursive: true, force: true }));
const FILES = 200;
const body = (f) =>
  Array.from({ length: 300 }, (_, i) => `// file ${f} line ${i}: const value${i} = compute(${i});`)
    .join("\n") + "\n";
for (let f = 0; f < FILES; f++) writeFileSync(join(cwd, `f${f}.ts`), body(f));

/** Median and 95th percentile. */
function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return {
    p50: s[Math.floor(s.length / 2)],
    p95: s[Math.min(s.length - 1, Math.ceil(s.length * 0.95) - 1)],
  };
}

const ZERO_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

/**
 * pi around one extension instance: pi's ExtensionRunner over the session, tool calls run as
 * pi's agent loop runs them (assistant message, `tool_call` hooks, execute with the runner's
 * context, `tool_result` hooks, the result message).
 */
class PiHarness {
  #calls = 0;
  /** `ext`: the extension's record (its answers' modes are counted there). */
  constructor(session, extensions, runtime, ext) {
    this.session = session;
    this.ext = ext;
    this.runner = new pi.ExtensionRunner(extensions, runtime, cwd, session, undefined);
    const none = () => undefined;
    this.runner.bindCore(
      {
        sendMessage: none,
        sendUserMessage: none,
        appendEntry: (type, data) => session.appendCustomEntry(type, data),
        setSessionName: none,
        getSessionName: none,
        setLabel: none,
        getActiveTools: () => [],
        getAllTools: () => [],
        setActiveTools: none,
        refreshTools: none,
        getCommands: () => [],
        setModel: () => Promise.resolve(false),
        getThinkingLevel: () => "off",
        setThinkingLevel: none,
      },
      {
        getModel: none,
        isIdle: () => true,
        getSignal: none,
        abort: none,
        hasPendingMessages: () => false,
        shutdown: none,
        getContextUsage: none,
        compact: none,
        getSystemPrompt: () => "",
      },
    );
    this.read = this.runner.getToolDefinition("read");
    if (this.read === undefined) throw new Error("the extension registered no read tool");
  }

  userMessage(text) {
    return this.session.appendMessage({
      role: "user",
      content: [{ type: "text", text }],
      timestamp: Date.now(),
    });
  }

  assistantRead(path) {
    const id = `call_${++this.#calls}_${Math.random().toString(36).slice(2, 8)}`;
    this.session.appendMessage({
      role: "assistant",
      content: [{ type: "toolCall", id, name: "read", arguments: { path } }],
      api: "openai-completions",
      provider: "mock",
      model: "mock-model",
      usage: ZERO_USAGE,
      stopReason: "toolUse",
      timestamp: Date.now(),
    });
    return id;
  }

  /**
   * Runs the read call `id` as pi's agent loop does; appends its result when `persist`. Returns
   * the answer's mode (`details.readcache.mode`, "none" without).
   */
  async runRead(id, path, persist) {
    const input = this.read.prepareArguments === undefined
      ? { path }
      : this.read.prepareArguments({ path });
    if (this.runner.hasHandlers("tool_call")) {
      await this.runner.emitToolCall({
        type: "tool_call",
        toolName: "read",
        toolCallId: id,
        input,
      });
    }
    const result = await this.read.execute(
      id,
      input,
      undefined,
      undefined,
      this.runner.createContext(),
    );
    let { content, details } = result;
    if (this.runner.hasHandlers("tool_result")) {
      const patch = await this.runner.emitToolResult({
        type: "tool_result",
        toolName: "read",
        toolCallId: id,
        input,
        content,
        details,
        isError: false,
      });
      if (patch?.content !== undefined) content = patch.content;
      if (patch?.details !== undefined) details = patch.details;
    }
    if (persist) {
      this.session.appendMessage({
        role: "toolResult",
        toolCallId: id,
        toolName: "read",
        content,
        details,
        isError: false,
        timestamp: Date.now(),
      });
    }
    return details?.readcache?.mode ?? "none";
  }

  /** One read as the model's next turn makes it; the time of the tool call alone. */
  async timeRead(path) {
    this.userMessage("next");
    const id = this.assistantRead(path);
    const t = performance.now();
    const mode = await this.runRead(id, path, false);
    const ms = performance.now() - t;
    this.ext.modes.set(mode, (this.ext.modes.get(mode) ?? 0) + 1);
    this.ext.lastMode = mode;
    return ms;
  }
}

// pi's loader, as pi loads an extension: once here; new instances below call the same module's
// default export again (the extension keeps its state per instance), `reloaded` loads anew
async function piLoad(ext) {
  const loaded = await loader.loadExtensions([ext.path], cwd);
  if (loaded.errors.length > 0) throw new Error(JSON.stringify(loaded.errors));
  return loaded;
}
// the module's default export through jiti as pi's loader imports it (moduleCache off, pi's own
// package and its typebox aliased, as pi's aliases do), for new instances of the same loaded code
const { createJiti } = await import(
  pathToFileURL(
    createRequire(join(PI_DIR, "dist", "core", "extensions", "loader.js")).resolve("jiti"),
  )
    .href
);
const piRequire = createRequire(join(PI_DIR, "dist", "core", "extensions", "loader.js"));
const ALIASES = {
  "@mariozechner/pi-coding-agent": join(PI_DIR, "dist", "index.js"),
  "@sinclair/typebox": piRequire.resolve("typebox"),
  "@sinclair/typebox/compile": piRequire.resolve("typebox/compile"),
  "@sinclair/typebox/value": piRequire.resolve("typebox/value"),
};

/** An extension to time: its file, its factory as pi's loader makes it, its answers' modes. */
async function extensionAt(name, path) {
  const ext = { name, path, factory: undefined, modes: new Map(), lastMode: undefined };
  await piLoad(ext);
  ext.factory = await createJiti(piUrl("dist/core/extensions/loader.js"), {
    moduleCache: false,
    alias: ALIASES,
  }).import(path, { default: true });
  return ext;
}

const OURS = await extensionAt("readcache", EXTENSION);

/** pi-readcache from a checkout: the entry its package.json declares for pi (`pi.extensions`). */
async function piReadcacheAt(dir) {
  const root = resolve(dir);
  let pkg;
  try {
    pkg = createRequire(join(root, "package.json"))("./package.json");
  } catch {
    console.error(`--pi-readcache ${dir}: no package.json there (a pi-readcache checkout)`);
    process.exit(2);
  }
  const entry = pkg.pi?.extensions?.[0];
  if (pkg.name !== "pi-readcache" || typeof entry !== "string") {
    console.error(`--pi-readcache ${dir}: not a pi-readcache checkout (package.json)`);
    process.exit(2);
  }
  try {
    const ext = await extensionAt("pi-readcache", resolve(root, entry));
    ext.version = pkg.version;
    return ext;
  } catch (e) {
    console.error(
      `--pi-readcache ${dir}: pi's loader could not load it (dependencies installed? ` +
        `\`npm install --omit=dev\` there): ${e instanceof Error ? e.message : e}`,
    );
    process.exit(2);
  }
}
const PRC = PRC_DIR === undefined ? undefined : await piReadcacheAt(PRC_DIR);

async function newHarness(session, ext = OURS) {
  const runtime = loader.createExtensionRuntime();
  const extension = await loader.loadExtensionFromFactory(
    ext.factory,
    cwd,
    undefined,
    runtime,
    ext.path,
  );
  return new PiHarness(session, [extension], runtime, ext);
}

async function reloadedHarness(session, ext = OURS) {
  const { extensions, runtime } = await piLoad(ext);
  return new PiHarness(session, extensions, runtime, ext);
}

/** Entries on the branch from the root to the leaf (walking parents). */
function depth(session) {
  let d = 0;
  for (let id = session.getLeafId(); id !== null; id = session.getEntry(id).parentId) d++;
  return d;
}

/** Appends steps (user message, assistant read, result) until the branch has `entries`. */
async function grow(h, entries, counter) {
  for (let d = depth(h.session); d < entries; d += 3) {
    const i = counter.step++;
    const path = `f${i % FILES}.ts`;
    h.userMessage(`step ${i}`);
    const id = h.assistantRead(path);
    await h.runRead(id, path, true);
  }
}

/** The id `n` entries above the leaf (walking parents, as no branch is built). */
function above(session, n) {
  let id = session.getLeafId();
  for (let k = 0; k < n; k++) id = session.getEntry(id).parentId;
  return id;
}

const plain = pi.createReadToolDefinition(cwd);
async function timePlain(path) {
  const t = performance.now();
  await plain.execute("p", { path }, undefined, undefined, {});
  return performance.now() - t;
}

async function coldReads(count, make) {
  const xs = [];
  for (let k = 0; k < count; k++) xs.push(await coldRead(k, make));
  return xs;
}

/** The first read of a new instance (`make`), of the k-th file. */
async function coldRead(k, make) {
  return await (await make()).timeRead(`f${k}.ts`);
}

/**
 * Cold reads of new instances with no saved replay (SPEC §6.5: a session kept before the extension
 * was installed, a damaged store): the walk to the compaction or the root. The saved replays are
 * put back after them for the columns that follow (a first read never saves one).
 */
async function coldReadsUnsaved(session) {
  const kept = `${STATE_DIR}.kept`;
  const saved = existsSync(STATE_DIR);
  if (saved) cpSync(STATE_DIR, kept, { recursive: true });
  const xs = await coldReads(COLD, () => {
    rmSync(STATE_DIR, { recursive: true, force: true });
    return newHarness(session);
  });
  rmSync(STATE_DIR, { recursive: true, force: true });
  if (saved) renameSync(kept, STATE_DIR);
  return xs;
}

/**
 * Allocates short-lived garbage until every young object has been scavenged: what pi allocated
 * just before (parsing a session) is promoted, so the next timed read does not pay for it. No
 * full collection: one discards compiled code that the next read would compile again.
 */
function churn() {
  let x;
  for (let i = 0; i < 200_000; i++) x = new Array(32);
  return x;
}

/** The session reopened from its file, a new instance of `ext`, its read of the k-th file. */
async function reopenedRead(session, k, ext = OURS) {
  const reopened = pi.SessionManager.open(session.getSessionFile(), sessionDir);
  const h = await newHarness(reopened, ext);
  churn();
  return await h.timeRead(`f${k}.ts`);
}

/** /tree: the warm instance, the leaf moved `back` entries up, then a read; back at the tip. */
async function treeReads(h, count, back) {
  const xs = [];
  for (let k = 0; k < count; k++) xs.push(await treeRead(h, k, back));
  return xs;
}

async function treeRead(h, k, back) {
  const tip = h.session.getLeafId();
  await h.timeRead("f1.ts"); // synced at the tip
  h.session.branch(above(h.session, back));
  const ms = await h.timeRead(`f${k}.ts`);
  h.session.branch(tip);
  return ms;
}

/** Pairs of reads (ours, pi-readcache's, same file, same case) that answered alike, and not. */
const pairs = { alike: 0, differ: [] };
function comparePair(what) {
  if (OURS.lastMode === PRC.lastMode) pairs.alike++;
  else pairs.differ.push(`${what}: ours ${OURS.lastMode}, pi-readcache ${PRC.lastMode}`);
}

/**
 * `count` reads of ours (`one(k)`, the k-th file) and, with pi-readcache, `prcCount` of its
 * (`prcOne(k)`) alternating with them: ours, then it, for the same file (load moves between
 * them alike). Returns [ours, pi-readcache's].
 */
async function alternate(count, one, prcCount, prcOne, what = "") {
  const xs = [];
  const ys = [];
  for (let k = 0; k < count; k++) {
    xs.push(await one(k));
    if (PRC !== undefined && k < prcCount) {
      ys.push(await prcOne(k));
      comparePair(`${what}f${k}.ts`);
    }
  }
  return [xs, ys];
}

/**
 * Heap an instance holds after two reads (MB): the first replays the session, the second
 * extends what it synced (as every later read does). Full collections around it.
 */
const alive = [];
async function heapOf(session, ext = OURS) {
  const mb = await heapChange(async () => {
    alive.push(await newHarness(session, ext));
    await alive[0].timeRead("f2.ts");
    await alive[0].timeRead("f3.ts");
  });
  alive.length = 0;
  return mb;
}

/** How much the heap grew over `action` (MB; negative when it shrank), full collections around. */
async function heapChange(action) {
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  await action();
  gc();
  gc();
  return (process.memoryUsage().heapUsed - before) / 1024 / 1024;
}

/**
 * Runs every timed path on a small session of its own, so that the figures of the first size are
 * not those of code being compiled (and again after the full collections of `heapOf`): cold
 * means a new instance or a reopened session here, not new code (that is `reloaded`).
 */
async function warmUp() {
  const s = pi.SessionManager.inMemory(cwd);
  const h = await newHarness(s);
  const p = PRC === undefined ? undefined : await newHarness(s, PRC);
  const c = { step: 0 };
  await grow(h, 900, c);
  for (let k = 0; k < 3; k++) await treeReads(h, 5, 450);
  for (let k = 0; k < 3; k++) await coldReads(10, () => newHarness(s));
  if (p !== undefined) {
    for (let k = 0; k < 3; k++) await treeReads(p, 5, 450);
    for (let k = 0; k < 3; k++) await coldReads(10, () => newHarness(s, PRC));
  }
  s.appendCompaction("summary", s.getLeafId(), 1000);
  await grow(h, depth(s) + 300, c);
  await treeReads(h, 10, 150);
  await coldReads(10, () => newHarness(s));
  if (p !== undefined) {
    await treeReads(p, 10, 150);
    await coldReads(10, () => newHarness(s, PRC));
  }
  for (let k = 0; k < 20; k++) await timePlain(`f${k}.ts`);
  churn();
  // the warm-up's reads are not the run's: the answers' modes are counted from here
  OURS.modes.clear();
  PRC?.modes.clear();
}

/**
 * Reads per column for pi-readcache at `n` entries: as ours up to 20,000; above, where each of
 * its reads replays the whole session, 20 warm and 5 of each cold case (the run would otherwise
 * take most of an hour at 100,000).
 */
const prcCount = (n, count) => n <= 20_000 ? count : Math.min(count, count === WARM ? 20 : 5);

await warmUp();
const rows = [];
const prcRows = [];
const session = pi.SessionManager.create(cwd, sessionDir);
const host = await newHarness(session);
// pi-readcache's warm instance: on the same session from its start, it reads once (untimed) at
// each size before its warm reads, so it has seen the session as ours has
const prcHost = PRC === undefined ? undefined : await newHarness(session, PRC);
const counter = { step: 0 };
/** The main branch's leaf at the last size (the long-lived heap is measured there). */
let mainTipOfLast;
for (const n of SIZES) {
  await grow(host, n, counter);
  const warm = [];
  const plainReads = [];
  const prcWarm = [];
  const branch = [];
  if (prcHost !== undefined) {
    prcHost.userMessage("next");
    await prcHost.runRead(prcHost.assistantRead("f0.ts"), "f0.ts", false);
  }
  for (let k = 0; k < WARM; k++) {
    const path = `f${(counter.step + k) % FILES}.ts`;
    warm.push(await host.timeRead(path));
    plainReads.push(await timePlain(path));
    if (prcHost !== undefined && k < prcCount(n, WARM)) {
      prcWarm.push(await prcHost.timeRead(path));
      comparePair(`warm ${path}`);
    }
  }
  // apart from the reads: getBranch() leaves garbage that the next timed read would pay for
  for (let k = 0; k < 10; k++) {
    const t = performance.now();
    session.getBranch();
    branch.push(performance.now() - t);
  }
  // the floor of a cold read without a compaction: pi's parent links walked from the leaf to
  // the root through getEntry, nothing else done
  const walk = [];
  for (let k = 0; k < 10; k++) {
    const t = performance.now();
    depth(session);
    walk.push(performance.now() - t);
  }
  churn();
  const pc = prcCount(n, COLD);
  const pr = prcCount(n, RELOADED);
  const [coldNew, prcNew] = await alternate(
    COLD,
    (k) => coldRead(k, () => newHarness(session)),
    pc,
    (k) => coldRead(k, () => newHarness(session, PRC)),
    "coldNew ",
  );
  const [coldOpen, prcOpen] = await alternate(
    COLD,
    (k) => reopenedRead(session, k),
    pc,
    (k) => reopenedRead(session, k, PRC),
    "coldOpen ",
  );
  const savedKb = (existsSync(STATE_DIR) ? readdirSync(STATE_DIR) : [])
    .reduce((kb, name) => kb + statSync(join(STATE_DIR, name)).size / 1024, 0);
  // a session the extension saved no replay of (SPEC §6.5: sessions kept before it was
  // installed, a damaged store): the walk to the root
  const coldUnsaved = await coldReadsUnsaved(session);
  const [reloaded, prcReloaded] = await alternate(
    RELOADED,
    (k) => coldRead(k, () => reloadedHarness(session)),
    pr,
    (k) => coldRead(k, () => reloadedHarness(session, PRC)),
    "reloaded ",
  );
  // last: a read on another branch saves the replay there (SPEC §6.5), off this branch
  const half = Math.floor(n / 2);
  const [tree, prcTree] = await alternate(
    COLD,
    (k) => treeRead(host, k, half),
    pc,
    (k) => treeRead(prcHost, k, half),
    "tree ",
  );

  // the same cold cases on a branch with a compaction 500 entries above its leaf
  const mainTip = session.getLeafId();
  mainTipOfLast = mainTip;
  const forkAt = above(session, COMPACTION_BACK);
  session.branch(forkAt);
  session.appendCompaction("summary", forkAt, 1000);
  await grow(host, depth(session) + COMPACTION_BACK - 1, counter);
  churn();
  const [cNew, prcCNew] = await alternate(
    COLD,
    (k) => coldRead(k, () => newHarness(session)),
    pc,
    (k) => coldRead(k, () => newHarness(session, PRC)),
    "cNew ",
  );
  const [cOpen, prcCOpen] = await alternate(
    COLD,
    (k) => reopenedRead(session, k),
    pc,
    (k) => reopenedRead(session, k, PRC),
    "cOpen ",
  );
  const [cReloaded, prcCReloaded] = await alternate(
    RELOADED,
    (k) => coldRead(k, () => reloadedHarness(session)),
    pr,
    (k) => coldRead(k, () => reloadedHarness(session, PRC)),
    "cReloaded ",
  );
  const back = COMPACTION_BACK / 2; // half-way up to the compaction
  const [cTree, prcCTree] = await alternate(
    COLD,
    (k) => treeRead(host, k, back),
    pc,
    (k) => treeRead(prcHost, k, back),
    "cTree ",
  );

  // heaps last (full collections), then code warm again for the next size
  const cHeap = await heapOf(session);
  const prcCHeap = PRC === undefined ? undefined : await heapOf(session, PRC);
  session.branch(mainTip);
  const heap = await heapOf(session);
  const prcHeap = PRC === undefined ? undefined : await heapOf(session, PRC);

  // a compaction 5,000 entries up (a long session compacted a while ago): the walk to it, with
  // the replay saved on the way and with nothing saved
  let far;
  if (n >= 4 * FAR_COMPACTION) {
    const farAt = above(session, FAR_COMPACTION);
    session.branch(farAt);
    session.appendCompaction("summary", farAt, 1000);
    await grow(host, depth(session) + FAR_COMPACTION - 1, counter);
    churn();
    const farSaved = await coldReads(COLD, () => newHarness(session));
    const farUnsaved = await coldReadsUnsaved(session);
    session.branch(mainTip);
    far = { coldNew: stats(farSaved), coldUnsaved: stats(farUnsaved) };
  }
  if (n !== SIZES.at(-1)) await warmUp();
  rows.push({
    entries: n,
    warm: stats(warm),
    plain: stats(plainReads),
    getBranch: stats(branch),
    walk: stats(walk),
    none: {
      coldNew: stats(coldNew),
      coldOpen: stats(coldOpen),
      coldUnsaved: stats(coldUnsaved),
      savedKb,
      tree: stats(tree),
      reloaded: stats(reloaded),
      heapMb: heap,
    },
    compacted: {
      coldNew: stats(cNew),
      coldOpen: stats(cOpen),
      tree: stats(cTree),
      reloaded: stats(cReloaded),
      heapMb: cHeap,
    },
    far,
  });
  if (PRC !== undefined) {
    prcRows.push({
      entries: n,
      reads: { warm: prcWarm.length, cold: pc, reloaded: pr },
      warm: stats(prcWarm),
      none: {
        coldNew: stats(prcNew),
        coldOpen: stats(prcOpen),
        tree: stats(prcTree),
        reloaded: stats(prcReloaded),
        heapMb: prcHeap,
      },
      compacted: {
        coldNew: stats(prcCNew),
        coldOpen: stats(prcCOpen),
        tree: stats(prcCTree),
        reloaded: stats(prcCReloaded),
        heapMb: prcCHeap,
      },
    });
  }
}

// The heap the long-lived instance holds for the session: what is freed when the
// instance that answered every read of the session, from its first entry to the largest size, lets
// the session go (pi's `session_shutdown`, on which it drops what it knows of it; full collections
// around; pi's session itself stays). It keeps what its last saved replay holds and the entries
// synced since (SPEC §6.5), not the whole session. (Dropping the instance itself frees nothing
// measurable: pi's runner keeps it.) It last read on the branch with a compaction: it reads on the
// main branch again first, as the session ended it.
session.branch(mainTipOfLast);
for (let k = 0; k < 3; k++) await host.timeRead(`f${k}.ts`);
const livedMb = -(await heapChange(async () => {
  await host.runner.emit({ type: "session_shutdown" });
  await new Promise((r) => setTimeout(r, 100));
}));

// ---------------------------------------------------------------------------------------------
// Report

const f = (x) => `${x.p50.toFixed(2)} / ${x.p95.toFixed(2)}`;
const machine = `${cpus().length} cores, ${
  cpus()[0]?.model ?? "unknown cpu"
}, Node ${process.version} (V8 ${process.versions.v8}), pi ${PI_VERSION}`;
console.log(`# readcache bench under Node: ${machine}`);
console.log(
  `# ms, median / p95 in this one run (warm: ${WARM} reads, cold: ${COLD} each, reloaded: ${RELOADED})\n`,
);
console.log("Session without a compaction:\n");
console.log(
  "| entries | warm read | pi's plain read | cold, new instance | cold, reopened | cold, nothing saved | after /tree | reloaded (pi's loader) | heap | pi getBranch() | pi getEntry walk |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of rows) {
  console.log(
    `| ${r.entries.toLocaleString("en")} | ${f(r.warm)} | ${f(r.plain)} | ${f(r.none.coldNew)} | ${
      f(r.none.coldOpen)
    } | ${f(r.none.coldUnsaved)} | ${f(r.none.tree)} | ${f(r.none.reloaded)} | ${
      r.none.heapMb.toFixed(2)
    } MB | ${f(r.getBranch)} | ${f(r.walk)} |`,
  );
}
console.log(
  `\nThe saved replay (SPEC §6.5) the cold reads continue from: ${
    rows.map((r) => `${r.none.savedKb.toFixed(0)} KB at ${r.entries.toLocaleString("en")} entries`)
      .join(", ")
  }`,
);
console.log(`\nBranch with a compaction ${COMPACTION_BACK} entries above the leaf:\n`);
console.log(
  "| entries | cold, new instance | cold, reopened | after /tree | reloaded (pi's loader) | heap |",
);
console.log("|---|---|---|---|---|---|");
for (const r of rows) {
  const c = r.compacted;
  console.log(
    `| ${r.entries.toLocaleString("en")} | ${f(c.coldNew)} | ${f(c.coldOpen)} | ${f(c.tree)} | ${
      f(c.reloaded)
    } | ${c.heapMb.toFixed(2)} MB |`,
  );
}
const farRows = rows.filter((r) => r.far !== undefined);
if (farRows.length > 0) {
  console.log(
    `\nBranch with a compaction ${FAR_COMPACTION.toLocaleString("en")} entries above the leaf:\n`,
  );
  console.log("| entries | cold, new instance | cold, nothing saved |");
  console.log("|---|---|---|");
  for (const r of farRows) {
    console.log(
      `| ${r.entries.toLocaleString("en")} | ${f(r.far.coldNew)} | ${f(r.far.coldUnsaved)} |`,
    );
  }
}
console.log("");

const target = (ok) => ok ? "meets target" : "MISSES target";
for (const r of farRows) {
  const c = Math.max(r.far.coldNew.p50, r.far.coldUnsaved.p50);
  console.log(
    `compaction ${FAR_COMPACTION.toLocaleString("en")} entries up, cold at ${
      r.entries.toLocaleString("en")
    }: new instance ${r.far.coldNew.p50.toFixed(2)} ms, nothing saved ${
      r.far.coldUnsaved.p50.toFixed(2)
    } ms (target <= 15 ms: ${target(c <= 15)})`,
  );
}
const at = (n) => rows.find((r) => r.entries === n);
const small = rows[0];
const n0 = small.entries.toLocaleString("en");
const CASES = [["coldNew", "new instance"], ["coldOpen", "reopened"], ["tree", "after /tree"]];
for (const r of rows.slice(1)) {
  const k = r.entries.toLocaleString("en");
  const parts = CASES.map(([c, name]) => {
    const ratio = r.compacted[c].p50 / small.compacted[c].p50;
    return `${name} ${ratio.toFixed(2)}x (${target(ratio <= 1.5)})`;
  });
  console.log(
    `compaction near the leaf, cold at ${k} / cold at ${n0} (target <= 1.5x): ${parts.join(", ")}`,
  );
}
const r20 = at(20_000);
if (r20 !== undefined) {
  const c = Math.max(r20.none.coldNew.p50, r20.none.coldOpen.p50);
  console.log(
    `no compaction, cold at 20,000: new instance ${r20.none.coldNew.p50.toFixed(2)} ms, reopened ${
      r20.none.coldOpen.p50.toFixed(2)
    } ms (target <= 15 ms: ${target(c <= 15)})`,
  );
}
for (const r of rows.slice(1)) {
  const k = r.entries.toLocaleString("en");
  const w = r.warm.p50 / small.warm.p50;
  console.log(
    `warm at ${k} / warm at ${n0}: ${w.toFixed(2)}x (target <= 1.3x: ${target(w <= 1.3)})`,
  );
}
for (const r of rows) {
  const k = r.entries.toLocaleString("en");
  console.log(
    `warm at ${k}: ${r.warm.p50.toFixed(3)} ms, pi's plain read ${r.plain.p50.toFixed(3)} ms ` +
      `(target: not above it: ${target(r.warm.p50 <= r.plain.p50)})`,
  );
}
const r100 = at(100_000);
if (r100 !== undefined) {
  const h = Math.max(r100.none.heapMb, r100.compacted.heapMb);
  console.log(
    `heap an instance holds at 100,000 entries after two reads: ${
      r100.none.heapMb.toFixed(2)
    } MB without a compaction, ${r100.compacted.heapMb.toFixed(2)} MB with one (target <= 8 MB: ${
      target(h <= 8)
    })`,
  );
}
{
  const n = SIZES.at(-1);
  console.log(
    `heap the long-lived instance holds for the session at ${n.toLocaleString("en")} entries ` +
      `(freed when it lets the session go): ${livedMb.toFixed(2)} MB${
        n === 100_000 ? ` (target <= 5 MB: ${target(livedMb <= 5)})` : ""
      }`,
  );
}
const modes = (ext) => [...ext.modes].map(([m, c]) => `${m} ${c}`).join(", ");
if (PRC === undefined) {
  console.log(
    "pi-readcache not measured (`--pi-readcache DIR`, a checkout with its dependencies: bench/README.md)",
  );
} else {
  const prc = `pi-readcache ${PRC.version}`;
  const few = prcRows.filter((p) => p.reads.warm !== WARM || p.reads.cold !== COLD);
  console.log(
    `\nSide by side: ${prc} (${PRC.path}), through pi's loader on the same sessions, files and reads, ` +
      `its cold reads alternating with ours`,
  );
  if (few.length > 0) {
    console.log(
      `(its reads at ${few.map((p) => p.entries.toLocaleString("en")).join(", ")} entries: warm ${
        few[0].reads.warm
      }, cold ${few[0].reads.cold} each, reloaded ${few[0].reads.reloaded})`,
    );
  }
  console.log(`\n${prc}, session without a compaction:\n`);
  console.log(
    "| entries | warm read | cold, new instance | cold, reopened | after /tree | reloaded (pi's loader) | heap |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const p of prcRows) {
    const c = p.none;
    console.log(
      `| ${p.entries.toLocaleString("en")} | ${f(p.warm)} | ${f(c.coldNew)} | ${f(c.coldOpen)} | ${
        f(c.tree)
      } | ${f(c.reloaded)} | ${c.heapMb.toFixed(2)} MB |`,
    );
  }
  console.log(`\n${prc}, branch with a compaction ${COMPACTION_BACK} entries above the leaf:\n`);
  console.log(
    "| entries | cold, new instance | cold, reopened | after /tree | reloaded (pi's loader) | heap |",
  );
  console.log("|---|---|---|---|---|---|");
  for (const p of prcRows) {
    const c = p.compacted;
    console.log(
      `| ${p.entries.toLocaleString("en")} | ${f(c.coldNew)} | ${f(c.coldOpen)} | ${f(c.tree)} | ${
        f(c.reloaded)
      } | ${c.heapMb.toFixed(2)} MB |`,
    );
  }
  const x = (a, b) => `${(a / b).toFixed(2)}x`;
  const m = (a, b) => x(a.p50, b.p50);
  // heaps side by side, not as a ratio: at small sizes both are within a collection's noise
  const mb = (a, b) => `${a.toFixed(2)} / ${b.toFixed(2)} MB`;
  console.log(`\nOurs / ${prc} (medians; heap: ours / its):\n`);
  console.log(
    "| entries | warm read | cold, new instance | cold, reopened | after /tree | reloaded | heap | compaction: new / reopened / after /tree / heap |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const p of prcRows) {
    const r = rows.find((o) => o.entries === p.entries);
    const [a, b, ac, bc] = [r.none, p.none, r.compacted, p.compacted];
    console.log(
      `| ${p.entries.toLocaleString("en")} | ${m(r.warm, p.warm)} | ${m(a.coldNew, b.coldNew)} | ${
        m(a.coldOpen, b.coldOpen)
      } | ${m(a.tree, b.tree)} | ${m(a.reloaded, b.reloaded)} | ${mb(a.heapMb, b.heapMb)} | ${
        m(ac.coldNew, bc.coldNew)
      } / ${m(ac.coldOpen, bc.coldOpen)} / ${m(ac.tree, bc.tree)} / ${mb(ac.heapMb, bc.heapMb)} |`,
    );
  }
  console.log("");
  const p20 = prcRows.find((p) => p.entries === 20_000);
  if (r20 !== undefined && p20 !== undefined) {
    const a = r20.none;
    const b = p20.none;
    const rNew = a.coldNew.p50 / b.coldNew.p50;
    const rOpen = a.coldOpen.p50 / b.coldOpen.p50;
    console.log(
      `no compaction, cold at 20,000, ours / ${prc} (target <= 0.3x): new instance ${
        rNew.toFixed(2)
      }x (${a.coldNew.p50.toFixed(2)} / ${b.coldNew.p50.toFixed(2)} ms), reopened ${
        rOpen.toFixed(2)
      }x (${a.coldOpen.p50.toFixed(2)} / ${b.coldOpen.p50.toFixed(2)} ms): ${
        target(Math.max(rNew, rOpen) <= 0.3)
      }`,
    );
  }
  const p1 = prcRows.find((p) => p.entries === 1_000);
  const r1 = at(1_000);
  if (r1 !== undefined && p1 !== undefined) {
    // a cold start no slower than pi-readcache's at 1,000 entries, every cold case
    const cases = [
      ["new instance", r1.none.coldNew, p1.none.coldNew],
      ["reopened", r1.none.coldOpen, p1.none.coldOpen],
      ["compaction, new instance", r1.compacted.coldNew, p1.compacted.coldNew],
      ["compaction, reopened", r1.compacted.coldOpen, p1.compacted.coldOpen],
    ].map(([name, a, b]) => [name, a.p50 / b.p50, a.p50, b.p50]);
    console.log(
      `cold at 1,000, ours / ${prc} (target <= 1x): ${
        cases.map(([name, x, a, b]) =>
          `${name} ${x.toFixed(2)}x (${a.toFixed(2)} / ${b.toFixed(2)} ms)`
        )
          .join(", ")
      }: ${target(cases.every(([, x]) => x <= 1))}`,
    );
  }
  console.log(`answers of the timed reads: ours ${modes(OURS)}; ${prc} ${modes(PRC)}`);
  console.log(
    `reads of the same file in the same case, ours and ${prc}: ${pairs.alike} answered alike, ${pairs.differ.length} not${
      pairs.differ.length === 0 ? "" : ` (${pairs.differ.slice(0, 5).join("; ")})`
    }`,
  );
}
if (JSON_OUT !== undefined) {
  const json = { machine, rows, livedHeapMb: livedMb };
  if (PRC !== undefined) json.piReadcache = { version: PRC.version, rows: prcRows };
  writeFileSync(JSON_OUT, JSON.stringify(json, null, 2) + "\n");
}
