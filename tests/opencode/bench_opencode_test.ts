// `deno task bench:opencode` as a user runs it: the real OpenCode binary by default, at a small size,
// with and without the plugin, so a broken bench fails CI (issue 39). Skipped, with the reason, only
// where the binary cannot be had (as the end-to-end test is).
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { openCodeBinary } from "../../scripts/opencode/opencode_bin.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

Deno.test({
  name: "bench:opencode runs the real binary with and without the plugin and checks its goals",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const found = await openCodeBinary();
    if ("skip" in found) {
      console.log(`skipped: ${found.skip}`);
      return;
    }
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["task", "bench:opencode", "--sizes", "50", "--reads", "2", "--json"],
      cwd: REPO,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, `${stdout}\n${new TextDecoder().decode(out.stderr)}`);
    const report = JSON.parse(stdout) as {
      mode: string;
      runs: Record<string, Record<string, { ms: number; totalMs?: number; mode?: string }[]>>;
      goals: string[];
    };
    assert.equal(report.mode, "real");
    for (const variant of ["opencode", "current"]) {
      const reads = report.runs[variant]?.["50"];
      assert.ok((reads?.length ?? 0) >= 3, `${variant}: the first read and at least 2 more`);
      for (const r of reads) assert.ok(r.totalMs! > 0, JSON.stringify(r));
    }
    // the plugin answered: a read of a file the model read before is cached
    assert.ok(report.runs.current["50"].some((r) => r.mode !== undefined), stdout);
    assert.ok(
      report.goals.some((g) => /first read at 50 messages/.test(g)),
      report.goals.join("\n"),
    );
    // each goal on the whole read beside OpenCode's own figure, the plugin's hook apart
    assert.ok(
      report.goals.some((g) =>
        /^(ok {4}|MISSED) p95 at 50 messages .*; without the plugin/.test(g)
      ),
      report.goals.join("\n"),
    );
    assert.ok(
      report.goals.some((g) =>
        /^info {3}the plugin's hook at 50 messages: median [\d.]+ ms/.test(g)
      ),
      report.goals.join("\n"),
    );
  },
});

Deno.test("bench:opencode says what is wrong with its options", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "bench:opencode", "--sizes", "ten"],
    cwd: REPO,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 2);
  assert.match(new TextDecoder().decode(out.stderr), /--sizes: ten is not a positive number/);
});
