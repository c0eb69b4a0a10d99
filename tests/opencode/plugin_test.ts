// The OpenCode plugin (src/adapters/opencode/plugin.ts) driven by a small stand-in for OpenCode:
// a session of messages and parts as `client.session.messages` returns them, OpenCode's read
// output (rendered as OpenCode renders it), and the `tool.execute.after` hook called the way
// OpenCode 1.18.33 calls it (after the tool ran, before the part is stored). The real binary is
// in opencode_e2e_test.ts; this covers what a scripted model cannot reach quickly: failures,
// mismatches, system reminders, call order inside one message, the switch.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import {
  createReadcachePlugin,
  decodeOpenCodeText,
  type OpenCodeClientLike,
  type OpenCodeMessageLike,
  type OpenCodePartLike,
  READ_DESCRIPTION_NOTE,
  type ReadcacheHooks,
  readcachePlugin,
  type ReadcachePluginOptions,
  renderOpenCodeRead,
  type ToolAfterOutput,
} from "../../src/adapters/opencode/plugin.ts";

type Call = { tool: string; args: Record<string, unknown> };

/** Just enough OpenCode: messages, OpenCode's own read/write, and the plugin's hooks. */
class FakeOpenCode {
  readonly messages: OpenCodeMessageLike[] = [];
  revert: { messageID: string; partID?: string } | undefined;
  failFetch = false;
  /** Text OpenCode appends after a read's `</content>` (instruction files), if any. */
  reminder = "";
  hooks!: ReadcacheHooks;
  #n = 0;
  readonly client: OpenCodeClientLike = {
    session: {
      messages: () => {
        if (this.failFetch) return Promise.reject(new Error("server gone"));
        return Promise.resolve({ data: structuredClone(this.messages) });
      },
      get: () => Promise.resolve({ data: { id: "ses_1", revert: this.revert } }),
    },
  };

  constructor(readonly dir: string) {}

  async start(options?: ReadcachePluginOptions): Promise<this> {
    this.hooks = await createReadcachePlugin(options)({ client: this.client, directory: this.dir });
    return this;
  }

  id(prefix: string): string {
    return `${prefix}_${String(++this.#n).padStart(6, "0")}`;
  }

  user(): void {
    if (this.revert !== undefined) {
      // what OpenCode does before the next prompt: drop the reverted messages, clear the point
      const at = this.messages.findIndex((m) => m.info.id === this.revert!.messageID);
      if (at >= 0) this.messages.splice(at);
      this.revert = undefined;
    }
    this.messages.push({
      info: { id: this.id("msg"), role: "user" },
      parts: [{ id: this.id("prt"), type: "text" }],
    });
  }

  /** OpenCode's own result of a call, run now. */
  async run(call: Call, callID = ""): Promise<ToolAfterOutput> {
    if (call.tool === "readcache_refresh") {
      const r = await this.hooks.tool!.readcache_refresh.execute(call.args, {
        sessionID: "ses_1",
        messageID: this.messages.at(-1)!.info.id,
        callID,
      });
      return typeof r === "string"
        ? { title: "", output: r, metadata: {} }
        : { title: r.title ?? "", output: r.output, metadata: r.metadata ?? {} };
    }
    const file = String(call.args.filePath);
    const path = isAbsolute(file) ? file : join(this.dir, file);
    if (call.tool === "write") {
      await Deno.writeTextFile(path, String(call.args.content));
      return { title: "w", output: "Wrote file successfully.", metadata: { exists: false } };
    }
    if (call.tool === "edit") {
      // OpenCode's exact path: oldString once in the file (replaceAll: every occurrence)
      const text = await Deno.readTextFile(path);
      const old = String(call.args.oldString);
      const at = text.indexOf(old);
      if (at === -1) throw new Error("Could not find oldString in the file.");
      const next = call.args.replaceAll === true
        ? text.replaceAll(old, String(call.args.newString))
        : text.indexOf(old, at + 1) !== -1
        ? undefined
        : text.slice(0, at) + String(call.args.newString) + text.slice(at + old.length);
      if (next === undefined) throw new Error("Found multiple matches for oldString.");
      await Deno.writeTextFile(path, next);
      return { title: "e", output: "Edit applied successfully.", metadata: { diff: "..." } };
    }
    const view = renderOpenCodeRead({
      path,
      text: decodeOpenCodeText(await Deno.readFile(path)),
      offset: call.args.offset as number | undefined,
      limit: call.args.limit as number | undefined,
    })!;
    return {
      title: "r",
      output: view.text + this.reminder,
      metadata: { preview: "...", truncated: view.more, loaded: [] },
    };
  }

