// FsObjectStore on a hostile machine, on the real file system (temporary directories): links
// shipped by a checkout, foreign and read-only directories, named pipes and devices in place of
// objects, huge objects, file size limits (SIGXFSZ), full disks, interrupted writes.
//
//   deno test -A tests/pi/hostile_store_test.ts      (or: deno task hostile)
//
// Some cases need a capability the machine may not have (root to chown/mknod/mount, setpriv to
// drop to a non-root user, node to run the store as pi does). Those are skipped with the reason
// printed, never faked.
import assert from "node:assert/strict";
import { constants, existsSync, readdirSync } from "node:fs";
import {
  chmod,
  chown,
  copyFile,
  lstat,
  mkdir,
  open,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { join } from "node:path";
import { ReadCacheError } from "../../src/core/errors.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import { DEFAULT_MAX_OBJECT_BYTES, FsObjectStore } from "../../src/store/fs_object_store.ts";

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const posix = Deno.build.os !== "windows";
const linux = Deno.build.os === "linux";
const isRoot = posix && Deno.uid() === 0;
const NOBODY = 65534;
const FIXTURE = new URL("./fixtures/hostile_store_child.ts", import.meta.url).pathname;
const HOUR = 60 * 60 * 1000;

function skipped(reason: string): boolean {
  console.log(`  skipped: ${reason}`);
  return true;
}

/** True when `cmd --version` (or `cmd args`) runs. */
function runs(cmd: string, args: string[] = ["--version"]): boolean {
  try {
    return new Deno.Command(cmd, { args, stdout: "null", stderr: "null" }).outputSync().success;
  } catch {
    return false;
  }
}

/** The jiti CLI installed with pi (how pi loads TypeScript under Node), if any. */
function jitiCli(): string | undefined {
  const dir = new URL("../../pi-suite/node_modules/.deno/", import.meta.url).pathname;
  try {
    for (const entry of readdirSync(dir).sort().reverse()) {
      const cli = join(dir, entry, "node_modules", "jiti", "lib", "jiti-cli.mjs");
      if (entry.startsWith("jiti@") && existsSync(cli)) return cli;
    }
  } catch {
    // no node_modules
  }
  return undefined;
}

/** Removes a test directory, making read-only directories writable first (non-root runs). */
async function forceRemove(dir: string): Promise<void> {
  const loosen = async (d: string): Promise<void> => {
    const st = await lstat(d).catch(() => undefined);
    if (st === undefined || !st.isDirectory()) return;
    await chmod(d, 0o700).catch(() => {});
    for (const name of await readdir(d).catch(() => [])) await loosen(join(d, name));
  };
  await loosen(dir);
  await rm(dir, { recursive: true, force: true });
}

async function withDirs(
  count: number,
  fn: (...dirs: string[]) => Promise<void>,
): Promise<void> {
  const dirs: string[] = [];
  try {
    for (let i = 0; i < count; i++) {
      dirs.push(await Deno.makeTempDir({ prefix: "readcache-hostile-" }));
    }
    await fn(...dirs);
  } finally {
    for (const d of dirs) await forceRemove(d);
  }
}

/** Every entry under `dir` with its type, mode, size, mtime and content hash; never follows links. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (d: string, rel: string): Promise<void> => {
    const st = await lstat(d);
    const mode = (st.mode & 0o7777).toString(8);
    if (st.isSymbolicLink()) out[rel] = `link ${mode} -> ${await readlink(d)}`;
    else if (st.isFile()) {
      out[rel] = `file ${mode} ${st.size} ${st.mtimeMs} ${sha256Hex(await readFile(d))}`;
    } else if (st.isDirectory()) {
      out[rel] = `dir ${mode}`;
      for (const name of (await readdir(d)).sort()) await walk(join(d, name), `${rel}/${name}`);
    } else out[rel] = `other ${mode} ${st.mtimeMs}`;
  };
  await walk(dir, ".");
  return out;
}

const mode = async (p: string): Promise<number> => (await lstat(p)).mode & 0o777;

async function mkfifo(path: string): Promise<void> {
  const r = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.ok(r.success, `mkfifo ${path} failed`);
}

/** Runs `p`, measuring it; after `ms` calls `unblock` (so a hanging read can finish) and waits. */
async function timed<T>(
  p: () => Promise<T>,
  ms: number,
  unblock: () => Promise<void>,
): Promise<{ value: T; elapsed: number; timedOut: boolean }> {
  const t0 = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  const running = p();
  const winner = await Promise.race([
    running.then(() => "done" as const),
    new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), ms))),
  ]);
  clearTimeout(timer);
  if (winner === "timeout") {
    timedOut = true;
    await unblock();
  }
  const value = await running;
  return { value, elapsed: performance.now() - t0, timedOut };
}

