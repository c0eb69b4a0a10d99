/**
 * On-disk content-addressed object store, safe on a hostile machine.
 *
 * Layout under the store root (`<cwd>/.pi/readcache`):
 *
 * - `objects/sha256-<64 hex>.txt`: one file per object, holding the exact bytes
 * - `tmp/`: temporary files of writes in progress (`<pid>-<24 hex>.tmp`)
 * - `.gitignore`: `*`, so the store is never committed by accident
 * - `.ignore`: `*`, so searches that honour it (ripgrep, and the search tools
 *   of pi and OpenCode built on it) never print the store's copies of files
 *
 * A write goes to a fresh temporary file in `tmp/`, is fsynced, then atomically
 * renamed into `objects/`, so a reader (or another process) never sees a
 * partial object. Reads verify the SHA-256 before returning anything.
 *
 * What a checkout, another user or the machine can throw at it, and what it does:
 *
 * - **Links and foreign directories.** Before every write, each directory from
 *   the project root down (`<cwd>`, `.pi`, `.pi/readcache`, `objects/`,
 *   `tmp/`) is checked with `lstat`: it must be a real directory (not a
 *   symbolic link) owned by the current user, and the last three must be
 *   writable. A missing one is created one level at a time (mode 0700; `mkdir`
 *   never follows a link) and checked again. Any problem makes the store
 *   instance "no store": `put` does nothing, `get` gives `undefined`, and
 *   {@linkcode FsObjectStore.problem}, {@linkcode FsObjectStore.health} and
 *   {@linkcode FsObjectStore.stats} say which path, what is wrong and what to
 *   do. Reads are then served in full; nothing is logged. Where the user id
 *   is unknown (Windows; Deno without `--allow-sys=uid`, never prompted for),
 *   the owner and the permission bits are not checked: links and file types
 *   still are, and a write refused by the system still makes it "no store".
 * - **Permissions.** The permissions of existing directories are never
 *   changed. New directories are 0700 and object files 0600, whatever the
 *   umask. A read-only store is "no store", not an error.
 * - **Objects that are not files.** An object is opened with `O_NOFOLLOW` and
 *   `O_NONBLOCK` and checked on the open handle (`fstat`): only a regular file
 *   of at most `maxObjectBytes` (default 8 MiB) is read, and never more than
 *   `maxObjectBytes + 1` bytes even if it grows. A named pipe, device, link,
 *   directory or too large file is no object, without blocking.
 * - **Failed writes.** A write that fails (`ENOSPC`, `EFBIG`, `EIO`, ...)
 *   throws `STORE_WRITE_FAILED` and removes its temporary file; one refused
 *   for lack of permission (`EACCES`, `EPERM`, `EROFS`) makes the store "no
 *   store" instead. Content larger than `maxObjectBytes` is not written.
 * - **File size limits (`SIGXFSZ`).** A write past `ulimit -f` raises
 *   `SIGXFSZ`, whose default action kills the process. Node ignores the
 *   signal from startup (`SIG_IGN`), so the write fails with `EFBIG`. Deno
 *   keeps the default; before its first write this module adds a no-op
 *   `Deno.addSignalListener("SIGXFSZ", ...)` and keeps it for the rest of the
 *   process (Deno hands the signal to listeners after the write returns: one
 *   removed as the write ends could be gone by then), so a write fails with
 *   `EFBIG` instead of killing Deno. Where the limit can be read
 *   (`/proc/self/limits`), a write that would pass it is not made at all
 *   (`EFBIG`): Deno acts on the signal only later, and at exit a late one
 *   still killed the process.
 * - **Interrupted writes.** Temporary files older than one hour (left by a
 *   process killed mid-write) are removed on the first write of each store
 *   instance: only regular files in `tmp/` named like ours, never through a
 *   link; younger ones are kept (another process may be writing them).
 * - **Read-only operations stay read-only.** `get`, `stats`, `health` and
 *   `problem` never create, change or delete anything.
 *
 * Uses only `node:` APIs (plus the `SIGXFSZ` listener when running in Deno),
 * so it runs under Deno and Node alike.
 *
 * Specified by SPEC.md §9, §13.4.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  readSync,
  type Stats,
} from "node:fs";
import {
  type FileHandle,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
  rename,
  unlink,
} from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { Buffer } from "node:buffer";
import process from "node:process";
import { ReadCacheError } from "../core/errors.ts";
import { isContentHash, sha256Hex } from "../core/hash.ts";
import {
  assertContentHash,
  type ObjectStore,
  type StoreProblem,
  type StoreStats,
} from "../core/object_store.ts";

export type { ObjectStore, StoreProblem, StoreStats } from "../core/object_store.ts";

/**
 * Default largest object, in bytes, that an {@linkcode FsObjectStore} writes
 * or loads: 8 MiB.
 *
 * @example
 * ```ts
 * import { DEFAULT_MAX_OBJECT_BYTES } from "@readcache/core/fs";
 * console.log(DEFAULT_MAX_OBJECT_BYTES); // 8388608
 * ```
 */
export const DEFAULT_MAX_OBJECT_BYTES: number = 8 * 1024 * 1024;

