// pi with the npm package (pi itself from the pi suite): the package packed and installed from
// its tarball into an empty prefix (no checkout), then `pi install <the installed package>` in a
// throwaway HOME; a pi run against a scripted model reads a file twice: the extension loaded (the
// first read is pi's own text) and the re-read is a marker.
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startMockChat } from "../../scripts/opencode/mock_chat.ts";
import { installNpmPackage } from "../../scripts/npm_package.ts";
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