/** Opens a FIFO for writing without blocking and closes it, so a blocked reader sees EOF. */
async function unblockFifo(path: string): Promise<void> {
  const fh = await open(path, constants.O_WRONLY | constants.O_NONBLOCK).catch(() => undefined);
  await fh?.close();
}

/** Puts one object through a fresh store of `cwd`, returning it and its hash. */
async function seed(cwd: string, text: string): Promise<{ hash: string; bytes: Uint8Array }> {
  const bytes = enc(text);
  const hash = sha256Hex(bytes);
  await FsObjectStore.forCwd(cwd).put(hash, bytes);
  return { hash, bytes };
}

interface ChildReport {
  outcome: "stored" | "not stored" | "threw";
  code?: string;
  message?: string;
  problem?: { path: string; what: string; fix: string };
  stats: { objects: number; bytes: number };
}

function parseChild(stdout: string): ChildReport {
  const line = stdout.split("\n").find((l) => l.startsWith("{"));
  assert.ok(line !== undefined, `no report from the child: ${stdout}`);
  return JSON.parse(line) as ChildReport;
}

// ---- links ----

Deno.test({
  name:
    "hostile: symlinked .pi, .pi/readcache, objects/ or tmp/: nothing written through the link, target untouched, problem reported",
  ignore: !posix,
  fn: async () => {
    const variants: Array<{ link: string; realAbove: string[]; planted: string }> = [
      { link: ".pi", realAbove: [], planted: "readcache/objects" },
      { link: ".pi/readcache", realAbove: [".pi"], planted: "objects" },
      { link: ".pi/readcache/objects", realAbove: [".pi/readcache"], planted: "." },
      { link: ".pi/readcache/tmp", realAbove: [".pi/readcache/objects"], planted: "" },
    ];
    for (const v of variants) {
      await withDirs(2, async (cwd, outside) => {
        await chmod(outside, 0o755);
        for (const d of v.realAbove) await mkdir(join(cwd, d), { recursive: true, mode: 0o700 });
        // a valid object where following the link would find it
        const planted = enc(`planted for ${v.link}\n`);
        const plantedHash = sha256Hex(planted);
        if (v.planted !== "") {
          await mkdir(join(outside, v.planted), { recursive: true });
          await writeFile(join(outside, v.planted, `sha256-${plantedHash}.txt`), planted);
        }
        const link = join(cwd, v.link);
        await symlink(outside, link);
        const before = await snapshot(outside);

        const store = FsObjectStore.forCwd(cwd);
        const fresh = await FsObjectStore.forCwd(cwd).stats();
        assert.equal(fresh.problem?.path, link, `${v.link}: stats before any write`);
        const bytes = enc(`new content through ${v.link}\n`);
        await store.put(sha256Hex(bytes), bytes); // no store: not an error

        assert.deepEqual(await snapshot(outside), before, `${v.link}: the link target changed`);
        assert.equal(await mode(outside), 0o755, `${v.link}: target mode changed`);
        assert.equal(store.problem?.path, link, v.link);
        assert.match(
          store.problem!.what,
          /symbolic link \(to .*\); the read cache never writes through a link/,
        );
        assert.ok(store.problem!.fix.includes(`rm ${link}`), store.problem!.fix);
        assert.equal(
          await store.get(plantedHash),
          undefined,
          `${v.link}: followed the link on read`,
        );
        assert.equal(await store.get(sha256Hex(bytes)), undefined);
        assert.deepEqual(await store.health(), { ok: false, ...store.problem });
        assert.deepEqual(await store.stats(), { objects: 0, bytes: 0, problem: store.problem });
        // a fresh instance sees the link too, without writing
        assert.equal(await FsObjectStore.forCwd(cwd).get(plantedHash), undefined);
      });
    }
  },
});