/**
 * Options of an {@linkcode FsObjectStore}.
 *
 * @example
 * ```ts
 * import { FsObjectStore, type FsObjectStoreOptions } from "@readcache/core/fs";
 * const options: FsObjectStoreOptions = { maxObjectBytes: 1024 * 1024 };
 * const store = FsObjectStore.forCwd("/work/project", options);
 * ```
 */
export interface FsObjectStoreOptions {
  /**
   * Largest object, in bytes, that is written or loaded (default
   * {@linkcode DEFAULT_MAX_OBJECT_BYTES}, 8 MiB). `put` skips larger content;
   * `get` treats a larger file as no object and never reads more than this
   * plus one byte. A non-negative safe integer.
   */
  maxObjectBytes?: number;
  /**
   * The project directory the store belongs to, where the safety checks
   * start: it must exist, be a real directory and belong to the current user,
   * and it must contain the store root. Default: for a root ending in
   * `.pi/readcache`, the directory holding `.pi`; otherwise the parent of the
   * root. {@linkcode FsObjectStore.forCwd} sets it to `cwd`.
   */
  projectRoot?: string;
}

/**
 * Whether an {@linkcode FsObjectStore} can be used: `{ ok: true, path }` (a
 * store that does not exist yet is ok: it is created on the first write), or
 * `{ ok: false }` with the {@linkcode StoreProblem} (which path, what is
 * wrong, what to do).
 *
 * @example
 * ```ts
 * import type { StoreHealth } from "@readcache/core/fs";
 * function describe(h: StoreHealth): string {
 *   return h.ok ? `store ${h.path}` : `no store: ${h.path} ${h.what}. ${h.fix}`;
 * }
 * ```
 */
export type StoreHealth = { ok: true; path: string } | ({ ok: false } & StoreProblem);

/** File name of a well-formed object. */
const OBJECT_NAME: RegExp = /^sha256-[0-9a-f]{64}\.txt$/;
/** File name of our temporary files: `<pid>-<24 hex>.tmp`. */
const TMP_NAME: RegExp = /^[0-9]+-[0-9a-f]{24}\.tmp$/;
/** Temporary files older than this are leftovers of an interrupted write. */
const STALE_TMP_MS = 60 * 60 * 1000;
/** What the user keeps when the store cannot be used. */
const STILL_WORKS = "Until then reads still work, sent in full instead of cached.";

// Absent on Windows: 0 leaves them out of the open flags (and objects are then lstat-ed first).
const O_NOFOLLOW: number = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK: number = constants.O_NONBLOCK ?? 0;
const O_NOCTTY: number = constants.O_NOCTTY ?? 0;
const O_DIRECTORY: number = constants.O_DIRECTORY ?? 0;
const WINDOWS = process.platform === "win32";

/** Error code of a caught value (`ENOENT`, ...), if any. */
function codeOf(e: unknown): string | undefined {
  if (typeof e !== "object" || e === null || !("code" in e)) return undefined;
  return typeof e.code === "string" ? e.code : undefined;
}

/** Human-readable cause of a caught value. */
function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** True for errors that mean "you may not write here" rather than "this write failed". */
function isPermissionError(e: unknown): boolean {
  const code = codeOf(e);
  return code === "EACCES" || code === "EPERM" || code === "EROFS";
}

/** Deno's permission query, when running in Deno. */
interface DenoPermissions {
  permissions: { querySync(desc: { name: "sys"; kind: "uid" }): { state: string } };
}

/**
 * The current user id, or `undefined` where ownership cannot be checked:
 * Windows, and Deno without `--allow-sys` (uid), where asking would throw or
 * prompt (Deno also refuses `/proc/self` without `--allow-all`). Never
 * prompts, never throws.
 */
function currentUid(): number | undefined {
  if (WINDOWS || typeof process.getuid !== "function") return undefined;
  const deno = (globalThis as { Deno?: Partial<DenoPermissions> }).Deno;
  try {
    if (
      deno !== undefined &&
      deno.permissions?.querySync({ name: "sys", kind: "uid" }).state !== "granted"
    ) {
      return undefined;
    }
    return process.getuid();
  } catch {
    return undefined;
  }
}

/** What a non-directory is, in words. */
function kindOf(st: Stats): string {
  if (st.isFile()) return "a file";
  if (st.isFIFO()) return "a named pipe (FIFO)";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  return "not a directory";
}

/** The signal API of Deno, when running in Deno. */
interface DenoSignals {
  addSignalListener(signal: "SIGXFSZ", handler: () => void): void;
}

function denoSignals(): DenoSignals | undefined {
  const deno = (globalThis as { Deno?: Partial<DenoSignals> }).Deno;
  if (
    WINDOWS || deno === undefined || typeof deno.addSignalListener !== "function"
  ) return undefined;
  return deno as DenoSignals;
}

let xfszIgnored = false;
/** How many `SIGXFSZ` Deno has handed to the listener, and who waits for the next one. */
let xfszSeen = 0;
const xfszWaiters: (() => void)[] = [];
const ignoreXfsz = (): void => {
  xfszSeen++;
  for (const wake of xfszWaiters.splice(0)) wake();
};

