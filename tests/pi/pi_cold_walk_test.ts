// A cold start costs the context since the latest compaction, not the whole session (SPEC §6.4):
// a new extension instance, or one on a session reopened from its file, asks pi for the leaf and
// then for one entry at a time (getLeafId, getEntry) from the leaf up to the latest compaction on
// the branch, and never for the whole branch (getBranch, whose path pi builds with unshift) nor
// for every entry (getEntries). Without a compaction it walks to the root. Its answers are the
// answers of a full replay.
import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { createReadcacheExtension } from "../../src/adapters/pi/extension.ts";
import { PiBranchConverter, piEntryToReplay } from "../../src/adapters/pi/branch.ts";
import { BranchKnowledge } from "../../src/core/knowledge.ts";
import { callResolvers } from "../../src/shell/read_service.ts";
import { FakePiHost } from "../../scripts/pi/pi_host.ts";
import { counted, withProject } from "./support/session_calls.ts";

const FILES = 6;
/** File `f`; `edited`: its line 5 changed. */
const body = (f: number, edited = false) =>
  Array.from(
    { length: 20 },
    (_, i) => `file ${f} line ${i + 1}${edited && i === 4 ? " (edited)" : ""}`,
  )
    .join("\n") + "\n";

function withCwd(fn: (cwd: string) => Promise<void>): () => Promise<void> {
  return withProject(
    "readcache-cold-walk-",
    Object.fromEntries(Array.from({ length: FILES }, (_, f) => [`f${f}.txt`, body(f)])),
    fn,
  );
}

function newHost(session: SessionManager, cwd: string): FakePiHost {
  const host = new FakePiHost(session, cwd);
  createReadcacheExtension({ home: () => cwd })(host);
  return host;
}

async function modeOf(host: FakePiHost, path: string): Promise<string | null> {
  host.userMessage(`read ${path}`);
  const out = await host.callTool("read", { path });
  assert.ok(out.ok, out.ok ? "" : out.error);
  const d = out.result.details as { readcache?: { mode?: string } } | undefined;
  return d?.readcache?.mode ?? null;
}

/** Steps of one user message and one read each (3 entries a step). */
async function steps(host: FakePiHost, n: number, from = 0): Promise<void> {
  for (let i = from; i < from + n; i++) await modeOf(host, `f${i % FILES}.txt`);
}

/** Entries from the leaf up to (and with) the latest compaction, or to the root. */
function window(session: SessionManager): number {
  let n = 0;
  for (let id = session.getLeafId(); id !== null;) {
    const e = session.getEntry(id)!;
    n++;
    if (e.type === "compaction") break;
    id = e.parentId;
  }
  return n;
}

Deno.test(
  "a cold read walks from the leaf to the latest compaction, one entry at a time",
  withCwd(async (cwd) => {
    const file = SessionManager.create(cwd, join(cwd, ".sessions"));
    const host = newHost(file, cwd);
    await steps(host, 200); // 600 entries before the compaction
    file.appendCompaction("summary", file.getLeafId()!, 1000);
    await steps(host, 10, 3); // f3..f5, f0..f5, f0: every file read again after it
    const after = window(file);
    assert.ok(after < 40, `window ${after}`);

    for (
      const [what, session] of [
        ["new instance", file],
        ["reopened", SessionManager.open(file.getSessionFile()!, join(cwd, ".sessions"))],
      ] as const
    ) {
      const { session: watched, calls } = counted(session);
      const cold = newHost(watched, cwd);
      calls.clear();
      cold.userMessage("next");
      const [id] = cold.assistantToolCalls([{ name: "read", args: { path: "f4.txt" } }]);
      const out = await cold.runTool(id, "read", { path: "f4.txt" }, { persist: false });
      assert.ok(out.ok);
      const mode = (out.result.details as { readcache?: { mode?: string } }).readcache?.mode;
      assert.equal(mode, "unchanged", what);
      assert.equal(calls.get("getBranch") ?? 0, 0, `${what}: getBranch`);
      assert.equal(calls.get("getEntries") ?? 0, 0, `${what}: getEntries`);
      // the window and the two entries of this turn; no entry above the compaction
      const asked = calls.get("getEntry") ?? 0;
      assert.ok(asked <= after + 2, `${what}: ${asked} getEntry calls for ${after + 2} entries`);
    }
  }),
);

Deno.test(
  "nothing above the latest compaction backs a cold read's answer",
  withCwd(async (cwd) => {
    const session = SessionManager.inMemory(cwd);
    const host = newHost(session, cwd);
    await steps(host, 12); // every file read twice
    session.appendCompaction("summary", session.getLeafId()!, 1000);
    await modeOf(host, "f1.txt"); // full: the compaction hides every earlier read
    const { session: watched, calls } = counted(session);
    const cold = newHost(watched, cwd);
    assert.equal(await modeOf(cold, "f1.txt"), "unchanged");
    assert.equal(await modeOf(cold, "f2.txt"), "full");
    assert.equal(calls.get("getBranch") ?? 0, 0);
  }),
);

Deno.test(
  "without a compaction a cold read walks to the root and answers as a warm one",
  withCwd(async (cwd) => {
    const session = SessionManager.inMemory(cwd);
    const warm = newHost(session, cwd);
    await steps(warm, 30);
    writeFileSync(join(cwd, "f2.txt"), body(2, true));
    const { session: watched, calls } = counted(session);
    const cold = newHost(watched, cwd);
    for (const path of ["f0.txt", "f2.txt", "f5.txt"]) {
      const c = await modeOf(cold, path);
      assert.equal(c, path === "f2.txt" ? "diff" : "unchanged", path);
    }
    assert.equal(calls.get("getBranch") ?? 0, 0);
    assert.ok((calls.get("getEntry") ?? 0) >= 90);
  }),
);