Deno.test({
  name: "hostile: a project root or store directory owned by another user is not used",
  ignore: !posix || (!isRoot && skipped("needs root to chown a directory to another user")),
  fn: async () => {
    for (const foreign of [".pi/readcache", "."]) {
      await withDirs(1, async (cwd) => {
        await mkdir(join(cwd, ".pi", "readcache", "objects"), { recursive: true, mode: 0o700 });
        await chown(join(cwd, foreign), NOBODY, NOBODY);
        const before = await snapshot(cwd);
        const store = FsObjectStore.forCwd(cwd);
        const bytes = enc("not into someone else's directory\n");
        await store.put(sha256Hex(bytes), bytes);
        assert.deepEqual(await snapshot(cwd), before, `${foreign}: something was written`);
        assert.equal(store.problem?.path, join(cwd, foreign));
        assert.match(store.problem!.what, /belongs to another user \(uid 65534; you are uid 0\)/);
        assert.match(store.problem!.fix, /only writes into directories you own/);
        assert.equal((await FsObjectStore.forCwd(cwd).health()).ok, false);
      });
    }
  },
});

// ---- permissions ----

/** A store the user made read-only (root, objects/ and tmp/ 0500) holding one object. */
async function readOnlyStore(cwd: string): Promise<{ root: string }> {
  const root = join(cwd, ".pi", "readcache");
  await seed(cwd, "stored before the user locked the store\n");
  for (const d of [root, join(root, "objects"), join(root, "tmp")]) await chmod(d, 0o500);
  return { root };
}

function assertReadOnlyProblem(
  problem: ChildReport["problem"],
  path: string,
  what: RegExp,
): void {
  assert.equal(problem?.path, path);
  assert.match(problem!.what, what);
  assert.ok(problem!.fix.includes(`chmod u+w ${path}`), problem!.fix);
}