/**
 * After a write that failed with `EFBIG` where the limit could not be read
 * first: waits (at most `ms`) until Deno has handed the listener a `SIGXFSZ`
 * newer than `before`, the count when the write started. Until then the
 * signal is pending, and should the process end first, Deno would take the
 * default action and kill it.
 */
async function settleSigxfsz(before: number, ms = 2000): Promise<void> {
  if (!xfszIgnored || xfszSeen > before) return;
  await new Promise<void>((done) => {
    const timer = setTimeout(done, ms);
    xfszWaiters.push(() => {
      clearTimeout(timer);
      done();
    });
  });
}

/**
 * Makes a write past the file size limit fail with `EFBIG` instead of killing
 * the process, from the first write on. Node already ignores `SIGXFSZ`; in
 * Deno a no-op listener is added before the first write and kept for the rest
 * of the process: Deno hands the signal to its listeners after the write has
 * returned, so a listener removed as the write ends can be gone by then, and
 * Deno then takes the default action (the process is killed).
 */
function ignoreSigxfsz(): void {
  if (xfszIgnored) return;
  const deno = denoSignals();
  if (deno === undefined) return;
  try {
    deno.addSignalListener("SIGXFSZ", ignoreXfsz);
    xfszIgnored = true;
  } catch {
    // not supported here
  }
}

/**
 * The process's file size limit (`ulimit -f`, the soft limit) in bytes, from
 * `/proc/self/limits`; `undefined` when there is none or it cannot be read
 * (not Linux). A write that would pass it is not made: it would raise
 * `SIGXFSZ`, which Deno may act on only later (see {@linkcode ignoreSigxfsz}).
 */
