// The OpenCode entry (src/adapters/opencode/load.ts): it hands over to the plugin when the plugin
// imports, and otherwise tells the user (a log line now, one toast at the first read) and changes
// nothing. The real binary: tests/opencode/load_e2e_test.ts.
import assert from "node:assert/strict";
import { loadFailureMessage, startPlugin } from "../../src/adapters/opencode/load.ts";
import type { OpenCodePluginInputLike } from "../../src/adapters/opencode/plugin.ts";

function input() {
  const logged: unknown[] = [];
  const toasts: unknown[] = [];
  const client = {
    session: { messages: () => Promise.resolve({}), get: () => Promise.resolve({}) },
    app: { log: (o: unknown) => (logged.push(o), Promise.resolve(true)) },
    tui: { showToast: (o: unknown) => (toasts.push(o), Promise.resolve(true)) },
  };
  return { input: { directory: "/w", client } as OpenCodePluginInputLike, logged, toasts };
}

const missing = () => Promise.reject(new Error("Cannot find package 'zod' from '/c/src/x.ts'"));

Deno.test("load: a plugin that cannot be imported is logged at once and shown once at the first read; outputs untouched", async () => {
  const { input: i, logged, toasts } = input();
  const hooks = await startPlugin(i, missing);
  assert.equal(logged.length, 1);
  const { body } = logged[0] as { body: { service: string; level: string; message: string } };
  assert.equal(body.service, "readcache");
  assert.equal(body.level, "error");
  assert.match(body.message, /Cannot find package 'zod'/);
  assert.match(body.message, /Run `npm install --omit=peer` in \/.+, then restart OpenCode\.$/);
  const after = hooks["tool.execute.after"]!;
  const output = { title: "a.txt", output: "1: a", metadata: {} };
  await after({ tool: "bash", sessionID: "s", callID: "c0", args: {} }, output);
  assert.equal(toasts.length, 0);
  await after({ tool: "read", sessionID: "s", callID: "c1", args: {} }, output);
  await after({ tool: "read", sessionID: "s", callID: "c2", args: {} }, output);
  assert.equal(toasts.length, 1);
  assert.deepEqual((toasts[0] as { body: { message: string } }).body.message, body.message);
  assert.deepEqual(output, { title: "a.txt", output: "1: a", metadata: {} });
  assert.deepEqual(Object.keys(hooks), ["tool.execute.after"]);
});

Deno.test("load: a client that cannot log or toast (or throws) changes nothing", async () => {
  const throwing = {
    directory: "/w",
    client: {
      session: { messages: () => Promise.resolve({}), get: () => Promise.resolve({}) },
      app: { log: () => Promise.reject(new Error("down")) },
      tui: {
        showToast: () => {
          throw new Error("no tui");
        },
      },
    },
  } as unknown as OpenCodePluginInputLike;
  const hooks = await startPlugin(throwing, missing);
  await hooks["tool.execute.after"]!({ tool: "read", sessionID: "s", callID: "c", args: {} }, {
    title: "",
    output: "",
    metadata: {},
  });
  const bare = await startPlugin({
    directory: "/w",
    client: { session: { messages: () => Promise.resolve({}), get: () => Promise.resolve({}) } },
  }, missing);
  await bare["tool.execute.after"]!({ tool: "read", sessionID: "s", callID: "c", args: {} }, {
    title: "",
    output: "",
    metadata: {},
  });
});

Deno.test("load: a plugin that imports is the plugin; OPENCODE_READCACHE=off loads nothing", async () => {
  const { input: i, logged } = input();
  const hooks = { "tool.definition": () => Promise.resolve() };
  const got = await startPlugin(
    i,
    () => Promise.resolve({ readcachePlugin: () => Promise.resolve(hooks) }),
  );
  assert.equal(got, hooks);
  assert.equal(logged.length, 0);
  Deno.env.set("OPENCODE_READCACHE", "off");
  try {
    assert.deepEqual(await startPlugin(i, missing), {});
    assert.equal(logged.length, 0);
  } finally {
    Deno.env.delete("OPENCODE_READCACHE");
  }
});

Deno.test("load: the message names what failed and what to run", () => {
  assert.equal(
    loadFailureMessage(new Error("Cannot find package 'diff' from '/r/src/a.ts'\n  at x"), "/r"),
    "readcache: the OpenCode plugin is not loaded (Cannot find package 'diff' from '/r/src/a.ts'), so reads are not cached. Run `npm install --omit=peer` in /r, then restart OpenCode.",
  );
  assert.match(
    loadFailureMessage(new SyntaxError("Unexpected token"), "/r"),
    /not loaded \(Unexpected token\).*Check the checkout at \/r .*OPENCODE_READCACHE=off/,
  );
});
