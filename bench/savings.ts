// `deno task bench:savings`: bytes the read cache serves against the bytes pi's plain read would
// serve, on fixed-seed simulated agent workloads, per workload and per mode. Deterministic: the
// same code gives the same figures on any machine (no timing).
//
//   (a) mix: 400 steps over 50 files of 100-800 lines: 60% re-reads, 25% small edits followed by a
//       re-read, 15% range reads, one compaction
//   (b) chunked reading of large files: 2,000-line pages, then re-reads of parts
//   (c) overlapping ranges: 1-100, 50-150, 120-220, ...
//   (d) write-then-read: the agent writes or edits a file, then reads it
//   (e) edits inside a range the model holds, then the range again
//   (f) the model's own edits (SPEC §5.9): read, edit with pi's edit rules, re-read, several rounds
//       per file, whole files and ranges; the re-reads right after an edit are counted and must be
//       `unchanged` / `unchanged_range` (the run exits 1 otherwise)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderBaselineRead } from "../src/core/baseline.ts";
import { applyPiEdit } from "../src/core/edit.ts";
import type { ReadMode } from "../src/core/meta.ts";
import { createReadCache, type ReadCache } from "../src/shell/read_cache.ts";
import { seededRandom as rng } from "../scripts/seeded_random.ts";

import { noArgsTask } from "../scripts/task_help.ts";

noArgsTask(
  "deno task bench:savings",
  "Bytes the read cache serves against the bytes pi's plain read would serve, on fixed-seed\n" +
    "simulated agent workloads (a mix, chunked reading, overlapping ranges, write-then-read, edits\n" +
    "in a held range, the model's own edits), per workload and per mode. Deterministic.",
);

type Step =
  /** `afterEdit`: the re-read right after the model's own edit, the file being what it wrote. */
  | { op: "read"; path: string; offset?: number; limit?: number; afterEdit?: boolean }
  /** A change the model does not see (another process). */
  | { op: "edit"; path: string; line: number }
  /** The model's own edit with the edit tool: `line` gets a suffix, `insert` adds a line after it. */
  | { op: "editTool"; path: string; line: number; insert: boolean }
  | { op: "write"; path: string; lines: number }
  | { op: "forget" };

const source = (name: string, lines: number, salt = 0) =>
  Array.from(
    { length: lines },
    (_, i) =>
      `// ${name}:${i + 1} ${salt ? `v${salt} ` : ""}const item${i} = compute(${i}, "${name}");`,
  ).join("\n") + "\n";

interface Workload {
  name: string;
  files: Record<string, number>;
  steps: Step[];
}

function mix(): Workload {
  const r = rng(1);
  const files: Record<string, number> = {};
  for (let i = 0; i < 50; i++) files[`src/m${i}.ts`] = 100 + Math.floor(r() * 700);
  const names = Object.keys(files);
  const steps: Step[] = [];
  for (let s = 0; s < 400; s++) {
    if (s === 250) steps.push({ op: "forget" });
    const path = names[Math.floor(r() * names.length)];
    const x = r();
    if (x < 0.6) steps.push({ op: "read", path });
    else if (x < 0.85) {
      steps.push({ op: "edit", path, line: 1 + Math.floor(r() * files[path]) });
      steps.push({ op: "read", path });
    } else {
      const offset = 1 + Math.floor(r() * (files[path] - 50));
      steps.push({ op: "read", path, offset, limit: 50 });
    }
  }
  return { name: "(a) mix", files, steps };
}

function chunked(): Workload {
  const files = { "big/a.ts": 6000, "big/b.ts": 4500 };
  const steps: Step[] = [];
  for (const [path, n] of Object.entries(files)) {
    for (let o = 1; o <= n; o += 2000) steps.push({ op: "read", path, offset: o, limit: 2000 });
  }
  const r = rng(2);
  for (let k = 0; k < 30; k++) {
    const path = k % 2 ? "big/a.ts" : "big/b.ts";
    const offset = 1 + Math.floor(r() * (files[path] - 300));
    steps.push({ op: "read", path, offset, limit: 100 + Math.floor(r() * 200) });
  }
  return { name: "(b) chunked large files", files, steps };
}

