/**
 * The thin shell around the pure decision: resolve the request, read the file
 * once, sync the branch knowledge, look up the base, decide, persist. Shared by
 * the session simulator and the pi adapter.
 *
 * Specified by SPEC.md §7, §13.1, §13.2.
 *
 * @module
 */
import { WalkIdentities } from "./walk_identities.ts";
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  realpathSync,
  type Stats,
  statSync,
} from "node:fs";
import { open } from "node:fs/promises";
import { sep } from "node:path";
import {
  decidePlan,
  type DecisionConfig,
  DEFAULT_DECISION_CONFIG,
  partialNeedsOf,
  planRead,
  type ReadDecision,
  type ReadPlan,
} from "../core/decision.ts";
import { FileReadError } from "../core/errors.ts";
import type { BranchKnowledge, PendingEdit } from "../core/knowledge.ts";
import type { ObjectStore } from "../core/object_store.ts";
import { sha256Hex } from "../core/hash.ts";
import { resolveToCwd } from "../core/path.ts";
import { canonicalPathKey } from "../core/path_key.ts";
import type { ReadCacheEditMetaV1, ReadCacheInvalidationV1 } from "../core/meta.ts";
import { editCallArgs, planEditMeta } from "../core/edit.ts";
import { newestViewsOf, TO_END } from "../core/view.ts";
import { isSensitivePath } from "../core/sensitive.ts";
import { countLines, type ReadRequest, type ReadTarget, resolveReadTarget } from "../core/range.ts";
import { invalidationRecord, invalidationScope } from "../core/refresh.ts";
import type { ScopeKey } from "../core/scope.ts";
import { type ReadCall, sameFile } from "../core/replay.ts";

/**
 * What {@linkcode serveRead} needs from its host.
 *
 * @example
 * ```ts ignore
 * const deps: ReadServiceDeps = { cwd: "/w", home: "/home/me", store };
 * ```
 */
export interface ReadServiceDeps {
  /** Working directory. */
  cwd: string;
  /** Home directory for `~`. */
  home: string;
  /** Object store for diff bases. */
  store: ObjectStore;
  /**
   * Where bases of files outside the project are kept (this process only),
   * unless `config.persistOutsideProject`; without it they are not kept.
   */
  volatileStore?: ObjectStore;
  /** Decision tunables. */
  config?: Partial<DecisionConfig>;
}

/**
 * A served read: the decision plus what was resolved on the way.
 *
 * @example
 * ```ts ignore
 * const served: ServedRead = await serveRead({ path: "a.ts" }, knowledge, deps);
 * ```
 */
export interface ServedRead {
  /** The resolved request. */
  target: ReadTarget;
  /** Canonical identity of the file. */
  pathKey: string;
  /** The resolved call: the name the model used, the identity, offset and limit. */
  call: ReadCall;
  /** Set when the file is an image: the host's own read tool must serve it. */
  imageMimeType?: string;
  /**
   * Set when the host's own read must serve the request and nothing is
   * cached: an image, a file that is not a regular file (FIFO, device,
   * socket), or a file over `maxFileBytes` (SPEC §13.1).
   */
  delegate?: "image" | "not_a_regular_file" | "too_large";
  /** The decision (for images: a plain placeholder decision). */
  decision: ReadDecision;
}

/** Detects the image types pi's read tool attaches (by magic bytes). */
export function detectImageMimeType(bytes: Uint8Array): string | undefined {
  const starts = (...sig: number[]) => sig.every((b, i) => bytes[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x47, 0x49, 0x46, 0x38)) return "image/gif";
  if (
    starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 &&
    bytes[10] === 0x42 && bytes[11] === 0x50
  ) {
    return "image/webp";
  }
  return undefined;
}

/**
 * The realpath of `p`, or `undefined` when it does not exist or cannot be
 * resolved (the injected `realpath` of `canonicalPathKey` on a real disk).
 *
 * @example
 * ```ts
 * import { realpathOrUndefined } from "@readcache/core/service";
 * realpathOrUndefined("/definitely/not/here"); // undefined
 * ```
 */
