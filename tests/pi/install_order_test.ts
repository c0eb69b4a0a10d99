// The pi package installs in either order on a fresh copy of the repository (README: Use in pi):
// Deno tasks first (the demo, and the pi suite's install that `deno task test` runs), then
// `npm install --omit=peer`; or npm first, then Deno tasks. In both, Node (through jiti, as pi loads extensions) imports the extension with its
// runtime dependencies (zod, diff) resolved from the checkout.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = fileURLToPath(new URL("../..", import.meta.url));

function jitiCli(): string {
  const dir = join(repo, "pi-suite", "node_modules", ".deno");
  const entry = readdirSync(dir).find((e) => e.startsWith("jiti@"));
  assert.ok(entry, "jiti comes with pi in the pi suite's node_modules");
  return join(dir, entry, "node_modules", "jiti", "lib", "jiti-cli.mjs");
}

async function sh(cmd: string, args: string[], cwd: string): Promise<string> {
  const out = await new Deno.Command(cmd, { args, cwd, env: { NO_COLOR: "1" } }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.ok(out.success, `${cmd} ${args.join(" ")} failed:\n${text}`);
  return text;
}

/** A fresh copy of the committed tree (what a clone holds), without node_modules. */
async function freshCopy(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "readcache-install-"));
  const tar = join(dir, "head.tar");
  await sh("git", ["archive", "--format=tar", "-o", tar, "HEAD"], repo);
  await sh("tar", ["-xf", tar, "-C", dir], dir);
  rmSync(tar);
  return dir;
}

/**
 * What pi does with `pi -e <checkout>`: jiti imports the loader named in package.json, and the
 * loader imports the extension (which needs zod and diff from `npm install`).
 */
async function loadLikePi(copy: string): Promise<void> {
  const probe = join(copy, "probe.mjs");
  await Deno.writeTextFile(
    probe,
    [
      'import { readFileSync } from "node:fs";',
      `const pkg = JSON.parse(readFileSync(${
        JSON.stringify(join(copy, "package.json"))
      }, "utf8"));`,
      `const loader = await import(${JSON.stringify(copy)} + "/" + pkg.pi.extensions[0]);`,
      `const mod = await import(${JSON.stringify(copy)} + "/src/adapters/pi/extension.ts");`,
      "console.log(typeof loader.default, typeof mod.default, typeof mod.createReadcacheExtension);",
    ].join("\n"),
  );
  const text = await sh("node", [jitiCli(), probe], copy);
  assert.match(text, /function function function/);
}

const ordered = (name: string, fn: (copy: string) => Promise<void>) =>
  Deno.test({
    name,
    ignore: !existsSync(join(repo, "pi-suite", "node_modules", ".deno")),
    fn: async () => {
      const copy = await freshCopy();
      try {
        await fn(copy);
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    },
  });

ordered("Deno tasks first, then npm install, then pi loads the checkout", async (copy) => {
  await sh(Deno.execPath(), ["task", "demo"], copy);
  // what `deno task test` installs for the pi suite (CI's step), into pi-suite/node_modules
  await sh(Deno.execPath(), ["install", "--frozen", "--config", "pi-suite/deno.json"], copy);
  assert.ok(existsSync(join(copy, "pi-suite", "node_modules", "@mariozechner")), "pi installed");
  // the core's Deno config writes no node_modules and the pi suite's lives in pi-suite/, so npm
  // owns the checkout's node_modules (README: Dependencies)
  assert.ok(!existsSync(join(copy, "node_modules")), "the Deno tasks write no node_modules");
  await sh("npm", ["install", "--omit=peer", "--no-package-lock", "--no-audit", "--no-fund"], copy);
  await sh(Deno.execPath(), ["task", "demo"], copy);
  await loadLikePi(copy);
  assert.ok(!existsSync(join(copy, "package-lock.json")), "no lockfile is written (README)");
});

ordered(
  "npm install --omit=peer first, then Deno tasks, then pi loads the checkout",
  async (copy) => {
    await sh(
      "npm",
      ["install", "--omit=peer", "--no-package-lock", "--no-audit", "--no-fund"],
      copy,
    );
    await sh(Deno.execPath(), ["task", "demo"], copy);
    await loadLikePi(copy);
    assert.ok(!existsSync(join(copy, "package-lock.json")), "no lockfile is written (README)");
  },
);
