// The read path on a hostile machine (SPEC §13): FIFOs and devices are never read by the cache,
// huge files are not read past the cap, secrets and files outside the project are never stored
// on disk. Real files, FIFOs and devices in temporary directories.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FsObjectStore } from "../../src/store/fs_object_store.ts";
import { BranchKnowledge } from "../../src/core/knowledge.ts";
import { MemoryObjectStore } from "../../src/core/object_store.ts";
import { readRegularFile, readRegularFileSync, serveRead } from "../../src/shell/read_service.ts";
import { FakePiHost, newSession } from "../../scripts/pi/pi_host.ts";
import { createReadcacheExtension } from "../../src/adapters/pi/extension.ts";

function withDirs(fn: (cwd: string, outside: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-hostile-")));
    const outside = realpathSync(mkdtempSync(join(tmpdir(), "readcache-outside-")));
    try {
      await fn(cwd, outside);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
      rmSync(outside, { recursive: true, force: true });
    }
  };
}

function objectsIn(cwd: string): string[] {
  const dir = join(cwd, ".pi", "readcache", "objects");
  return existsSync(dir) ? readdirSync(dir) : [];
}

async function mkfifo(path: string): Promise<void> {
  const out = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.ok(out.success, "mkfifo failed");
}

const TEXT = Array.from({ length: 60 }, (_, i) => `line ${i + 1}: some text of this file`)
  .join("\n") + "\n";

Deno.test(
  "a FIFO is handed to the host's read at once, never read by the cache",
  withDirs(async (cwd) => {
    const fifo = join(cwd, "pipe");
    await mkfifo(fifo);
    const t = performance.now();
    const served = await serveRead({ path: "pipe" }, new BranchKnowledge(), {
      cwd,
      home: cwd,
      store: FsObjectStore.forCwd(cwd),
    });
    assert.equal(served.delegate, "not_a_regular_file");
    assert.ok(performance.now() - t < 1000, "returned without waiting for a writer");
    assert.deepEqual(objectsIn(cwd), []);
  }),
);

Deno.test("character devices (/dev/zero, /dev/urandom) are not read by the cache", async () => {
  for (const dev of ["/dev/zero", "/dev/urandom"]) {
    const t = performance.now();
    const r = await readRegularFile(dev, 8 * 1024 * 1024);
    assert.deepEqual(r, { kind: "not_a_regular_file" }, dev);
    assert.ok(performance.now() - t < 500, `${dev} returned at once`);
  }
});

Deno.test(
  "a file over the size cap (110 MB) is not read or stored; the host's read serves it",
  withDirs(async (cwd) => {
    const line = new TextEncoder().encode(
      "0123456789abcdef0123456789abcdef0123456789abcdef012345678\n",
    );
    const block = new Uint8Array(line.length * 16384);
    for (let i = 0; i < 16384; i++) block.set(line, i * line.length);
    const big = join(cwd, "big.txt");
    const fh = await Deno.open(big, { write: true, create: true });
    for (let written = 0; written < 110 * 1024 * 1024; written += block.length) {
      await fh.write(block);
    }
    fh.close();
    const t = performance.now();
    const served = await serveRead({ path: "big.txt" }, new BranchKnowledge(), {
      cwd,
      home: cwd,
      store: FsObjectStore.forCwd(cwd),
    });
    assert.equal(served.delegate, "too_large");
    assert.ok(performance.now() - t < 1000, "the size is checked before reading");
    assert.deepEqual(objectsIn(cwd), []);
    const capped = await readRegularFile(big, 1024);
    assert.deepEqual(capped, { kind: "too_large" });
  }),
);

Deno.test(
  "the read without waiting (the OpenCode plugin's) gives what the waiting one gives",
  withDirs(async (cwd) => {
    for (const size of [0, 1, 16 * 1024, 16 * 1024 + 1, 200_000]) {
      const p = join(cwd, `f${size}.txt`);
      await writeFile(p, "ab\n".repeat(size).slice(0, size));
      assert.deepEqual(readRegularFileSync(p, 1 << 20), await readRegularFile(p, 1 << 20));
      assert.deepEqual(readRegularFileSync(p, size - 1), { kind: "too_large" });
    }
    for (const dev of ["/dev/zero", "/dev/urandom"]) {
      assert.deepEqual(readRegularFileSync(dev, 1 << 20), { kind: "not_a_regular_file" });
    }
    const fifo = join(cwd, "fifo");
    await mkfifo(fifo);
    const t = performance.now();
    assert.deepEqual(readRegularFileSync(fifo, 1 << 20), { kind: "not_a_regular_file" });
    assert.ok(performance.now() - t < 500, "a FIFO is not waited on");
  }),
);

