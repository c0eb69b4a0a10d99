// The OpenCode plugin's session cache (src/adapters/opencode/session_cache.ts): a read brought up
// to date from the newest messages and the store's events must give exactly the branch, and the
// knowledge, that converting and replaying the whole session gives. Random sessions on the model
// of OpenCode's session store (appends, tool parts that run, finish, fail or gain siblings while
// in flight, pruned outputs, compactions, reverts with and without a part, unreverts, messages
// that end with an error) are checked against `openCodeBranchToReplay` at random reads; then each
// fallback (no events, an event the cache does not know, a change no event announced, a host
// that does not page, many messages since the last read), and the port's vectors through the
// plugin with and without the store's events.
import assert from "node:assert/strict";
import { homedir } from "node:os";
import { join } from "node:path";
import { BranchKnowledge } from "../../src/core/knowledge.ts";
import {
  createReadcachePlugin,
  openCodeBranchToReplay,
  type OpenCodeClientLike,
  type OpenCodeMessageLike,
  OpenCodeSessionCache,
  type OpenCodeSessionSource,
  openCodeSessionSource,
} from "../../src/adapters/opencode/plugin.ts";
import {
  type ModelToolPart,
  OpenCodeSessionStore,
} from "../../scripts/opencode/opencode_session_model.ts";
import { runScenarioOnOpenCode } from "../../scripts/opencode/opencode_scenario_runner.ts";
import { openCodeVector } from "../../scripts/opencode/opencode_expectations.ts";
import type { ScenarioInput } from "../../src/conformance/vector_schema.ts";
import { seededRandom as random } from "../../scripts/seeded_random.ts";

/** A session on the model with a cache fed its events. */
function setup(dir: string) {
  const store = new OpenCodeSessionStore(dir);
  const session = store.createSession();
  const cache = new OpenCodeSessionCache();
  const s = { store, session, cache, muted: false };
  store.subscribe((e) => {
    if (!s.muted && (e.properties as { sessionID?: string }).sessionID === session.id) {
      cache.onEvent(e);
    }
  });
  return s;
}

/** `n` turns of a prompt and an answer without calls. */
function chatter(s: ReturnType<typeof setup>, n: number): void {
  for (let i = 0; i < n; i++) {
    s.store.userMessage(s.session.id, "chatter");
    s.store.assistantMessage(s.session.id);
  }
}

/** Until the cache has fetched the whole session (the background fetch of a first read). */
async function fetchedOnce(cache: OpenCodeSessionCache): Promise<void> {
  while (cache.stats.full === 0) await new Promise((r) => setTimeout(r, 1));
}

/** What a full conversion and a fresh replay give, and what the cache gives, must agree. */
async function check(
  dir: string,
  store: OpenCodeSessionStore,
  sessionID: string,
  cache: OpenCodeSessionCache,
  currentCallId: string | undefined,
  source: OpenCodeSessionSource = openCodeSessionSource(store.client, sessionID),
  label = "",
): Promise<void> {
  const synced = await cache.sync(source, { directory: dir, currentCallId });
  assert.ok(synced !== undefined);
  const s = store.session(sessionID);
  const ref = openCodeBranchToReplay(structuredClone(s.messages) as OpenCodeMessageLike[], {
    directory: dir,
    revert: s.revert,
    currentCallId,
  });
  assert.deepStrictEqual(cache.entries(), ref.entries, `entries ${label}`);
  assert.deepStrictEqual(synced.current, ref.current, `current ${label}`);
  const fresh = new BranchKnowledge();
  fresh.sync(ref.entries);
  const k = synced.knowledge;
  const view = (b: BranchKnowledge) => {
    const { boundary, ...snap } = b.snapshot();
    const held = b.heldIdentities();
    return {
      ...snap,
      compactionId: boundary.compactionId,
      pending: b.pendingChanges(),
      opaque: b.opaqueInFlight(),
      turnOpaque: b.turnIsOpaque(),
      held: { keys: held.keys.sort(), names: held.names.sort() },
      turn: b.turnChanges(),
    };
  };
  assert.deepStrictEqual(view(k), view(fresh), `knowledge ${label}`);
}

