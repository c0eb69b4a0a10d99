// Hostile-machine report for the on-disk object store: builds each situation a checkout, another
// user or the machine can create (in temporary directories), runs the store against it and
// prints what happened and how long it took. A measuring and reproduction tool; the pass/fail
// checks are tests/pi/hostile_store_test.ts (`deno task hostile`).
//
//   deno run -A scripts/pi/hostile.ts                       this checkout's store
//   deno run -A scripts/pi/hostile.ts --store <module.ts>   another FsObjectStore module, e.g. an
//                                                        older version, to compare before/after
//
// Every case runs under a watchdog: a read that blocks on a named pipe is unblocked after 5 s
// and reported as blocked, so the report always finishes.
import { constants } from "node:fs";
import {
  chmod,
  lstat,
  mkdir,
  open,
  readdir,
  rm,
  symlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { sha256Hex } from "../../src/core/hash.ts";

type StoreModule = typeof import("../../src/store/fs_object_store.ts");
type Store = InstanceType<StoreModule["FsObjectStore"]>;

const storeArg = Deno.args.indexOf("--store");
const moduleUrl = storeArg >= 0
  ? pathToFileURL(resolve(Deno.args[storeArg + 1])).href
  : new URL("../../src/store/fs_object_store.ts", import.meta.url).href;
const { FsObjectStore } = (await import(moduleUrl)) as StoreModule;
const fixture = new URL("../../tests/pi/fixtures/hostile_store_child.ts", import.meta.url).pathname;
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const WATCHDOG_MS = 5000;

interface Row {
  situation: string;
  result: string;
  ms?: number;
}
const rows: Row[] = [];

async function inTemp(fn: (cwd: string, outside: string) => Promise<void>): Promise<void> {
  const cwd = await Deno.makeTempDir({ prefix: "readcache-hostile-" });
  const outside = await Deno.makeTempDir({ prefix: "readcache-outside-" });
  try {
    await fn(cwd, outside);
  } finally {
    for (const d of [cwd, outside]) {
      await new Deno.Command("chmod", { args: ["-R", "u+rwx", d], stderr: "null" }).output()
        .catch(() => {});
      await rm(d, { recursive: true, force: true });
    }
  }
}

/** The store's own report of a problem, whichever version it is. */
async function problemOf(store: Store): Promise<string> {
  const s = store as Partial<Store>;
  const problem = s.problem ??
    (typeof s.health === "function"
      ? await s.health().then((h) => (h.ok ? undefined : h))
      : undefined);
  return problem === undefined ? "no problem reported" : `problem: ${problem.path} ${problem.what}`;
}

async function entries(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string, rel: string): Promise<void> => {
    for (const name of (await readdir(d)).sort()) {
      out.push(`${rel}${name}`);
      if ((await lstat(join(d, name))).isDirectory()) await walk(join(d, name), `${rel}${name}/`);
    }
  };
  await walk(dir, "");
  return out;
}

/** get() timed, with a watchdog that unblocks a FIFO reader. */
async function timedGet(
  store: Store,
  hash: string,
  fifo?: string,
): Promise<{ ms: number; result: string }> {
  const t0 = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let blocked = false;
  const running = store.get(hash);
  await Promise.race([
    running,
    new Promise<void>((done) =>
      timer = setTimeout(async () => {
        blocked = true;
        if (fifo !== undefined) {
          const fh = await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK).catch(() =>
            undefined
          );
          await fh?.close();
        }
        done();
      }, WATCHDOG_MS)
    ),
  ]);
  clearTimeout(timer);
  const value = await running;
  const ms = performance.now() - t0;
  const result = value === undefined ? "undefined" : `${value.length} bytes`;
  const late = fifo === undefined
    ? `still reading after ${WATCHDOG_MS / 1000} s, then ${result}`
    : `BLOCKED (unblocked by the watchdog after ${WATCHDOG_MS / 1000} s), then ${result}`;
  return { ms, result: blocked ? late : result };
}

async function seed(cwd: string, text: string): Promise<{ store: Store; hash: string }> {
  const store = FsObjectStore.forCwd(cwd);
  const bytes = enc(text);
  await store.put(sha256Hex(bytes), bytes);
  return { store, hash: sha256Hex(bytes) };
}

await inTemp(async (cwd) => {
  const { store, hash } = await seed(cwd, "fifo\n");
  const path = store.objectPath(hash);
  await rm(path);
  await new Deno.Command("mkfifo", { args: [path] }).output();
  const r = await timedGet(FsObjectStore.forCwd(cwd), hash, path);
  rows.push({ situation: "object replaced by a named pipe: get", result: r.result, ms: r.ms });
});

await inTemp(async (cwd) => {
  const { store, hash } = await seed(cwd, "zero\n");
  const path = store.objectPath(hash);
  await rm(path);
  await symlink("/dev/zero", path);
  const rss0 = Deno.memoryUsage().rss;
  const r = await timedGet(FsObjectStore.forCwd(cwd), hash);
  const grew = Math.max(0, Deno.memoryUsage().rss - rss0) / 2 ** 20;
  rows.push({
    situation: "object is a link to /dev/zero: get",
    result: `${r.result}; RSS +${grew.toFixed(0)} MiB`,
    ms: r.ms,
  });
});

