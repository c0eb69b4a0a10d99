// OpenCode with the npm package as its plugin (OPENCODE_VERSION, the real binary): the package
// packed and installed from its tarball into an empty prefix (no checkout), `plugin` naming the
// installed package's `load.ts`; the plugin loads and a re-read of a file is a marker.
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  OPENCODE_VERSION,
  openCodeBinary,
  openCodeConfigHome,
  platformPackage,
} from "../../scripts/opencode/opencode_bin.ts";
import { startMockChat } from "../../scripts/opencode/mock_chat.ts";
import { startOpenCode } from "../../scripts/opencode/opencode_server.ts";
import { installNpmPackage } from "../../scripts/npm_package.ts";

interface Part {
  type: string;
  tool?: string;
  state?: { status: string; output?: string; metadata?: Record<string, unknown> };
}

Deno.test({
  name: `OpenCode ${OPENCODE_VERSION} loads the npm package as its plugin; a re-read is a marker`,
  ignore: platformPackage() === undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const found = await openCodeBinary();
    if ("skip" in found) {
      console.log(`skipped: ${found.skip}`);
      return;
    }
    const root = await Deno.makeTempDir({ prefix: "readcache-opencode-package-" });
    try {
      const { pkgDir } = await installNpmPackage(join(root, "npm"));
      const cwd = join(root, "project");
      const home = join(root, "home");
      await Deno.mkdir(cwd, { recursive: true });
      await Deno.mkdir(home, { recursive: true });
      await Deno.writeTextFile(join(cwd, "a.txt"), "alpha\nbeta\n");
      const mock = startMockChat();
      const server = await startOpenCode({
        bin: found.bin,
        cwd,
        home,
        configHome: openCodeConfigHome(),
        mock,
        pluginUrl: pathToFileURL(join(pkgDir, "src/adapters/opencode/load.ts")).href,
      });
      try {
        const session = await server.api("POST", "/session", {}) as { id: string };
        const read = { calls: [{ name: "read", args: { filePath: join(cwd, "a.txt") } }] };
        mock.queue.push(read, read, { text: "done" });
        await server.api("POST", `/session/${session.id}/message`, {
          parts: [{ type: "text", text: "read a.txt twice" }],
        });
        const messages = await server.api("GET", `/session/${session.id}/message`) as {
          parts: Part[];
        }[];
        const reads = messages.flatMap((m) => m.parts).filter((p) => p.tool === "read");
        assert.equal(reads.length, 2, server.log());
        assert.ok(reads[0].state?.output?.includes("alpha"), reads[0].state?.output);
        assert.equal(
          (reads[1].state?.metadata?.readcache as { mode?: string } | undefined)?.mode,
          "unchanged",
          server.log(),
        );
        assert.match(reads[1].state?.output ?? "", /\[readcache: unchanged, 2 lines\]/);
      } finally {
        await server.stop();
        await mock.close();
      }
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});