const setprivMissing = isRoot && !runs("setpriv", ["--version"]);
Deno.test({
  name:
    "hostile: read-only store directories are not chmod-ed back or written (as a non-root user)",
  ignore: !posix ||
    (setprivMissing && skipped("running as root and setpriv is missing: cannot drop to nobody")),
  fn: async () => {
    await withDirs(2, async (cwd, runner) => {
      const { root } = await readOnlyStore(cwd);
      if (!isRoot) {
        const before = await snapshot(cwd);
        const store = FsObjectStore.forCwd(cwd);
        const bytes = enc("must not land\n");
        await store.put(sha256Hex(bytes), bytes);
        assertReadOnlyProblem(store.problem, root, /is read-only for you \(mode 0500\)/);
        assert.deepEqual(await snapshot(cwd), before);
        return;
      }
      // Root ignores permission bits, so run the store as nobody: the project and store are
      // nobody's, and a copy of the deno binary it can execute runs the child.
      for (const d of [cwd, join(cwd, ".pi"), root]) await chown(d, NOBODY, NOBODY);
      for (const name of await readdir(root)) await chown(join(root, name), NOBODY, NOBODY);
      for (const name of await readdir(join(root, "objects"))) {
        await chown(join(root, "objects", name), NOBODY, NOBODY);
      }
      await chmod(cwd, 0o755);
      await chmod(runner, 0o755);
      const deno = join(runner, "deno");
      await copyFile(Deno.execPath(), deno);
      await chmod(deno, 0o755);
      const home = join(runner, "home");
      await mkdir(home);
      await chown(home, NOBODY, NOBODY);
      const before = await snapshot(cwd);
      // With --allow-sys=uid the store knows who it runs as and sees the mode bits before
      // writing; without it (uid unknown, never prompted for) the refused write is caught.
      const runs: Array<{ sys: string[]; path: string; what: RegExp }> = [
        { sys: ["--allow-sys=uid"], path: root, what: /is read-only for you \(mode 0500\)/ },
        { sys: [], path: join(root, "tmp"), what: /is read-only for you \(EACCES\)/ },
      ];
      for (const run of runs) {
        const out = await new Deno.Command("setpriv", {
          args: [
            `--reuid=${NOBODY}`,
            `--regid=${NOBODY}`,
            "--clear-groups",
            "env",
            `HOME=${home}`,
            `DENO_DIR=${join(home, "deno")}`,
            "DENO_NO_UPDATE_CHECK=1",
            deno,
            "run",
            "--no-config",
            "--no-lock",
            "--no-prompt",
            "--allow-read",
            "--allow-write",
            ...run.sys,
            FIXTURE,
            "put",
            cwd,
            "16",
          ],
          cwd: runner,
          stdout: "piped",
          stderr: "piped",
        }).output();
        const stdout = new TextDecoder().decode(out.stdout);
        const stderr = new TextDecoder().decode(out.stderr);
        assert.equal(out.code, 0, `child failed: ${stderr}`);
        assert.match(stdout, /alive\n/);
        const report = parseChild(stdout);
        assert.equal(report.outcome, "not stored");
        assertReadOnlyProblem(report.problem, run.path, run.what);
        assert.deepEqual(await snapshot(cwd), before, "the read-only store was changed");
      }
      for (const d of [root, join(root, "objects"), join(root, "tmp")]) {
        assert.equal(await mode(d), 0o500, d);
      }
    });
  },
});

// ---- objects that are not regular files ----

Deno.test({
  name: "hostile: an object replaced by a named pipe gives undefined at once, never blocks",
  ignore: !posix,
  fn: async () => {
    await withDirs(1, async (cwd) => {
      const { hash } = await seed(cwd, "soon a fifo\n");
      const store = FsObjectStore.forCwd(cwd);
      const path = store.objectPath(hash);
      await rm(path);
      await mkfifo(path);
      const r = await timed(() => store.get(hash), 1000, () => unblockFifo(path));
      assert.equal(r.timedOut, false, `get blocked on the FIFO (${Math.round(r.elapsed)} ms)`);
      assert.equal(r.value, undefined);
      assert.ok(r.elapsed < 1000, `${r.elapsed} ms`);
      const s = await timed(() => store.stats(), 1000, () => unblockFifo(path));
      assert.equal(s.timedOut, false);
      assert.deepEqual(s.value, { objects: 0, bytes: 0 });
      assert.ok((await lstat(path)).isFIFO(), "the FIFO was removed or replaced");
    });
  },
});

Deno.test({
  name:
    "hostile: an object that is a link (to /dev/zero, or to a valid copy) or a device gives undefined, fast",
  ignore: !posix,
  fn: async () => {
    await withDirs(2, async (cwd, outside) => {
      const { hash, bytes } = await seed(cwd, "soon a link\n");
      const store = FsObjectStore.forCwd(cwd);
      const path = store.objectPath(hash);
      await rm(path);
      await symlink("/dev/zero", path);
      const zero = await timed(() => store.get(hash), 1000, () => Promise.resolve());
      assert.equal(zero.value, undefined);
      assert.ok(zero.elapsed < 1000, `reading through a link to /dev/zero took ${zero.elapsed} ms`);

      const copy = join(outside, "valid-copy.txt");
      await writeFile(copy, bytes);
      await rm(path);
      await symlink(copy, path);
      assert.equal(await store.get(hash), undefined, "followed a link to a valid copy");
      assert.deepEqual(await store.stats(), { objects: 0, bytes: 0 });

      await rm(path);
      const mknod = isRoot
        ? await new Deno.Command("mknod", { args: [path, "c", "1", "5"], stderr: "null" })
          .output().then((r) => r.success, () => false)
        : false;
      if (!mknod) {
        console.log("  device node part skipped: mknod needs root (CAP_MKNOD)");
        return;
      }
      const dev = await timed(() => store.get(hash), 1000, () => Promise.resolve());
      assert.equal(dev.value, undefined);
      assert.ok(dev.elapsed < 1000, `reading a device took ${dev.elapsed} ms`);
    });
  },
});

