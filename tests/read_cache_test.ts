// The one-call library API (createReadCache) as a user calls it, and the README's local-checkout
// route (a `links` entry in the user's deno.json).
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createReadCache,
  FileReadError,
  type ReadCacheAnswer,
  ReadCacheError,
  type ReadCacheResult,
} from "../mod.ts";

/** The cache's answer (a delegation fails the test). */
function answer(r: ReadCacheResult): ReadCacheAnswer {
  assert.equal(r.kind, "answer", `expected an answer, got ${JSON.stringify(r)}`);
  return r as ReadCacheAnswer;
}

const TEXT = Array.from({ length: 40 }, (_, i) => `line ${i + 1}: some words of this file`).join(
  "\n",
) + "\n";

function withCwd(fn: (cwd: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-facade-")));
    try {
      await fn(cwd);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  };
}

Deno.test(
  "own linear session: full, unchanged, range, diff, bypass, forget",
  withCwd(async (cwd) => {
    writeFileSync(join(cwd, "a.txt"), TEXT);
    const cache = createReadCache({ cwd, store: "memory" });
    const first = await cache.read({ path: "a.txt" });
    assert.equal(first.mode, "full");
    assert.equal(answer(first).text, TEXT);
    assert.equal(
      answer(await cache.read({ path: "a.txt" })).text,
      "[readcache: unchanged, 41 lines]",
    );
    assert.equal(
      answer(await cache.read({ path: "a.txt:3-5" })).text,
      "[readcache: unchanged in lines 3-5 of 41]",
    );
    writeFileSync(join(cwd, "a.txt"), TEXT.replace("line 20:", "line twenty:"));
    const diff = await cache.read({ path: "a.txt" });
    assert.equal(diff.mode, "diff");
    assert.ok(diff.text.startsWith("[readcache: 2 lines changed of 41]\n--- a/a.txt\n+++ b/a.txt"));
    assert.equal((await cache.read({ path: "a.txt", bypass_cache: true })).mode, "full");
    cache.forget();
    assert.equal((await cache.read({ path: "a.txt" })).mode, "full");
  }),
);

Deno.test(
  "a host's branch: the answer depends on the branch passed, not on earlier calls",
  withCwd(async (cwd) => {
    writeFileSync(join(cwd, "a.txt"), TEXT);
    const cache = createReadCache({ cwd, store: "memory" });
    const first = await cache.read({ path: "a.txt" }, { branch: [], callId: "c1" });
    assert.equal(first.mode, "full");
    const persisted = [
      { id: "a1", parentId: null, kind: "other" as const },
      {
        id: "t1",
        parentId: "a1",
        kind: "read" as const,
        meta: first.details.readcache,
        callId: "c1",
      },
      { id: "u1", parentId: "t1", kind: "other" as const },
    ];
    assert.equal((await cache.read({ path: "a.txt" }, { branch: persisted })).mode, "unchanged");
    const otherBranch = [{ id: "x", parentId: null, kind: "other" as const }];
    assert.equal((await cache.read({ path: "a.txt" }, { branch: otherBranch })).mode, "full");
  }),
);

Deno.test(
  "files the cache does not take are handed back (delegate) with nothing stored",
  withCwd(async (cwd) => {
    writeFileSync(join(cwd, "big.txt"), "x".repeat(2048));
    const cache = createReadCache({ cwd, config: { maxFileBytes: 1024 } });
    const r = await cache.read({ path: "big.txt" });
    assert.deepEqual(r, {
      kind: "delegate",
      reason: "too_large",
      path: join(cwd, "big.txt"),
      mode: null,
    });
  }),
);

Deno.test(
  "a user's project uses a local checkout through deno.json links (offline), subpaths included",
  withCwd(async (cwd) => {
    const repo = fileURLToPath(new URL("..", import.meta.url));
    writeFileSync(
      join(cwd, "deno.json"),
      JSON.stringify({
        links: [repo],
        imports: { "@readcache/core": "jsr:@readcache/core@^0.1.0" },
      }),
    );
    writeFileSync(
      join(cwd, "main.ts"),
      [
        'import { createReadCache } from "@readcache/core";',
        'import { FsObjectStore } from "@readcache/core/fs";',
        'const cache = createReadCache({ cwd: Deno.cwd(), store: "memory" });',
        'await cache.read({ path: "main.ts" });',
        'console.log((await cache.read({ path: "main.ts" })).text, typeof FsObjectStore);',
      ].join("\n") + "\n",
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "main.ts"],
      cwd,
      env: { NO_COLOR: "1" },
    }).output();
    const stdout = new TextDecoder().decode(out.stdout).trim();
    assert.equal(
      stdout,
      "[readcache: unchanged, 6 lines] function",
      new TextDecoder().decode(out.stderr),
    );
  }),
);