function overlapping(): Workload {
  const files = { "src/long.ts": 1500, "src/other.ts": 900 };
  const steps: Step[] = [];
  for (const [path, n] of Object.entries(files)) {
    for (let s = 1; s + 100 <= n; s += 70) steps.push({ op: "read", path, offset: s, limit: 100 });
    for (let s = 1; s + 100 <= n; s += 130) steps.push({ op: "read", path, offset: s, limit: 100 });
  }
  return { name: "(c) overlapping ranges", files, steps };
}

function writeThenRead(): Workload {
  const r = rng(4);
  const files: Record<string, number> = {};
  for (let i = 0; i < 20; i++) files[`src/w${i}.ts`] = 80 + Math.floor(r() * 300);
  const steps: Step[] = [];
  for (let k = 0; k < 60; k++) {
    const path = `src/w${Math.floor(r() * 20)}.ts`;
    if (r() < 0.5) steps.push({ op: "write", path, lines: 80 + Math.floor(r() * 300) });
    else steps.push({ op: "edit", path, line: 1 + Math.floor(r() * 80) });
    steps.push({ op: "read", path });
  }
  return { name: "(d) write-then-read", files, steps };
}

function editsInRange(): Workload {
  const r = rng(5);
  const files: Record<string, number> = {};
  for (let i = 0; i < 10; i++) files[`src/e${i}.ts`] = 3000;
  const steps: Step[] = [];
  for (let k = 0; k < 40; k++) {
    const path = `src/e${Math.floor(r() * 10)}.ts`;
    const offset = 1 + Math.floor(r() * 2500);
    steps.push({ op: "read", path, offset, limit: 200 });
    steps.push({ op: "edit", path, line: offset + 20 + Math.floor(r() * 150) });
    steps.push({ op: "read", path, offset, limit: 200 });
  }
  return { name: "(e) edits inside a held range", files, steps };
}

function ownEdits(): Workload {
  const r = rng(6);
  const files: Record<string, number> = {};
  for (let i = 0; i < 8; i++) files[`src/f${i}.ts`] = 150 + Math.floor(r() * 450);
  const lines = { ...files }; // line counts as the edits change them
  const names = Object.keys(files);
  const steps: Step[] = [];
  for (let round = 0; round < 60; round++) {
    const path = names[Math.floor(r() * names.length)];
    if (r() < 0.5) {
      // the whole file: read, one or two edits anywhere, read again
      steps.push({ op: "read", path });
      for (let k = r() < 0.3 ? 2 : 1; k > 0; k--) {
        const insert = r() < 0.3;
        steps.push({ op: "editTool", path, line: 1 + Math.floor(r() * lines[path]), insert });
        if (insert) lines[path]++;
      }
      steps.push({ op: "read", path, afterEdit: true });
    } else {
      // a range: read it, edit a line inside it, read the range again (one line longer when the
      // edit added one)
      const limit = 40 + Math.floor(r() * 80);
      const offset = 1 + Math.floor(r() * (lines[path] - limit));
      const insert = r() < 0.3;
      steps.push({ op: "read", path, offset, limit });
      steps.push({
        op: "editTool",
        path,
        line: offset + 2 + Math.floor(r() * (limit - 4)),
        insert,
      });
      if (insert) lines[path]++;
      steps.push({ op: "read", path, offset, limit: limit + (insert ? 1 : 0), afterEdit: true });
    }
  }
  return { name: "(f) own edits, re-read", files, steps };
}

interface Tally {
  served: number;
  plain: number;
  byMode: Map<string, { reads: number; served: number; plain: number }>;
  /** Re-reads right after the model's own edit, and how many were `unchanged`/`unchanged_range`. */
  afterEdit: { reads: number; unchanged: number };
}

