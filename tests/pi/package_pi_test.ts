// pi with the npm package (pi itself from the pi suite): the package packed and installed from
// its tarball into an empty prefix (no checkout), then `pi install <the installed package>` in a
// throwaway HOME; a pi run against a scripted model reads a file twice: the extension loaded (the
// first read is pi's own text) and the re-read is a marker.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startMockChat } from "../../scripts/opencode/mock_chat.ts";
import { installNpmPackage } from "../../scripts/npm_package.ts";
import { placeDemo, runReadcache } from "../../scripts/readme_cli_outputs.ts";
import { withoutNetwork } from "../support/network_cut.ts";
import { writeMockAgentConfig } from "./support/mock_agent.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
const PI_CLI = join(REPO, "pi-suite/node_modules/@mariozechner/pi-coding-agent/dist/cli.js");

Deno.test({
  name: "pi installs the npm package; its extension caches a re-read",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const root = await Deno.makeTempDir({ prefix: "readcache-pi-package-" });
    const mock = startMockChat();
    try {
      const { pkgDir } = await installNpmPackage(join(root, "npm"));
      const home = join(root, "home");
      const cwd = join(root, "project");
      const agentDir = join(home, ".pi", "agent");
      await Deno.mkdir(agentDir, { recursive: true });
      await Deno.mkdir(cwd, { recursive: true });
      await Deno.writeTextFile(join(cwd, "a.txt"), "alpha\nbeta\n");
      await writeMockAgentConfig(agentDir, mock.baseURL);
      const pi = async (args: string[]) => {
        const out = await new Deno.Command("node", {
          args: [PI_CLI, ...args],
          cwd,
          env: { HOME: home, NO_COLOR: "1", PATH: Deno.env.get("PATH") ?? "" },
          stdout: "piped",
          stderr: "piped",
        }).output();
        const td = new TextDecoder();
        return { code: out.code, text: td.decode(out.stdout) + td.decode(out.stderr) };
      };
      const install = await pi(["install", pkgDir]);
      assert.equal(install.code, 0, install.text);
      const read = { calls: [{ name: "read", args: { path: "a.txt" } }] };
      mock.queue.push(read, read, { text: "done" });
      const run = await pi([
        "-p",
        "--provider",
        "mock",
        "--model",
        "mock-model",
        "read a.txt twice",
      ]);
      assert.equal(run.code, 0, run.text);
      const results = mock.requests.flatMap((r) => r.messages ?? [])
        .filter((m) => m.role === "tool")
        .map((m) => typeof m.content === "string" ? m.content : JSON.stringify(m.content));
      const distinct = [...new Set(results)];
      assert.equal(distinct.length, 2, JSON.stringify(distinct));
      assert.match(distinct[0], /alpha/);
      assert.match(distinct[1], /\[readcache: unchanged, 3 lines\]/);
    } finally {
      await mock.close();
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "the npm package's readcache savings replays a pi session without readcache through pi, offline, as the checkout does",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const root = await Deno.makeTempDir({ prefix: "readcache-pi-package-savings-" });
    try {
      const { prefix, pkgDir } = await installNpmPackage(join(root, "npm"));
      const demo = await placeDemo(join(root, "demo"));
      const { cmd, args } = withoutNetwork(["readcache", "savings", "--json"]);
      const out = await new Deno.Command(cmd, {
        args,
        cwd: demo.app,
        clearEnv: true,
        env: {
          HOME: join(root, "home"),
          NO_COLOR: "1",
          PATH: `${join(prefix, "bin")}:${
            (Deno.env.get("PATH") ?? "").split(":").filter((d) => !existsSync(join(d, "deno")))
              .join(":")
          }`,
          PI_CODING_AGENT_DIR: demo.agent,
          // pi in Deno's cache, as after the first replay (the pi suite put it there)
          DENO_DIR: Deno.env.get("DENO_DIR") ?? join(homedir(), ".cache", "deno"),
        },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const td = new TextDecoder();
      assert.equal(out.code, 0, td.decode(out.stderr));
      const report = JSON.parse(td.decode(out.stdout));
      const without = report.sessions.filter((s: { withReadcache: boolean }) => !s.withReadcache);
      assert.equal(without.length, 1, JSON.stringify(report.sessions));
      // the replay through pi ran (no fallback to the session's own read results)
      assert.equal(without[0].estimate, "replay", JSON.stringify(without[0]));
      assert.equal(without[0].safety.violations, 0);
      // the figure the checkout gives (docs/cli.md): 22.0 KB against 12.0 KB
      const checkout = await runReadcache(demo, ["savings", "--json"]);
      assert.equal(checkout.code, 0, checkout.stderr);
      assert.deepEqual(report.totals, JSON.parse(checkout.stdout).totals);
      // nothing was written into the installed package (pi comes from Deno's cache)
      assert.ok(!existsSync(join(pkgDir, "pi-suite", "node_modules")));
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});