export function realpathOrUndefined(p: string): string | undefined {
  try {
    // the native realpath(3): one call instead of an lstat per path component
    return realpathSync.native(p);
  } catch {
    return undefined;
  }
}

/**
 * The canonical identity (`pathKey`, SPEC §3.2) of a resolved path on the real
 * file system: its realpath when it exists, else the path itself. The pure
 * `canonicalPathKey` takes the realpath function; this one brings it.
 *
 * @example
 * ```ts
 * import { pathKeyOnDisk } from "@readcache/core/service";
 * pathKeyOnDisk("/definitely/not/here"); // "/definitely/not/here"
 * ```
 */
export function pathKeyOnDisk(resolvedPath: string): string {
  return canonicalPathKey(resolvedPath, realpathOrUndefined);
}

/** A base that cannot be loaded (missing, corrupt, or a failing store) is no base. */
async function loadBase(
  stores: readonly ObjectStore[],
  hash: string,
): Promise<Uint8Array | undefined> {
  for (const store of stores) {
    try {
      const bytes = await store.get(hash);
      if (bytes !== undefined) return bytes;
    } catch {
      // next store
    }
  }
  return undefined;
}

/**
 * The decision for a read plan, with the stored contents it asks for loaded
 * from `stores` (the first that has each; a store that fails counts as not
 * having it): the bases first; when the answer would then be plain, also the
 * contents a partial answer compares lines with (SPEC §8.4), and the
 * decision again. Throws pi's abort error when `signal` fires between loads.
 *
 * @example
 * ```ts ignore
 * const decision = await decideWithStores(planRead({ ... }), [store]);
 * ```
 */
export async function decideWithStores(
  plan: ReadPlan,
  stores: readonly ObjectStore[],
  signal?: AbortSignal,
): Promise<ReadDecision> {
  const objects = new Map<string, Uint8Array | undefined>();
  for (const hash of plan.needs) objects.set(hash, await loadBase(stores, hash));
  if (signal?.aborted) throw abortError();
  const decision = decidePlan(plan, objects);
  if (decision.mode !== "full" && decision.mode !== "baseline_fallback") return decision;
  // a plain read: the contents a partial answer compares lines with, then decide again
  const more = partialNeedsOf(plan).filter((hash) => !objects.has(hash));
  if (more.length === 0) return decision;
  for (const hash of more) objects.set(hash, await loadBase(stores, hash));
  if (signal?.aborted) throw abortError();
  return decidePlan(plan, objects);
}

/** Thrown when the abort signal of a read fires; pi's message. */
function abortError(): Error {
  return new Error("Operation aborted");
}

/**
 * Reads a file for caching, never blocking on its contents (SPEC §13.1): it
 * is opened non-blocking (a FIFO opens at once), must be a regular file by
 * `fstat` of the opened descriptor, and at most `cap` bytes are read even if
 * the file grows meanwhile. Checks `signal` between chunks.
 *
 * @example
 * ```ts ignore
 * const r = await readRegularFile("/w/a.ts", 8 << 20);
 * if (r.kind === "ok") r.bytes;
 * ```
 */
export async function readRegularFile(
  path: string,
  cap: number,
  signal?: AbortSignal,
): Promise<RegularFileRead> {
  const fh = await open(path, READ_FLAGS);
  try {
    const st = await fh.stat();
    const chunks = new ChunkedRead(st, cap);
    while (chunks.want > 0) {
      if (signal?.aborted) throw abortError();
      const buf = new Uint8Array(chunks.want);
      chunks.took(buf, (await fh.read(buf, 0, buf.length, chunks.total)).bytesRead);
    }
    return chunks.result();
  } finally {
    await fh.close().catch(() => {});
  }
}

/**
 * {@linkcode readRegularFile} without waiting on the event loop: for a host
 * whose hook runs in the agent's own process, where every wait lets the
 * agent's other work run first (the OpenCode plugin).
 *
 * @example
 * ```ts ignore
 * const r = readRegularFileSync("/w/a.ts", 8 << 20);
 * if (r.kind === "ok") r.bytes;
 * ```
 */