  /**
   * One assistant message making `calls`; OpenCode finishes them in `order` (indexes), each
   * running its tool, the plugin's hook, then storing the part. Returns the outputs by call.
   */
  async step(calls: Call[], order = calls.map((_, i) => i), before?: () => Promise<void>) {
    this.user();
    const parts: OpenCodePartLike[] = calls.map((c) => ({
      id: this.id("prt"),
      type: "tool",
      tool: c.tool,
      callID: this.id("call"),
      state: { status: "running", input: c.args },
    }));
    const message: OpenCodeMessageLike = {
      info: { id: this.id("msg"), role: "assistant" },
      parts: [{ id: this.id("prt"), type: "step-start" }, ...parts],
    };
    this.messages.push(message);
    const outputs: ToolAfterOutput[] = [];
    for (const [i, c] of calls.entries()) {
      await this.hooks["tool.execute.before"]?.(
        { tool: c.tool, sessionID: "ses_1", callID: parts[i].callID! },
        { args: c.args },
      );
    }
    for (const i of order) {
      let out: ToolAfterOutput;
      try {
        out = await this.run(calls[i], parts[i].callID);
      } catch (e) {
        // a tool that throws: OpenCode stores the error and calls no after hook
        parts[i].state = { status: "error", input: calls[i].args, output: String(e) };
        continue;
      }
      await before?.();
      await this.hooks["tool.execute.after"]!(
        { tool: calls[i].tool, sessionID: "ses_1", callID: parts[i].callID!, args: calls[i].args },
        out,
      );
      parts[i].state = {
        status: "completed",
        input: calls[i].args,
        output: out.output,
        metadata: out.metadata,
      };
      outputs[i] = out;
    }
    (message.info as { finish?: string }).finish = "tool-calls";
    return outputs;
  }
}

const modeOf = (o: ToolAfterOutput) =>
  (o.metadata as { readcache?: { mode: string } }).readcache?.mode ?? null;
const read = (filePath: string, extra: Record<string, unknown> = {}): Call => ({
  tool: "read",
  args: { filePath, ...extra },
});

