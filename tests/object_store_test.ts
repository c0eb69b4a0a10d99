import assert from "node:assert/strict";
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { umask } from "node:process";
import { ReadCacheError } from "../src/core/errors.ts";
import { sha256Hex } from "../src/core/hash.ts";
import { MemoryObjectStore, type ObjectStore } from "../src/core/object_store.ts";
import { FsObjectStore } from "../src/store/fs_object_store.ts";
import { objectBytes } from "./fixtures/object_store_worker.ts";

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

/** One store implementation under test, with the fault hooks the shared cases need. */
interface Harness {
  store: ObjectStore;
  /** Raw stored bytes, unverified, or undefined when absent. */
  raw(hash: string): Promise<Uint8Array | undefined>;
  /** Replaces the stored bytes with different bytes. */
  corrupt(hash: string): Promise<void>;
  /** Removes the object. */
  remove(hash: string): Promise<void>;
  /** Every file and directory the store created (relative paths); always [] in memory. */
  footprint(): Promise<string[]>;
  /** Files left in the store's temporary directory; always [] in memory. */
  leftovers(): Promise<string[]>;
  cleanup(): Promise<void>;
}

async function walk(dir: string, prefix = ""): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of entries.sort()) {
    const rel = prefix === "" ? name : `${prefix}/${name}`;
    out.push(rel);
    if ((await stat(join(dir, name))).isDirectory()) out.push(...await walk(join(dir, name), rel));
  }
  return out;
}

async function listOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

function memoryHarness(): Promise<Harness> {
  // the test keeps the backing map, so it can see and damage what the store holds
  const objects = new Map<string, Uint8Array>();
  const store = new MemoryObjectStore(objects);
  return Promise.resolve({
    store,
    raw: (hash: string) => Promise.resolve(objects.get(hash)?.slice()),
    corrupt: (hash: string) => {
      const stored = objects.get(hash);
      if (stored !== undefined) objects.set(hash, Uint8Array.of(...stored, 0x21));
      return Promise.resolve();
    },
    remove: (hash: string) => Promise.resolve(void objects.delete(hash)),
    footprint: () => Promise.resolve([]),
    leftovers: () => Promise.resolve([]),
    cleanup: () => Promise.resolve(),
  });
}

async function fsHarness(): Promise<Harness> {
  const cwd = await Deno.makeTempDir({ prefix: "readcache-store-" });
  const store = FsObjectStore.forCwd(cwd);
  return {
    store,
    raw: async (hash: string) => {
      try {
        return new Uint8Array(await readFile(store.objectPath(hash)));
      } catch {
        return undefined;
      }
    },
    corrupt: (hash: string) => writeFile(store.objectPath(hash), "corrupted by test\n"),
    remove: (hash: string) => rm(store.objectPath(hash)),
    footprint: () => walk(cwd),
    leftovers: () => listOrEmpty(join(store.root, "tmp")),
    cleanup: () => rm(cwd, { recursive: true, force: true }),
  };
}

const implementations: ReadonlyArray<[string, () => Promise<Harness>]> = [
  ["MemoryObjectStore", memoryHarness],
  ["FsObjectStore", fsHarness],
];

async function assertRejectsWithCode(p: Promise<unknown>, code: string): Promise<ReadCacheError> {
  let caught: unknown;
  await p.then(() => assert.fail(`expected a ReadCacheError ${code}`), (e) => (caught = e));
  assert.ok(caught instanceof ReadCacheError, `expected ReadCacheError, got ${caught}`);
  assert.equal(caught.code, code);
  return caught;
}

interface Case {
  name: string;
  run(h: Harness): Promise<void>;
}