const META = (pathKey: string) => ({
  readcache: {
    v: 1,
    pathKey,
    scopeKey: "full",
    servedHash: "a".repeat(64),
    mode: "full",
    totalLines: 3,
    rangeStart: 1,
    rangeEnd: 3,
    bytes: 30,
  },
});

Deno.test("a read brought up to date from the newest messages gives the full conversion's branch", async () => {
  const dir = await Deno.makeTempDir({ prefix: "readcache-session-cache-" });
  try {
    const files = ["a.txt", "b.txt", "c.txt"].map((f) => join(dir, f));
    for (const f of files) await Deno.writeTextFile(f, "one\ntwo\nthree\n");
    const totals = { tail: 0, full: 0, replays: 0, reads: 0 };
    const why: Record<string, number> = {};
    for (let seed = 1; seed <= 250; seed++) {
      const rnd = random(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
      const { store, session, cache } = setup(dir);
      const sid = session.id;
      const live = (): ModelToolPart[] =>
        store.session(sid).messages.flatMap((m) =>
          m.parts.filter((p): p is ModelToolPart => p.type === "tool")
        );
      store.userMessage(sid, "start");
      for (let op = 0; op < 70; op++) {
        const r = rnd();
        const msgs = store.session(sid).messages;
        const lastAssistant = msgs.findLast((m) => m.info.role === "assistant");
        const open = live().filter((p) =>
          p.state.status === "pending" || p.state.status === "running"
        );
        if (r < 0.08) store.userMessage(sid, "next");
        else if (r < 0.26 || lastAssistant === undefined) {
          const m = store.assistantMessage(sid);
          for (let k = 1 + Math.floor(rnd() * 3); k > 0; k--) {
            const tool = pick(["read", "read", "read", "write", "edit", "bash", "grep"]);
            const file = pick(files);
            const input = tool === "write"
              ? { filePath: file, content: "new\n" }
              : tool === "edit"
              ? { filePath: file, oldString: "one", newString: "uno" }
              : tool === "bash"
              ? { command: pick(["cat a.txt", "rm b.txt"]) }
              : tool === "grep"
              ? { pattern: "one" }
              : { filePath: file };
            store.toolPart(m.info.id, tool, input);
          }
        } else if (r < 0.32 && lastAssistant !== undefined) {
          // a call streamed in after the message's first calls ran (the message is in flight)
          store.toolPart(lastAssistant.info.id, pick(["read", "bash", "write"]), {
            filePath: pick(files),
            command: "ls",
            content: "x\n",
          });
        } else if (r < 0.44 && open.length > 0) store.run(pick(open));
        else if (r < 0.6 && open.length > 0) {
          const p = pick(open);
          const file = String(p.state.input.filePath ?? files[0]);
          store.complete(p, "output", p.tool === "read" ? META(file) : {});
        } else if (r < 0.64 && open.length > 0) store.fail(pick(open), "failed");
        else if (r < 0.7) {
          const done = live().filter((p) => p.state.status === "completed");
          if (done.length > 0) store.prune(pick(done));
        } else if (r < 0.73) store.compact(sid);
        else if (r < 0.77 && msgs.length > 1) {
          const m = pick(msgs.slice(1));
          const part = rnd() < 0.4 && m.parts.length > 0 ? pick(m.parts).id : undefined;
          store.revert(sid, m.info.id, part);
        } else if (r < 0.8) store.unrevert(sid);
        else if (r < 0.82 && lastAssistant !== undefined) {
          store.failMessage(
            pick(msgs.filter((m) => m.info.role === "assistant")).info.id,
            pick(["MessageAbortedError", "APIError"]),
          );
        } else {
          // a read point: the hook of a running call (a read starting now when none runs), or
          // of no call
          let running = live().filter((p) => p.state.status === "running");
          if (running.length === 0 || rnd() < 0.3) {
            const m = rnd() < 0.5 && lastAssistant !== undefined
              ? lastAssistant
              : store.assistantMessage(sid);
            const p = store.toolPart(m.info.id, "read", { filePath: pick(files) });
            store.run(p);
            running = [p];
          }
          const call = rnd() < 0.95 ? pick(running).callID : undefined;
          await check(dir, store, sid, cache, call, undefined, `seed ${seed} op ${op}`);
          totals.reads++;
        }
      }
      totals.tail += cache.stats.tail;
      totals.full += cache.stats.full;
      totals.replays += cache.stats.replays;
      for (const [k, v] of Object.entries(cache.stats.fallbacks)) why[k] = (why[k] ?? 0) + v;
    }
    // the incremental path is what these sessions exercised, not the fallback
    assert.ok(totals.tail > 3 * totals.full, JSON.stringify({ totals, why }));
    assert.ok(totals.reads > 2000, JSON.stringify(totals));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A session of `turns` steps with a read each, the cache synced at every read. */
async function steps(
  dir: string,
  s: ReturnType<typeof setup>,
  turns: number,
  source?: OpenCodeSessionSource,
): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (i % 3 === 0) s.store.userMessage(s.session.id, "go");
    const m = s.store.assistantMessage(s.session.id);
    const p = s.store.toolPart(m.info.id, "read", { filePath: join(dir, "a.txt") });
    s.store.run(p);
    await check(dir, s.store, s.session.id, s.cache, p.callID, source, `step ${i}`);
    s.store.complete(p, "out", META(join(dir, "a.txt")));
  }
}

Deno.test("the cache falls back to every message where the newest are not enough", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "readcache-session-cache-" });
  await Deno.writeTextFile(join(dir, "a.txt"), "one\n");
  try {
    await t.step("steady state: one full fetch, then the newest messages only", async () => {
      const s = setup(dir);
      await steps(dir, s, 30);
      assert.equal(s.cache.stats.full, 1);
      assert.equal(s.cache.stats.tail, 29);
      // every read after the first took its messages from the events, checked by a page
      assert.equal(s.cache.stats.events, 29);
      assert.equal(s.cache.stats.replays, 1);
      assert.ok(s.cache.stats.fetched < 30 * 14, String(s.cache.stats.fetched));
    });

    await t.step("no event for the call being served: every message", async () => {
      const store = new OpenCodeSessionStore(dir);
      const session = store.createSession();
      const cache = new OpenCodeSessionCache(); // nobody feeds it events
      await steps(dir, { store, session, cache, muted: false }, 6);
      assert.equal(cache.stats.full, 6);
    });

    await t.step("a message event the cache does not know: every message, once", async () => {
      const s = setup(dir);
      await steps(dir, s, 3);
      s.cache.onEvent({ type: "message.moved", properties: { sessionID: s.session.id } });
      await steps(dir, s, 3);
      assert.equal(s.cache.stats.full, 2);
    });

    await t.step(
      "a message no event announced (another OpenCode process): caught in the newest messages",
      async () => {
        const s = setup(dir);
        await steps(dir, s, 4);
        s.muted = true; // written by a process whose bus this one does not hear
        const m = s.store.assistantMessage(s.session.id);
        const p = s.store.toolPart(m.info.id, "read", { filePath: join(dir, "a.txt") });
        s.store.run(p);
        s.store.complete(p, "out", META(join(dir, "a.txt")));
        s.muted = false;
        const before = s.cache.stats.events!;
        await steps(dir, s, 3); // each read checked against a full conversion
        // the first read after it fetched the newest messages (the page showed the message
        // whole, the events had only its end); the next ones came from the events again
        assert.equal(s.cache.stats.events, before + 2);
      },
    );

    await t.step(
      "a change no event announced: caught in the newest messages fetched, never trusted again",
      async () => {
        const s = setup(dir);
        await steps(dir, s, 24);
        // a read two steps back (finished, no event since) pruned behind the bus's back
        const done = s.store.session(s.session.id).messages.filter((m) =>
          m.parts.some((p) => p.type === "tool")
        );
        const part = done.at(-3)!.parts.find((p) => p.type === "tool") as ModelToolPart;
        if (part.state.status === "completed") part.state.time.compacted = 1;
        // and the first read pruned with its event: older than the messages the events
        // brought whole, so the next read fetches back to it and converts the ones after it
        s.store.prune(done[0].parts.find((p) => p.type === "tool") as ModelToolPart);
        const before = s.cache.stats.full;
        await steps(dir, s, 3);
        assert.equal(s.cache.stats.full, before + 3);
      },
    );

    await t.step("a call of a message settled before (a late result): every message", async () => {
      const s = setup(dir);
      await steps(dir, s, 12);
      const done = s.store.session(s.session.id).messages.flatMap((m) => m.parts)
        .filter((p): p is ModelToolPart => p.type === "tool");
      await check(dir, s.store, s.session.id, s.cache, done[0].callID);
      assert.deepStrictEqual(s.cache.stats.fallbacks, {
        "first read": 1,
        "call in an old message": 1,
      });
    });

    await t.step("a fetch that fails: the events it took are not lost", async () => {
      const s = setup(dir);
      await steps(dir, s, 6);
      const src = openCodeSessionSource(s.store.client, s.session.id);
      const failing: OpenCodeSessionSource = {
        ...src,
        page: () => Promise.reject(new Error("server gone")),
      };
      // a prune the failed read took from the events, then the read fails
      const first = s.store.session(s.session.id).messages.flatMap((m) => m.parts)
        .find((p) => p.type === "tool") as ModelToolPart;
      s.store.prune(first);
      const m = s.store.assistantMessage(s.session.id);
      const p = s.store.toolPart(m.info.id, "read", { filePath: join(dir, "a.txt") });
      s.store.run(p);
      await assert.rejects(s.cache.sync(failing, { directory: dir, currentCallId: p.callID }));
      await check(dir, s.store, s.session.id, s.cache, p.callID);
      assert.equal(s.cache.stats.fallbacks["after a revert or a failed fetch"], 1);
    });

    await t.step("a host that does not page: every message, the same branch", async () => {
      const s = setup(dir);
      const all = openCodeSessionSource(s.store.client, s.session.id);
      const unpaged: OpenCodeSessionSource = { ...all, page: () => Promise.resolve(undefined) };
      await steps(dir, s, 5, unpaged);
      assert.equal(s.cache.stats.tail, 0);
      // one that ignores `limit` answers every message: a complete page
      const client: OpenCodeClientLike = {
        session: {
          messages: ({ path }) => s.store.client.session.messages({ path }),
          get: s.store.client.session.get,
        },
      };
      const s2 = setup(dir);
      await steps(dir, s2, 5, openCodeSessionSource(client, s2.session.id));
      assert.equal(s2.cache.stats.tail, 4);
    });

    await t.step(
      "a long session's first read: OpenCode's own, its messages fetched in the background",
      async () => {
        const s = setup(dir);
        await steps(dir, s, 3);
        // a new cache (OpenCode started again) on a session of 300 messages and more
        const cache = new OpenCodeSessionCache();
        s.store.subscribe((e) => {
          if ((e.properties as { sessionID?: string }).sessionID === s.session.id) {
            cache.onEvent(e);
          }
        });
        chatter(s, 150);
        const source = openCodeSessionSource(s.store.client, s.session.id);
        const m = s.store.assistantMessage(s.session.id);
        const p = s.store.toolPart(m.info.id, "read", { filePath: join(dir, "a.txt") });
        s.store.run(p);
        assert.equal(
          await cache.sync(source, { directory: dir, currentCallId: p.callID }),
          undefined,
        );
        // the session goes on while the rest is fetched; reads until then are OpenCode's own
        s.store.complete(p, "out", META(join(dir, "a.txt")));
        const q = s.store.toolPart(m.info.id, "read", { filePath: join(dir, "a.txt") });
        s.store.run(q);
        assert.equal(
          await cache.sync(source, { directory: dir, currentCallId: q.callID }),
          undefined,
        );
        s.store.complete(q, "out", META(join(dir, "a.txt")));
        await fetchedOnce(cache);
        assert.equal(cache.stats.background, 2);
        // then every read is brought up to date as usual, and gives the full conversion's branch
        await steps(dir, { store: s.store, session: s.session, cache, muted: false }, 4);
        assert.equal(cache.stats.full, 1);
        assert.ok(cache.stats.fetched >= 300, String(cache.stats.fetched));
      },
    );

    await t.step(
      "a long session known from OpenCode's database: its first read fetches nothing itself",
      async () => {
        const s = setup(dir);
        chatter(s, 150);
        const good = openCodeSessionSource(s.store.client, s.session.id);
        let pages = 0;
        const source: OpenCodeSessionSource = {
          ...good,
          page: (limit, before) => (pages++, good.page(limit, before)),
          // the database says: more than asked for (ids only, as session_tip.ts reads them)
          check: (limit = 8) => ({
            page: {
              messages: s.store.session(s.session.id).messages.slice(-limit).map((m) => ({
                info: { id: m.info.id, role: "" },
                parts: m.parts.map((p) => ({ id: p.id, type: "" })),
              })),
              complete: s.store.session(s.session.id).messages.length < limit,
            },
            revert: undefined,
          }),
        };
        const m = s.store.assistantMessage(s.session.id);
        const p = s.store.toolPart(m.info.id, "read", { filePath: join(dir, "a.txt") });
        s.store.run(p);
        const synced = s.cache.sync(source, { directory: dir, currentCallId: p.callID });
        assert.equal(pages, 0); // decided before any page was asked for
        assert.equal(await synced, undefined);
        await fetchedOnce(s.cache);
        await check(dir, s.store, s.session.id, s.cache, p.callID, source);
        assert.equal(s.cache.stats.background, 1);
      },
    );

    await t.step("a page of the background fetch fails: the next read starts again", async () => {
      const s = setup(dir);
      chatter(s, 150);
      const good = openCodeSessionSource(s.store.client, s.session.id);
      let pages = 0;
      const flaky: OpenCodeSessionSource = {
        ...good,
        page: (limit, before) =>
          ++pages === 2 ? Promise.resolve(undefined) : good.page(limit, before),
      };
      const m = s.store.assistantMessage(s.session.id);
      const p = s.store.toolPart(m.info.id, "read", { filePath: join(dir, "a.txt") });
      s.store.run(p);
      assert.equal(
        await s.cache.sync(flaky, { directory: dir, currentCallId: p.callID }),
        undefined,
      );
      while (s.cache.stats.background === 1 && pages < 2) {
        await new Promise((r) => setTimeout(r, 1));
      }
      await new Promise((r) => setTimeout(r, 5));
      assert.equal(s.cache.stats.full, 0);
      assert.equal(
        await s.cache.sync(flaky, { directory: dir, currentCallId: p.callID }),
        undefined,
      );
      await fetchedOnce(s.cache);
      await check(dir, s.store, s.session.id, s.cache, p.callID);
    });

    await t.step("many messages since the last read: older pages by the cursor", async () => {
      const s = setup(dir);
      await steps(dir, s, 2);
      chatter(s, 40);
      await steps(dir, s, 2);
      assert.equal(s.cache.stats.full, 1);
      assert.equal(s.cache.stats.tail, 3);
    });

    await t.step(
      "a pruned output far back: the page reaches back to it, the knowledge replays",
      async () => {
        const s = setup(dir);
        await steps(dir, s, 20);
        const first = s.store.session(s.session.id).messages.flatMap((m) => m.parts)
          .find((p) => p.type === "tool") as ModelToolPart;
        s.store.prune(first);
        const replays = s.cache.stats.replays;
        await steps(dir, s, 2);
        assert.equal(s.cache.stats.full, 1);
        assert.equal(s.cache.stats.replays, replays + 1);
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("every vector gives the same answers with and without the store's events", async () => {
  const root = new URL("../../vectors/scenario/", import.meta.url);
  let compared = 0;
  for (const e of [...Deno.readDirSync(root)].sort((a, b) => a.name.localeCompare(b.name))) {
    if (!e.name.endsWith(".json")) continue;
    const oc = openCodeVector(JSON.parse(Deno.readTextFileSync(new URL(e.name, root))));
    if (!oc.applies) continue;
    const run = async (events: boolean) => {
      const cwd = await Deno.makeTempDir({ prefix: "readcache-events-" });
      try {
        const out = await runScenarioOnOpenCode(oc.vector as ScenarioInput, cwd, homedir(), {
          plugin: createReadcachePlugin,
          events,
        });
        return JSON.stringify(out).replaceAll(cwd, "/project");
      } finally {
        await Deno.remove(cwd, { recursive: true });
      }
    };
    assert.equal(await run(true), await run(false), e.name);
    compared++;
  }
  assert.ok(compared > 100, String(compared));
});
