/**
 * The one-call library API: a read cache for one working directory. Each
 * `read` resolves the request, reads the file once, decides (SPEC §7) against
 * what the model provably holds, stores the base and records the answer.
 *
 * Without a session of your own, the cache keeps a linear one in memory:
 * every answer is assumed to reach the model, and `forget()` stands for a
 * compaction (the model's context is gone). A host with a session tree passes
 * its active branch instead (`{ branch, callId }`) and persists the returned
 * `details.readcache` with the tool result.
 *
 * Specified by SPEC.md §7 (the one-call library API).
 *
 * @module
 */
import { statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { FileReadError, ReadCacheError, type ReadCacheErrorCode } from "../core/errors.ts";
import { FsObjectStore } from "../store/fs_object_store.ts";

/** The library's own store directory, under the project (SPEC §9). */
const LIBRARY_STORE_DIR = ".readcache";
import type { DecisionConfig } from "../core/decision.ts";
import { BranchKnowledge } from "../core/knowledge.ts";
import type { ReadCacheMetaV1, ReadMode } from "../core/meta.ts";
import { MemoryObjectStore, type ObjectStore } from "../core/object_store.ts";
import { planEdit, resolveWriteCall, resolveWriteTarget, serveRead } from "./read_service.ts";
import type { ReadCall, ReplayEntry } from "../core/replay.ts";
import type { EditReplacement } from "../core/edit.ts";
import type { TruncationResult } from "../core/truncate.ts";

/**
 * Options of {@linkcode createReadCache}.
 *
 * @example
 * ```ts
 * import type { ReadCacheOptions } from "@readcache/core";
 * const options: ReadCacheOptions = { cwd: "/work/project", store: "memory" };
 * ```
 */
export interface ReadCacheOptions {
  /** Working directory: relative paths resolve against it; bases are stored under it. */
  cwd: string;
  /** Home directory for `~`; default `os.homedir()`. */
  home?: string;
  /**
   * Where diff bases live: `"disk"` (default, `<cwd>/.readcache`: the
   * library's own, apart from the hosts' `.pi/`, `.opencode/` and `.claude/`
   * stores; SPEC §9), `"memory"` (this process only), or your own store
   * (`FsObjectStore.forCwd(cwd)` shares pi's).
   */
  store?: "disk" | "memory" | ObjectStore;
  /** Tunables (diff limits, sensitive patterns, size cap). */
  config?: Partial<DecisionConfig>;
}

/**
 * One read request: pi's `read` parameters plus `bypass_cache` (serve the
 * whole content again and re-anchor, SPEC §7.5), named as in pi's tool.
 *
 * @example
 * ```ts
 * import type { ReadCacheRequest } from "@readcache/core";
 * const req: ReadCacheRequest = { path: "src/app.ts:10-40" };
 * ```
 */
export interface ReadCacheRequest {
  /** Path as the model typed it (`@`, `~`, relative, `path:N-M` accepted). */
  path: string;
  /** First line, 1-based. */
  offset?: number;
  /** Number of lines. */
  limit?: number;
  /** Serve the whole content and re-anchor. */
  bypass_cache?: boolean;
}

/**
 * What a read answers: the text for the model (`kind: "answer"`), or a file
 * the cache does not take, which your own read must serve
 * (`kind: "delegate"`): it has no text, so it cannot be sent by mistake.
 *
 * @example
 * ```ts
 * import type { ReadCacheResult } from "@readcache/core";
 * function textFor(r: ReadCacheResult, ownRead: (path: string) => string): string {
 *   return r.kind === "answer" ? r.text : ownRead(r.path);
 * }
 * ```
 */
export type ReadCacheResult = ReadCacheAnswer | ReadCacheDelegation;

/**
 * The cache's answer: the exact text for the model and the metadata to
 * persist with the tool result.
 *
 * @example
 * ```ts
 * import type { ReadCacheAnswer } from "@readcache/core";
 * const r: ReadCacheAnswer = { kind: "answer", text: "[readcache: unchanged, 3 lines]",
 *   mode: "unchanged", details: {} };
 * ```
 */
export interface ReadCacheAnswer {
  /** Always `"answer"`. */
  kind: "answer";
  /** The text for the model. */
  text: string;
  /** How it was served; `null` for a plain read without readcache metadata. */
  mode: ReadMode | null;
  /** pi's `truncation` details when pi would set them, and the readcache metadata to persist. */
  details: { truncation?: TruncationResult; readcache?: ReadCacheMetaV1 };
}

/**
 * A file the cache does not take (SPEC §13.1): serve the request with your own
 * read. Nothing was stored, and the file's lines count as unknown to the
 * model until a read of the cache shows them.
 *
 * @example
 * ```ts
 * import type { ReadCacheDelegation } from "@readcache/core";
 * const r: ReadCacheDelegation = { kind: "delegate", reason: "image", path: "/w/logo.png",
 *   mode: null, mimeType: "image/png" };
 * ```
 */
export interface ReadCacheDelegation {
  /** Always `"delegate"`. */
  kind: "delegate";
  /**
   * Why: an image, not a regular file (a FIFO, socket or device), over the size cap, or binary
   * (bytes with a NUL or that are not UTF-8: the cache gives text only).
   */
  reason: "image" | "not_a_regular_file" | "too_large" | "binary";
  /** The resolved path to read. */
  path: string;
  /** Always `null`: the cache sent nothing. */
  mode: null;
  /** For an image, its type (`image/png`, `image/jpeg`, `image/gif`, `image/webp`). */
  mimeType?: string;
}

/**
 * Where a read happens: a host's active branch (root to leaf, SPEC §11.3)
 * and the tool call id of this read. Omit it to use the cache's own linear
 * session.
 *
 * @example
 * ```ts
 * import type { ReadCacheContext } from "@readcache/core";
 * const ctx: ReadCacheContext = { branch: [], callId: "call_1" };
 * ```
 */
export interface ReadCacheContext {
  /** The active branch of the host's session, root to leaf. */
  branch: readonly ReplayEntry[];
  /** Tool call id of this read (matches the result's entry when it is persisted). */
  callId?: string;
  /** Aborts the read (`Operation aborted`). */
  signal?: AbortSignal;
}

/**
 * A read cache for one working directory. Create it with
 * {@linkcode createReadCache}.
 *
 * @example
 * ```ts
 * import { createReadCache } from "@readcache/core";
 * const cache = createReadCache({ cwd: Deno.cwd(), store: "memory" });
 * cache.forget();
 * ```
 */
export class ReadCache {
  readonly #options: ReadCacheOptions;
  readonly #store: ObjectStore;
  readonly #volatile = new MemoryObjectStore();
  #knowledge = new BranchKnowledge();
  #own: ReplayEntry[] = [];
  #calls = 0;

  /** Use {@linkcode createReadCache}. */
  constructor(options: ReadCacheOptions) {
    this.#options = options;
    this.#store = options.store === "memory"
      ? new MemoryObjectStore()
      : options.store === undefined || options.store === "disk"
      ? new FsObjectStore(join(options.cwd, LIBRARY_STORE_DIR), { projectRoot: options.cwd })
      : options.store;
  }

  /**
   * Answers one read: the text for the model, or a delegation to your own
   * read (an image, a FIFO or device, a file over the size cap). Throws only
   * typed errors: `RangeSyntaxError` / `OffsetBeyondEndError` for bad ranges,
   * `ReadCacheError` `INVALID_ARGUMENT` / `INVALID_PATH` for a bad request, and
   * `FileReadError` (`FILE_NOT_FOUND`, `NOT_A_FILE` for a directory,
   * `PERMISSION_DENIED`, `LINK_LOOP`, `READ_FAILED`) with the system's error
   * as its cause, where pi's read fails too.
   */
  async read(req: ReadCacheRequest, ctx?: ReadCacheContext): Promise<ReadCacheResult> {
    if (typeof req?.path !== "string" || req.path === "") {
      throw new ReadCacheError(
        "INVALID_ARGUMENT",
        "path must be a non-empty string: the file to read, as the model typed it.",
      );
    }
    if (req.path.includes("\0")) {
      throw new ReadCacheError(
        "INVALID_PATH",
        `Invalid path ${JSON.stringify(req.path)}: a path cannot contain a NUL character.`,
      );
    }
    const callId = ctx?.callId ?? `readcache-${++this.#calls}`;
    this.#knowledge.sync(ctx?.branch ?? this.#own);
    let served;
    try {
      served = await serveRead(req, this.#knowledge, {
        cwd: this.#options.cwd,
        home: this.#options.home ?? homedir(),
        store: this.#store,
        volatileStore: this.#volatile,
        config: this.#options.config,
      }, ctx?.signal);
    } catch (e) {
      // the path the system tried (resolved), where it says; else the one asked for
      const tried = (e as { path?: unknown })?.path;
      throw typedReadError(e, typeof tried === "string" ? tried : req.path);
    }
    const meta = served.decision.details.readcache;
    if (ctx !== undefined) {
      this.#knowledge.recordServed(
        meta ? { meta, call: served.call, callId } : { call: served.call, callId },
      );
    } else {
      const parentId = this.#own.at(-1)?.id ?? null;
      const entry: ReplayEntry = { id: callId, parentId, kind: "read", meta, callId };
      entry.call = served.call;
      this.#own.push(entry);
    }
    const path = served.target.resolvedPath;
    if (
      served.delegate === "not_a_regular_file" &&
      statSync(path, { throwIfNoEntry: false })?.isDirectory()
    ) {
      // pi's read fails on a directory too; the cause is what reading it would have thrown
      throw new FileReadError(
        "NOT_A_FILE",
        path,
        `EISDIR: ${req.path} is a directory, not a file. Read a file inside it, or list it with ls.`,
        Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${path}'`), {
          code: "EISDIR",
          path,
        }),
      );
    }
    // binary bytes would come back as text full of U+FFFD, in full at every read: not text
    const binary = served.decision.reason === "binary" || served.decision.reason === "not_utf8";
    if (served.delegate !== undefined || binary) {
      const d: ReadCacheDelegation = {
        kind: "delegate",
        reason: served.delegate ?? "binary",
        path,
        mode: null,
      };
      if (served.imageMimeType !== undefined) d.mimeType = served.imageMimeType;
      return d;
    }
    return {
      kind: "answer",
      text: served.decision.text,
      mode: served.decision.mode,
      details: served.decision.details,
    };
  }

  /**
   * The model wrote `content` to `path` with a write tool, and the write
   * succeeded (SPEC §5.8): the content is in its context (its own tool-call
   * arguments), so the next read of the same bytes is `unchanged`. Only for
   * the cache's own session; a host with a session tree records the write in
   * its branch instead (a `wrote` entry, SPEC §11.3). Content that is not
   * well-formed Unicode is not proof of what the file holds: the file then
   * counts as unknown until it is read again (SPEC §5.9).
   *
   * @example
   * ```ts
   * import { createReadCache } from "@readcache/core";
   * import { writeFileSync } from "node:fs";
   * import { join } from "node:path";
   * const cwd = Deno.makeTempDirSync();
   * const cache = createReadCache({ cwd, store: "memory" });
   * writeFileSync(join(cwd, "new.ts"), "export const x = 1;\n");
   * cache.wrote("new.ts", "export const x = 1;\n");
   * (await cache.read({ path: "new.ts" })).mode; // "unchanged"
   * ```
   */
  wrote(path: string, content: string): void {
    const deps = { cwd: this.#options.cwd, home: this.#options.home ?? homedir() };
    const w = resolveWriteCall({ path, content }, deps);
    if (w === undefined) {
      // not proof of content, but the file changed: it is unknown until read again (SPEC §5.9)
      const call = resolveWriteTarget({ path }, deps);
      if (call !== undefined) {
        this.#change(
          call,
          (callId, parentId) => ({ id: callId, parentId, kind: "changed", call, callId }),
        );
      }
      return;
    }
    this.#change(
      w.call,
      (callId, parentId) => ({ id: callId, parentId, kind: "wrote", ...w, callId }),
    );
  }

  /**
   * The model edited `path` with an edit tool that replaces text as pi's
   * does (`edits`: each `oldText` found once, replaced by its `newText`), and
   * the edit succeeded (SPEC §5.9). Call it after the edit: when the model's
   * belief is determined (it held the lines it edited, the exact match
   * applies), the next read of bytes equal to what it believes it wrote is
   * `unchanged`; otherwise the file counts as unknown and the next read is
   * the whole content. Only for the cache's own session.
   *
   * @example
   * ```ts
   * import { createReadCache } from "@readcache/core";
   * import { writeFileSync } from "node:fs";
   * import { join } from "node:path";
   * const cwd = Deno.makeTempDirSync();
   * const cache = createReadCache({ cwd, store: "memory" });
   * writeFileSync(join(cwd, "a.ts"), "const a = 1;\n");
   * await cache.read({ path: "a.ts" });
   * writeFileSync(join(cwd, "a.ts"), "const a = 2;\n"); // the host's edit tool
   * await cache.edited("a.ts", [{ oldText: "a = 1", newText: "a = 2" }]);
   * (await cache.read({ path: "a.ts" })).mode; // "unchanged"
   * ```
   */
  async edited(path: string, edits: readonly EditReplacement[]): Promise<void> {
    const deps = { cwd: this.#options.cwd, home: this.#options.home ?? homedir() };
    const call = resolveWriteTarget({ path }, deps);
    if (call === undefined) return;
    this.#knowledge.sync(this.#own);
    const meta = await planEdit({ path, edits }, this.#knowledge, {
      ...deps,
      store: this.#store,
      volatileStore: this.#volatile,
      config: this.#options.config,
    });
    this.#change(
      call,
      (callId, parentId) =>
        meta === undefined
          ? { id: callId, parentId, kind: "changed", call, callId }
          : { id: callId, parentId, kind: "changed", call, callId, meta },
    );
  }

  /**
   * The model changed `path` some other way (a shell command, a tool the
   * cache does not know): the file is unknown until it is read again, so the
   * next read is the whole content (SPEC §5.9). Only for the cache's own
   * session.
   *
   * @example
   * ```ts
   * import { createReadCache } from "@readcache/core";
   * const cache = createReadCache({ cwd: Deno.makeTempDirSync(), store: "memory" });
   * cache.changed("a.ts");
   * ```
   */
  changed(path: string): void {
    const call = resolveWriteTarget({ path }, {
      cwd: this.#options.cwd,
      home: this.#options.home ?? homedir(),
    });
    if (call === undefined) return;
    this.#change(
      call,
      (callId, parentId) => ({ id: callId, parentId, kind: "changed", call, callId }),
    );
  }

  /** Appends the assistant message that made a change call, then the call's result. */
  #change(call: ReadCall, result: (callId: string, parentId: string) => ReplayEntry): void {
    const callId = `readcache-${++this.#calls}`;
    const msg: ReplayEntry = {
      id: `${callId}-call`,
      parentId: this.#own.at(-1)?.id ?? null,
      kind: "other",
      changes: [{ callId, call }],
    };
    this.#own.push(msg, result(callId, msg.id));
  }

  /**
   * The model's context is gone (a compaction, a new conversation): the next
   * read of every file is the whole content. Only for the cache's own session.
   */
  forget(): void {
    const parentId = this.#own.at(-1)?.id ?? null;
    this.#own.push({ id: `readcache-${++this.#calls}`, parentId, kind: "compaction" });
  }
}