async function withHost(fn: (oc: FakeOpenCode) => Promise<void>, options?: ReadcachePluginOptions) {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "readcache-oc-plugin-" }));
  try {
    await Deno.writeTextFile(join(dir, "a.txt"), "alpha\nbeta\ngamma\n");
    await fn(await new FakeOpenCode(dir).start(options));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("first read keeps OpenCode's output and metadata; the next is unchanged", () =>
  withHost(async (oc) => {
    const [first] = await oc.step([read("a.txt")]);
    assert.equal(modeOf(first), "full");
    assert.equal(first.output, (await oc.run(read("a.txt"))).output, "byte-identical");
    assert.equal((first.metadata as { preview: string }).preview, "...", "OpenCode's own metadata");
    const [again] = await oc.step([read(join(oc.dir, "a.txt"))]);
    assert.equal(again.output, "[readcache: unchanged, 3 lines]");
    assert.equal(modeOf(again), "unchanged");
    const meta = (again.metadata as { readcache: { bytes: number } }).readcache;
    assert.equal(meta.bytes, again.output.length, "bytes are what the model got");
    const [range] = await oc.step([read("a.txt", { offset: 2, limit: 2 })]);
    assert.equal(range.output, "[readcache: unchanged in lines 2-3 of 3]");
    assert.ok(existsSync(join(oc.dir, ".opencode", "readcache", "objects")), "bases stored");
  }));

Deno.test("OpenCode's <system-reminder> after the content stays after a cached answer", () =>
  withHost(async (oc) => {
    await oc.step([read("a.txt")]);
    oc.reminder = "\n\n<system-reminder>\nInstructions from: /w/sub/AGENTS.md\n</system-reminder>";
    const [again] = await oc.step([read("a.txt")]);
    assert.equal(again.output, `[readcache: unchanged, 3 lines]${oc.reminder}`);
  }));

Deno.test("a file that changed after OpenCode read it is left as OpenCode showed it, untrusted", () =>
  withHost(async (oc) => {
    await oc.step([read("a.txt")]);
    const [raced] = await oc.step(
      [read("a.txt")],
      undefined,
      () => Deno.writeTextFile(join(oc.dir, "a.txt"), "changed meanwhile\n"),
    );
    assert.match(raced.output, /\n1: alpha\n/, "OpenCode's own (older) text");
    assert.equal(modeOf(raced), null);
    const [next] = await oc.step([read("a.txt")]);
    assert.equal(modeOf(next), "baseline_fallback", "the unknown view blocks the old base");
  }));

Deno.test("bypass_cache, CRLF files and failures give OpenCode's own output", () =>
  withHost(async (oc) => {
    await oc.step([read("a.txt")]);
    const [bypass] = await oc.step([read("a.txt", { bypass_cache: true })]);
    assert.equal(modeOf(bypass), "full");
    assert.match(bypass.output, /^<path>/);
    await Deno.writeTextFile(join(oc.dir, "crlf.txt"), "one\r\ntwo\r\n");
    await oc.step([read("crlf.txt")]);
    const [crlf] = await oc.step([read("crlf.txt")]);
    assert.equal(modeOf(crlf), null);
    assert.match(crlf.output, /^<path>/);
    oc.failFetch = true;
    const [failed] = await oc.step([read("a.txt")]);
    assert.equal(modeOf(failed), null);
    assert.match(failed.output, /^<path>/);
  }));

Deno.test("a read after a write of the same content in an earlier message is unchanged", () =>
  withHost(async (oc) => {
    await oc.step([{ tool: "write", args: { filePath: "new.txt", content: "n1\nn2\n" } }]);
    const [r] = await oc.step([read("new.txt")]);
    assert.equal(r.output, "[readcache: unchanged, 2 lines]");
    // in the same message as a write of it: in full (the model's newest view is pending)
    const [w, same] = await oc.step([
      { tool: "write", args: { filePath: "new.txt", content: "n1\nn2\n" } },
      read("new.txt"),
    ]);
    assert.equal(w.output, "Wrote file successfully.");
    assert.equal(modeOf(same), "full");
  }));

Deno.test("two reads of a file in one message: a later call served first makes the earlier full", () =>
  withHost(async (oc) => {
    await oc.step([read("a.txt")]);
    const inOrder = await oc.step([read("a.txt"), read("a.txt")]);
    assert.deepEqual(inOrder.map(modeOf), ["unchanged", "unchanged"]);
    const reversed = await oc.step([read("a.txt"), read("a.txt")], [1, 0]);
    assert.deepEqual(reversed.map(modeOf), ["full", "unchanged"]);
    // a first read in the message answers the second one, which comes after it
    await Deno.writeTextFile(join(oc.dir, "b.txt"), "b\n");
    const fresh = await oc.step([read("b.txt"), read("b.txt")]);
    assert.deepEqual(fresh.map(modeOf), ["full", "unchanged"]);
  }));

Deno.test("a reverted read no longer counts", () =>
  withHost(async (oc) => {
    await oc.step([read("a.txt")]);
    oc.revert = { messageID: oc.messages[0].info.id };
    const [r] = await oc.step([read("a.txt")]);
    assert.equal(modeOf(r), "full");
  }));

Deno.test("read's description explains the answers; OPENCODE_READCACHE=off loads nothing", async () => {
  await withHost(async (oc) => {
    const def = { description: "Read a file.", parameters: {} };
    await oc.hooks["tool.definition"]!({ toolID: "read" }, def);
    assert.equal(def.description, `Read a file.\n\n${READ_DESCRIPTION_NOTE}`);
    await oc.hooks["tool.definition"]!({ toolID: "read" }, def);
    assert.equal(def.description, `Read a file.\n\n${READ_DESCRIPTION_NOTE}`, "once");
    const other = { description: "Write.", parameters: {} };
    await oc.hooks["tool.definition"]!({ toolID: "write" }, other);
    assert.equal(other.description, "Write.");
  });
  const before = Deno.env.get("OPENCODE_READCACHE");
  Deno.env.set("OPENCODE_READCACHE", "off");
  try {
    const hooks = await readcachePlugin({
      directory: "/nonexistent",
      client: new FakeOpenCode("/nonexistent").client,
    });
    assert.deepEqual(hooks, {});
  } finally {
    if (before === undefined) Deno.env.delete("OPENCODE_READCACHE");
    else Deno.env.set("OPENCODE_READCACHE", before);
  }
});

const edit = (filePath: string, oldString: string, newString: string, extra = {}): Call => ({
  tool: "edit",
  args: { filePath, oldString, newString, ...extra },
});
const metaOf = (o: ToolAfterOutput) => (o.metadata as { readcache?: unknown }).readcache;

Deno.test("the model's own edit: its result carries the belief; a re-read is unchanged", () =>
  withHost(async (oc) => {
    await oc.step([read("a.txt")]);
    const [e] = await oc.step([edit("a.txt", "beta", "BETA")]);
    assert.equal(e.output, "Edit applied successfully.");
    assert.equal((e.metadata as { diff: string }).diff, "...", "OpenCode's own metadata kept");
    assert.deepEqual(
      [(metaOf(e) as { kind: string }).kind, (metaOf(e) as { from: number }).from],
      ["edit", 2],
    );
    const [again] = await oc.step([read("a.txt")]);
    assert.equal(again.output, "[readcache: unchanged, 3 lines]");
  }));

Deno.test("the model's own edit undone by another process: never unchanged, a diff", () =>
  withHost(async (oc) => {
    const text = Array.from({ length: 40 }, (_, i) => `line ${i + 1} of the file\n`).join("");
    await Deno.writeTextFile(join(oc.dir, "c.txt"), text);
    await oc.step([read("c.txt")]);
    await oc.step([edit("c.txt", "line 5 of", "line 5 EDITED of")]);
    await Deno.writeTextFile(join(oc.dir, "c.txt"), text); // git checkout
    const [back] = await oc.step([read("c.txt")]);
    assert.equal(modeOf(back), "diff");
    assert.match(back.output, /-line 5 EDITED of the file\n\+line 5 of the file/);
  }));

Deno.test("edits without a belief leave the file unknown: replaceAll, never read, failed", () =>
  withHost(async (oc) => {
    await oc.step([read("a.txt")]);
    const [all] = await oc.step([edit("a.txt", "a", "A", { replaceAll: true })]);
    assert.equal(metaOf(all), undefined);
    const [r1] = await oc.step([read("a.txt")]);
    assert.notEqual(modeOf(r1), "unchanged");
    assert.match(r1.output, /^<path>/, "the whole file again");
    await Deno.writeTextFile(join(oc.dir, "b.txt"), "one\ntwo\n");
    const [unseen] = await oc.step([edit("b.txt", "one", "ONE")]);
    assert.equal(metaOf(unseen), undefined, "lines the model never saw");
    await oc.step([read("a.txt")]);
    await oc.step([edit("a.txt", "no such text", "x")]); // fails: OpenCode stores an error
    const [r2] = await oc.step([read("a.txt")]);
    assert.match(r2.output, /^<path>/, "a failed edit leaves the file unknown");
  }));

const refresh = (filePath: string, extra: Record<string, unknown> = {}): Call => ({
  tool: "readcache_refresh",
  args: { filePath, ...extra },
});

Deno.test("readcache_refresh: the next read of the refreshed lines is in full", () =>
  withHost(async (oc) => {
    assert.ok(oc.hooks.tool?.readcache_refresh.description.includes("full content"));
    await oc.step([read("a.txt")]);
    const [r] = await oc.step([refresh("a.txt")]);
    assert.equal(r.output, "Refreshed a.txt: the next read returns its full content.");
    assert.deepEqual(
      [(metaOf(r) as { kind: string }).kind, (metaOf(r) as { scopeKey: string }).scopeKey],
      ["invalidate", "full"],
    );
    const [again] = await oc.step([read("a.txt")]);
    assert.match(again.output, /^<path>/, "the whole file again");
    const [third] = await oc.step([read("a.txt")]);
    assert.equal(third.output, "[readcache: unchanged, 3 lines]", "and trusted again after it");
    // a range: the lines a read with that offset and limit showed
    await oc.step([read("a.txt", { offset: 2, limit: 1 })]);
    const [rr] = await oc.step([refresh("a.txt", { offset: 2, limit: 1 })]);
    assert.equal(
      rr.output,
      "Refreshed lines 2-2 of a.txt: the next read of them returns their full content.",
    );
    const [line2] = await oc.step([read("a.txt", { offset: 2, limit: 1 })]);
    assert.match(line2.output, /^<path>/);
    // in the same message as a read of the file: that read is in full too
    const [, same] = await oc.step([refresh("a.txt"), read("a.txt")]);
    assert.match(same.output, /^<path>/);
  }));
