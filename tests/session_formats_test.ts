// Session files in every format pi reads (SPEC §11.3): version 3, and the linear versions 1 and 2
// that pi migrates in memory (ids by position, firstKeptEntryIndex, hookMessage), lines holding two
// objects glued together; and the CLI on the real pi sessions in ../shared/realworld, read as
// they are and never rewritten.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { activeBranch } from "../src/core/replay.ts";
import { parseSessionJsonl, piBranchToReplay } from "../src/adapters/pi/branch.ts";

const line = (o: unknown) => JSON.stringify(o);

Deno.test("version 1: ids by position, parents in order, firstKeptEntryIndex, glued lines", () => {
  const text = [
    line({ type: "session", id: "s1", cwd: "/w" }),
    line({ type: "message", message: { role: "user", content: "hi" } }),
    line({ type: "message", message: { role: "assistant", content: [] } }) +
    line({ type: "message", message: { role: "user", content: "glued" } }),
    "not json at all",
    line({ type: "compaction", summary: "s", firstKeptEntryIndex: 2 }),
    "",
  ].join("\n");
  const entries = parseSessionJsonl(text);
  assert.deepEqual(entries.map((e) => [e.id, e.parentId, e.type]), [
    ["1", null, "message"],
    ["2", "1", "message"],
    ["3", "2", "message"],
    ["4", "3", "compaction"],
  ]);
  assert.equal(entries[3].firstKeptEntryId, "2");
  // replay sees the compaction as the barrier
  const branch = piBranchToReplay(entries);
  assert.deepEqual(activeBranch(branch, "4").map((e) => e.kind), [
    "other",
    "other",
    "other",
    "compaction",
  ]);
});

Deno.test("version 2: ids kept, hookMessage becomes custom; version 3 as it is", () => {
  const v2 = [
    line({ type: "session", version: 2, id: "s" }),
    line({ type: "message", id: "a", parentId: null, message: { role: "hookMessage" } }),
  ].join("\n");
  const [e] = parseSessionJsonl(v2);
  assert.equal(e.id, "a");
  assert.equal((e.message as { role: string }).role, "custom");
  const v3 = [
    line({ type: "session", version: 3, id: "s" }),
    line({ type: "message", id: "a", parentId: null, message: { role: "hookMessage" } }),
  ].join("\n");
  assert.equal((parseSessionJsonl(v3)[0].message as { role: string }).role, "hookMessage");
});

const realworld = fileURLToPath(new URL("../../shared/realworld/pi-mono/", import.meta.url));
const sessions = ["large-session", "before-compaction", "session"];

Deno.test({
  name: "the CLI reads the real pi sessions as they are (v1/v2) and never rewrites them",
  ignore: !existsSync(realworld),
  fn: async () => {
    const cli = fileURLToPath(new URL("../cli/main.ts", import.meta.url));
    for (const s of sessions) {
      const file = `${realworld}${s}/session.jsonl`;
      const manifest = JSON.parse(readFileSync(`${realworld}${s}/manifest.json`, "utf8"));
      const before = readFileSync(file);
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", cli, "savings", file, "--json", "--no-replay"],
        env: { NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      const report = JSON.parse(new TextDecoder().decode(out.stdout));
      // every successful read of the session is counted (the manifest's count)
      assert.equal(report.totals.reads, manifest.reads, s);
      assert.deepEqual(readFileSync(file), before, `${s} was rewritten`);
    }
  },
});
