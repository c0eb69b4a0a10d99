// `--help` on the tasks a newcomer tries first prints what the task does instead of running it
// (issue 40 item 9), and the reference port says what it wants when it gets no vector.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("..", import.meta.url));

async function task(args: string[], stdin = ""): Promise<{ code: number; out: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", ...args],
    cwd: REPO,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(stdin));
  await w.close();
  const o = await child.output();
  const td = new TextDecoder();
  return { code: o.code, out: td.decode(o.stdout) + td.decode(o.stderr) };
}

for (
  const [name, what] of [["demo", /scripted session/], ["bench:savings", /fixed-seed/]] as const
) {
  Deno.test(`deno task ${name} --help says what it does and runs nothing`, async () => {
    const r = await task([name, "--help"]);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, new RegExp(`usage: deno task ${name}`));
    assert.match(r.out, what);
    assert.ok(r.out.trim().split("\n").length <= 6, `it ran:\n${r.out}`);
    const bad = await task([name, "--bogus"]);
    assert.equal(bad.code, 2, bad.out);
    assert.match(bad.out, /takes no arguments \(got --bogus\)/);
  });
}

Deno.test("deno task port --help explains the reference port; a bad stdin is a usage error", async () => {
  const help = await task(["port", "--help"]);
  assert.equal(help.code, 0, help.out);
  assert.match(help.out, /--stdin\s+ONE vector's input as JSON on stdin/);
  const bad = await task(["port"], "nope");
  assert.equal(bad.code, 2, bad.out);
  assert.match(bad.out, /stdin is not one JSON value/);
  const badFlag = await task(["port", "--stdin"], "nope");
  assert.equal(badFlag.code, 2, "the same flags as every port: --stdin is the contract");
  assert.match(badFlag.out, /stdin is not one JSON value/);
});

Deno.test("every port takes --stdin; a scenario it cannot run is a structured notApplicable", async () => {
  const input = JSON.stringify({
    id: "refresh-only",
    files: { "a.txt": "a\n" },
    steps: [{ op: "read", path: "a.txt" }, { op: "invalidate", path: "a.txt" }, {
      op: "read",
      path: "a.txt",
    }],
  });
  const reference = await task(["port", "--stdin"], input);
  assert.equal(reference.code, 0, reference.out);
  assert.match(reference.out, /"results":\[/);
  const claude = await task(["port:claude-code", "--stdin"], input);
  assert.equal(claude.code, 0, claude.out);
  assert.match(
    claude.out,
    /\{"id":"refresh-only","notApplicable":\{"step":1,"reason":"[^"]*refresh[^"]*"\}\}/,
  );
});