export function readRegularFileSync(path: string, cap: number): RegularFileRead {
  const fd = openSync(path, READ_FLAGS);
  try {
    const chunks = new ChunkedRead(fstatSync(fd), cap);
    while (chunks.want > 0) {
      const buf = new Uint8Array(chunks.want);
      chunks.took(buf, readSync(fd, buf, 0, buf.length, chunks.total));
    }
    return chunks.result();
  } finally {
    try {
      closeSync(fd);
    } catch { /* closed */ }
  }
}

/**
 * What {@linkcode readRegularFile} gives.
 *
 * @example
 * ```ts
 * import type { RegularFileRead } from "@readcache/core/service";
 * const r: RegularFileRead = { kind: "too_large" };
 * ```
 */
export type RegularFileRead =
  | { kind: "ok"; bytes: Uint8Array }
  | { kind: "not_a_regular_file" }
  | { kind: "too_large" };

/** Non-blocking (a FIFO opens at once), no controlling terminal. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * The reads of one file, by `fstat` of the opened descriptor: none unless a
 * regular file of at most `cap` bytes; then the size it reported plus one
 * byte (to see the end), or 16 KB more once past it, at most `cap` in all.
 */
class ChunkedRead {
  total = 0;
  #chunks: Uint8Array[] = [];
  #outcome: RegularFileRead | undefined;
  constructor(readonly st: Pick<Stats, "size" | "isFile">, readonly cap: number) {
    if (!st.isFile()) this.#outcome = { kind: "not_a_regular_file" };
    else if (st.size > cap) this.#outcome = { kind: "too_large" };
  }
  /** Bytes to read next; 0 when done. */
  get want(): number {
    if (this.#outcome !== undefined) return 0;
    const want = Math.min(
      Math.max(this.st.size - this.total + 1, 16 * 1024),
      this.cap + 1 - this.total,
    );
    if (want <= 0) this.#outcome = { kind: "too_large" };
    return Math.max(want, 0);
  }
  took(buf: Uint8Array, bytesRead: number): void {
    const want = buf.length;
    if (bytesRead === 0) return void (this.#outcome = this.#joined());
    this.#chunks.push(buf.subarray(0, bytesRead));
    this.total += bytesRead;
    if (this.total > this.cap) return void (this.#outcome = { kind: "too_large" });
    // a short read past the reported size is the end of a regular file: no extra read
    if (bytesRead < want && this.total >= this.st.size) this.#outcome = this.#joined();
  }
  result(): RegularFileRead {
    return this.#outcome ?? this.#joined();
  }
  #joined(): RegularFileRead {
    if (this.#chunks.length === 1) return { kind: "ok", bytes: this.#chunks[0] };
    const bytes = new Uint8Array(this.total);
    let at = 0;
    for (const c of this.#chunks) {
      bytes.set(c, at);
      at += c.length;
    }
    return { kind: "ok", bytes };
  }
}

/** True when `pathKey` lies inside the project directory `cwd` (both canonical). */
export function isInsideProject(pathKey: string, cwd: string): boolean {
  return isAtOrUnder(pathKey, realpathOrUndefined(cwd) ?? cwd);
}

/**
 * True when `path` is `dir` or a path under it (absolute paths, compared as
 * text: nothing is resolved).
 *
 * @example
 * ```ts
 * import { isAtOrUnder } from "@readcache/core/service";
 * isAtOrUnder("/w/src/a.ts", "/w"); // true
 * isAtOrUnder("/wx/a.ts", "/w"); // false
 * ```
 */
export function isAtOrUnder(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/**
 * Where a read request points on disk: the resolved target (pi's path rules and
 * `path:N-M` shorthand, checked against the real file system) and the file's
 * canonical identity. Touches no file content.
 *
 * @example
 * ```ts
 * import { locateRead } from "@readcache/core/service";
 * locateRead({ path: "/tmp/x.txt" }, { cwd: "/", home: "/root" }).target.resolvedPath; // "/tmp/x.txt"
 * ```
 */
export function locateRead(
  req: ReadRequest,
  deps: Pick<ReadServiceDeps, "cwd" | "home">,
  realpathOf: (path: string) => string | undefined = realpathOrUndefined,
): { target: ReadTarget; pathKey: string } {
  // one realpath per path tried: it answers both "does it exist" and "what is its identity"
  const real = new Map<string, string | undefined>();
  const realpath = (p: string): string | undefined => {
    if (!real.has(p)) real.set(p, realpathOf(p));
    return real.get(p);
  };
  const env = { cwd: deps.cwd, home: deps.home, exists: (p: string) => realpath(p) !== undefined };
  const target = resolveReadTarget(req, env);
  return { target, pathKey: canonicalPathKey(target.resolvedPath, realpath) };
}

/**
 * Resolves the arguments of a `read` tool call into a {@linkcode ReadCall}
 * (name, identity, offset, limit) against the real file system, or
 * `undefined` when they do not resolve (bad range, not a string path).
 *
 * @example
 * ```ts
 * import { resolveCall } from "@readcache/core/service";
 * resolveCall({ path: "/tmp/x.txt", offset: 2 }, { cwd: "/", home: "/root" });
 * // { name: "/tmp/x.txt", pathKey: "/tmp/x.txt", offset: 2 }
 * ```
 */
export function resolveCall(
  args: unknown,
  deps: Pick<ReadServiceDeps, "cwd" | "home">,
  realpathOf: (path: string) => string | undefined = realpathOrUndefined,
): ReadCall | undefined {
  const a = argsRecord(args);
  if (typeof a.path !== "string" || a.path === "") return undefined;
  const num = (v: unknown) => typeof v === "number" ? v : undefined;
  try {
    const { target, pathKey } = locateRead(
      { path: a.path, offset: num(a.offset), limit: num(a.limit) },
      deps,
      realpathOf,
    );
    return callOf(target, pathKey);
  } catch {
    return undefined;
  }
}

/**
 * Resolves the arguments of a `write` tool call into the file it wrote and
 * the hash of what it wrote (SPEC §5.8): the path as pi's `write` resolves it
 * (`~` and `@` expanded, relative to `cwd`, no `path:N-M` shorthand) and the
 * SHA-256 of the UTF-8 bytes of `content`. `undefined` when the arguments are
 * not a path and a string content, or when the content is not well-formed
 * Unicode (its bytes would not be the text the model sent).
 *
 * @example
 * ```ts
 * import { resolveWriteCall } from "@readcache/core/service";
 * resolveWriteCall({ path: "/tmp/new.txt", content: "hi\n" }, { cwd: "/", home: "/root" })?.call;
 * // { name: "/tmp/new.txt", pathKey: "/tmp/new.txt" }
 * ```
 */
export function resolveWriteCall(
  args: unknown,
  deps: Pick<ReadServiceDeps, "cwd" | "home">,
  realpathOf: (path: string) => string | undefined = realpathOrUndefined,
): { call: ReadCall; hash: string; totalLines: number; bytes: number } | undefined {
  const a = argsRecord(args);
  if (typeof a.content !== "string" || !a.content.isWellFormed()) return undefined;
  const call = resolveWriteTarget(args, deps, realpathOf);
  if (call === undefined) return undefined;
  const bytes = new TextEncoder().encode(a.content).length;
  return { call, hash: sha256Hex(a.content), totalLines: countLines(a.content), bytes };
}

/**
 * The file a call of a file-changing tool (`write`, `edit`) targets: its
 * `path` argument resolved as pi's write and edit tools resolve it (`~` and
 * `@` expanded, relative to `cwd`, no `path:N-M` shorthand); `undefined`
 * without a path.
 *
 * @example
 * ```ts
 * import { resolveWriteTarget } from "@readcache/core/service";
 * resolveWriteTarget({ path: "/tmp/a.txt" }, { cwd: "/", home: "/root" });
 * // { name: "/tmp/a.txt", pathKey: "/tmp/a.txt" }
 * ```
 */
export function resolveWriteTarget(
  args: unknown,
  deps: Pick<ReadServiceDeps, "cwd" | "home">,
  realpathOf: (path: string) => string | undefined = realpathOrUndefined,
): ReadCall | undefined {
  const a = argsRecord(args);
  if (typeof a.path !== "string" || a.path === "") return undefined;
  const name = resolveToCwd(a.path, { cwd: deps.cwd, home: deps.home, exists: () => false });
  return { name, pathKey: canonicalPathKey(name, realpathOf) };
}

/**
 * The resolvers a session converter needs (SPEC §5.6, §5.8), against the real
 * file system: read calls ({@linkcode resolveCall}), write calls
 * ({@linkcode resolveWriteCall}) and the file any file-changing call targets
 * ({@linkcode resolveWriteTarget}). Pass it to the pi adapter's
 * `PiBranchConverter`, which calls `walk()` as each walk of a session starts:
 * within a walk, the identities of files in a directory it asks many files
 * of come from one listing of it ({@linkcode WalkIdentities}).
 *
 * @example
 * ```ts
 * import { callResolvers } from "@readcache/core/service";
 * callResolvers({ cwd: "/", home: "/root" }).target({ path: "/tmp/a.txt" });
 * // { name: "/tmp/a.txt", pathKey: "/tmp/a.txt" }
 * ```
 */
export function callResolvers(deps: Pick<ReadServiceDeps, "cwd" | "home">): {
  read: (args: unknown) => ReadCall | undefined;
  write: (
    args: unknown,
  ) => { call: ReadCall; hash: string; totalLines: number; bytes: number } | undefined;
  target: (args: unknown) => ReadCall | undefined;
  walk: () => void;
} {
  // identities directory by directory within one walk (files change between walks)
  let ids = new WalkIdentities(realpathOrUndefined);
  const realpath = (p: string) => ids.realpath(p);
  return {
    read: (args) => resolveCall(args, deps, realpath),
    write: (args) => resolveWriteCall(args, deps, realpath),
    target: (args) => resolveWriteTarget(args, deps, realpath),
    walk: () => void (ids = new WalkIdentities(realpathOrUndefined)),
  };
}

/**
 * True when a file-changing call of the current turn that has not returned
 * yet (`pending`, from `BranchKnowledge.pendingChanges`) targets the file of
 * `call` (SPEC §5.8): the model's newest view of that file is then its own
 * pending change, which no cached answer may assume either way. Matches by
 * name or identity, the pending target's identity taken again now (the file
 * may not have existed when the call was seen).
 *
 * @example
 * ```ts
 * import { writeInFlight } from "@readcache/core/service";
 * writeInFlight({ name: "/w/a", pathKey: "/w/a" }, [{ name: "/w/a", pathKey: "/w/a" }]); // true
 * ```
 */
export function writeInFlight(call: ReadCall, pending: readonly ReadCall[]): boolean {
  if (pending.length === 0) return false; // every read asks: the usual answer without a Set
  const ids = new Set([call.name, call.pathKey]);
  return pending.some((w) =>
    ids.has(w.name) || ids.has(w.pathKey) || ids.has(realpathOrUndefined(w.name) ?? w.name)
  );
}

/** Tool-call arguments as a record (`{}` when they are not an object). */
function argsRecord(args: unknown): Record<string, unknown> {
  return typeof args === "object" && args !== null ? args as Record<string, unknown> : {};
}

function callOf(target: ReadTarget, pathKey: string): ReadCall {
  const call: ReadCall = { name: target.resolvedPath, pathKey };
  if (target.offset !== undefined) call.offset = target.offset;
  if (target.limit !== undefined) call.limit = target.limit;
  return call;
}

/**
 * Serves one read: resolution, one read of the bytes, knowledge lookup, base
 * lookup in the store, the pure decision, then persisting the served content
 * (a store that fails to read or write does not fail the read: a base that
 * cannot be loaded gives the baseline, `baseline_fallback`). The caller records the
 * result (persist it in the session or add it to the in-flight overlay).
 * Errors for missing files and bad ranges propagate, like pi's read.
 *
 * @example
 * ```ts ignore
 * const { decision } = await serveRead({ path: "src/a.ts" }, knowledge, deps);
 * ```
 */
export async function serveRead(
  req: ReadRequest & { bypass_cache?: boolean },
  knowledge: BranchKnowledge,
  deps: ReadServiceDeps,
  signal?: AbortSignal,
): Promise<ServedRead> {
  const { target, pathKey } = locateRead(req, deps);
  const call = callOf(target, pathKey);
  const cfg: DecisionConfig = { ...DEFAULT_DECISION_CONFIG, ...deps.config };
  const delegated = (
    delegate: NonNullable<ServedRead["delegate"]>,
    imageMimeType?: string,
  ): ServedRead => ({
    target,
    pathKey,
    call,
    delegate,
    ...(imageMimeType === undefined ? {} : { imageMimeType }),
    decision: {
      mode: null,
      text: imageMimeType === undefined
        ? `[not cached: ${delegate.replaceAll("_", " ")}]`
        : `Read image file [${imageMimeType}]`,
      details: {},
      reason: "binary",
    },
  });
  // one read of the bytes without waiting on the event loop (SPEC §13.1: it never blocks on a
  // FIFO or device either): a wait for the thread pool costs more than reading a source file
  const read = readRegularFileSync(target.resolvedPath, cfg.maxFileBytes);
  if (signal?.aborted) throw abortError();
  if (read.kind !== "ok") return delegated(read.kind);
  const bytes = read.bytes;
  const image = detectImageMimeType(bytes);
  if (image) return delegated("image", image);
  const plan = planRead({
    displayPath: target.displayPath,
    pathKey,
    offset: target.offset,
    limit: target.limit,
    bytes,
    knowledge: knowledge.file(pathKey, call.name),
    // a change of this file pending in the same turn: serve it in full, like bypass_cache
    // so is a read while a call that may change any file (a shell command) runs (SPEC §5.10)
    bypass: req.bypass_cache === true || knowledge.opaqueInFlight() ||
      writeInFlight(call, knowledge.pendingChanges()),
    config: deps.config,
  });
  const stores = storesFor(pathKey, deps, cfg);
  const decision = await decideWithStores(plan, stores, signal);
  // An answer whose content IS its base (unchanged, same hash) was stored when the base was
  // served, unless the base is what the model wrote (SPEC §5.8): one cheap existence check,
  // no write and no directory checks on the warm path.
  const alreadyStored = decision.reason === "hash_match" && decision.store !== undefined &&
    stores.length > 0 && await knownStored(stores[0], decision.store.hash);
  if (decision.store && stores.length > 0 && !alreadyStored) {
    try {
      await stores[0].put(decision.store.hash, decision.store.bytes);
    } catch {
      // supporting data only: a later diff against it falls back to the baseline
    }
  }
  return { target, pathKey, call, decision };
}

/**
 * Where contents of a file are kept (SPEC §13.2): the object store and the
 * volatile one for a file inside the project (or with `persistOutsideProject`),
 * else the volatile one only. The first is where new contents go.
 */
function storesFor(pathKey: string, deps: ReadServiceDeps, cfg: DecisionConfig): ObjectStore[] {
  const inside = cfg.persistOutsideProject || isInsideProject(pathKey, deps.cwd);
  return inside
    ? [deps.store, ...(deps.volatileStore ? [deps.volatileStore] : [])]
    : (deps.volatileStore ? [deps.volatileStore] : []);
}

/**
 * The model's belief after an `edit` call it is about to make (SPEC §5.9),
 * as the metadata its successful result carries: taken from the model's
 * newest view of the file (replay and in-flight reads in `knowledge`), whose
 * content is loaded from the store, with the replacements applied as pi's
 * exact match applies them. The believed content is stored, so a later
 * change of the file can be a diff against it. `undefined` when the belief
 * is not determined (then the result carries no metadata and the file
 * becomes unknown). Call it before the edit runs; replay checks the
 * metadata again where the result lands.
 *
 * @example
 * ```ts ignore
 * const meta = await planEdit({ path: "a.ts", edits: [{ oldText: "x", newText: "y" }] }, knowledge, deps);
 * ```
 */
export async function planEdit(
  args: unknown,
  knowledge: BranchKnowledge,
  deps: ReadServiceDeps,
  message?: EditInMessage,
): Promise<ReadCacheEditMetaV1 | undefined> {
  const parsed = editCallArgs(args);
  if (parsed === undefined) return undefined;
  const call = resolveWriteTarget({ path: parsed.path }, deps);
  if (call === undefined) return undefined;
  const cfg: DecisionConfig = { ...DEFAULT_DECISION_CONFIG, ...deps.config };
  const pending = pendingEditsBefore(knowledge, call, message);
  if (pending === undefined) return undefined;
  const { keyViews, nameViews } = knowledge.file(call.pathKey, call.name, pending);
  if (isSensitivePath(call.pathKey, cfg.sensitivePatterns)) return undefined;
  const newest = keyViews.findLast((v) => v.hash !== null)?.hash;
  if (newest == null) return undefined;
  const stores = storesFor(call.pathKey, deps, cfg);
  // the store, else the file itself when it still holds that content (what the model wrote)
  let bytes = await loadBase(stores, newest);
  if (bytes === undefined) {
    const now = await readRegularFile(call.name, cfg.maxFileBytes).catch(() => undefined);
    if (now?.kind === "ok" && sha256Hex(now.bytes) === newest) bytes = now.bytes;
  }
  const text = strictText(bytes);
  if (text === undefined) return undefined;
  // the contents the newest views show under the identity and the name (loaded from the store;
  // at most 16, else no belief):
  // lines the model holds as another content may still be the base's (SPEC §5.9 rule 3)
  const hashes = new Set(
    [...newestViewsOf(keyViews, 1, TO_END), ...newestViewsOf(nameViews, 1, TO_END)]
      .flatMap((v) => v.hash === null ? [] : [v.hash]),
  );
  if (hashes.size > 16) return undefined;
  const contents = new Map<string, string[] | undefined>([[newest, text.split("\n")]]);
  for (const h of hashes) {
    if (contents.has(h)) continue;
    contents.set(h, strictText(await loadBase(stores, h))?.split("\n"));
  }
  const plan = planEditMeta({
    pathKey: call.pathKey,
    base: { hash: newest, text },
    keyViews,
    nameViews,
    edits: parsed.edits,
    contents,
  });
  if (plan === undefined) return undefined;
  try {
    if (plan.text !== undefined) {
      await stores[0]?.put(plan.meta.servedHash, new TextEncoder().encode(plan.text));
    }
  } catch {
    // supporting data only: a later diff against the belief falls back to the baseline
  }
  return plan.meta;
}

/**
 * Where an edit call sits in its assistant message: its call id, and the
 * beliefs planned for the message's earlier edit calls (by call id).
 *
 * @example
 * ```ts ignore
 * const m: EditInMessage = { callId: "call-2", planned: (id) => beliefs.get(id) };
 * ```
 */
export interface EditInMessage {
  /** The tool call id of the edit being planned. */
  callId: string;
  /** The belief planned for an earlier call of the same message, if any. */
  planned: (callId: string) => ReadCacheEditMetaV1 | undefined;
}

/**
 * The earlier calls of the same message that change the file of `call` and
 * have no result on the branch yet, as beliefs to apply first (SPEC §5.9 rule
 * 4: edits of one file in one message apply in call order); `undefined` when
 * one of them is a write or an edit without a belief (then there is none for
 * this edit either). Calls with a result are in the replay already.
 */
function pendingEditsBefore(
  knowledge: BranchKnowledge,
  call: ReadCall,
  message: EditInMessage | undefined,
): PendingEdit[] | undefined {
  if (message === undefined) return [];
  const changes = knowledge.turnChanges();
  const at = changes.findIndex((c) => c.callId === message.callId);
  const out: PendingEdit[] = [];
  // the calls before this one in call order apply first (none when it is not in the message);
  // replay judges the later ones when their results come
  for (const c of changes.slice(0, Math.max(at, 0))) {
    if (!sameFile(c.call, call) || c.answered) continue;
    const meta = c.tool === "edit" ? message.planned(c.callId) : undefined;
    if (meta === undefined) return undefined;
    out.push({ call: c.call, meta });
  }
  return out;
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The text of stored bytes, `undefined` when there are none or they are not UTF-8. */
function strictText(bytes: Uint8Array | undefined): string | undefined {
  if (bytes === undefined) return undefined;
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Hashes each store held when last asked (this process): `has` once per content, not per read. */
const storedMemo = new WeakMap<ObjectStore, Set<string>>();

async function knownStored(store: ObjectStore, hash: string): Promise<boolean> {
  let known = storedMemo.get(store);
  if (known === undefined) storedMemo.set(store, known = new Set());
  if (known.has(hash)) return true;
  if (!(await store.has?.(hash) ?? false)) return false;
  if (known.size >= 100_000) known.clear();
  known.add(hash);
  return true;
}

/**
 * Refreshing forgets what the model was shown of a file: there must be one. A missing path
 * (`FILE_NOT_FOUND`) or a directory (`NOT_A_FILE`) is a typed error, so nothing is recorded; any
 * other path can be refreshed, even one the user cannot read (its status, when it has one).
 */
function refreshable(resolved: string, typed: string): Stats | undefined {
  let st: Stats;
  try {
    st = statSync(resolved);
  } catch (e) {
    const code = (e as { code?: unknown })?.code;
    if (code !== "ENOENT" && code !== "ENOTDIR") return undefined;
    throw new FileReadError(
      "FILE_NOT_FOUND",
      resolved,
      `Nothing to refresh: ${typed} does not exist (no such file); check the path.`,
      e,
    );
  }
  if (st.isDirectory()) {
    throw new FileReadError(
      "NOT_A_FILE",
      resolved,
      `Nothing to refresh: ${typed} is a directory; name a file inside it.`,
    );
  }
  return st;
}

/**
 * Resolves a refresh request (path plus optional range, as for a read) into
 * the persistent invalidation record (SPEC §11.2): same path resolution and
 * shorthand as a read, canonical path key, and for a range the scope the
 * model was SHOWN by the latest read with the same offset/limit on this branch
 * (a truncated read shows fewer lines than it asked for; the file may have
 * changed since), else the scope a read of that range would record now (the
 * file is read to count its lines). Reads only; writes nothing.
 *
 * @example
 * ```ts ignore
 * const inv = resolveInvalidation({ path: "a.txt", offset: 5, limit: 3 }, { cwd, home }, Date.now());
 * // { v: 1, kind: "invalidate", pathKey: "/w/a.txt", scopeKey: "r:5:7", at: ... }
 * ```
 */
export function resolveInvalidation(
  req: ReadRequest,
  deps: Pick<ReadServiceDeps, "cwd" | "home">,
  at: number,
  knowledge?: BranchKnowledge,
): ReadCacheInvalidationV1 {
  const { target, pathKey } = locateRead(req, deps);
  const ranged = target.offset !== undefined || target.limit !== undefined;
  const shown = ranged ? knowledge?.shownScope(pathKey, target.offset, target.limit) : undefined;
  return invalidationRecord(
    pathKey,
    refreshScope(target.resolvedPath, req.path, target.offset, target.limit, shown),
    at,
  );
}

/**
 * The scope a refresh records (SPEC §11.2), for any host: `shown` (the scope the latest read of
 * that range showed on the branch) when there is one, else the range normalised like a read of it
 * now, its lines counted on a regular file only (a FIFO or a device is never read). A missing path
 * or a directory is a typed error: there is nothing to refresh.
 *
 * @example
 * ```ts ignore
 * refreshScope("/w/a.txt", "a.txt", undefined, undefined, undefined); // "full"
 * ```
 */
export function refreshScope(
  resolvedPath: string,
  typedPath: string,
  offset: number | undefined,
  limit: number | undefined,
  shown: ScopeKey | undefined,
): ScopeKey {
  const file = refreshable(resolvedPath, typedPath);
  if (shown !== undefined) return shown;
  const ranged = offset !== undefined || limit !== undefined;
  const total = ranged && file?.isFile()
    ? countLines(readFileSync(resolvedPath, "utf8"))
    : undefined;
  return invalidationScope(offset, limit, total);
}