Deno.test(
  "own linear session: what the model wrote is unchanged on the next read; another content is not",
  withCwd(async (cwd) => {
    const cache = createReadCache({ cwd, store: "memory" });
    writeFileSync(join(cwd, "w.ts"), TEXT);
    cache.wrote("w.ts", TEXT);
    assert.equal(
      answer(await cache.read({ path: "w.ts" })).text,
      "[readcache: unchanged, 41 lines]",
    );
    // the file is not what the model wrote (a formatter rewrote it) and no read stored what it
    // wrote: the whole text
    const written = TEXT + "// v\n";
    const formatted = written.replace("line 7:", "line seven:");
    writeFileSync(join(cwd, "v.ts"), formatted);
    cache.wrote("v.ts", written);
    const v = await cache.read({ path: "v.ts" });
    assert.equal(v.mode, "baseline_fallback");
    assert.equal(v.text, formatted);
    // after the read that stored it, a change to the written file is a diff against it
    writeFileSync(join(cwd, "w.ts"), TEXT.replace("line 30:", "line thirty:"));
    const d = await cache.read({ path: "w.ts" });
    assert.equal(d.mode, "diff");
    assert.ok(d.text.includes("+line thirty: some words of this file"));
    // a write the model made before the context was forgotten counts for nothing
    cache.wrote("x.ts", TEXT);
    writeFileSync(join(cwd, "x.ts"), TEXT);
    cache.forget();
    assert.equal((await cache.read({ path: "x.ts" })).mode, "full");
  }),
);

Deno.test(
  "own session: the model's own edit is what it holds; undone elsewhere it is never unchanged",
  withCwd(async (cwd) => {
    const file = join(cwd, "a.txt");
    writeFileSync(file, TEXT);
    const cache = createReadCache({ cwd, store: "memory" });
    await cache.read({ path: "a.txt" });
    const edited = TEXT.replace("line 5: some", "line 5: EDITED");
    writeFileSync(file, edited); // the host's own edit tool
    await cache.edited("a.txt", [{ oldText: "line 5: some", newText: "line 5: EDITED" }]);
    assert.equal(
      answer(await cache.read({ path: "a.txt" })).text,
      "[readcache: unchanged, 41 lines]",
    );
    writeFileSync(file, TEXT); // another process puts the old bytes back
    const back = await cache.read({ path: "a.txt" });
    assert.equal(back.mode, "diff");
    assert.match(answer(back).text, /-line 5: EDITED[^\n]*\n\+line 5: some/);
  }),
);

Deno.test(
  "own session: a write that is not proof, or a change the cache cannot follow, makes the file unknown",
  withCwd(async (cwd) => {
    const file = join(cwd, "a.txt");
    writeFileSync(file, TEXT);
    const cache = createReadCache({ cwd, store: "memory" });
    await cache.read({ path: "a.txt" });
    cache.wrote("a.txt", "x\uD800y\n"); // a lone surrogate: pi writes U+FFFD instead
    writeFileSync(file, TEXT); // the old bytes are back
    assert.equal((await cache.read({ path: "a.txt" })).mode, "baseline_fallback");
    assert.equal((await cache.read({ path: "a.txt" })).mode, "unchanged");
    cache.changed("a.txt"); // say, `sed -i` through a shell tool
    assert.equal((await cache.read({ path: "a.txt" })).mode, "baseline_fallback");
  }),
);