Deno.test("hostile: objects larger than maxObjectBytes are neither loaded nor written", async () => {
  await withDirs(1, async (cwd) => {
    assert.equal(FsObjectStore.forCwd(cwd).maxObjectBytes, DEFAULT_MAX_OBJECT_BYTES);
    assert.equal(DEFAULT_MAX_OBJECT_BYTES, 8 * 1024 * 1024);
    const store = FsObjectStore.forCwd(cwd, { maxObjectBytes: 1024 });
    const fits = new Uint8Array(1024).fill(0x41);
    await store.put(sha256Hex(fits), fits);
    assert.deepEqual(await store.get(sha256Hex(fits)), fits);

    const over = new Uint8Array(1025).fill(0x42);
    await store.put(sha256Hex(over), over); // refused quietly: nothing to fix
    assert.equal(existsSync(store.objectPath(sha256Hex(over))), false);
    assert.equal(store.problem, undefined);

    // a valid but too large object planted on disk is no object
    const planted = new Uint8Array(4096).fill(0x43);
    await writeFile(store.objectPath(sha256Hex(planted)), planted);
    assert.equal(await store.get(sha256Hex(planted)), undefined);
    assert.deepEqual(await FsObjectStore.forCwd(cwd).get(sha256Hex(planted)), planted);

    for (const bad of [-1, 1.5, Number.NaN]) {
      assert.throws(
        () => FsObjectStore.forCwd(cwd, { maxObjectBytes: bad }),
        (e: unknown) => e instanceof ReadCacheError && e.code === "INVALID_ARGUMENT",
      );
    }
  });
});

// ---- file size limit (SIGXFSZ), full disk ----