Deno.test("the walk's conversion equals piEntryToReplay entry by entry", () => {
  // assistant messages that call read, bash (read-only or not), grep, write and edit; results of
  // each; a failed read; other entries
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-cold-walk-")));
  try {
    writeFileSync(join(cwd, "a.txt"), "a\n");
    const session = SessionManager.inMemory(cwd);
    const host = new FakePiHost(session, cwd);
    const tools: [string, Record<string, unknown>][] = [
      ["read", { path: "a.txt" }],
      ["read", { path: "a.txt", offset: 1, limit: 1 }],
      ["bash", { command: "cat a.txt" }],
      ["bash", { command: "rm -f b.txt" }],
      ["grep", { pattern: "a", path: "a.txt" }],
      ["write", { path: "b.txt", content: "b\n" }],
      ["edit", { path: "a.txt", edits: [{ oldText: "a", newText: "c" }] }],
      ["mystery", { x: 1 }],
    ];
    host.userMessage("go");
    const ids = host.assistantToolCalls(tools.map(([name, args]) => ({ name, args })));
    tools.forEach(([name], i) => {
      session.appendMessage({
        role: "toolResult",
        toolCallId: ids[i],
        toolName: name,
        content: [{ type: "text", text: "out" }],
        details: name === "read" ? { readcache: { v: 1 } } : undefined,
        isError: name === "read" && i === 1,
        timestamp: Date.now(),
      });
    });
    session.appendCustomEntry("pi-readcache", { v: 1 });
    session.appendModelChange("mock", "m2");
    session.appendCompaction("s", session.getLeafId()!, 1);
    host.userMessage("after");

    const deps = { cwd, home: cwd };
    const lookup = new PiBranchConverter(callResolvers(deps)).lookup((id) => session.getEntry(id));
    const reference = new PiBranchConverter(callResolvers(deps)).branch(session.getBranch());
    const branch = session.getBranch();
    branch.forEach((e, i) => {
      assert.deepEqual(lookup(e.id), reference[i], `${e.type} ${e.id}`);
      if (e.type !== "message" || (e.message as { role: string }).role !== "toolResult") {
        assert.deepEqual(
          piEntryToReplay(e, undefined, callResolvers(deps)),
          reference[i],
          `${e.type} ${e.id}`,
        );
      }
    });
    // rm and the unknown tool; `cat` only reads (SPEC §5.10)
    assert.ok(reference.some((e) => e.kind === "other" && (e.opaque?.length ?? 0) >= 2));
    assert.ok(reference.some((e) => e.kind === "other" && e.changes?.length === 2));
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});

Deno.test(
  "long walks after leaf moves (past the point where the synced branch gets indexed) equal a full replay",
  withCwd(async (cwd) => {
    const session = SessionManager.inMemory(cwd);
    const host = newHost(session, cwd);
    const deps = { cwd, home: cwd };
    const walk = new BranchKnowledge();
    const conv = new PiBranchConverter(callResolvers(deps));
    const check = (what: string) => {
      walk.syncTip(session.getLeafId(), conv.lookup((id) => session.getEntry(id)));
      const full = new BranchKnowledge();
      full.sync(new PiBranchConverter(callResolvers(deps)).branch(session.getBranch()));
      const a = walk.snapshot();
      const b = full.snapshot();
      assert.deepEqual(
        [a.trust, a.seq, a.windowSize, a.boundary.compactionId, a.leafId],
        [b.trust, b.seq, b.windowSize, b.boundary.compactionId, b.leafId],
        what,
      );
      for (let f = 0; f < FILES; f++) {
        const p = join(cwd, `f${f}.txt`);
        assert.deepEqual(walk.file(p), full.file(p), `${what}: f${f}`);
      }
    };
    const up = (n: number) => {
      let id = session.getLeafId()!;
      for (let k = 0; k < n; k++) id = session.getEntry(id)!.parentId!;
      return id;
    };
    await steps(host, 400); // 1,200 entries
    check("cold");
    await steps(host, 1, 7);
    check("warm");
    const tip = session.getLeafId()!;
    // /tree to an ancestor more than 256 entries up, then on from there
    session.branch(up(300));
    check("moved up 300");
    // the new branch starts with a refresh: a stale place in the index would put it on the old one
    await host.command("readcache-refresh", "f3.txt");
    writeFileSync(join(cwd, "f1.txt"), body(1, true));
    await steps(host, 100, 1); // a new branch of 300 entries
    check("300 entries on a new branch");
    session.branch(tip); // back: the walk meets the branch 600 entries up
    check("back to the old tip");
    await steps(host, 2, 3);
    check("warm again (indexed)");
    session.branch(up(5));
    check("moved up 5 (indexed)");
    await steps(host, 90, 2); // 270 entries past the last synced one, no move
    check("270 new entries");
    session.appendCompaction("summary", session.getLeafId()!, 1000);
    await steps(host, 100, 4);
    check("after a compaction");
    session.branch(up(280));
    check("moved up to just below the compaction");
    session.branch(up(20)); // above the compaction now
    check("moved above the compaction");
  }),
);
