// pi without `npm install` in the checkout (a real pi, from the pi suite): the package's entry
// (src/adapters/pi/load.ts) loads, says what failed and what to run, and leaves pi's read as it
// is; and the slash commands print in print mode (`pi -p "/readcache-status"`), where pi has no UI.
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startExtension } from "../../src/adapters/pi/load.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
const PI_CLI = join(REPO, "pi-suite/node_modules/@mariozechner/pi-coding-agent/dist/cli.js");

async function pi(args: string[], home: string, env: Record<string, string> = {}) {
  const out = await new Deno.Command("node", {
    args: [PI_CLI, ...args],
    cwd: home,
    env: { HOME: home, NO_COLOR: "1", PATH: Deno.env.get("PATH") ?? "", ...env },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const td = new TextDecoder();
  return { code: out.code, stdout: td.decode(out.stdout), stderr: td.decode(out.stderr) };
}

Deno.test("pi -e <a checkout without npm install> says what to run", async () => {
  const root = mkdtempSync(join(tmpdir(), "readcache-pi-load-"));
  try {
    const checkout = join(root, "checkout");
    cpSync(join(REPO, "src"), join(checkout, "src"), { recursive: true });
    cpSync(join(REPO, "package.json"), join(checkout, "package.json"));
    const r = await pi(["-e", checkout, "-p", "hello"], root);
    assert.match(
      r.stderr,
      new RegExp(
        "readcache: the pi extension is not loaded \\(Cannot find module 'zod'.*\\), so reads " +
          `are not cached\\. Run \`npm install --omit=peer\` in ${checkout}, then start pi again`,
      ),
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

Deno.test('pi -p "/readcache-status" prints the report (print mode has no UI)', async () => {
  const home = mkdtempSync(join(tmpdir(), "readcache-pi-print-"));
  try {
    const r = await pi(["-e", REPO, "-p", "/readcache-status"], home, {
      NODE_PATH: join(REPO, "pi-suite", "node_modules"),
    });
    // on the terminal (pi keeps stdout for the model's answer in print mode: stderr)
    const shown = r.stdout + r.stderr;
    assert.match(shown, /^readcache status\n/m, shown);
    assert.match(shown, /The model holds no file content/);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

Deno.test("the loader tells the user through pi's notification too, and never throws", async () => {
  const shown: string[] = [];
  const host = {
    on: (_event: string, f: (e: unknown, ctx: unknown) => void) =>
      f({}, { ui: { notify: (m: string) => shown.push(m) } }),
  };
  await startExtension(host as never, () => Promise.reject(new Error("Cannot find module 'diff'")));
  assert.equal(shown.length, 1);
  assert.match(shown[0], /Cannot find module 'diff'.*npm install --omit=peer/);
});