const bashMissing = !runs("bash");
async function putUnderFileSizeLimit(
  runtime: string[],
  label: string,
  message = /EFBIG/,
): Promise<void> {
  await withDirs(3, async (cwd, warm, cache) => {
    // the runtime's own caches must not hit the limit: Deno's live in a DENO_DIR of this test
    // (the shared one may need to grow past the limit), filled by a warm-up without the limit
    const env = { DENO_DIR: cache };
    const warmup = await new Deno.Command(runtime[0], {
      args: [...runtime.slice(1), FIXTURE, "put", warm, "16"],
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(warmup.code, 0, `${label} warm-up: ${new TextDecoder().decode(warmup.stderr)}`);

    const out = await new Deno.Command("bash", {
      args: ["-c", 'ulimit -f 600; exec "$0" "$@"', ...runtime, FIXTURE, "put", cwd, "1048576"],
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(
      out.code,
      0,
      `${label} exited ${out.code}${out.signal ? ` (${out.signal})` : ""}: ${stderr}`,
    );
    assert.match(stdout, /alive\n/);
    const report = parseChild(stdout);
    assert.equal(report.outcome, "threw");
    assert.equal(report.code, "STORE_WRITE_FAILED");
    assert.match(report.message!, message);
    const root = join(cwd, ".pi", "readcache");
    assert.deepEqual(await readdir(join(root, "tmp")), [], "a partial temporary file was left");
    assert.deepEqual(await readdir(join(root, "objects")), []);
  });
}

Deno.test({
  name:
    "hostile: Deno survives a write past the file size limit (SIGXFSZ): EFBIG, alive, no tmp file",
  ignore: !linux || (bashMissing && skipped("bash is needed for ulimit -f")),
  fn: () =>
    putUnderFileSizeLimit(
      [
        Deno.execPath(),
        "run",
        "--no-lock",
        "--no-code-cache",
        "--no-prompt",
        "--allow-read",
        "--allow-write",
      ],
      "deno",
    ),
});

// Where the limit can be read (Deno needs all permissions for /proc/self/limits), the write is
// not made at all: no signal, which Deno acts on only later (at exit a late one killed it)
Deno.test({
  name:
    "hostile: Deno with every permission does not write past the file size limit: EFBIG before writing, no tmp file",
  ignore: !linux || (bashMissing && skipped("bash is needed for ulimit -f")),
  fn: () =>
    putUnderFileSizeLimit(
      [Deno.execPath(), "run", "--no-lock", "--no-code-cache", "--no-prompt", "-A"],
      "deno -A",
      /EFBIG: file too large: 1048576 bytes is over this process's file size limit \(ulimit -f: 614400 bytes\)/,
    ),
});

const jiti = jitiCli();
const nodeMissing = !runs("node");
Deno.test({
  name:
    "hostile: Node (through jiti, as pi loads it) survives a write past the file size limit: EFBIG, alive, no tmp file",
  ignore: !linux || (bashMissing && skipped("bash is needed for ulimit -f")) ||
    (nodeMissing && skipped("node is not on PATH")) ||
    (jiti === undefined && skipped("jiti is not installed in node_modules (run deno install)")),
  fn: () => putUnderFileSizeLimit(["node", jiti!], "node"),
});

const canMount = isRoot && linux && runs("mount", ["--version"]);
Deno.test({
  name: "hostile: a full disk (tiny tmpfs) fails the write with no temporary file left",
  ignore: !canMount && skipped("needs root and mount to create a tiny tmpfs"),
  fn: async () => {
    await withDirs(1, async (cwd) => {
      const mounted = await new Deno.Command("mount", {
        args: ["-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", cwd],
        stderr: "piped",
      }).output();
      if (!mounted.success) {
        console.log(`  skipped: mount failed: ${new TextDecoder().decode(mounted.stderr).trim()}`);
        return;
      }
      try {
        const store = FsObjectStore.forCwd(cwd);
        const big = new Uint8Array(1024 * 1024).fill(0x44);
        await assert.rejects(
          store.put(sha256Hex(big), big),
          (e: unknown) =>
            e instanceof ReadCacheError && e.code === "STORE_WRITE_FAILED" &&
            /ENOSPC/.test(e.message),
        );
        assert.deepEqual(await readdir(join(store.root, "tmp")), []);
        assert.equal(store.problem, undefined, "a full disk is not a store problem");
        const small = enc("still fits\n");
        await store.put(sha256Hex(small), small);
        assert.deepEqual(await store.get(sha256Hex(small)), small);
      } finally {
        await new Deno.Command("umount", { args: [cwd] }).output();
      }
    });
  },
});

// ---- interrupted writes, .gitignore ----

Deno.test({
  name:
    "hostile: leftover tmp files older than an hour are removed on the first write; young ones, links and other names are kept; reads remove nothing",
  ignore: !posix,
  fn: async () => {
    await withDirs(2, async (cwd, outside) => {
      await seed(cwd, "the store exists\n");
      const tmp = join(cwd, ".pi", "readcache", "tmp");
      const old = new Date(Date.now() - 2 * HOUR);
      const stale = join(tmp, `4242-${"a".repeat(24)}.tmp`);
      const young = join(tmp, `4243-${"b".repeat(24)}.tmp`);
      const otherName = join(tmp, "notes.txt");
      const link = join(tmp, `4244-${"c".repeat(24)}.tmp`);
      const dir = join(tmp, `4245-${"d".repeat(24)}.tmp`);
      const victim = join(outside, "victim.txt");
      await writeFile(stale, "killed mid-write two hours ago");
      await writeFile(young, "another process is writing this");
      await writeFile(otherName, "not ours");
      await writeFile(victim, "outside the store");
      await symlink(victim, link);
      await mkdir(dir);
      for (const p of [stale, otherName, victim, dir]) await utimes(p, old, old);

      const store = FsObjectStore.forCwd(cwd);
      const before = await snapshot(cwd);
      await store.get(sha256Hex("nothing"));
      await store.stats();
      await store.health();
      assert.deepEqual(await snapshot(cwd), before, "a read-only method changed the store");

      const bytes = enc("first write of this instance\n");
      await store.put(sha256Hex(bytes), bytes);
      assert.equal(existsSync(stale), false, "the stale leftover is still there");
      assert.ok(existsSync(young), "a young temporary file was removed");
      assert.ok(existsSync(otherName));
      assert.ok((await lstat(link)).isSymbolicLink(), "the link was removed");
      assert.ok((await lstat(dir)).isDirectory());
      assert.equal(await readFile(victim, "utf8"), "outside the store");
      assert.deepEqual(await store.get(sha256Hex(bytes)), bytes);
    });
  },
});

Deno.test({
  name:
    "hostile: a .gitignore and an .ignore (searches skip the store) with '*' are written at the store root; an existing one (or a link) is never overwritten; reads do not write them",
  ignore: !posix,
  fn: async () => {
    await withDirs(2, async (cwd, outside) => {
      const store = FsObjectStore.forCwd(cwd);
      const gitignore = join(store.root, ".gitignore");
      await store.get(sha256Hex("x"));
      await store.stats();
      assert.equal(existsSync(join(cwd, ".pi")), false);
      const bytes = enc("x\n");
      await store.put(sha256Hex(bytes), bytes);
      assert.equal(await readFile(gitignore, "utf8"), "*\n");
      assert.equal(await readFile(join(store.root, ".ignore"), "utf8"), "*\n");

      await writeFile(gitignore, "# the user's own\nobjects/\n");
      const other = enc("y\n");
      await FsObjectStore.forCwd(cwd).put(sha256Hex(other), other);
      assert.equal(await readFile(gitignore, "utf8"), "# the user's own\nobjects/\n");

      const target = join(outside, "elsewhere");
      await writeFile(target, "not the store's\n");
      await rm(gitignore);
      await symlink(target, gitignore);
      const third = enc("z\n");
      await FsObjectStore.forCwd(cwd).put(sha256Hex(third), third);
      assert.equal(await readFile(target, "utf8"), "not the store's\n");
      assert.ok((await lstat(gitignore)).isSymbolicLink());
    });
  },
});

// ---- status ----

Deno.test({
  name:
    "hostile: stats and health explain a store path that is a file (store root or objects/), and create nothing",
  ignore: !posix,
  fn: async () => {
    for (const asFile of [".pi/readcache", ".pi/readcache/objects"]) {
      await withDirs(1, async (cwd) => {
        const path = join(cwd, asFile);
        await mkdir(join(path, ".."), { recursive: true });
        await writeFile(path, "a file where a directory belongs\n");
        const before = await snapshot(cwd);
        const store = FsObjectStore.forCwd(cwd);
        const stats = await store.stats();
        assert.equal(stats.objects, 0);
        assert.equal(stats.bytes, 0);
        assert.equal(stats.problem?.path, path, asFile);
        assert.equal(stats.problem!.what, "is a file, not a directory");
        assert.ok(stats.problem!.fix.includes(`Move or delete ${path}`), stats.problem!.fix);
        assert.deepEqual(await store.health(), { ok: false, ...stats.problem });
        assert.equal(store.problem, undefined, "only a write records the instance's problem");
        assert.equal(await store.get(sha256Hex("x")), undefined);
        assert.deepEqual(await snapshot(cwd), before);
      });
    }
  },
});
