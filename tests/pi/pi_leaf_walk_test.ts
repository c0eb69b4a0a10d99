// The read path never builds the whole branch: it walks up from the leaf to what it already
// replayed (SPEC §6.4). Every leaf move in pi's real SessionManager — to a sibling, an ancestor, a
// descendant, a leaf before a compaction, after /tree with a branch summary, over labels, custom
// entries of other extensions and entry types replay does not know — must give exactly what a
// full replay of the branch gives.
import assert from "node:assert/strict";
import fc from "fast-check";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { PiBranchConverter } from "../../src/adapters/pi/branch.ts";
import { createReadcacheExtension } from "../../src/adapters/pi/extension.ts";
import { BranchKnowledge } from "../../src/core/knowledge.ts";
import { resolveCall } from "../../src/shell/read_service.ts";
import { FakePiHost } from "../../scripts/pi/pi_host.ts";

type Op =
  | { op: "read"; file: number; offset?: number }
  | { op: "write"; file: number; v: number }
  | { op: "message" }
  | { op: "compact" }
  | { op: "move"; to: number }
  | { op: "summary"; to: number }
  | { op: "label"; to: number }
  | { op: "custom" }
  | { op: "model" }
  | { op: "refresh"; file: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant("read" as const),
      file: fc.nat(2),
      offset: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant("write" as const), file: fc.nat(2), v: fc.nat(2) }),
  },
  { weight: 2, arbitrary: fc.constant({ op: "message" as const }) },
  { weight: 1, arbitrary: fc.constant({ op: "compact" as const }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("move" as const), to: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("summary" as const), to: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("label" as const), to: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ op: "custom" as const }) },
  { weight: 1, arbitrary: fc.constant({ op: "model" as const }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("refresh" as const), file: fc.nat(2) }) },
);

const content = (file: number, v: number) =>
  Array.from({ length: 8 }, (_, i) => `file ${file} v${v} line ${i + 1}`).join("\n") + "\n";

Deno.test("walking up from any leaf in pi's SessionManager equals a full replay of its branch", async () => {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-walk-")));
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), async (ops) => {
        for (let f = 0; f < 3; f++) writeFileSync(join(cwd, `f${f}.txt`), content(f, 0));
        const session = SessionManager.inMemory(cwd);
        const host = new FakePiHost(session, cwd);
        createReadcacheExtension({ home: () => cwd })(host);
        host.userMessage("start");
        const deps = { cwd, home: cwd };
        const walk = new BranchKnowledge();
        const walkConv = new PiBranchConverter((a) => resolveCall(a, deps));
        for (const o of ops) {
          const ids = session.getEntries().map((e) => e.id);
          switch (o.op) {
            case "read":
              await host.callTool(
                "read",
                o.offset === undefined ? { path: `f${o.file}.txt` } : {
                  path: `f${o.file}.txt`,
                  offset: o.offset,
                },
              );
              break;
            case "write":
              writeFileSync(join(cwd, `f${o.file}.txt`), content(o.file, o.v));
              break;
            case "message":
              host.userMessage("hello");
              break;
            case "compact":
              session.appendCompaction("summary", ids[0], 100);
              break;
            case "move":
              session.branch(ids[o.to % ids.length]);
              break;
            case "summary":
              session.branchWithSummary(
                ids[o.to % ids.length],
                "what happened on the other branch",
              );
              break;
            case "label":
              session.appendLabelChange(ids[o.to % ids.length], `label ${o.to}`);
              break;
            case "custom":
              session.appendCustomEntry("another-extension", { x: 1 });
              break;
            case "model":
              session.appendModelChange("mock", "other-model");
              break;
            case "refresh":
              await host.command("readcache-refresh", `f${o.file}.txt`);
              break;
          }
          walk.syncTip(session.getLeafId(), walkConv.lookup((id) => session.getEntry(id)));
          const full = new BranchKnowledge();
          full.sync(new PiBranchConverter((a) => resolveCall(a, deps)).branch(session.getBranch()));
          const a = walk.snapshot();
          const b = full.snapshot();
          assert.deepEqual(
            {
              trust: a.trust,
              seq: a.seq,
              window: a.windowSize,
              compaction: a.boundary.compactionId,
            },
            {
              trust: b.trust,
              seq: b.seq,
              window: b.windowSize,
              compaction: b.boundary.compactionId,
            },
          );
          for (let f = 0; f < 3; f++) {
            const p = join(cwd, `f${f}.txt`);
            assert.deepEqual(walk.file(p), full.file(p));
          }
        }
      }),
      { numRuns: 60 },
    );
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});