/**
 * Creates a read cache for `cwd` (SPEC §7, §9).
 *
 * @example
 * ```ts
 * import { createReadCache } from "@readcache/core";
 * import { mkdtempSync, writeFileSync } from "node:fs";
 * import { join } from "node:path";
 * const cwd = mkdtempSync(join(Deno.makeTempDirSync(), "demo-"));
 * writeFileSync(join(cwd, "a.txt"), "one\ntwo\n");
 * const cache = createReadCache({ cwd, store: "memory" });
 * (await cache.read({ path: "a.txt" })).mode; // "full"
 * const again = await cache.read({ path: "a.txt" });
 * if (again.kind === "answer") again.text; // "[readcache: unchanged, 3 lines]"
 * ```
 */
export function createReadCache(options: ReadCacheOptions): ReadCache {
  return new ReadCache(options);
}

const FILE_ERRORS: Record<string, [ReadCacheErrorCode, string]> = {
  ENOENT: ["FILE_NOT_FOUND", "no such file; check the path"],
  ENOTDIR: ["FILE_NOT_FOUND", "a part of the path is not a directory; check the path"],
  EISDIR: ["NOT_A_FILE", "it is a directory; read a file inside it"],
  EACCES: ["PERMISSION_DENIED", "permission denied; the user running the agent cannot read it"],
  EPERM: ["PERMISSION_DENIED", "operation not permitted"],
  ELOOP: ["LINK_LOOP", "too many levels of symbolic links (a link loop)"],
};

/** A typed error for what reading `path` threw (our own errors pass through). */
function typedReadError(e: unknown, path: string): Error {
  if (e instanceof ReadCacheError) return e;
  if (e instanceof Error && e.message === "Operation aborted") return e;
  const code = (e as { code?: unknown })?.code;
  if (code === "ERR_INVALID_ARG_VALUE" || code === "ERR_INVALID_ARG_TYPE") {
    return new ReadCacheError("INVALID_PATH", `Invalid path ${JSON.stringify(path)}.`, {
      cause: e,
    });
  }
  const [ours, why] = typeof code === "string" && code in FILE_ERRORS
    ? FILE_ERRORS[code]
    : ["READ_FAILED" as const, "the file system refused the read"];
  return new FileReadError(
    ours,
    path,
    `${typeof code === "string" ? code : "Error"}: cannot read ${path}: ${why}.`,
    e,
  );
}
