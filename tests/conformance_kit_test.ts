// The porter's kit from a fresh directory with only the package (through a deno.json `links`
// entry to this checkout, offline): `--help`, `--json`, choosing a layer, and the complete
// Python port printed in docs/porting.md, run through the kit.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("..", import.meta.url));
const KIT = "jsr:@readcache/core@^0.1.0/conformance";

async function inFreshDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "readcache-kit-")));
  try {
    writeFileSync(
      join(dir, "deno.json"),
      JSON.stringify({
        links: [repo],
        imports: { "@readcache/core": "jsr:@readcache/core@^0.1.0" },
      }),
    );
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function kit(dir: string, args: string[]): Promise<{ code: number; out: string }> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", KIT, ...args],
    cwd: dir,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  return { code: r.code, out: new TextDecoder().decode(r.stdout) };
}

Deno.test("the kit runs from a fresh directory: --help, a layer, --json", async () => {
  await inFreshDir(async (dir) => {
    const help = await kit(dir, ["--help"]);
    assert.equal(help.code, 0);
    assert.match(help.out, /without its expectations/);
    const trust = await kit(dir, ["trust", "--json"]);
    assert.equal(trust.code, 0);
    const report = JSON.parse(trust.out);
    assert.equal(report.port, "reference (in process)");
    assert.equal(report.failed, 0);
    assert.ok(report.passed > 30);
  });
});

Deno.test("docs/porting.md's Python port runs through the kit and fails what it should", {
  ignore: new Deno.Command("sh", { args: ["-c", "command -v python3"] }).outputSync().code !== 0,
}, async () => {
  const page = readFileSync(join(repo, "docs", "porting.md"), "utf8");
  const code = /```python\n([\s\S]*?)```/.exec(page)?.[1];
  assert.ok(code, "docs/porting.md has a python block");
  await inFreshDir(async (dir) => {
    writeFileSync(join(dir, "my_port.py"), code);
    const r = await kit(dir, ["scenario", "path", "--cmd", "python3 my_port.py", "--json"]);
    const report = JSON.parse(r.out);
    assert.equal(r.code, 1);
    // first reads pass; everything that expects a cached answer fails; layers are unsupported
    assert.ok(report.passed >= 10, `passed ${report.passed}`);
    assert.ok(report.failed >= 60, `failed ${report.failed}`);
    assert.ok(report.unsupported > 0);
    const ids = report.failures.map((f: { id: string }) => f.id);
    assert.ok(ids.includes("core-unchanged-full"));
    assert.ok(!ids.includes("core-first-full-read"), JSON.stringify(report.failures[0]));
  });
});
