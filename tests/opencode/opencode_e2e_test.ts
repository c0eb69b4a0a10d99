// End to end in a REAL OpenCode (the `opencode` binary from npm, OPENCODE_VERSION): `opencode
// serve` on 127.0.0.1 with the plugin loaded from this checkout (`"plugin": ["file://.../src/
// adapters/opencode/plugin.ts"]`), a scripted OpenAI-compatible model on 127.0.0.1 (the mock
// answers each prompt with the tool calls of one step, then "done"), driven through OpenCode's
// HTTP API: prompts, a compaction (`/summarize`) and a revert. Every read is checked in the
// session as OpenCode stored it (`state.output`, `state.metadata.readcache`) and in what the model
// received (the `role: "tool"` messages of later requests):
//
//   read (OpenCode's own output, byte for byte) -> read again (unchanged) -> a range (unchanged)
//   -> a read held in part (partial, in OpenCode's terms) -> OpenCode's edit (its result carries the model's belief) -> read (unchanged) -> two reads in one
//   message -> the plugin's readcache_refresh, read (whole file), read (unchanged) -> a change by
//   another process (a diff) -> OpenCode's write, then read (unchanged)
//   -> compaction, read (whole file) -> read b, revert it, read b (whole file) and a (unchanged)
//   -> six 50 KB reads, two more turns, OpenCode prunes the old outputs: a pruned read no longer
//   counts (whole file), a kept one does (unchanged), an "unchanged" chain whose anchor was pruned
//   does not (whole file) -> a fork of the session before that: its reads count as they did
//   -> the plugin brought the session up to date from the newest messages (OpenCode's paging and
//   its events; instrumentedPlugin logs it), and no change escaped the events
//
// A first turn reads ten awkward files in parallel (CRLF, lone CR, BOM, a 2,500-character line,
// 2,500 lines, 100 KB, no final newline, empty, non-ASCII, a range) and checks that OpenCode's
// output is exactly what `renderOpenCodeRead` renders (the parity the plugin relies on) and which
// of them carry metadata; their second reads are cached answers.
//
// The binary is installed by scripts/opencode/opencode_bin.ts (npm, into .scratch/opencode/,
// which git ignores; about 185 MB); the test is skipped, with the reason, only where that binary
// cannot run. The server and the mock are scripts/opencode/opencode_server.ts and mock_chat.ts.
// OpenCode's database and logs go to a temporary HOME; the SDK it installs for plugins (about
// 60 MB) is kept next to the binary. 8-20 s warm, about 30 s cold (2 shared cores).
// READCACHE_E2E_KEEP=1 keeps the temporary directory.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  OPENCODE_VERSION,
  openCodeBinary,
  openCodeConfigHome,
  platformPackage,
} from "../../scripts/opencode/opencode_bin.ts";
import { type MockAnswer, startMockChat } from "../../scripts/opencode/mock_chat.ts";
import {
  installedPlugin,
  instrumentedPlugin,
  startOpenCode,
} from "../../scripts/opencode/opencode_server.ts";
import { decodeOpenCodeText, renderOpenCodeRead } from "../../src/adapters/opencode/baseline.ts";
import { READ_DESCRIPTION_NOTE } from "../../src/adapters/opencode/plugin.ts";

interface ToolPart {
  id: string;
  tool: string;
  callID: string;
  messageID: string;
  state: {
    status: string;
    input: Record<string, unknown>;
    output?: string;
    metadata?: { readcache?: { mode: string; scopeKey: string; totalLines: number } };
  };
}

interface Message {
  info: { id: string; role: string; parentID?: string };
  parts: ({ type: string } & Partial<ToolPart>)[];
}

