// `deno task bench:claude` works (a broken bench fails CI): a small run, every call answered, the
// re-reads cached.
import assert from "node:assert/strict";

Deno.test("bench:claude runs at a small size and caches re-reads", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      "bench/claude/per_call.ts",
      "--sizes",
      "100,300",
      "--reads",
      "16",
      "--json",
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  assert.equal(out.code, 0, dec.decode(out.stderr));
  const rows = JSON.parse(dec.decode(out.stdout));
  assert.equal(rows.length, 2);
  for (const r of rows) {
    assert.ok(r.rows >= 100 && r.medianMs > 0, JSON.stringify(r));
    assert.ok(r.cached >= 2, `re-reads are cached: ${JSON.stringify(r)}`);
  }
});