const cases: Case[] = [
  {
    name: "round trip returns the exact bytes (text, binary, BOM)",
    async run({ store }) {
      const samples = [
        enc("export const x = 1;\n"),
        enc("\uFEFFgrüße 🌍\r\n"),
        new Uint8Array([0, 255, 10, 13, 0, 128]),
        objectBytes("big", 0, 300_000),
      ];
      for (const bytes of samples) await store.put(sha256Hex(bytes), bytes);
      for (const bytes of samples) assert.deepEqual(await store.get(sha256Hex(bytes)), bytes);
    },
  },
  {
    name: "stored and returned bytes are copies, not shared buffers",
    async run({ store }) {
      const bytes = enc("original");
      const hash = sha256Hex(bytes);
      await store.put(hash, bytes);
      bytes[0] = 0x4f;
      const first = await store.get(hash);
      assert.deepEqual(first, enc("original"));
      first![0] = 0x4f;
      assert.deepEqual(await store.get(hash), enc("original"));
    },
  },
  {
    name: "empty content (0 bytes) is stored and returned, not treated as missing",
    async run({ store }) {
      const empty = new Uint8Array(0);
      const hash = sha256Hex(empty);
      await store.put(hash, empty);
      assert.deepEqual(await store.get(hash), new Uint8Array(0));
      assert.deepEqual(await store.stats(), { objects: 1, bytes: 0 });
    },
  },
  {
    name: "put is idempotent",
    async run({ store }) {
      const bytes = enc("same\n");
      await store.put(sha256Hex(bytes), bytes);
      await store.put(sha256Hex(bytes), bytes);
      await store.put(sha256Hex(bytes), bytes.slice());
      assert.deepEqual(await store.stats(), { objects: 1, bytes: 5 });
      assert.deepEqual(await store.get(sha256Hex(bytes)), bytes);
    },
  },
  {
    name: "put with a hash of other bytes is rejected with INVALID_HASH and stores nothing",
    async run(h) {
      const bytes = enc("real content\n");
      const wrong = sha256Hex("other content\n");
      const err = await assertRejectsWithCode(h.store.put(wrong, bytes), "INVALID_HASH");
      assert.match(err.message, new RegExp(wrong));
      assert.equal(await h.store.get(wrong), undefined);
      assert.equal(await h.store.get(sha256Hex(bytes)), undefined);
      assert.deepEqual(await h.store.stats(), { objects: 0, bytes: 0 });
      assert.deepEqual(await h.footprint(), []);
    },
  },
  {
    name: "put with a malformed hash is rejected with INVALID_HASH",
    async run({ store }) {
      const bytes = enc("x");
      for (const bad of ["", "abc", sha256Hex(bytes).toUpperCase(), `../${sha256Hex(bytes)}`]) {
        await assertRejectsWithCode(store.put(bad, bytes), "INVALID_HASH");
      }
      assert.deepEqual(await store.stats(), { objects: 0, bytes: 0 });
    },
  },
  {
    name: "a hash never stored gives undefined",
    async run({ store }) {
      assert.equal(await store.get(sha256Hex("never stored")), undefined);
      await store.put(sha256Hex("a"), enc("a"));
      assert.equal(await store.get(sha256Hex("b")), undefined);
    },
  },
  {
    name: "a deleted object gives undefined",
    async run(h) {
      const bytes = enc("to be deleted\n");
      const hash = sha256Hex(bytes);
      await h.store.put(hash, bytes);
      await h.remove(hash);
      assert.equal(await h.store.get(hash), undefined);
    },
  },
  {
    name: "a corrupt object gives undefined and is left untouched",
    async run(h) {
      const bytes = enc("line 1\nline 2\n");
      const hash = sha256Hex(bytes);
      await h.store.put(hash, bytes);
      await h.corrupt(hash);
      const corrupted = await h.raw(hash);
      assert.ok(corrupted !== undefined);
      assert.notDeepEqual(corrupted, bytes);
      assert.equal(await h.store.get(hash), undefined);
      assert.equal(await h.store.get(hash), undefined);
      assert.deepEqual(await h.raw(hash), corrupted);
      assert.equal((await h.store.stats()).objects, 1);
    },
  },
  {
    name: "put never rewrites an existing object, not even a corrupt one",
    async run(h) {
      const bytes = enc("stored once\n");
      const hash = sha256Hex(bytes);
      await h.store.put(hash, bytes);
      await h.corrupt(hash);
      const corrupted = await h.raw(hash);
      await h.store.put(hash, bytes);
      assert.deepEqual(await h.raw(hash), corrupted);
      assert.equal(await h.store.get(hash), undefined);
      assert.deepEqual(await h.leftovers(), []);
    },
  },
  {
    name: "a malformed hash string gives undefined from get",
    async run(h) {
      const bytes = enc("x");
      await h.store.put(sha256Hex(bytes), bytes);
      const bad = [
        "",
        "abc",
        sha256Hex(bytes).toUpperCase(),
        `${sha256Hex(bytes)}.txt`,
        `sha256-${sha256Hex(bytes)}`,
        "../../../../etc/passwd",
        "g".repeat(64),
        `${sha256Hex(bytes)}0`,
      ];
      for (const hash of bad) assert.equal(await h.store.get(hash), undefined, hash);
    },
  },
  {
    name: "stats and get on a store that does not exist give nothing and create nothing",
    async run(h) {
      assert.deepEqual(await h.store.stats(), { objects: 0, bytes: 0 });
      assert.equal(await h.store.get(sha256Hex("x")), undefined);
      assert.deepEqual(await h.store.stats(), { objects: 0, bytes: 0 });
      assert.deepEqual(await h.footprint(), []);
    },
  },
  {
    name: "stats counts objects and their bytes",
    async run({ store }) {
      const objects = [new Uint8Array(0), enc("hello"), objectBytes("s", 1, 1000)];
      for (const bytes of objects) await store.put(sha256Hex(bytes), bytes);
      await store.put(sha256Hex(objects[1]), objects[1]);
      assert.deepEqual(await store.stats(), { objects: 3, bytes: 1005 });
    },
  },
  {
    name: "many concurrent puts of the same and of different objects",
    async run(h) {
      const same = objectBytes("same", 0, 200_000);
      const different = Array.from({ length: 50 }, (_, i) => objectBytes("diff", i, 5_000 + i));
      await Promise.all([
        ...Array.from({ length: 50 }, () => h.store.put(sha256Hex(same), same)),
        ...different.map((b) => h.store.put(sha256Hex(b), b)),
        ...different.map((b) => h.store.put(sha256Hex(b), b)),
      ]);
      assert.deepEqual(await h.store.get(sha256Hex(same)), same);
      for (const b of different) assert.deepEqual(await h.store.get(sha256Hex(b)), b);
      const bytes = same.length + different.reduce((n, b) => n + b.length, 0);
      assert.deepEqual(await h.store.stats(), { objects: 51, bytes });
      assert.deepEqual(await h.leftovers(), []);
    },
  },
  {
    name: "no temporary files are left after successful puts",
    async run(h) {
      for (let i = 0; i < 5; i++) {
        const b = enc(`file ${i}\n`);
        await h.store.put(sha256Hex(b), b);
      }
      assert.deepEqual(await h.leftovers(), []);
    },
  },
];

