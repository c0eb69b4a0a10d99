// The npm package a user installs without cloning (`deno task pack`): packed with npm, installed
// from the tarball into an empty prefix, then run from another directory with no checkout, no
// Deno on PATH and (where `unshare -n` is allowed) no network at all: `readcache --help`,
// `readcache doctor`, and `readcache claude install`/`uninstall` in a throwaway HOME, which leaves
// the settings as they were. The Deno it runs is the package's own pinned dependency.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { installNpmPackage, PINNED_DENO } from "../scripts/npm_package.ts";
import { NETWORK_CUT_UNAVAILABLE, withoutNetwork } from "./support/network_cut.ts";

if (NETWORK_CUT_UNAVAILABLE !== undefined) {
  console.warn(`npm package test: runs with the network (${NETWORK_CUT_UNAVAILABLE})`);
}

/** Node's directory and the system's, without any directory that holds a `deno`. */
function nodeOnlyPath(): string {
  return (Deno.env.get("PATH") ?? "").split(":").filter((d) =>
    d !== "" && !existsSync(join(d, "deno"))
  ).join(":");
}

Deno.test({
  name: "the npm package installs from its tarball and runs with its own Deno, offline",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const work = mkdtempSync(join(tmpdir(), "readcache-npm-"));
    try {
      const { prefix, pkgDir, tarball } = await installNpmPackage(work);
      // the README names the tarball `deno task pack` makes
      const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
      assert.ok(readme.includes(`.scratch/npm/${basename(tarball)}`), basename(tarball));
      const home = join(work, "home");
      Deno.mkdirSync(home);
      const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
      assert.equal(pkg.dependencies.deno, PINNED_DENO, "Deno pinned");

      const run = async (args: string[]) => {
        const { cmd, args: argv } = withoutNetwork(["readcache", ...args]);
        const out = await new Deno.Command(cmd, {
          args: argv,
          cwd: home,
          // no checkout, no Deno on PATH, an empty npm cache: only what the package installed
          env: {
            HOME: home,
            NO_COLOR: "1",
            PATH: `${join(prefix, "bin")}:${nodeOnlyPath()}`,
            npm_config_cache: join(work, "empty-npm-cache"),
            DENO_DIR: join(work, "deno-dir"),
          },
          clearEnv: true,
          stdout: "piped",
          stderr: "piped",
        }).output();
        const td = new TextDecoder();
        return { code: out.code, out: td.decode(out.stdout) + td.decode(out.stderr) };
      };
      const help = await run(["--help"]);
      assert.equal(help.code, 0, help.out);
      assert.match(help.out, /Usage: readcache/);
      const doctor = await run(["doctor"]);
      assert.equal(doctor.code, 0, doctor.out);
      assert.match(doctor.out, /no problems found/);

      const settings = join(home, ".claude", "settings.json");
      Deno.mkdirSync(dirname(settings), { recursive: true });
      const before = '{\n    "model": "opus"\n}';
      Deno.writeTextFileSync(settings, before);
      const inst = await run(["claude", "install", "--json"]);
      assert.equal(inst.code, 0, inst.out);
      const report = JSON.parse(inst.out);
      assert.ok(report.deno.startsWith(pkgDir), `the hooks run the package's Deno: ${report.deno}`);
      assert.ok(existsSync(join(home, ".claude", "readcache", "service.js")));
      const uninst = await run(["claude", "uninstall"]);
      assert.equal(uninst.code, 0, uninst.out);
      assert.equal(readFileSync(settings, "utf8"), before, "settings back byte for byte");
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  },
});