Deno.test({
  name: `OpenCode ${OPENCODE_VERSION} end to end: the plugin caches reads in a real session`,
  ignore: platformPackage() === undefined,
  async fn() {
    const t0 = performance.now();
    const found = await openCodeBinary();
    if ("skip" in found) {
      console.log(`skipped: ${found.skip}`);
      return;
    }
    const tInstalled = performance.now();
    const root = await Deno.makeTempDir({ prefix: "readcache-opencode-e2e-" });
    const cwd = join(root, "project");
    const home = join(root, "home");
    await Deno.mkdir(cwd, { recursive: true });
    await Deno.mkdir(home, { recursive: true });
    const put = (rel: string, text: string) => Deno.writeTextFile(join(cwd, rel), text);
    const lines = (n: number, f: (i: number) => string) =>
      Array.from({ length: n }, (_, i) => f(i + 1)).join("\n") + "\n";
    await put("a.txt", lines(30, (i) => `const v${i} = ${i};`));
    await put("b.txt", "bee one\nbee two\n");
    await put("c.txt", lines(300, (i) => `row ${i} of the c file`));
    const awkward: Record<string, { text: string; cached: boolean }> = {
      "crlf.txt": { text: "one\r\ntwo\r\n", cached: false },
      "lone-cr.txt": { text: "one\rtwo\n", cached: false },
      "bom.txt": { text: "\uFEFFwith bom\n", cached: false },
      "long-line.txt": { text: "x".repeat(2500) + "\nshort\n", cached: false },
      "many-lines.txt": { text: lines(2500, (i) => `line ${i}`), cached: true },
      "wide.txt": { text: lines(1000, (i) => `${i} `.padEnd(100, "w")), cached: true },
      "no-newline.txt": { text: "no final newline", cached: true },
      "empty.txt": { text: "", cached: false },
      "unicode.txt": { text: "héllo wörld ✓\n日本語\n", cached: true },
    };
    for (const [name, f] of Object.entries(awkward)) await put(name, f.text);

    const mock = startMockChat();
    // the plugin as a user installs it (a copy of the checkout and `npm install --omit=peer`),
    // loaded through a wrapper that logs how each read brought the session up to date
    const checkout = join(root, "checkout");
    await installedPlugin(checkout);
    const readLog = join(root, "reads.jsonl");
    const server = await startOpenCode({
      bin: found.bin,
      cwd,
      home,
      configHome: openCodeConfigHome(),
      mock,
      pluginUrl: await instrumentedPlugin(checkout, readLog),
      // pruning clears old tool outputs; it is off by default
      config: { compaction: { prune: true } },
    });
    const tStarted = performance.now();
    try {
      const api = server.api;
      const turns: number[] = [];
      const session = await api("POST", "/session", {}) as { id: string };
      const sid = session.id;
      const messages = async (id = sid) => await api("GET", `/session/${id}/message`) as Message[];

      /** One prompt: the model makes `calls` in one message, then says "done". */
      const turn = async (calls: { name: string; args: Record<string, unknown> }[], id = sid) => {
        const before = mock.calls.length;
        const t = performance.now();
        const script: MockAnswer[] = [{ calls }, { text: "done" }];
        mock.queue.push(...script);
        const reply = await api("POST", `/session/${id}/message`, {
          parts: [{ type: "text", text: `step ${before}` }],
        }) as { info: { parentID: string } };
        assert.equal(mock.queue.length, 0, "the model was asked exactly twice");
        const ids = mock.calls.slice(before).map((c) => c.id);
        const parts = (await messages(id)).flatMap((m) => m.parts)
          .filter((p) => p.type === "tool" && ids.includes(p.callID!)) as ToolPart[];
        parts.sort((x, y) => ids.indexOf(x.callID) - ids.indexOf(y.callID));
        assert.equal(parts.length, calls.length, "every call has its part");
        turns.push(performance.now() - t);
        return { parts, userMessageId: reply.info.parentID };
      };
      const read = (filePath: string, extra: Record<string, unknown> = {}) => ({
        name: "read",
        args: { filePath, ...extra },
      });
      /** What the model received for a call (the tool message of a later request). */
      const sentToModel = (callID: string): string | undefined => {
        for (const r of mock.requests) {
          for (const m of r.messages ?? []) {
            if (m.role === "tool" && m.tool_call_id === callID) {
              return typeof m.content === "string" ? m.content : JSON.stringify(m.content);
            }
          }
        }
        return undefined;
      };
      /** What the model received for a call in the latest request that carried it. */
      const sentToModelLast = (callID: string): string | undefined => {
        for (const r of [...mock.requests].reverse()) {
          const m = (r.messages ?? []).find((m) => m.role === "tool" && m.tool_call_id === callID);
          if (m) return typeof m.content === "string" ? m.content : JSON.stringify(m.content);
        }
        return undefined;
      };
      const openCodeText = async (rel: string, args: { offset?: number; limit?: number } = {}) =>
        renderOpenCodeRead({
          path: join(cwd, rel),
          text: decodeOpenCodeText(await Deno.readFile(join(cwd, rel))),
          ...args,
        })!.text;
      const check = (
        part: ToolPart,
        mode: string | null | (string | null)[],
        text?: string,
        what = "",
      ) => {
        const label = `${part.state.input.filePath} ${what}`;
        assert.equal(part.state.status, "completed", label);
        const modes = Array.isArray(mode) ? mode : [mode];
        assert.ok(
          modes.includes(part.state.metadata?.readcache?.mode ?? null),
          `${label}: mode ${part.state.metadata?.readcache?.mode} not in ${modes}`,
        );
        if (text !== undefined) assert.equal(part.state.output, text, label);
        assert.equal(sentToModel(part.callID), part.state.output, `${label}: what the model got`);
      };

      // 0. Awkward files, read in parallel: OpenCode's output is our rendering, byte for byte.
      const names = Object.keys(awkward);
      const first = await turn([
        ...names.map((n) => read(n)),
        read("many-lines.txt", { offset: 100, limit: 50 }),
      ]);
      for (const [i, name] of names.entries()) {
        check(
          first.parts[i],
          awkward[name].cached ? "full" : null,
          await openCodeText(name),
          "(parity)",
        );
      }
      // the range read is OpenCode's text, or, when the whole read before it in the same message
      // was served first, covered by it (SPEC §5.7)
      const range = first.parts[names.length];
      check(range, ["full", "unchanged_range"], undefined, "(range)");
      assert.equal(
        range.state.output,
        range.state.metadata?.readcache?.mode === "full"
          ? await openCodeText("many-lines.txt", { offset: 100, limit: 50 })
          : "[readcache: unchanged in lines 100-149 of 2500]",
      );
      assert.equal(
        first.parts[names.indexOf("many-lines.txt")].state.metadata?.readcache?.scopeKey,
        "r:1:2000",
      );
      const again = await turn([read("many-lines.txt"), read("wide.txt"), read("no-newline.txt")]);
      check(again.parts[0], "unchanged_range", "[readcache: unchanged in lines 1-2000 of 2500]");
      check(again.parts[1], "unchanged_range");
      assert.match(
        again.parts[1].state.output!,
        /^\[readcache: unchanged in lines 1-\d+ of 1000\]$/,
      );
      check(again.parts[2], "unchanged", "[readcache: unchanged, 1 line]");
      const readTool = mock.requests.flatMap((r) => r.tools ?? [])
        .find((t) => t.function?.name === "read");
      assert.ok(
        readTool?.function?.description?.includes(READ_DESCRIPTION_NOTE),
        "read's description",
      );

      // 1. read, read again, a range
      const r1 = await turn([read("a.txt")]);
      check(r1.parts[0], "full", await openCodeText("a.txt"), "(first read)");
      const r2 = await turn([read(join(cwd, "a.txt"))]);
      check(r2.parts[0], "unchanged", "[readcache: unchanged, 30 lines]");
      const r3 = await turn([read("a.txt", { offset: 10, limit: 5 })]);
      check(r3.parts[0], "unchanged_range", "[readcache: unchanged in lines 10-14 of 30]");

      // 1b. a read the model holds in part: the held lines named, the others numbered as
      //     OpenCode numbers them, then OpenCode's own notice (SPEC §11.8)
      const c1 = await turn([read("c.txt", { limit: 100 })]);
      check(c1.parts[0], "full", await openCodeText("c.txt", { limit: 100 }));
      const c2 = await turn([read("c.txt", { limit: 200 })]);
      check(
        c2.parts[0],
        "partial",
        "[readcache: unchanged in lines 1-100 of 300; the other lines follow]\n" +
          Array.from({ length: 100 }, (_, k) => `${k + 101}: row ${k + 101} of the c file`)
            .join("\n") +
          "\n\n(Showing lines 1-200 of 300. Use offset=201 to continue.)",
      );

      // 2. OpenCode's own edit: the plugin works out the model's belief before it runs (SPEC
      //    §5.9) and its stored result carries it; the next read of what it wrote is unchanged
      const e1 = await turn([{
        name: "edit",
        args: {
          filePath: join(cwd, "a.txt"),
          oldString: "const v7 = 7;",
          newString: "const v7 = 77;",
        },
      }]);
      assert.equal(e1.parts[0].state.status, "completed", JSON.stringify(e1.parts[0].state));
      assert.match(await Deno.readTextFile(join(cwd, "a.txt")), /const v7 = 77;/);
      const belief = (e1.parts[0].state.metadata as { readcache?: { kind?: string } }).readcache;
      assert.equal(belief?.kind, "edit", JSON.stringify(e1.parts[0].state.metadata));
      const r4 = await turn([read("a.txt")]);
      check(r4.parts[0], "unchanged", "[readcache: unchanged, 30 lines]");

      // 3. two reads of it in one message: the one served second is unchanged; the first is
      //    unchanged too, or re-anchors (full) when OpenCode finished the later call first
      const r5 = await turn([read("a.txt"), read("a.txt")]);
      check(r5.parts[0], ["unchanged", "full"]);
      check(r5.parts[1], "unchanged", "[readcache: unchanged, 30 lines]");

      // 3b. the plugin's own tool readcache_refresh (its zod args and stored metadata in a real
      //     OpenCode): the next read is the whole file, the one after it unchanged again
      const refreshTool = mock.requests.flatMap((r) => r.tools ?? [])
        .find((t) => t.function?.name === "readcache_refresh");
      assert.ok(refreshTool, "the model is offered readcache_refresh");
      const rf = await turn([{ name: "readcache_refresh", args: { filePath: "a.txt" } }]);
      assert.equal(rf.parts[0].state.status, "completed", JSON.stringify(rf.parts[0].state));
      assert.equal(
        rf.parts[0].state.output,
        "Refreshed a.txt: the next read returns its full content.",
      );
      assert.equal(
        (rf.parts[0].state.metadata as { readcache?: { kind?: string } }).readcache?.kind,
        "invalidate",
      );
      const r5b = await turn([read("a.txt")]);
      check(r5b.parts[0], "full", await openCodeText("a.txt"), "(after refresh)");
      const r5c = await turn([read("a.txt")]);
      check(r5c.parts[0], "unchanged", "[readcache: unchanged, 30 lines]");

      // 4. another process changes a line: a diff against what the model holds
      await put(
        "a.txt",
        (await Deno.readTextFile(join(cwd, "a.txt"))).replace(
          "const v20 = 20;",
          "const v20 = 2000;",
        ),
      );
      const r6 = await turn([read("a.txt")]);
      check(r6.parts[0], "diff");
      assert.equal(
        r6.parts[0].state.output,
        "[readcache: 2 lines changed of 30]\n--- a/a.txt\n+++ b/a.txt\n" +
          "@@ -17,7 +17,7 @@\n const v17 = 17;\n const v18 = 18;\n const v19 = 19;\n" +
          "-const v20 = 20;\n+const v20 = 2000;\n const v21 = 21;\n const v22 = 22;\n const v23 = 23;",
      );

      // 5. OpenCode's write is proof of content (SPEC §5.8)
      const w1 = await turn([{
        name: "write",
        args: { filePath: "c.txt", content: "sea one\nsea two\n" },
      }]);
      assert.equal(w1.parts[0].state.status, "completed");
      const r7 = await turn([read("c.txt")]);
      check(r7.parts[0], "unchanged", "[readcache: unchanged, 2 lines]");

      // 6. compaction: nothing read before it counts
      await api("POST", `/session/${sid}/summarize`, { providerID: "mock", modelID: "mock-model" });
      const compacted = await messages();
      assert.ok(
        compacted.some((m) => m.parts.some((p) => p.type === "compaction")),
        "the session has a compaction",
      );
      const r8 = await turn([read("a.txt")]);
      check(r8.parts[0], "full", await openCodeText("a.txt"), "(after compaction)");

      // 7. revert: a read that is reverted no longer counts; one before the revert point does
      const r9 = await turn([read("b.txt")]);
      check(r9.parts[0], "full", await openCodeText("b.txt"));
      await api("POST", `/session/${sid}/revert`, { messageID: r9.userMessageId });
      const r10 = await turn([read("b.txt"), read("a.txt")]);
      check(r10.parts[0], "full", await openCodeText("b.txt"), "(after revert)");
      check(
        r10.parts[1],
        "unchanged",
        "[readcache: unchanged, 30 lines]",
        "(before the revert point)",
      );
      const history = await messages();
      assert.ok(
        !history.some((m) => m.info.id === r9.userMessageId),
        "OpenCode removed the reverted messages",
      );
      const r11 = await turn([read("b.txt")]);
      check(r11.parts[0], "unchanged", "[readcache: unchanged, 2 lines]");

      // 8. pruning (`compaction.prune`): after a prompt OpenCode clears old tool outputs beyond
      //    the newest 40,000 estimated tokens (the last two turns are kept); the model then sees
      //    "[Old tool result content cleared]", so those reads no longer count
      const wide = ["w1.txt", "w2.txt", "w3.txt", "w4.txt", "w5.txt", "w6.txt"];
      for (const w of wide) await put(w, lines(500, (i) => `${w} ${i} `.padEnd(100, ".")));
      const p1 = await turn(wide.map((w) => read(w)));
      for (const part of p1.parts) check(part, "full");
      const p2 = await turn([read("b.txt")]);
      check(p2.parts[0], "unchanged", "[readcache: unchanged, 2 lines]");
      const p3 = await turn([read("w6.txt")]);
      check(p3.parts[0], "unchanged", "[readcache: unchanged, 500 lines]");
      const prunedIds = async (): Promise<string[]> =>
        (await messages()).flatMap((m) => m.parts).filter((p) =>
          p.type === "tool" &&
          (p.state as { time?: { compacted?: number } }).time?.compacted !== undefined
        ).map((p) => p.callID!);
      let pruned: string[] = [];
      for (let i = 0; i < 100 && pruned.length === 0; i++) {
        pruned = await prunedIds();
        if (pruned.length === 0) await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(
        pruned.includes(p1.parts[0].callID),
        `w1.txt's read was pruned (${pruned.length} parts)`,
      );
      assert.ok(!pruned.includes(p1.parts[5].callID), "w6.txt's read was kept");
      assert.ok(pruned.includes(r10.parts[0].callID), "b.txt's first read was pruned");
      const p4 = await turn([read("w1.txt"), read("w6.txt"), read("b.txt")]);
      assert.equal(sentToModelLast(p1.parts[0].callID), "[Old tool result content cleared]");
      check(p4.parts[0], "full", await openCodeText("w1.txt"), "(its read was pruned)");
      check(p4.parts[1], "unchanged", "[readcache: unchanged, 500 lines]", "(its read was kept)");
      check(p4.parts[2], "full", await openCodeText("b.txt"), "(its anchor was pruned)");

      // 9. a fork copies the messages before a point into a new session, metadata and all
      const fork = await api("POST", `/session/${sid}/fork`, { messageID: p4.userMessageId }) as {
        id: string;
      };
      const f1 = await turn([read("w6.txt"), read("w2.txt")], fork.id);
      check(f1.parts[0], "unchanged", "[readcache: unchanged, 500 lines]", "(in the fork)");
      check(f1.parts[1], "full", await openCodeText("w2.txt"), "(pruned before the fork)");

      assert.ok(existsSync(join(cwd, ".opencode", "readcache", "objects")), "bases are stored");

      // 10. reads fetched the newest messages only, OpenCode's events naming what changed: every
      // change (pruned outputs, the revert's deleted messages, the compaction) was announced by
      // an event, or the plugin would have seen a conversion change without one
      const logged = (await Deno.readTextFile(readLog)).trim().split("\n").map((l) =>
        JSON.parse(l) as {
          stats: {
            session: string;
            full: number;
            tail: number;
            events: number;
            databaseChecks: number;
            fallbacks: Record<string, number>;
          }[];
        }
      );
      const stats = logged.at(-1)!.stats;
      const main = stats.find((x) => x.session === sid)!;
      assert.ok(main.tail > main.full, `tail reads: ${JSON.stringify(main)}`);
      // most came from the events alone, each checked in OpenCode's database (no HTTP call)
      assert.ok(main.events * 2 > main.tail, `from events: ${JSON.stringify(main)}`);
      assert.equal(main.databaseChecks, main.events, JSON.stringify(main));
      for (const x of stats) {
        assert.equal(x.fallbacks["change without event"], undefined, JSON.stringify(x));
        assert.equal(x.fallbacks["unknown event"], undefined, JSON.stringify(x));
      }
      const tDone = performance.now();
      console.log(
        `opencode e2e: ${main.tail} of ${main.tail + main.full} reads fetched the newest ` +
          `messages only, ${main.events} from the events checked in the database ` +
          `(${JSON.stringify(main.fallbacks)}); ` +
          `install/check ${((tInstalled - t0) / 1000).toFixed(1)} s, ` +
          `server start ${((tStarted - tInstalled) / 1000).toFixed(1)} s, ` +
          `session (${mock.requests.length} model requests, ${mock.calls.length} tool calls) ` +
          `${((tDone - tStarted) / 1000).toFixed(1)} s; turns (s): ` +
          turns.map((ms) => (ms / 1000).toFixed(2)).join(" "),
      );
    } finally {
      await server.stop();
      await mock.close();
      if (Deno.env.get("READCACHE_E2E_KEEP") === "1") console.log(`kept ${root}`);
      else await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});
