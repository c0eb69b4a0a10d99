// With the network cut, the README's commands run at their usual speed after the first install:
// nothing waits on the npm registry (npx is told --prefer-offline; the `readcache` launcher takes
// a Deno it can run without asking anyone; `claude install` bundles from Deno's cache). The network
// is cut with `unshare -n` (a network namespace with nothing in it; needs root, skipped
// otherwise), on a machine with Node and no Deno on PATH, as a user with a fresh HOME.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { NETWORK_CUT_UNAVAILABLE, UNSHARE } from "./support/network_cut.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const unshare = UNSHARE;
const skip = NETWORK_CUT_UNAVAILABLE;
if (skip !== undefined) console.warn(`offline test skipped: ${skip}`);

/** This machine's PATH without any directory that holds a `deno` (a machine with Node only). */
function withoutDeno(): string {
  return (Deno.env.get("PATH") ?? "").split(":").filter((d) =>
    d !== "" && !existsSync(join(d, "deno"))
  ).join(":");
}

async function sh(line: string, home: string, offline: boolean, npmCache?: string) {
  const t0 = performance.now();
  const args = offline ? ["-n", "bash", "-c", line] : ["-c", line];
  const out = await new Deno.Command(offline ? unshare! : "bash", {
    args,
    cwd: root,
    env: {
      HOME: home,
      NO_COLOR: "1",
      DENO_NO_UPDATE_CHECK: "1",
      PATH: withoutDeno(),
      // the caches of this machine (npm's and Deno's live under the real HOME by default)
      npm_config_cache: npmCache ?? Deno.env.get("npm_config_cache") ?? join(homedir(), ".npm"),
      DENO_DIR: Deno.env.get("DENO_DIR") ?? join(homedir(), ".cache", "deno"),
    },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const td = new TextDecoder();
  return {
    code: out.code,
    out: td.decode(out.stdout) + td.decode(out.stderr),
    seconds: (performance.now() - t0) / 1000,
  };
}

Deno.test({
  name: "offline: the README's commands run without waiting on the network after the first install",
  ignore: skip !== undefined,
  async fn() {
    const home = mkdtempSync(join(tmpdir(), "readcache-offline-"));
    try {
      // the first install, online: Deno from npm, the bundler Deno keeps in its cache
      for (const line of ["npx --prefer-offline -y deno@2 --version", "npx readcache --version"]) {
        const r = await sh(line, home, false);
        assert.equal(r.code, 0, `${line}\n${r.out}`);
      }
      const warm = await sh(
        "npx readcache claude install && npx readcache claude uninstall",
        home,
        false,
      );
      assert.equal(warm.code, 0, warm.out);

      const checks: [string, number, RegExp][] = [
        ["npx --prefer-offline -y deno@2 task conformance --help", 0, /N passed, N failed/],
        ["npx readcache --help", 0, /Usage: readcache/],
        ["npx readcache doctor", 0, /no problems found/],
        ["npx readcache claude install", 0, /readcache is installed for Claude Code/],
        ["npx readcache claude uninstall", 0, /the service|as it was|removed again/],
        ["npx --prefer-offline -y deno@2 task cli status --latest", 0, /No pi session/],
      ];
      for (const [line, code, says] of checks) {
        const r = await sh(line, home, true);
        assert.equal(r.code, code, `${line} (offline)\n${r.out}`);
        assert.match(r.out, says, line);
        // npx asking an unreachable registry waits over a minute; these take a second or two
        assert.ok(r.seconds < 20, `${line} took ${r.seconds.toFixed(1)} s offline`);
      }
      // a checkout's launcher with no Deno anywhere (npx's cache cleared) cannot fetch one
      // offline: it says so at once, with what to do, instead of npm's two minutes of retries
      const bare = await sh(
        "node cli/readcache.mjs --version",
        home,
        true,
        join(home, "npm-empty"),
      );
      assert.notEqual(bare.code, 0, bare.out);
      assert.match(bare.out, /no Deno 2 was found .* install the readcache npm package/);
      assert.ok(bare.seconds < 20, `took ${bare.seconds.toFixed(1)} s offline`);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  },
});