function fileSizeLimit(): number | undefined {
  try {
    const m = /^Max file size\s+(\S+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (m === null || m[1] === "unlimited") return undefined;
    const n = Number(m[1]);
    return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** `EFBIG` for a write of `size` bytes that the file size limit `limit` does not allow. */
function overFileSizeLimit(size: number, limit: number): Error {
  return Object.assign(
    new Error(
      `EFBIG: file too large: ${size} bytes is over this process's file size limit ` +
        `(ulimit -f: ${limit} bytes)`,
    ),
    { code: "EFBIG" },
  );
}

// The store's read paths use the synchronous calls: an lstat or the read of a small file costs
// microseconds, a trip through the thread pool costs more (every read asks the store); writes,
// which fsync, stay asynchronous.

/** `lstat`, or the error code. */
function lstatOrCode(path: string): Stats | string {
  try {
    return lstatSync(path);
  } catch (e) {
    return codeOf(e) ?? describe(e);
  }
}

/** True when `path` itself (not a link target) is a regular file. Never throws. */
function isRegularFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}

/** Sets mode 0700 on a directory this store just created, through a handle that never follows a link. */
async function makePrivateDir(dir: string, created: Stats): Promise<void> {
  if (WINDOWS || (created.mode & 0o777) === 0o700) return;
  let fh: FileHandle | undefined;
  try {
    fh = await open(dir, constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    const st = await fh.stat();
    if (st.dev === created.dev && st.ino === created.ino) await fh.chmod(0o700);
  } catch {
    // best-effort: the writability check that follows decides whether the store is usable
  } finally {
    await fh?.close().catch(() => {});
  }
}

/** fsyncs a directory so a rename into it is durable. Best-effort (not possible everywhere). */
async function syncDirBestEffort(dir: string): Promise<void> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(dir, constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    await fh.sync();
  } catch {
    // e.g. Windows cannot open or fsync a directory; the rename itself is still atomic
  } finally {
    await fh?.close().catch(() => {});
  }
}

/**
 * The bytes of `path` when it is a regular file (not a link) of at most `cap`
 * bytes, else `undefined`. Never blocks on a FIFO or device, never reads more
 * than `cap + 1` bytes, never throws.
 */
function readRegularCapped(path: string, cap: number): Uint8Array | undefined {
  let fd: number | undefined;
  try {
    if (O_NOFOLLOW === 0 && !isRegularFile(path)) return undefined;
    fd = openSync(path, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > cap) return undefined;
    // one byte more than fstat says: reading it means the file is changing, so it is no object
    const buf = new Uint8Array(st.size + 1);
    let total = 0;
    while (total < buf.length) {
      const bytesRead = readSync(fd, buf, total, buf.length - total, total);
      if (bytesRead === 0) break;
      total += bytesRead;
    }
    if (total > st.size) return undefined;
    return buf.subarray(0, total);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch { /* closed */ }
    }
  }
}

/** One directory on the way from the project root to `objects/` and `tmp/`. */
interface Component {
  path: string;
  /** The project root: must already exist. */
  project: boolean;
  /** The store writes into it: must be writable. */
  written: boolean;
}

/** Outcome of checking the directories: a problem, or the first missing one, or neither. */
interface Check {
  problem?: StoreProblem;
  /** `problem` makes it unsafe even to look inside (link, foreign, not a directory). */
  unsafe?: boolean;
  missing?: string;
}

/**
 * {@linkcode ObjectStore} on the local file system, rooted at
 * `<cwd>/.pi/readcache`, safe against links, foreign directories, named pipes,
 * devices, huge files and file size limits (see the module documentation).
 *
 * `put` throws `ReadCacheError` with code `INVALID_HASH` when the hash does
 * not match the bytes and `STORE_WRITE_FAILED` (naming the object path and the
 * cause) when the object cannot be written; a failed write leaves no temporary
 * file behind. A store whose directories are unsafe or not writable is "no
 * store": `put` does nothing and {@linkcode FsObjectStore.problem} says why.
 * Concurrent writers of the same object, in one process or many, are safe.
 *
 * @example
 * ```ts
 * import { FsObjectStore } from "@readcache/core/fs";
 * import { sha256Hex } from "@readcache/core/rules";
 * import { mkdtemp, rm } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 *
 * const cwd = await mkdtemp(join(tmpdir(), "readcache-"));
 * const store = FsObjectStore.forCwd(cwd);
 * const bytes = new TextEncoder().encode("export const x = 1;\n");
 * const hash = sha256Hex(bytes);
 * await store.put(hash, bytes);
 * console.log(store.objectPath(hash)); // <cwd>/.pi/readcache/objects/sha256-<hash>.txt
 * console.log(await store.stats()); // { objects: 1, bytes: 20 }
 * console.log(store.problem); // undefined (a symlinked .pi/readcache would be reported here)
 * await rm(cwd, { recursive: true });
 * ```
 */
export class FsObjectStore implements ObjectStore {
  /** Store root, normally `<cwd>/.pi/readcache`. */
  readonly root: string;
  /** Largest object, in bytes, that is written or loaded. */
  readonly maxObjectBytes: number;
  /** The directory the safety checks start from (see {@linkcode FsObjectStoreOptions.projectRoot}). */
  readonly projectRoot: string;

  readonly #chain: readonly Component[];
  readonly #objectsDir: string;
  readonly #tmpDir: string;
  #problem: StoreProblem | undefined;
  #prepared = false;

  /**
   * Creates a store rooted at `root`. Nothing is created until the first `put`.
   *
   * @example
   * ```ts
   * import { FsObjectStore } from "@readcache/core/fs";
   * const store = new FsObjectStore("/work/project/.pi/readcache", { maxObjectBytes: 1 << 20 });
   * store.projectRoot; // "/work/project"
   * ```
   *
   * @param root the store root, normally `<cwd>/.pi/readcache` (see
   * {@linkcode FsObjectStore.forCwd}).
   * @param options size cap and project root; throws `ReadCacheError` with
   * code `INVALID_ARGUMENT` for a cap that is not a non-negative safe integer
   * or a project root that does not contain `root`.
   */
  constructor(root: string, options: FsObjectStoreOptions = {}) {
    const max = options.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES;
    if (!Number.isSafeInteger(max) || max < 0) {
      throw new ReadCacheError(
        "INVALID_ARGUMENT",
        `maxObjectBytes must be a non-negative integer number of bytes, got ${max}.`,
      );
    }
    const absRoot = resolve(root);
    const defaultProject = basename(absRoot) === "readcache" &&
        basename(dirname(absRoot)) === ".pi"
      ? dirname(dirname(absRoot))
      : dirname(absRoot);
    const project = resolve(options.projectRoot ?? defaultProject);
    const rel = relative(project, absRoot);
    if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw new ReadCacheError(
        "INVALID_ARGUMENT",
        `projectRoot ${project} does not contain the store root ${absRoot}. ` +
          `Pass the project directory the store lives in.`,
      );
    }
    this.root = root;
    this.maxObjectBytes = max;
    this.projectRoot = project;
    this.#objectsDir = join(absRoot, "objects");
    this.#tmpDir = join(absRoot, "tmp");
    const chain: Component[] = [{ path: project, project: true, written: rel === "" }];
    let at = project;
    for (const part of rel === "" ? [] : rel.split(sep)) {
      at = join(at, part);
      chain.push({ path: at, project: false, written: at === absRoot });
    }
    chain.push({ path: this.#objectsDir, project: false, written: true });
    chain.push({ path: this.#tmpDir, project: false, written: true });
    this.#chain = chain;
  }

  /**
   * The store of a working directory, rooted at `<cwd>/.pi/readcache`, with
   * `cwd` as the project root.
   *
   * @example
   * ```ts
   * import { FsObjectStore } from "@readcache/core/fs";
   * FsObjectStore.forCwd("/work/project").root; // "/work/project/.pi/readcache"
   * ```
   */
  static forCwd(cwd: string, options: FsObjectStoreOptions = {}): FsObjectStore {
    return new FsObjectStore(join(cwd, ".pi", "readcache"), { ...options, projectRoot: cwd });
  }

  /**
   * Why this store instance stopped writing, or `undefined`. Set by the
   * first `put` that found a problem (a symbolic link, a foreign or read-only
   * directory, one that cannot be created); from then on `put` does nothing
   * and `get` gives `undefined`. One problem, reported once: it never changes
   * afterwards. Use a new instance to check again.
   *
   * @example
   * ```ts
   * import { FsObjectStore } from "@readcache/core/fs";
   * const problem = FsObjectStore.forCwd("/work/project").problem;
   * if (problem) console.log(`${problem.path} ${problem.what}. ${problem.fix}`);
   * ```
   */
  get problem(): StoreProblem | undefined {
    return this.#problem;
  }

  /**
   * Checks, without creating or changing anything, whether the store can be
   * used: the problem recorded by `put`, else the current state of its
   * directories. A store that does not exist yet is ok.
   *
   * @example
   * ```ts
   * import { FsObjectStore } from "@readcache/core/fs";
   * const health = await FsObjectStore.forCwd("/nonexistent").health();
   * if (!health.ok) console.log(`${health.path} ${health.what}. ${health.fix}`);
   * ```
   */
  async health(): Promise<StoreHealth> {
    const problem = this.#problem ?? (await this.#check(false)).problem;
    return problem === undefined ? { ok: true, path: this.root } : { ok: false, ...problem };
  }

  /**
   * Path of the object file of `hash` (for tests and diagnostics; the file
   * may not exist). Throws `ReadCacheError` with code `INVALID_HASH` when
   * `hash` is not 64 lowercase hex digits, so no other path can be built.
   *
   * @example
   * ```ts
   * import { FsObjectStore } from "@readcache/core/fs";
   * import { sha256Hex } from "@readcache/core/rules";
   * FsObjectStore.forCwd("/w").objectPath(sha256Hex("abc"));
   * // "/w/.pi/readcache/objects/sha256-ba7816bf...15ad.txt"
   * ```
   */
  objectPath(hash: string): string {
    if (!isContentHash(hash)) {
      throw new ReadCacheError(
        "INVALID_HASH",
        `No object path for '${hash}': not a content hash (64 lowercase hex digits).`,
      );
    }
    return join(this.root, "objects", `sha256-${hash}.txt`);
  }

  /**
   * Stores `bytes` under `hash` (write to `tmp/`, fsync, atomic rename). An
   * existing object file makes this a no-op: it is never rewritten. Content
   * larger than {@linkcode FsObjectStore.maxObjectBytes} is not stored. When
   * the store's directories are unsafe or not writable this does nothing and
   * records {@linkcode FsObjectStore.problem}.
   *
   * @example
   * ```ts
   * import { FsObjectStore } from "@readcache/core/fs";
   * import { sha256Hex } from "@readcache/core/rules";
   * import { mkdtemp, rm } from "node:fs/promises";
   * import { tmpdir } from "node:os";
   * import { join } from "node:path";
   *
   * const cwd = await mkdtemp(join(tmpdir(), "readcache-"));
   * const store = FsObjectStore.forCwd(cwd);
   * const bytes = new TextEncoder().encode("a\n");
   * await store.put(sha256Hex(bytes), bytes);
   * await store.put(sha256Hex(bytes), bytes); // no-op
   * await rm(cwd, { recursive: true });
   * ```
   */
  async put(hash: string, bytes: Uint8Array): Promise<void> {
    assertContentHash(hash, bytes);
    const target = this.objectPath(hash);
    if (bytes.length > this.maxObjectBytes || this.#problem !== undefined) return;
    const targetAbs = join(this.#objectsDir, basename(target));

    ignoreSigxfsz();
    try {
      const check = await this.#check(true);
      if (check.problem !== undefined) {
        this.#problem = check.problem;
        return;
      }
      if (!this.#prepared) {
        this.#prepared = true;
        await this.#writeIgnoreFiles();
        await this.#removeStaleTmp();
      }
      // an existing object is never rewritten (SPEC §9), so existence is enough
      if (isRegularFile(targetAbs)) return;

      await this.#writeInto(this.#objectsDir, targetAbs, [bytes], true);
    } catch (e) {
      if (isPermissionError(e)) {
        const at = typeof e === "object" && e !== null && "path" in e && typeof e.path === "string"
          ? e.path
          : this.#tmpDir;
        this.#problem = this.#notWritable(at, e);
        return;
      }
      const err = new ReadCacheError(
        "STORE_WRITE_FAILED",
        `Could not store object ${target}: ${describe(e)}. ` +
          `Check that ${this.root} is a writable directory with free space; reads still work without the store.`,
      );
      err.cause = e;
      throw err;
    }
  }

  /**
   * True when a regular file is stored under `hash` (one `lstat`; its bytes
   * are not verified, `get` does that). Never throws, never creates anything.
   *
   * @example
   * ```ts
   * import { FsObjectStore } from "@readcache/core/fs";
   * import { sha256Hex } from "@readcache/core/rules";
   * await FsObjectStore.forCwd("/nonexistent").has(sha256Hex("x")); // false
   * ```
   */
  has(hash: string): Promise<boolean> {
    if (!isContentHash(hash) || this.#problem !== undefined) return Promise.resolve(false);
    return Promise.resolve(isRegularFile(join(this.#objectsDir, `sha256-${hash}.txt`)));
  }

  /**
   * The verified bytes of `hash`, or `undefined` when missing, unreadable,
   * not a regular file (a link, named pipe, device, directory), larger than
   * {@linkcode FsObjectStore.maxObjectBytes}, corrupt (bytes do not hash to
   * `hash`), when `hash` is malformed, or when the store has a problem. Never
   * blocks on a named pipe, never throws, never creates, deletes or rewrites.
   *
   * @example
   * ```ts
   * import { FsObjectStore } from "@readcache/core/fs";
   * import { sha256Hex } from "@readcache/core/rules";
   * await FsObjectStore.forCwd("/nonexistent").get(sha256Hex("x")); // undefined
   * ```
   */
  async get(hash: string): Promise<Uint8Array | undefined> {
    if (!isContentHash(hash) || this.#problem !== undefined) return undefined;
    try {
      const check = await this.#check(false);
      if (
        check.problem !== undefined || check.missing !== undefined && check.missing !== this.#tmpDir
      ) {
        return undefined;
      }
      const bytes = readRegularCapped(
        join(this.#objectsDir, `sha256-${hash}.txt`),
        this.maxObjectBytes,
      );
      if (bytes === undefined || sha256Hex(bytes) !== hash) return undefined;
      return bytes;
    } catch {
      return undefined;
    }
  }

  /**
   * Writes `parts` to a new private temporary file, then renames it to
   * `target` in `dir` (atomic, never through a link); fsynced when
   * `durable`. The temporary file is removed when anything fails.
   */
  async #writeInto(
    dir: string,
    target: string,
    parts: readonly Uint8Array[],
    durable: boolean,
  ): Promise<void> {
    const size = parts.reduce((n, p) => n + p.length, 0);
    const limit = fileSizeLimit();
    if (limit !== undefined && size > limit) throw overFileSizeLimit(size, limit);
    const candidate = join(this.#tmpDir, `${process.pid}-${randomBytes(12).toString("hex")}.tmp`);
    const fh = await open(
      candidate,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW,
      0o600,
    );
    // set only once this call has created the file, so a failure never removes another writer's file
    let tmp: string | undefined = candidate;
    try {
      const seen = xfszSeen;
      try {
        await fh.chmod(0o600); // the open mode is filtered by the umask
        await fh.writeFile(parts.length === 1 ? parts[0] : Buffer.concat(parts));
        if (durable) await fh.sync();
      } catch (e) {
        if (codeOf(e) === "EFBIG") await settleSigxfsz(seen);
        throw e;
      } finally {
        await fh.close();
      }
      try {
        // Atomic, and never through a link (rename replaces a link, not its target).
        // If a concurrent writer renamed its copy into place meanwhile, this replaces it:
        // readers see one complete file or the other, never a partial one.
        await rename(candidate, target);
        tmp = undefined;
      } catch (e) {
        // Windows refuses to replace a target another process holds open. If a file is
        // now in place, a concurrent writer won: that is success.
        if (!(isRegularFile(target))) throw e;
      }
      if (durable) await syncDirBestEffort(dir);
    } finally {
      if (tmp !== undefined) await unlink(tmp).catch(() => {});
    }
  }

  /**
   * The store's `state/` directory, checked like the others (ours, private,
   * not a link); created when `create` is set. `undefined` when it is missing
   * (and not created) or must not be used.
   */
  async #stateDir(create: boolean): Promise<string | undefined> {
    const dir = join(dirname(this.#objectsDir), "state");
    let st = lstatOrCode(dir);
    if (st === "ENOENT" && create) {
      await mkdir(dir, { mode: 0o700 }).catch((e) => {
        if (codeOf(e) !== "EEXIST") throw e;
      });
      st = lstatOrCode(dir);
      if (typeof st !== "string") await makePrivateDir(dir, st);
    }
    if (typeof st === "string") return undefined;
    const c: Component = { path: dir, project: false, written: true };
    return (await this.#unsafe(c, st, currentUid())) === undefined ? dir : undefined;
  }

  /**
   * Saves `bytes` under `key` (64 lowercase hex digits) in the store's
   * `state/` directory, replacing what was saved there (SPEC §6.5, §9): the
   * replay of a session saved by a host adapter. The file holds the SHA-256
   * of the bytes, so a damaged one is never read back. Does nothing when the
   * bytes are over {@linkcode FsObjectStore.maxObjectBytes} or the store has
   * a problem; throws `ReadCacheError` (`INVALID_ARGUMENT` for a malformed
   * key, `STORE_WRITE_FAILED` when the write fails).
   *
   * @example
   * ```ts
   * import { mkdtemp, rm } from "node:fs/promises";
   * import { tmpdir } from "node:os";
   * import { join } from "node:path";
   * import { FsObjectStore } from "@readcache/core/fs";
   * import { sha256Hex } from "@readcache/core/rules";
   * const cwd = await mkdtemp(join(tmpdir(), "readcache-"));
   * const store = FsObjectStore.forCwd(cwd);
   * await store.putState(sha256Hex("session-1"), new TextEncoder().encode("{}"));
   * new TextDecoder().decode(await store.getState(sha256Hex("session-1"))); // "{}"
   * await rm(cwd, { recursive: true });
   * ```
   */
  async putState(key: string, bytes: Uint8Array): Promise<void> {
    if (!isContentHash(key)) {
      throw new ReadCacheError(
        "INVALID_ARGUMENT",
        `A state key is 64 lowercase hex digits (a SHA-256), got '${key}'.`,
      );
    }
    if (bytes.length > this.maxObjectBytes || this.#problem !== undefined) return;
    ignoreSigxfsz();
    try {
      const check = await this.#check(true);
      if (check.problem !== undefined) {
        this.#problem = check.problem;
        return;
      }
      const dir = await this.#stateDir(true);
      if (dir === undefined) return;
      const header = new TextEncoder().encode(`${sha256Hex(bytes)}\n`);
      // not fsynced: a state is a cache, and one cut short by a crash fails its checksum
      await this.#writeInto(dir, join(dir, `${key}.json`), [header, bytes], false);
    } catch (e) {
      const err = new ReadCacheError(
        "STORE_WRITE_FAILED",
        `Could not save state ${key} in ${this.root}: ${describe(e)}. ` +
          `Check that it is a writable directory with free space; reads still work without it.`,
      );
      err.cause = e;
      throw err;
    }
  }

  /**
   * The bytes last saved under `key` by {@linkcode FsObjectStore.putState},
   * or `undefined` when there are none, the file is not a regular file, is
   * over {@linkcode FsObjectStore.maxObjectBytes}, is damaged (its bytes do
   * not hash to the SHA-256 it holds), or the store has a problem. Never
   * blocks, never throws, never creates, deletes or rewrites anything.
   *
   * @example
   * ```ts
   * import { FsObjectStore } from "@readcache/core/fs";
   * import { sha256Hex } from "@readcache/core/rules";
   * await FsObjectStore.forCwd("/nonexistent").getState(sha256Hex("s")); // undefined
   * ```
   */
  async getState(key: string): Promise<Uint8Array | undefined> {
    if (!isContentHash(key) || this.#problem !== undefined) return undefined;
    try {
      const check = await this.#check(false);
      if (check.problem !== undefined || check.missing !== undefined) return undefined;
      const dir = await this.#stateDir(false);
      if (dir === undefined) return undefined;
      const file = readRegularCapped(join(dir, `${key}.json`), this.maxObjectBytes + 65);
      if (file === undefined || file.length < 65 || file[64] !== 0x0a) return undefined;
      const bytes = file.subarray(65);
      const hash = new TextDecoder().decode(file.subarray(0, 64));
      return sha256Hex(bytes) === hash ? bytes : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Count and total bytes of the well-formed object files
   * (`objects/sha256-<64 hex>.txt`, regular files, links not counted), and
   * the store's problem when it has one (`{ objects, bytes, problem: { path,
   * what, fix } }`; objects are still counted when it is safe to look, e.g.
   * in a read-only store). Read-only: creates nothing; a store that does not
   * exist gives `{ objects: 0, bytes: 0 }`. Objects are not verified here.
   *
   * @example
   * ```ts
   * import { FsObjectStore } from "@readcache/core/fs";
   * await FsObjectStore.forCwd("/nonexistent").stats(); // { objects: 0, bytes: 0, problem: {...} }
   * ```
   */
  async stats(): Promise<StoreStats> {
    const check = await this.#check(false);
    const problem = this.#problem ?? check.problem;
    const withProblem = (objects: number, bytes: number): StoreStats =>
      problem === undefined ? { objects, bytes } : { objects, bytes, problem };
    if (check.unsafe) return withProblem(0, 0);
    let names: string[];
    try {
      names = await readdir(this.#objectsDir);
    } catch (e) {
      if (codeOf(e) === "ENOENT" || problem !== undefined) return withProblem(0, 0);
      return {
        objects: 0,
        bytes: 0,
        problem: {
          path: this.#objectsDir,
          what: `cannot be listed (${codeOf(e) ?? describe(e)})`,
          fix: `Make it readable for you (chmod u+rx ${this.#objectsDir}). ${STILL_WORKS}`,
        },
      };
    }
    const sizes = await Promise.all(
      names.filter((n) => OBJECT_NAME.test(n)).map(async (n): Promise<number | undefined> => {
        try {
          const s = await lstat(join(this.#objectsDir, n));
          return s.isFile() ? s.size : undefined;
        } catch {
          return undefined; // removed meanwhile
        }
      }),
    );
    let objects = 0;
    let bytes = 0;
    for (const size of sizes) {
      if (size === undefined) continue;
      objects++;
      bytes += size;
    }
    return withProblem(objects, bytes);
  }

  /**
   * Checks every directory from the project root down with `lstat`. With
   * `create`, missing ones are created (0700, one level at a time, checked
   * again); without it, the first missing one is reported and nothing below
   * it is looked at.
   */
  async #check(create: boolean): Promise<Check> {
    const uid = currentUid();
    for (const c of this.#chain) {
      let st = lstatOrCode(c.path);
      let created = false;
      if (st === "ENOENT") {
        if (c.project) {
          return {
            unsafe: true,
            problem: {
              path: c.path,
              what: "does not exist",
              fix: `Start pi in an existing project directory. ${STILL_WORKS}`,
            },
          };
        }
        if (!create) return { missing: c.path };
        try {
          await mkdir(c.path, { mode: 0o700 }); // one level, never through a link
          created = true;
        } catch (e) {
          if (codeOf(e) !== "EEXIST") {
            return {
              problem: {
                path: c.path,
                what: `could not be created (${describe(e)})`,
                fix: `Check that ${
                  dirname(c.path)
                } is a directory you can write to. ${STILL_WORKS}`,
              },
            };
          }
        }
        st = lstatOrCode(c.path);
      }
      if (typeof st === "string") {
        return {
          unsafe: true,
          problem: {
            path: c.path,
            what: `cannot be checked (${st})`,
            fix: `Check the permissions of ${dirname(c.path)}. ${STILL_WORKS}`,
          },
        };
      }
      const unsafe = await this.#unsafe(c, st, uid);
      if (unsafe !== undefined) return { unsafe: true, problem: unsafe };
      if (created) await makePrivateDir(c.path, st);
      // Writable from the mode bits: the directory is ours (checked above), so the owner
      // bits apply; root is not stopped by them. (Not access(): in Deno it needs --allow-sys.)
      // A read-only file system or an ACL shows up at write time instead.
      if (c.written && uid !== undefined && uid !== 0 && (st.mode & 0o300) !== 0o300) {
        return { problem: this.#notWritable(c.path, undefined, st) };
      }
    }
    return {};
  }

  /** The problem of a directory that must not be used at all, if any. */
  async #unsafe(
    c: Component,
    st: Stats,
    uid: number | undefined,
  ): Promise<StoreProblem | undefined> {
    if (st.isSymbolicLink()) {
      const to = await readlink(c.path).catch(() => undefined);
      const what = `is a symbolic link${to === undefined ? "" : ` (to ${to})`}; ` +
        "the read cache never writes through a link";
      if (c.project) {
        const real = await realpath(c.path).catch(() => undefined);
        return {
          path: c.path,
          what,
          fix: `Start pi from the real directory${
            real === undefined ? "" : ` (${real})`
          }. ${STILL_WORKS}`,
        };
      }
      return {
        path: c.path,
        what,
        fix:
          `Remove the link (rm ${c.path}); the read cache then creates a private directory there. ` +
          STILL_WORKS,
      };
    }
    if (!st.isDirectory()) {
      return {
        path: c.path,
        what: `is ${kindOf(st)}, not a directory`,
        fix: c.project
          ? `Start pi in a project directory. ${STILL_WORKS}`
          : `Move or delete ${c.path}; the read cache keeps its copies in a directory there. ${STILL_WORKS}`,
      };
    }
    if (uid !== undefined && st.uid !== uid) {
      return {
        path: c.path,
        what: `belongs to another user (uid ${st.uid}; you are uid ${uid})`,
        fix: c.project
          ? `The read cache only writes into directories you own: start pi in a project of yours, or as its owner. ${STILL_WORKS}`
          : `The read cache only writes into directories you own: remove ${c.path}, or run pi as its owner. ${STILL_WORKS}`,
      };
    }
    return undefined;
  }

  /** The problem of a store directory that refuses writes (`e`: the refused write, if any). */
  #notWritable(at: string, e?: unknown, st?: Stats): StoreProblem {
    const dir = at.startsWith(this.#tmpDir)
      ? this.#tmpDir
      : at.startsWith(this.#objectsDir)
      ? this.#objectsDir
      : at;
    if (codeOf(e) === "EROFS") {
      return {
        path: dir,
        what: "is on a read-only file system",
        fix: `To cache reads on disk, start pi in a writable checkout. ${STILL_WORKS}`,
      };
    }
    const why = [
      ...(e === undefined ? [] : [codeOf(e) ?? describe(e)]),
      ...(st === undefined ? [] : [`mode ${(st.mode & 0o777).toString(8).padStart(4, "0")}`]),
    ].join(", ");
    return {
      path: dir,
      what: `is read-only for you${why === "" ? "" : ` (${why})`}`,
      fix:
        `To cache reads on disk again, make it writable (chmod u+w ${dir}) or delete ${this.root}. ` +
        STILL_WORKS,
    };
  }

  /**
   * Writes `.gitignore` and `.ignore` (`*`) at the store root where they are
   * missing; never overwrites, never follows a link.
   */
  async #writeIgnoreFiles(): Promise<void> {
    const limit = fileSizeLimit();
    if (limit !== undefined && limit < 2) return;
    for (const name of [".gitignore", ".ignore"]) {
      let fh: FileHandle | undefined;
      const seen = xfszSeen;
      try {
        fh = await open(
          join(dirname(this.#objectsDir), name),
          constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW,
          0o600,
        );
        await fh.writeFile("*\n");
      } catch (e) {
        if (codeOf(e) === "EFBIG") await settleSigxfsz(seen);
        // EEXIST: the user's own file is kept; anything else: it is only a convenience
      } finally {
        await fh?.close().catch(() => {});
      }
    }
  }

  /** Removes our temporary files older than an hour (interrupted writes). Best-effort. */
  async #removeStaleTmp(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.#tmpDir);
    } catch {
      return;
    }
    const now = Date.now();
    for (const name of names) {
      if (!TMP_NAME.test(name)) continue;
      const path = join(this.#tmpDir, name);
      try {
        const st = await lstat(path);
        // unlink removes a name, never a link's target
        if (st.isFile() && now - st.mtimeMs > STALE_TMP_MS) await unlink(path);
      } catch {
        // gone meanwhile, or not ours to remove
      }
    }
  }
}