async function run(w: Workload): Promise<Tally> {
  const cwd = mkdtempSync(join(tmpdir(), "readcache-savings-"));
  const enc = new TextEncoder();
  try {
    for (const [path, n] of Object.entries(w.files)) {
      Deno.mkdirSync(join(cwd, path, ".."), { recursive: true });
      writeFileSync(join(cwd, path), source(path, n));
    }
    const cache: ReadCache = createReadCache({ cwd, home: cwd, store: "memory" });
    const t: Tally = {
      served: 0,
      plain: 0,
      byMode: new Map(),
      afterEdit: { reads: 0, unchanged: 0 },
    };
    let salt = 1;
    for (const s of w.steps) {
      if (s.op === "forget") cache.forget();
      else if (s.op === "write") {
        // the agent's write tool: the file, and the content in the model's context (SPEC §5.8)
        const content = source(s.path, s.lines, salt++);
        writeFileSync(join(cwd, s.path), content);
        cache.wrote(s.path, content);
      } else if (s.op === "edit") {
        const lines = readFileSync(join(cwd, s.path), "utf8").split("\n");
        const i = Math.min(s.line, lines.length - 1) - 1;
        lines[i] = `${lines[i]} // edited ${salt++}`;
        writeFileSync(join(cwd, s.path), lines.join("\n"));
      } else if (s.op === "editTool") {
        // the model's own edit: pi's edit tool applies the replacement, the cache records the call
        const text = readFileSync(join(cwd, s.path), "utf8");
        const lines = text.split("\n");
        const oldText = lines[Math.min(s.line, lines.length - 1) - 1];
        const n = salt++;
        const added = s.insert ? `\n// line the model added in edit ${n};` : "";
        const edits = [{ oldText, newText: `${oldText} // model edit ${n}${added}` }];
        const r = applyPiEdit(text, edits, s.path);
        if (!r.ok) throw new Error(`${w.name}: ${r.error}`);
        writeFileSync(join(cwd, s.path), r.text);
        await cache.edited(s.path, edits);
      } else {
        const req = { path: s.path, offset: s.offset, limit: s.limit };
        const res = await cache.read(req);
        const plain = renderBaselineRead({
          text: readFileSync(join(cwd, s.path), "utf8"),
          displayPath: s.path,
          offset: s.offset,
          limit: s.limit,
        }).text;
        if (res.kind !== "answer") throw new Error(`${s.path}: the cache did not take the file`);
        const served = enc.encode(res.text).length;
        const p = enc.encode(plain).length;
        t.served += served;
        t.plain += p;
        const mode: ReadMode | "plain" = res.mode ?? "plain";
        const m = t.byMode.get(mode) ?? { reads: 0, served: 0, plain: 0 };
        m.reads++;
        m.served += served;
        m.plain += p;
        t.byMode.set(mode, m);
        if (s.afterEdit === true) {
          t.afterEdit.reads++;
          if (mode === "unchanged" || mode === "unchanged_range") t.afterEdit.unchanged++;
        }
      }
    }
    return t;
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

const pct = (a: number, b: number) => `${(100 * a / b).toFixed(1)}%`;
console.log("| workload | reads | plain bytes | served bytes | served / plain |");
console.log("|---|---|---|---|---|");
const results: [string, Tally][] = [];
for (const w of [mix(), chunked(), overlapping(), writeThenRead(), editsInRange(), ownEdits()]) {
  const t = await run(w);
  results.push([w.name, t]);
  const reads = [...t.byMode.values()].reduce((n, m) => n + m.reads, 0);
  console.log(`| ${w.name} | ${reads} | ${t.plain} | ${t.served} | ${pct(t.served, t.plain)} |`);
}
const be = results.slice(1, 5);
const beServed = be.reduce((n, [, t]) => n + t.served, 0);
const bePlain = be.reduce((n, [, t]) => n + t.plain, 0);
console.log(`| (b)-(e) together | | ${bePlain} | ${beServed} | ${pct(beServed, bePlain)} |`);
console.log("\n| workload | mode | reads | served bytes | plain bytes |");
console.log("|---|---|---|---|---|");
for (const [name, t] of results) {
  for (const [mode, m] of [...t.byMode].sort()) {
    console.log(`| ${name} | ${mode} | ${m.reads} | ${m.served} | ${m.plain} |`);
  }
}
for (const [name, t] of results) {
  if (t.afterEdit.reads === 0) continue;
  const { reads, unchanged } = t.afterEdit;
  console.log(
    `\n${name}: ${unchanged} of ${reads} re-reads right after the model's own edit were ` +
      "`unchanged` / `unchanged_range`",
  );
  if (unchanged !== reads) {
    console.error(
      `${name}: ${reads - unchanged} re-reads of what the model wrote were not unchanged`,
    );
    Deno.exitCode = 1;
  }
}