for (const link of [".pi", ".pi/readcache", ".pi/readcache/objects", ".pi/readcache/tmp"]) {
  await inTemp(async (cwd, outside) => {
    await chmod(outside, 0o755);
    const parent = join(cwd, link, "..");
    await mkdir(parent, { recursive: true });
    if (link.endsWith("tmp")) await mkdir(join(parent, "objects"), { recursive: true });
    await symlink(outside, join(cwd, link));
    const store = FsObjectStore.forCwd(cwd);
    const bytes = enc(`through ${link}\n`);
    const t0 = performance.now();
    let outcome = "put resolved";
    await store.put(sha256Hex(bytes), bytes).catch((e) => (outcome = `put threw ${e.code}`));
    const ms = performance.now() - t0;
    const written = await entries(outside);
    const mode = ((await lstat(outside)).mode & 0o777).toString(8);
    rows.push({
      situation: `${link} is a link to a 0755 directory: put`,
      result: `${outcome}; target now mode ${mode}, holds [${
        written.join(", ")
      }]; ${await problemOf(
        store,
      )}`,
      ms,
    });
  });
}

await inTemp(async (cwd) => {
  await seed(cwd, "locked\n");
  const root = join(cwd, ".pi", "readcache");
  for (const d of [root, join(root, "objects"), join(root, "tmp")]) await chmod(d, 0o500);
  const store = FsObjectStore.forCwd(cwd);
  const bytes = enc("after the lock\n");
  let outcome = "put resolved";
  await store.put(sha256Hex(bytes), bytes).catch((e) => (outcome = `put threw ${e.code}`));
  const mode = ((await lstat(root)).mode & 0o777).toString(8);
  const stored = (await readdir(join(root, "objects"))).length;
  rows.push({
    situation: `store dirs made read-only (0500)${
      Deno.uid() === 0 ? " [as root: bits do not stop root]" : ""
    }: put`,
    result: `${outcome}; root now mode ${mode}; ${stored} object(s); ${await problemOf(store)}`,
  });
});

await inTemp(async (cwd) => {
  await mkdir(join(cwd, ".pi"));
  await writeFile(join(cwd, ".pi", "readcache"), "a file\n");
  const stats = await FsObjectStore.forCwd(cwd).stats();
  rows.push({ situation: ".pi/readcache is a file: stats", result: JSON.stringify(stats) });
});

await inTemp(async (cwd) => {
  await seed(cwd, "exists\n");
  const tmp = join(cwd, ".pi", "readcache", "tmp");
  const stale = join(tmp, `4242-${"a".repeat(24)}.tmp`);
  const young = join(tmp, `4243-${"b".repeat(24)}.tmp`);
  await writeFile(stale, "killed two hours ago");
  await writeFile(young, "being written");
  const old = new Date(Date.now() - 2 * 3600_000);
  await utimes(stale, old, old);
  const bytes = enc("next write\n");
  await FsObjectStore.forCwd(cwd).put(sha256Hex(bytes), bytes);
  rows.push({
    situation: "tmp/ leftovers (2 h old, fresh): next put",
    result: `left in tmp/: [${(await readdir(tmp)).sort().join(", ")}]`,
  });
  const gitignore = await lstat(join(cwd, ".pi", "readcache", ".gitignore")).then(
    () => "present",
    () => "absent",
  );
  rows.push({ situation: "store root .gitignore after a put", result: gitignore });
});

if (Deno.build.os === "linux") {
  await inTemp(async (cwd, warm) => {
    const deno = [Deno.execPath(), "run", "--no-lock", "--allow-read", "--allow-write"];
    await new Deno.Command(deno[0], {
      args: [...deno.slice(1), fixture, "put", warm, "16", moduleUrl],
      stdout: "null",
      stderr: "null",
    }).output();
    const t0 = performance.now();
    const out = await new Deno.Command("bash", {
      args: [
        "-c",
        'ulimit -f 600; exec "$0" "$@"',
        ...deno,
        fixture,
        "put",
        cwd,
        "1048576",
        moduleUrl,
      ],
      stdout: "piped",
      stderr: "null",
    }).output();
    const ms = performance.now() - t0;
    const stdout = new TextDecoder().decode(out.stdout);
    const tmp = join(cwd, ".pi", "readcache", "tmp");
    const left = await readdir(tmp).catch(() => []);
    rows.push({
      situation: "1 MiB put under ulimit -f 600 (Deno child)",
      result: `exit ${out.code}${out.signal ? ` (${out.signal})` : ""}; ${
        stdout.includes("alive") ? "printed alive" : "did not print alive"
      }; ${left.length} file(s) left in tmp/`,
      ms,
    });
  });
}

console.log(`store module: ${moduleUrl}\n`);
for (const r of rows) {
  const time = r.ms === undefined ? "" : ` (${r.ms < 10 ? r.ms.toFixed(1) : Math.round(r.ms)} ms)`;
  console.log(`- ${r.situation}${time}\n    ${r.result}`);
}
