// docs/pi.md: `pi install "$PWD"` in a checkout, run with pi itself (the pi suite's
// node_modules) in a temporary HOME: pi records the checkout as a package and lists it.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
const PI_CLI = join(repo, "pi-suite/node_modules/@mariozechner/pi-coding-agent/dist/cli.js");

Deno.test('docs/pi.md: pi install "$PWD" installs the checkout', async () => {
  assert.ok(readFileSync(join(repo, "docs", "pi.md"), "utf8").includes('pi install "$PWD"'));
  const home = mkdtempSync(join(tmpdir(), "readcache-pi-install-"));
  try {
    const run = async (args: string[]) => {
      const out = await new Deno.Command("node", {
        args: [PI_CLI, ...args],
        cwd: repo,
        env: { HOME: home, NO_COLOR: "1", PATH: Deno.env.get("PATH") ?? "" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const td = new TextDecoder();
      return { code: out.code, text: td.decode(out.stdout) + td.decode(out.stderr) };
    };
    const install = await run(["install", repo]);
    assert.equal(install.code, 0, install.text);
    assert.match(install.text, /Installed/);
    const settings = JSON.parse(
      readFileSync(join(home, ".pi", "agent", "settings.json"), "utf8"),
    );
    assert.equal(settings.packages.length, 1);
    const list = await run(["list"]);
    assert.equal(list.code, 0, list.text);
    assert.ok(list.text.includes(repo), list.text);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