Deno.test(
  "a file that grows past the cap while it is read is not cached",
  withDirs(async (cwd) => {
    const p = join(cwd, "grow.txt");
    await writeFile(p, "x".repeat(100));
    assert.equal((await readRegularFile(p, 100)).kind, "ok");
    await writeFile(p, "x".repeat(101));
    assert.equal((await readRegularFile(p, 100)).kind, "too_large");
  }),
);

Deno.test(
  "secret files are served plainly and never stored (ssh keys, cloud credentials, .pgpass, kube config, .git-credentials)",
  withDirs(async (cwd, home) => {
    const secrets = [
      ".ssh/id_ecdsa",
      ".ssh/config",
      ".aws/credentials",
      ".git-credentials",
      ".pgpass",
      ".kube/config",
      "vault.kdbx",
    ];
    for (const rel of secrets) {
      mkdirSync(join(home, rel, ".."), { recursive: true });
      await writeFile(join(home, rel), "secret=hunter2\n");
    }
    const knowledge = new BranchKnowledge();
    for (const rel of secrets) {
      const served = await serveRead({ path: `~/${rel}` }, knowledge, {
        cwd,
        home,
        store: FsObjectStore.forCwd(cwd),
        config: { persistOutsideProject: true },
      });
      assert.equal(served.decision.mode, null, rel);
      assert.equal(served.decision.text, "secret=hunter2\n", rel);
    }
    assert.deepEqual(objectsIn(cwd), []);
  }),
);

Deno.test(
  "a file outside the project is cached in memory for this process, never written into the project",
  withDirs(async (cwd, outside) => {
    const file = join(outside, "notes.txt");
    await writeFile(file, TEXT);
    const host = new FakePiHost(newSession(cwd), cwd);
    createReadcacheExtension({ home: () => outside })(host);
    const first = await host.callTool("read", { path: file });
    assert.ok(first.ok && first.text === TEXT);
    const second = await host.callTool("read", { path: file });
    assert.ok(second.ok && second.text === "[readcache: unchanged, 61 lines]");
    await writeFile(file, TEXT.replace("line 7:", "line seven:"));
    const third = await host.callTool("read", { path: file });
    assert.ok(
      third.ok && third.text.startsWith("[readcache: 2 lines changed of 61]"),
      "diff from memory",
    );
    assert.deepEqual(objectsIn(cwd), []);
  }),
);

Deno.test(
  "reading a FIFO through the pi extension does not block the process; an abort ends the call",
  withDirs(async (cwd) => {
    await mkfifo(join(cwd, "pipe"));
    const host = new FakePiHost(newSession(cwd), cwd);
    createReadcacheExtension({ home: () => cwd })(host);
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 300);
    const t = performance.now();
    const out = await host.callTool("read", { path: "pipe" }, { signal: ac.signal });
    clearTimeout(timer);
    assert.equal(out.ok, false);
    assert.ok(performance.now() - t < 3000, "ended soon after the abort");
    assert.deepEqual(objectsIn(cwd), []);
    // the extension still serves other reads
    await writeFile(join(cwd, "a.txt"), TEXT);
    const next = await host.callTool("read", { path: "a.txt" });
    assert.ok(next.ok && next.text === TEXT);
  }),
);

Deno.test("the volatile store is a plain in-memory store", async () => {
  const m = new MemoryObjectStore();
  assert.deepEqual(await m.stats(), { objects: 0, bytes: 0 });
});

Deno.test(
  "/readcache-status names a store problem in words (store path is a file), and reads are still served",
  withDirs(async (cwd) => {
    mkdirSync(join(cwd, ".pi"));
    await writeFile(join(cwd, ".pi", "readcache"), "not a directory\n");
    await writeFile(join(cwd, "a.txt"), TEXT);
    const host = new FakePiHost(newSession(cwd), cwd);
    createReadcacheExtension({ home: () => cwd })(host);
    const read = await host.callTool("read", { path: "a.txt" });
    assert.ok(read.ok && read.text === TEXT);
    await host.command("readcache-status", "");
    const note = host.notifications.at(-1)!.message;
    assert.match(note, /object store problem: .*\.pi\/readcache/);
    assert.match(note, /fix: /);
  }),
);
