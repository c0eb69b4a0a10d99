// Cost of one `read` through the pi extension late in a long session: the
// branch (5,000 entries, pi's real SessionManager) is mapped to replay entries
// and synced before every read. Compare with a read in a fresh session.
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createReadcacheExtension } from "../../src/adapters/pi/extension.ts";
import { FakePiHost, newSession } from "../../scripts/pi/pi_host.ts";

const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-pi-bench-")));
globalThis.addEventListener("unload", () => rmSync(cwd, { recursive: true, force: true }));
const text = Array.from({ length: 400 }, (_, i) => `line ${i}: some source code here`).join("\n");
writeFileSync(join(cwd, "a.ts"), text);
for (let f = 0; f < 50; f++) writeFileSync(join(cwd, `f${f}.ts`), `${text}\n// ${f}`);

async function host(entries: number): Promise<FakePiHost> {
  const h = new FakePiHost(newSession(cwd), cwd);
  createReadcacheExtension({ home: () => cwd })(h);
  h.userMessage("start");
  // each read appends 2 entries (assistant tool call + tool result)
  for (let i = 0; h.session.getEntries().length < entries; i++) {
    if (i % 10 === 0) h.userMessage(`prompt ${i}`);
    await h.callTool("read", { path: `f${i % 50}.ts` });
  }
  await h.callTool("read", { path: "a.ts" });
  return h;
}

const long = await host(5_000);
const short = await host(10);

// execute only (nothing appended), so the session keeps its length; the turn
// boundary drops the in-flight record of the previous iteration
function bench(h: FakePiHost): () => Promise<void> {
  const read = h.tools.get("read")!;
  const ctx = h.context();
  return async () => {
    h.emit("turn_start");
    await read.execute("bench", { path: "a.ts" }, undefined, undefined, ctx);
  };
}

Deno.bench("read (unchanged), 10-entry session", { group: "read", baseline: true }, bench(short));
Deno.bench("read (unchanged), 5,000-entry session", { group: "read" }, bench(long));
