// A scripted session in a temporary directory: first read, repeat read, edit
// then read, range read, compaction, /tree navigation back, refresh. Prints
// each read's mode, the bytes served, the bytes a plain read would have
// served, and the total savings.
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { renderBaselineRead } from "../src/core/baseline.ts";
import { runScenario } from "../src/conformance/session_simulator.ts";
import type { Scenario } from "../src/conformance/vector_schema.ts";
import { noArgsTask } from "./task_help.ts";

noArgsTask(
  "deno task demo",
  "A scripted session in a temporary directory: first read, repeat read, edit then read, range\n" +
    "read, compaction, /tree navigation back, refresh. Prints each read's mode, the bytes served,\n" +
    "the bytes a plain read would have served, and the total savings. Writes nothing else.",
);

const source = Array.from(
  { length: 300 },
  (_, i) =>
    i % 10 === 0
      ? `export function step${i}(input: number): number {`
      : i % 10 === 9
      ? "}"
      : `  const v${i} = input * ${i} + ${i % 7}; // keep the model honest`,
).join("\n") + "\n";
const edited = source.replace("input * 42 + 0", "input * 42 + 1000");

const scenario: Scenario = {
  id: "demo",
  title: "demo session",
  refs: ["README"],
  files: { "src/app.ts": source },
  steps: [
    { op: "read", path: "src/app.ts", expect: {} },
    { op: "message" },
    { op: "label", name: "before-edit" },
    { op: "read", path: "src/app.ts", expect: {} },
    { op: "write", path: "src/app.ts", content: edited },
    { op: "read", path: "src/app.ts", expect: {} },
    { op: "read", path: "src/app.ts:100-140", expect: {} },
    { op: "compact" },
    { op: "read", path: "src/app.ts", expect: {} },
    { op: "read", path: "src/app.ts", expect: {} },
    { op: "navigate", to: "before-edit" },
    { op: "read", path: "src/app.ts", expect: {} },
    { op: "invalidate", path: "src/app.ts" },
    { op: "read", path: "src/app.ts", expect: {} },
  ],
};
const notes: Record<number, string> = {
  0: "first read",
  3: "repeat read",
  5: "edit, then read",
  6: "range read (lines 100-140)",
  8: "first read after compaction",
  9: "repeat after compaction",
  11: "/tree back to before the edit",
  13: "/readcache-refresh, then read",
};

const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-demo-")));
try {
  const out = await runScenario(scenario, cwd, homedir());
  const enc = new TextEncoder();
  let content = source;
  let servedTotal = 0;
  let plainTotal = 0;
  console.log(`readcache demo in ${cwd}\n`);
  console.log("step  what                              mode               served   plain read");
  let r = 0;
  scenario.steps.forEach((s, i) => {
    if (s.op === "write") content = typeof s.content === "string" ? s.content : content;
    if (s.op !== "read") return;
    const res = out.results[r++];
    if ("error" in res) {
      console.log(`${String(i).padStart(4)}  ${notes[i] ?? ""} ERROR ${res.error}`);
      return;
    }
    const m = /^(.*?):(\d+)-(\d+)$/.exec(s.path);
    const plain = renderBaselineRead({
      text: content,
      displayPath: m ? m[1] : s.path,
      offset: m ? Number(m[2]) : undefined,
      limit: m ? Number(m[3]) - Number(m[2]) + 1 : undefined,
    }).text;
    const served = enc.encode(res.text).length;
    const plainBytes = enc.encode(plain).length;
    servedTotal += served;
    plainTotal += plainBytes;
    console.log(
      `${String(i).padStart(4)}  ${(notes[i] ?? "").padEnd(34)}${String(res.mode).padEnd(19)}${
        String(served).padStart(6)
      } B ${String(plainBytes).padStart(8)} B`,
    );
    if (res.mode === "unchanged" || res.mode === "diff" || res.mode === "unchanged_range") {
      console.log(`      > ${res.text.split("\n").slice(0, 3).join("\n      > ")}`);
    }
  });
  const saved = plainTotal - servedTotal;
  console.log(
    `\ntotal: served ${servedTotal} B instead of ${plainTotal} B: saved ${saved} B (${
      (100 * saved / plainTotal).toFixed(1)
    }%, about ${Math.round(saved / 4)} tokens at 4 bytes/token)`,
  );
} finally {
  rmSync(cwd, { recursive: true, force: true });
}
