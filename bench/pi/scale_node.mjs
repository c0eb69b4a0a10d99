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
//   /tree     the warm instance after the leaf moved half-way up the branch (as /tree to an
//             earlier point, then a new prompt);
//   reloaded  a new instance from pi's loader anew (`loadExtensions`, as pi's /reload and
//             /resume build a new runtime: the module is evaluated again, its code is cold);
// and the same cold cases on a branch of that session that has a compaction 500 entries above
// its leaf (the strict compaction barrier: nothing above it can back an answer). Beside them pi's
// own read and pi's getBranch(), and the heap an instance holds after two reads. Every timed path
// runs first on a small session of its own: "cold" is an instance's state, not code being
// compiled (no full garbage collection comes before a timed read: one discards compiled code).
//
// Needs pi in pi-suite/node_modules (`npx -y deno@2 install --config pi-suite/deno.json`, which
// `deno task bench:node` does) and Node 20+. Run alone: `node bench/pi/scale_node.mjs` (it
// restarts itself with --expose-gc and NODE_PATH set to pi-suite/node_modules, where the
// extension's zod and diff are, as tests/pi/pi_rpc_e2e_test.ts runs pi). Options:
// `--sizes 1000,20000` (entries), `--json FILE` (the figures as JSON too), `--extension FILE`
// (another copy of src/adapters/pi/extension.ts, to compare two versions on one machine).
import { spawnSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
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
    "pi is not installed in pi-suite/node_modules: run `npx -y deno@2 install --config pi-suite/deno.json`",
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
const WARM = 200;
const COLD = 15;
const RELOADED = 7;
const COMPACTION_BACK = 500;

// ---------------------------------------------------------------------------------------------
// The workload

const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-scale-node-")));
const sessionDir = join(cwd, ".sessions");
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
  constructor(session, extensions, runtime) {
    this.session = session;
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

  /** Runs the read call `id` as pi's agent loop does; appends its result when `persist`. */
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
  }

  /** One read as the model's next turn makes it; the time of the tool call alone. */
  async timeRead(path) {
    this.userMessage("next");
    const id = this.assistantRead(path);
    const t = performance.now();
    await this.runRead(id, path, false);
    return performance.now() - t;
  }
}

// pi's loader, as pi loads an extension: once here; new instances below call the same module's
// default export again (the extension keeps its state per instance), `reloaded` loads anew
async function piLoad() {
  const loaded = await loader.loadExtensions([EXTENSION], cwd);
  if (loaded.errors.length > 0) throw new Error(JSON.stringify(loaded.errors));
  return loaded;
}
await piLoad();
// the module's default export through jiti as pi's loader imports it (moduleCache off, pi's own
// package aliased), for new instances of the same loaded code
const { createJiti } = await import(
  pathToFileURL(
    createRequire(join(PI_DIR, "dist", "core", "extensions", "loader.js")).resolve("jiti"),
  )
    .href
);
const factory = await createJiti(piUrl("dist/core/extensions/loader.js"), {
  moduleCache: false,
  alias: { "@mariozechner/pi-coding-agent": join(PI_DIR, "dist", "index.js") },
}).import(EXTENSION, { default: true });

async function newHarness(session) {
  const runtime = loader.createExtensionRuntime();
  const extension = await loader.loadExtensionFromFactory(
    factory,
    cwd,
    undefined,
    runtime,
    EXTENSION,
  );
  return new PiHarness(session, [extension], runtime);
}

