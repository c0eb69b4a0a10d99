// No other local user can receive a hook payload, learn anything of the service or answer in its
// place, in any start order (SPEC §11.9, threat model): a process of another uid (run with
// setpriv as `nobody`, so this needs root; skipped otherwise) starts before the first session,
// listening on 127.0.0.1 and trying to take the service's socket, to connect to it and to replace
// the hook client; sessions run with the service down, up, and down again mid-session, while a
// second such process tries again. It receives nothing, and Claude Code's own output stands
// whenever the service is not up.
import assert from "node:assert/strict";
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { claudeBinary } from "../../scripts/claude/claude_bin.ts";
import { startClaudeSandbox } from "../../scripts/claude/claude_session.ts";
import { startClaudeCodeService } from "../../src/adapters/claude/service.ts";
import { MemoryObjectStore } from "../../src/core/object_store.ts";

const found = await claudeBinary();
const setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].find((p) => existsSync(p));
const node = ["/usr/bin/node", "/usr/local/bin/node"].find((p) => existsSync(p));
const skip = "skip" in found
  ? found.skip
  : Deno.uid() !== 0
  ? "needs root to run a process as another user"
  : setpriv === undefined || node === undefined
  ? "needs setpriv and node to run a process as another user"
  : undefined;
if (skip !== undefined) console.warn(`claude squatter test skipped: ${skip}`);
const FULL = "1\talpha\n2\tbeta\n3\tgamma\n4\t";
const SQUATTER = fileURLToPath(new URL("./fixtures/squatter.cjs", import.meta.url));

/** Starts the squatter as `nobody`; its log is `log`. */
function squat(log: string, serviceDir: string, ports: number[]): Deno.ChildProcess {
  return new Deno.Command(setpriv!, {
    args: [
      "--reuid=65534",
      "--regid=65534",
      "--clear-groups",
      node!,
      SQUATTER,
      log,
      serviceDir,
      ...ports.map(String),
    ],
    stdout: "null",
    stderr: "inherit",
  }).spawn();
}

async function waitFor(path: string, lines: number): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const text = existsSync(path) ? readFileSync(path, "utf8") : "";
    if (text.split("\n").filter(Boolean).length >= lines) return text;
    await new Promise((r) => setTimeout(r, 50));
  }
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}

Deno.test({
  name: "another local user receives nothing and answers nothing, in any start order",
  ignore: skip !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const s = await startClaudeSandbox((found as { bin: string }).bin, "readcache");
    // a home others may look into, as most are; the service's directory stays 0700
    for (let d = s.configDir; d !== dirname(s.work); d = dirname(d)) chmodSync(d, 0o755);
    chmodSync(dirname(s.work), 0o755);
    const spy = await Deno.makeTempDir({ prefix: "readcache-squatter-" });
    chmodSync(spy, 0o777);
    const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const ownPort = (probe.addr as Deno.NetAddr).port;
    probe.close();
    const logs = [join(spy, "first.log"), join(spy, "second.log")];
    const squatters = [squat(logs[0], s.serviceDir, [47411, ownPort])];
    let service: Awaited<ReturnType<typeof startClaudeCodeService>> | undefined;
    try {
      // before the first session: listening everywhere it can
      const first = await waitFor(logs[0], 5);
      assert.match(first, /bind the service socket: EACCES/);
      assert.match(first, /connect to the service socket: EACCES/);
      assert.match(first, /replace the hook client: EACCES/);
      const a = join(s.work, "a.txt");
      await Deno.writeTextFile(a, "alpha\nbeta\ngamma\n");
      const read = () => s.api.queue.push({ calls: [{ name: "Read", input: { file_path: a } }] });
      const run = async (...args: string[]) => {
        const r = await s.run(args);
        assert.equal(r.code, 0, r.stderr);
      };
      const results = () => {
        const by = s.toolResults();
        return s.api.calls.map((c) => by.get(c.id) ?? "(no result)");
      };

      // the service not started yet: Claude Code's own output
      read();
      read();
      s.api.queue.push({ calls: [{ name: "Bash", input: { command: "true" } }] });
      await run("-p", "one");
      assert.deepEqual(results().slice(0, 2), [FULL, FULL]);

      // the service up: the cache works, the squatter still gets nothing
      service = await startClaudeCodeService({
        dir: s.serviceDir,
        storeFor: () => new MemoryObjectStore(),
        transcriptRoot: join(s.configDir, "projects"),
      });
      read();
      read();
      await run("--continue", "-p", "two");
      assert.deepEqual(results().slice(3, 5), [FULL, "0\t[readcache: unchanged, 4 lines]"]);

      // down mid-session, and another try to take its place while it is down
      await service.close();
      service = undefined;
      squatters.push(squat(logs[1], s.serviceDir, []));
      const second = await waitFor(logs[1], 3);
      assert.match(second, /bind the service socket: EACCES/);
      read();
      read();
      await run("--continue", "-p", "three");
      assert.deepEqual(results().slice(5, 7), [FULL, FULL]);

      const all = logs.map((l) => existsSync(l) ? readFileSync(l, "utf8") : "").join("");
      assert.doesNotMatch(all, /received|bound the service socket|connected|replaced/, all);
    } finally {
      for (const p of squatters) {
        try {
          p.kill("SIGTERM");
        } catch {
          // gone
        }
        await p.status;
      }
      await service?.close();
      await s.close();
      await Deno.remove(spy, { recursive: true });
    }
  },
});
