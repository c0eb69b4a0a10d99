/**
 * What another tool's result leaves the model holding (SPEC §5.10): after a
 * shell command, a search or any tool the adapter does not know, every file
 * whose content on disk differs from the model's newest view of it is
 * unknown from that result on. This works out the record a result carries
 * (`ReadCacheToolMetaV1`, as `details.readcache`), so replay and a restart
 * see it.
 *
 * Specified by SPEC.md §5.10.
 *
 * @module
 */
import type { BranchKnowledge } from "../core/knowledge.ts";
import { type DecisionConfig, DEFAULT_DECISION_CONFIG } from "../core/decision.ts";
import { sha256Hex } from "../core/hash.ts";
import type { ReadCacheToolMetaV1 } from "../core/meta.ts";
import type { ObjectStore } from "../core/object_store.ts";
import { type LineView, newestViewsOf, TO_END, viewsShowContent } from "../core/view.ts";
import { isInsideProject, readRegularFile, type ReadServiceDeps } from "./read_service.ts";

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function decode(bytes: Uint8Array): string | undefined {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

async function load(stores: readonly ObjectStore[], hash: string): Promise<string[] | undefined> {
  for (const store of stores) {
    try {
      const bytes = await store.get(hash);
      if (bytes === undefined || sha256Hex(bytes) !== hash) continue;
      return decode(bytes)?.split("\n");
    } catch {
      // next store
    }
  }
  return undefined;
}

/**
 * True when the file at `path` (read once) holds, on every line each list of
 * views shows known content of, that content.
 */
async function agrees(
  path: string,
  viewLists: readonly (readonly LineView[])[],
  stores: readonly ObjectStore[],
  cap: number,
): Promise<boolean> {
  let read;
  try {
    read = await readRegularFile(path, cap);
  } catch {
    return false; // gone or unreadable: not what the model holds
  }
  if (read.kind !== "ok") return false;
  const hash = sha256Hex(read.bytes);
  const others = new Set<string>();
  for (const views of viewLists) {
    for (const p of newestViewsOf(views, 1, TO_END)) {
      if (p.hash !== null && p.hash !== hash) others.add(p.hash);
    }
  }
  if (others.size === 0) return true;
  const text = decode(read.bytes);
  if (text === undefined) return false;
  const contents = new Map<string, string[] | undefined>();
  for (const h of others) contents.set(h, await load(stores, h));
  const lines = text.split("\n");
  return viewLists.every((views) => viewsShowContent(views, hash, lines, (h) => contents.get(h)));
}

/**
 * The record a tool result carries (SPEC §5.10): every identity the model
 * holds known content of (`BranchKnowledge.heldIdentities`, in flight
 * included) whose file now differs from its newest views there, read once
 * each (non-blocking, at most `maxFileBytes`; a file that is gone, not a
 * regular file or too large counts as changed). Reads files and the store,
 * writes nothing. Call it when the tool's result comes back, before the next
 * read.
 *
 * @example
 * ```ts ignore
 * const meta = await toolResultMeta(knowledge, { cwd, home, store });
 * // { v: 1, kind: "tool", changed: ["/w/a.txt"] }
 * ```
 */
export async function toolResultMeta(
  knowledge: BranchKnowledge,
  deps: ReadServiceDeps,
): Promise<ReadCacheToolMetaV1> {
  const cfg: DecisionConfig = { ...DEFAULT_DECISION_CONFIG, ...deps.config };
  const { keys, names } = knowledge.heldIdentities();
  const isKey = new Set(keys);
  const isName = new Set(names);
  const changed: string[] = [];
  // an identity that is a pathKey and a name (a file read by its real path) is read once
  for (const id of new Set([...keys, ...names])) {
    const { keyViews, nameViews } = knowledge.file(id, id);
    const viewLists = [
      ...(isKey.has(id) ? [keyViews] : []),
      ...(isName.has(id) ? [nameViews] : []),
    ];
    const inside = cfg.persistOutsideProject || isInsideProject(id, deps.cwd);
    const stores = [
      ...(inside ? [deps.store] : []),
      ...(deps.volatileStore ? [deps.volatileStore] : []),
    ];
    if (!await agrees(id, viewLists, stores, cfg.maxFileBytes)) changed.push(id);
  }
  return { v: 1, kind: "tool", changed: changed.sort() };
}