async function reloadedHarness(session) {
  const { extensions, runtime } = await piLoad();
  return new PiHarness(session, extensions, runtime);
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
  for (let k = 0; k < count; k++) xs.push(await (await make()).timeRead(`f${k}.ts`));
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

async function reopenedReads(session, count) {
  const xs = [];
  for (let k = 0; k < count; k++) {
    const reopened = pi.SessionManager.open(session.getSessionFile(), sessionDir);
    const h = await newHarness(reopened);
    churn();
    xs.push(await h.timeRead(`f${k}.ts`));
  }
  return xs;
}

/** /tree: the warm instance, the leaf moved `back` entries up, then a read; back at the tip. */
async function treeReads(h, count, back) {
  const xs = [];
  for (let k = 0; k < count; k++) {
    const tip = h.session.getLeafId();
    await h.timeRead("f1.ts"); // synced at the tip
    h.session.branch(above(h.session, back));
    xs.push(await h.timeRead(`f${k}.ts`));
    h.session.branch(tip);
  }
  return xs;
}

/**
 * Heap an instance holds after two reads (MB): the first replays the session, the second
 * extends what it synced (as every later read does). Full collections around it.
 */
const alive = [];
async function heapOf(session) {
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  alive.push(await newHarness(session));
  await alive[0].timeRead("f2.ts");
  await alive[0].timeRead("f3.ts");
  gc();
  gc();
  const mb = (process.memoryUsage().heapUsed - before) / 1024 / 1024;
  alive.length = 0;
  return mb;
}

/**
 * Runs every timed path on a small session of its own, so that the figures of the first size are
 * not those of code being compiled (and again after the full collections of `heapOf`): cold
 * means a new instance or a reopened session here, not new code (that is `reloaded`).
 */
async function warmUp() {
  const s = pi.SessionManager.inMemory(cwd);
  const h = await newHarness(s);
  const c = { step: 0 };
  await grow(h, 900, c);
  for (let k = 0; k < 3; k++) await treeReads(h, 5, 450);
  for (let k = 0; k < 3; k++) await coldReads(10, () => newHarness(s));
  s.appendCompaction("summary", s.getLeafId(), 1000);
  await grow(h, depth(s) + 300, c);
  await treeReads(h, 10, 150);
  await coldReads(10, () => newHarness(s));
  for (let k = 0; k < 20; k++) await timePlain(`f${k}.ts`);
  churn();
}

await warmUp();
const rows = [];
const session = pi.SessionManager.create(cwd, sessionDir);
const host = await newHarness(session);
const counter = { step: 0 };
for (const n of SIZES) {
  await grow(host, n, counter);
  const warm = [];
  const plainReads = [];
  const branch = [];
  for (let k = 0; k < WARM; k++) {
    const path = `f${(counter.step + k) % FILES}.ts`;
    warm.push(await host.timeRead(path));
    plainReads.push(await timePlain(path));
  }
  // apart from the reads: getBranch() leaves garbage that the next timed read would pay for
  for (let k = 0; k < 10; k++) {
    const t = performance.now();
    session.getBranch();
    branch.push(performance.now() - t);
  }
  churn();
  const coldNew = await coldReads(COLD, () => newHarness(session));
  const coldOpen = await reopenedReads(session, COLD);
  const tree = await treeReads(host, COLD, Math.floor(n / 2));
  const reloaded = await coldReads(RELOADED, () => reloadedHarness(session));

  // the same cold cases on a branch with a compaction 500 entries above its leaf
  const mainTip = session.getLeafId();
  const forkAt = above(session, COMPACTION_BACK);
  session.branch(forkAt);
  session.appendCompaction("summary", forkAt, 1000);
  await grow(host, depth(session) + COMPACTION_BACK - 1, counter);
  churn();
  const cNew = await coldReads(COLD, () => newHarness(session));
  const cOpen = await reopenedReads(session, COLD);
  const cTree = await treeReads(host, COLD, COMPACTION_BACK / 2); // half-way up to the compaction
  const cReloaded = await coldReads(RELOADED, () => reloadedHarness(session));

  // heaps last (full collections), then code warm again for the next size
  const cHeap = await heapOf(session);
  session.branch(mainTip);
  const heap = await heapOf(session);
  if (n !== SIZES.at(-1)) await warmUp();
  rows.push({
    entries: n,
    warm: stats(warm),
    plain: stats(plainReads),
    getBranch: stats(branch),
    none: {
      coldNew: stats(coldNew),
      coldOpen: stats(coldOpen),
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
  });
}

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
  "| entries | warm read | pi's plain read | cold, new instance | cold, reopened | after /tree | reloaded (pi's loader) | heap | pi getBranch() |",
);
console.log("|---|---|---|---|---|---|---|---|---|");
for (const r of rows) {
  console.log(
    `| ${r.entries.toLocaleString("en")} | ${f(r.warm)} | ${f(r.plain)} | ${f(r.none.coldNew)} | ${
      f(r.none.coldOpen)
    } | ${f(r.none.tree)} | ${f(r.none.reloaded)} | ${r.none.heapMb.toFixed(2)} MB | ${
      f(r.getBranch)
    } |`,
  );
}
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
console.log("");

const target = (ok) => ok ? "meets target" : "MISSES target";
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
console.log(
  "pi-readcache is not on the npm registry (`npm view pi-readcache`: 404): no side-by-side figures.",
);
if (JSON_OUT !== undefined) {
  writeFileSync(JSON_OUT, JSON.stringify({ machine, rows }, null, 2) + "\n");
}
