// A checkout without `npm install`, in a REAL OpenCode (the `opencode` binary, OPENCODE_VERSION):
// named as `plugin.ts`, OpenCode cannot import it (no zod, no diff) and says nothing anywhere; named
// as `load.ts` (the README's line), the read is still OpenCode's own and the user is told what to
// run: an error in OpenCode's log and a toast for the TUI (on OpenCode's event stream) at the first
// read. The second half is the fix; the first keeps the reason for it true. About 20 s.
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
import { installedPlugin, startOpenCode } from "../../scripts/opencode/opencode_server.ts";

interface Part {
  type: string;
  tool?: string;
  state?: { status: string; output?: string; metadata?: Record<string, unknown> };
}

/** Everything OpenCode logged under `home` (its log files). */
async function openCodeLogs(home: string): Promise<string> {
  const dir = join(home, ".local/share/opencode/log");
  let text = "";
  for await (const e of Deno.readDir(dir)) {
    if (e.isFile) text += await Deno.readTextFile(join(dir, e.name));
  }
  return text;
}

/** One session with one read of `a.txt` through a server loading `plugin` (a path). */
async function oneRead(bin: string, root: string, plugin: string) {
  const cwd = join(root, "project");
  const home = join(root, "home");
  await Deno.mkdir(cwd, { recursive: true });
  await Deno.mkdir(home, { recursive: true });
  await Deno.writeTextFile(join(cwd, "a.txt"), "alpha\nbeta\n");
  const mock = startMockChat();
  const server = await startOpenCode({
    bin,
    cwd,
    home,
    configHome: openCodeConfigHome(),
    mock,
    pluginUrl: pathToFileURL(plugin).href,
  });
  // OpenCode's event stream: what a TUI hears (toasts among them)
  const events = new AbortController();
  let heard = "";
  const listening = fetch(`${server.url}/event`, { signal: events.signal }).then(async (res) => {
    const dec = new TextDecoder();
    for await (const chunk of res.body!) heard += dec.decode(chunk, { stream: true });
  }).catch(() => {});
  try {
    const session = await server.api("POST", "/session", {}) as { id: string };
    mock.queue.push({ calls: [{ name: "read", args: { filePath: join(cwd, "a.txt") } }] }, {
      text: "done",
    });
    await server.api("POST", `/session/${session.id}/message`, {
      parts: [{ type: "text", text: "read a.txt" }],
    });
    const messages = await server.api("GET", `/session/${session.id}/message`) as {
      parts: Part[];
    }[];
    const read = messages.flatMap((m) => m.parts).find((p) => p.tool === "read");
    // the toast is published when the read's hook ran; give the stream a moment to carry it
    for (let i = 0; i < 20 && !heard.includes("tui.toast.show"); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    return { read, logs: await openCodeLogs(home), heard, serverLog: server.log() };
  } finally {
    events.abort();
    await listening;
    await server.stop();
    await mock.close();
  }
}

Deno.test({
  name:
    `OpenCode ${OPENCODE_VERSION}: a checkout without npm install is reported (log and toast), reads stay OpenCode's own`,
  ignore: platformPackage() === undefined,
  async fn() {
    const found = await openCodeBinary();
    if ("skip" in found) {
      console.log(`skipped: ${found.skip}`);
      return;
    }
    const root = await Deno.makeTempDir({ prefix: "readcache-opencode-load-" });
    try {
      // the checkout as cloned: src/ and package.json, no node_modules
      const checkout = join(root, "checkout");
      await installedPlugin(checkout, undefined, { npmInstall: false });
      const fix = `Run \`npm install --omit=peer\` in ${checkout}, then restart OpenCode.`;

      // before: plugin.ts cannot be imported and nobody says so
      const silent = await oneRead(
        found.bin,
        join(root, "silent"),
        join(checkout, "src/adapters/opencode/plugin.ts"),
      );
      assert.equal(silent.read?.state?.status, "completed");
      assert.equal(silent.read?.state?.output?.includes("alpha"), true);
      assert.equal(silent.read?.state?.metadata?.readcache, undefined);
      assert.ok(!silent.logs.includes(fix) && !silent.heard.includes(fix));

      // after: load.ts loads, the import of plugin.ts fails inside it, and the user is told
      const told = await oneRead(
        found.bin,
        join(root, "told"),
        join(checkout, "src/adapters/opencode/load.ts"),
      );
      assert.equal(told.read?.state?.status, "completed", told.serverLog);
      assert.equal(
        told.read?.state?.output,
        silent.read?.state?.output?.replace("/silent/", "/told/"),
        "OpenCode's own read",
      );
      assert.equal(told.read?.state?.metadata?.readcache, undefined);
      assert.ok(told.logs.includes(fix), told.logs.slice(-2000));
      assert.ok(told.logs.includes("Cannot find package"), told.logs.slice(-2000));
      assert.ok(told.heard.includes("tui.toast.show"), told.heard.slice(-2000));
      assert.ok(told.heard.includes(JSON.stringify(fix).slice(1, -1)), told.heard.slice(-2000));
    } finally {
      if (Deno.env.get("READCACHE_E2E_KEEP") !== "1") {
        await Deno.remove(root, { recursive: true });
      }
    }
  },
});
