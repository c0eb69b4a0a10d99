// Object store cost on disk for a 100 KiB object: storing a new object (temp
// file, fsync, rename, directory fsync), the no-op put of an existing object,
// and a verified get (read plus SHA-256 check).
import { rmSync } from "node:fs";
import { FsObjectStore } from "../src/store/fs_object_store.ts";
import { sha256Hex } from "../src/core/hash.ts";

const SIZE = 100 * 1024;
const cwd = Deno.makeTempDirSync({ prefix: "readcache-bench-" });
globalThis.addEventListener("unload", () => rmSync(cwd, { recursive: true, force: true }));
const store = FsObjectStore.forCwd(cwd);

const template = new Uint8Array(SIZE);
for (let i = 0; i < SIZE; i++) template[i] = 32 + ((i * 7919) % 95);
const existing = template.slice();
const existingHash = sha256Hex(existing);
await store.put(existingHash, existing);

let counter = 0;
/** A fresh 100 KiB object: the template with a unique counter in front. */
function freshObject(): { hash: string; bytes: Uint8Array } {
  const bytes = template.slice();
  new DataView(bytes.buffer).setFloat64(0, ++counter);
  return { hash: sha256Hex(bytes), bytes };
}

Deno.bench(
  "fs put, new 100 KiB object (fsync + rename)",
  { group: "put", baseline: true },
  async (b) => {
    const { hash, bytes } = freshObject();
    b.start();
    await store.put(hash, bytes);
    b.end();
  },
);

Deno.bench("fs put, existing 100 KiB object (no-op)", { group: "put" }, async () => {
  await store.put(existingHash, existing);
});

Deno.bench("fs get, 100 KiB object (read + verify)", { group: "get" }, async () => {
  const bytes = await store.get(existingHash);
  if (bytes === undefined) throw new Error("object missing");
});

Deno.bench("sha256 of 100 KiB (verification cost alone)", { group: "get" }, () => {
  sha256Hex(existing);
});