Deno.test(
  "every input the host's own read would not serve as text: a delegation or a typed error, never an empty answer",
  withCwd(async (cwd) => {
    const cache = createReadCache({ cwd, store: "memory", config: { maxFileBytes: 1024 } });
    Deno.mkdirSync(join(cwd, "dir"));
    new Deno.Command("mkfifo", { args: [join(cwd, "fifo")] }).outputSync();
    writeFileSync(join(cwd, "big.txt"), "x".repeat(2048));
    writeFileSync(
      join(cwd, "logo.png"),
      Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]),
    );
    Deno.symlinkSync("loop-b", join(cwd, "loop-a"));
    Deno.symlinkSync("loop-a", join(cwd, "loop-b"));
    writeFileSync(join(cwd, "app.bin"), Uint8Array.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 0x0a]));
    writeFileSync(join(cwd, "latin1.txt"), Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const delegated: [string, string][] = [
      ["fifo", "not_a_regular_file"],
      ["/dev/null", "not_a_regular_file"],
      ["big.txt", "too_large"],
      ["logo.png", "image"],
      // text only: bytes with a NUL, or that are not UTF-8, are handed back (not U+FFFD text)
      ["app.bin", "binary"],
      ["latin1.txt", "binary"],
    ];
    for (const [path, reason] of delegated) {
      const r = await cache.read({ path });
      assert.equal(r.kind, "delegate", path);
      assert.ok(!("text" in r), `${path}: a delegation has no text to send`);
      assert.equal(r.kind === "delegate" && r.reason, reason, path);
    }
    const failing: [string, string][] = [
      ["", "INVALID_ARGUMENT"],
      ["a\0b.txt", "INVALID_PATH"],
      ["missing.txt", "FILE_NOT_FOUND"],
      ["dir", "NOT_A_FILE"],
      ["loop-a", "LINK_LOOP"],
    ];
    for (const [path, code] of failing) {
      await assert.rejects(
        () => cache.read({ path }),
        (e: unknown) => {
          assert.ok(e instanceof ReadCacheError, `${path}: ${e}`);
          assert.equal(e.code, code, `${path}: ${e.message}`);
          if (code === "FILE_NOT_FOUND" || code === "LINK_LOOP" || code === "NOT_A_FILE") {
            // as FileReadError's JSDoc says: the system's error as cause, the path resolved
            assert.ok(e instanceof FileReadError && e.cause instanceof Error, "the cause is kept");
            assert.equal(e.path, join(cwd, path), `${path}: the path resolved`);
          }
          return true;
        },
      );
    }
  }),
);

Deno.test(
  "the README's library example, run where deno.json is a FIFO, ends (it never reads a file the cache hands back)",
  withCwd(async (cwd) => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const block = /```ts\n(import \{ createReadCache[\s\S]*?)```/.exec(readme)?.[1];
    assert.ok(block !== undefined, "the README has the library example");
    const mod = new URL("../mod.ts", import.meta.url).href;
    writeFileSync(join(cwd, "example.ts"), block.replace(`"@readcache/core"`, JSON.stringify(mod)));
    new Deno.Command("mkfifo", { args: [join(cwd, "deno.json")] }).outputSync();
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--config",
        fileURLToPath(new URL("../deno.json", import.meta.url)),
        "--frozen",
        "example.ts",
      ],
      cwd,
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const out = await child.output();
    clearTimeout(timer);
    const stdout = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, `${stdout}\n${new TextDecoder().decode(out.stderr)}`);
    assert.match(stdout, /deno\.json not read: not_a_regular_file\]/);
  }),
);

Deno.test("the README's library example, run in the checkout, prints what its comments say", async () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const block = /```ts\n(import \{ createReadCache[\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block !== undefined, "the README has the library example");
  const dir = Deno.makeTempDirSync();
  try {
    const mod = new URL("../mod.ts", import.meta.url).href;
    const example = join(dir, "example.ts");
    writeFileSync(example, block.replace(`"@readcache/core"`, JSON.stringify(mod)));
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--config",
        fileURLToPath(new URL("../deno.json", import.meta.url)),
        "--frozen",
        example,
      ],
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, `${stdout}\n${new TextDecoder().decode(out.stderr)}`);
    const lines = readFileSync(new URL("../deno.json", import.meta.url), "utf8").split("\n").length;
    const printed = stdout.trimEnd().split("\n");
    assert.equal(printed.at(-3), `[readcache: unchanged, ${lines} lines]`, stdout);
    assert.equal(printed.at(-2), `[readcache: unchanged in lines 1-5 of ${lines}]`);
    assert.equal(printed.at(-1), "full");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test(
  "the default disk store is the library's own <cwd>/.readcache, not pi's .pi/readcache",
  withCwd(async (cwd) => {
    writeFileSync(join(cwd, "a.txt"), TEXT);
    const cache = createReadCache({ cwd });
    assert.equal((await cache.read({ path: "a.txt" })).mode, "full");
    writeFileSync(join(cwd, "a.txt"), TEXT.replace("line 20:", "line twenty:"));
    assert.equal((await cache.read({ path: "a.txt" })).mode, "diff");
    assert.ok(Deno.statSync(join(cwd, ".readcache", "objects")).isDirectory);
    assert.throws(() => Deno.statSync(join(cwd, ".pi")), Deno.errors.NotFound);
  }),
);