for (const [impl, make] of implementations) {
  for (const c of cases) {
    Deno.test(`${impl}: ${c.name}`, async () => {
      const h = await make();
      try {
        await c.run(h);
      } finally {
        await h.cleanup();
      }
    });
  }
}

// ---- FsObjectStore only: layout, permissions, failures, other processes ----

async function withStore(fn: (store: FsObjectStore, cwd: string) => Promise<void>): Promise<void> {
  const cwd = await Deno.makeTempDir({ prefix: "readcache-store-" });
  try {
    await fn(FsObjectStore.forCwd(cwd), cwd);
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

const mode = async (p: string): Promise<number> => (await stat(p)).mode & 0o777;
const posix = Deno.build.os !== "windows";

Deno.test("FsObjectStore: layout is <cwd>/.pi/readcache/objects/sha256-<hex>.txt with tmp/", async () => {
  await withStore(async (store, cwd) => {
    assert.equal(store.root, join(cwd, ".pi", "readcache"));
    const bytes = enc("export {};\n");
    const hash = sha256Hex(bytes);
    assert.equal(
      store.objectPath(hash),
      join(cwd, ".pi", "readcache", "objects", `sha256-${hash}.txt`),
    );
    await store.put(hash, bytes);
    assert.deepEqual(new Uint8Array(await readFile(store.objectPath(hash))), bytes);
    assert.deepEqual(await walk(cwd), [
      ".pi",
      ".pi/readcache",
      ".pi/readcache/.gitignore",
      ".pi/readcache/.ignore",
      ".pi/readcache/objects",
      `.pi/readcache/objects/sha256-${hash}.txt`,
      ".pi/readcache/tmp",
    ]);
  });
});

Deno.test("FsObjectStore: objectPath refuses a malformed hash with INVALID_HASH", () => {
  const store = FsObjectStore.forCwd("/w");
  for (const bad of ["../x", "ABC", ""]) {
    assert.throws(
      () => store.objectPath(bad),
      (e: unknown) => e instanceof ReadCacheError && e.code === "INVALID_HASH",
    );
  }
});

Deno.test({
  name: "FsObjectStore: directories are 0700 and objects 0600, also under a hostile umask",
  ignore: !posix,
  fn: async () => {
    for (const mask of [0o022, 0o277, 0o000]) {
      await withStore(async (store, cwd) => {
        await mkdir(join(cwd, ".pi"));
        const previous = umask(mask);
        try {
          const bytes = enc(`umask ${mask}\n`);
          await store.put(sha256Hex(bytes), bytes);
          assert.equal(await mode(store.root), 0o700);
          assert.equal(await mode(join(store.root, "objects")), 0o700);
          assert.equal(await mode(join(store.root, "tmp")), 0o700);
          assert.equal(await mode(store.objectPath(sha256Hex(bytes))), 0o600);
        } finally {
          umask(previous);
        }
      });
    }
  },
});

Deno.test({
  name: "FsObjectStore: pre-existing directories keep their permissions (never chmod-ed)",
  ignore: !posix,
  fn: async () => {
    await withStore(async (store) => {
      await mkdir(join(store.root, "objects"), { recursive: true });
      await mkdir(join(store.root, "tmp"));
      await Deno.chmod(store.root, 0o755);
      await Deno.chmod(join(store.root, "objects"), 0o777);
      await Deno.chmod(join(store.root, "tmp"), 0o775);
      const bytes = enc("left as the user set it\n");
      await store.put(sha256Hex(bytes), bytes);
      assert.deepEqual(await store.get(sha256Hex(bytes)), bytes);
      assert.equal(await mode(store.root), 0o755);
      assert.equal(await mode(join(store.root, "objects")), 0o777);
      assert.equal(await mode(join(store.root, "tmp")), 0o775);
      assert.equal(await mode(store.objectPath(sha256Hex(bytes))), 0o600);
    });
  },
});

Deno.test("FsObjectStore: putting an existing object does not rewrite the file", async () => {
  await withStore(async (store) => {
    const bytes = enc("written once\n");
    const hash = sha256Hex(bytes);
    await store.put(hash, bytes);
    const before = await stat(store.objectPath(hash));
    await store.put(hash, bytes);
    const after = await stat(store.objectPath(hash));
    assert.equal(after.ino, before.ino);
    assert.equal(after.mtimeMs, before.mtimeMs);
  });
});

Deno.test("FsObjectStore: a failed rename throws STORE_WRITE_FAILED and leaves no temporary file", async () => {
  await withStore(async (store) => {
    const bytes = enc("cannot land\n");
    const hash = sha256Hex(bytes);
    const target = store.objectPath(hash);
    // a non-empty directory squatting on the object path: the temp file is written,
    // then the rename into place fails
    await mkdir(join(target, "blocker"), { recursive: true });
    const err = await assertRejectsWithCode(store.put(hash, bytes), "STORE_WRITE_FAILED");
    assert.ok(err.message.includes(target), err.message);
    assert.ok(err.cause instanceof Error);
    assert.ok(err.message.includes(err.cause.message), err.message);
    assert.deepEqual(await readdir(join(store.root, "tmp")), []);
    assert.equal(await store.get(hash), undefined);
    assert.deepEqual(await store.stats(), { objects: 0, bytes: 0 });
    // other objects still work
    const ok = enc("fine\n");
    await store.put(sha256Hex(ok), ok);
    assert.deepEqual(await store.get(sha256Hex(ok)), ok);
    assert.deepEqual(await readdir(join(store.root, "tmp")), []);
  });
});

Deno.test("FsObjectStore: a store root that cannot be created is no store, with the problem", async () => {
  await withStore(async (store, cwd) => {
    const dotPi = join(cwd, ".pi");
    await writeFile(dotPi, "a file where the .pi directory should be\n");
    const bytes = enc("nowhere to go\n");
    const hash = sha256Hex(bytes);
    await store.put(hash, bytes); // no store: not an error
    assert.equal(store.problem?.path, dotPi);
    assert.match(store.problem!.what, /is a file, not a directory/);
    assert.match(store.problem!.fix, new RegExp(`Move or delete ${dotPi}`));
    assert.equal(await store.get(hash), undefined);
    assert.deepEqual(await store.stats(), { objects: 0, bytes: 0, problem: store.problem });
    assert.deepEqual(await store.health(), { ok: false, ...store.problem });
    assert.equal(await readFile(dotPi, "utf8"), "a file where the .pi directory should be\n");
  });
});

Deno.test("FsObjectStore: stats counts only well-formed object files", async () => {
  await withStore(async (store) => {
    const bytes = enc("counted\n");
    await store.put(sha256Hex(bytes), bytes);
    const objects = join(store.root, "objects");
    await writeFile(join(objects, "notes.txt"), "not an object");
    await writeFile(join(objects, `sha256-${"A".repeat(64)}.txt`), "uppercase");
    await writeFile(join(objects, `sha256-${"a".repeat(63)}.txt`), "short");
    await writeFile(join(objects, `sha256-${"b".repeat(64)}.txt.tmp`), "suffix");
    await mkdir(join(objects, `sha256-${"c".repeat(64)}.txt`));
    await writeFile(join(store.root, "tmp", "stray.tmp"), "in tmp");
    assert.deepEqual(await store.stats(), { objects: 1, bytes: 8 });
  });
});

Deno.test("FsObjectStore: several OS processes writing the same objects at once", async () => {
  await withStore(async (store) => {
    const fixture = new URL("./fixtures/object_store_worker.ts", import.meta.url).pathname;
    const count = 25;
    const size = 256 * 1024;
    const spawn = (mode: "write" | "watch", id: string): Deno.ChildProcess =>
      new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--no-lock",
          "--allow-read",
          "--allow-write",
          fixture,
          store.root,
          mode,
          id,
          String(count),
          String(size),
        ],
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    const writers = Array.from({ length: 6 }, (_, i) => spawn("write", `w${i}`));
    const watcher = spawn("watch", "watch");
    const all = [...writers, watcher];

    // Barrier: every process has started and printed "ready" (it then blocks on
    // stdin) before any of them is told to go, so all write at the same moment.
    const decoder = new TextDecoder();
    const watched = all.map((child) => {
      let signalReady!: () => void;
      const ready = new Promise<void>((resolve) => (signalReady = resolve));
      const output = (async (): Promise<string> => {
        let text = "";
        for await (const chunk of child.stdout) {
          text += decoder.decode(chunk, { stream: true });
          if (text.includes("ready\n")) signalReady();
        }
        signalReady(); // exited early: let the assertions below report it
        return text;
      })();
      return { ready, output };
    });
    const stderrs = all.map((child) => new Response(child.stderr).text());
    await Promise.all(watched.map((w) => w.ready));
    await Promise.all(all.map(async (child) => {
      const stdin = child.stdin.getWriter();
      await stdin.write(enc("go\n"));
      await stdin.close();
    }));
    const statuses = await Promise.all(all.map((c) => c.status));
    const texts = await Promise.all(watched.map((w) => w.output));
    const errors = await Promise.all(stderrs);
    statuses.forEach((s, i) => assert.equal(s.code, 0, `process ${i} failed: ${errors[i]}`));
    texts.forEach((t) => assert.match(t, /ready\ndone\n/));

    const names = await readdir(join(store.root, "objects"));
    assert.equal(names.length, count + writers.length * count);
    for (const name of names) {
      const hash = name.slice("sha256-".length, -".txt".length);
      const bytes = await store.get(hash);
      assert.ok(bytes !== undefined, `${name} does not verify`);
      assert.equal(bytes.length, size);
    }
    for (let i = 0; i < count; i++) {
      const shared = objectBytes("shared", i, size);
      assert.deepEqual(await store.get(sha256Hex(shared)), shared);
    }
    assert.deepEqual(await readdir(join(store.root, "tmp")), []);
    assert.deepEqual(await store.stats(), {
      objects: count + writers.length * count,
      bytes: (count + writers.length * count) * size,
    });
  });
});

Deno.test("MemoryObjectStore with maxBytes: the objects used longest ago go, the one just stored stays", async () => {
  const store = new MemoryObjectStore(new Map(), { maxBytes: 10 });
  const obj = (s: string) => {
    const b = new TextEncoder().encode(s);
    return { hash: sha256Hex(b), bytes: b };
  };
  const a = obj("aaaa");
  const b = obj("bbbb");
  const c = obj("cccc");
  await store.put(a.hash, a.bytes);
  await store.put(b.hash, b.bytes);
  await store.get(a.hash); // a used now: b is the oldest
  await store.put(c.hash, c.bytes);
  assert.deepEqual(await store.stats(), { objects: 2, bytes: 8 });
  assert.equal(await store.has(b.hash), false);
  assert.ok(await store.get(a.hash));
  assert.ok(await store.get(c.hash));
  // one object over the bound is still kept (the one just stored)
  const big = obj("x".repeat(20));
  await store.put(big.hash, big.bytes);
  assert.deepEqual(await store.stats(), { objects: 1, bytes: 20 });
});
