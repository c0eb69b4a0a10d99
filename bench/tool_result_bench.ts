// What a tool result costs (SPEC §5.10): when bash or grep returns, every file the model holds is
// read once and compared with its newest view. 200 held files of 300 lines, as a long session;
// against one plain read of one file and against a result that also shows a file (`cat`).
// Run: deno bench -A bench/tool_result_bench.ts
import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BranchKnowledge } from "../src/core/knowledge.ts";
import { sha256Hex } from "../src/core/hash.ts";
import { MemoryObjectStore } from "../src/core/object_store.ts";
import type { ReplayEntry } from "../src/core/replay.ts";
import { toolResultMeta } from "../src/shell/tool_result.ts";

const FILES = 200;
const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-toolbench-")));
const branch: ReplayEntry[] = [{ id: "m0", parentId: null, kind: "other" }];
for (let f = 0; f < FILES; f++) {
  const text = Array.from({ length: 300 }, (_, i) => `file ${f} line ${i + 1}: some code here`)
    .join("\n") + "\n";
  const path = join(cwd, `f${f}.ts`);
  writeFileSync(path, text);
  branch.push({
    id: `r${f}`,
    parentId: branch[branch.length - 1].id,
    kind: "read",
    meta: {
      v: 1,
      pathKey: path,
      scopeKey: "full",
      servedHash: sha256Hex(new TextEncoder().encode(text)),
      mode: "full",
      totalLines: 301,
      rangeStart: 1,
      rangeEnd: 301,
      bytes: text.length,
    },
    call: { name: path, pathKey: path },
  });
}
const knowledge = new BranchKnowledge();
knowledge.sync(branch);
const deps = { cwd, home: tmpdir(), store: new MemoryObjectStore() };
const one = join(cwd, "f7.ts");
const output = readFileSync(one, "utf8");

Deno.bench("one plain read of one file (readFileSync)", { group: "tool", baseline: true }, () => {
  readFileSync(one);
});
Deno.bench(`tool result, ${FILES} files held`, { group: "tool" }, async () => {
  await toolResultMeta(knowledge, deps);
});
Deno.bench(
  `tool result, ${FILES} files held, the output a cat of one`,
  { group: "tool" },
  async () => {
    await toolResultMeta(knowledge, deps, { kind: "shell", command: "cat f7.ts", output });
  },
);
