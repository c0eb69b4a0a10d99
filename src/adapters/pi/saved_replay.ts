/**
 * The pi extension's saved replays (SPEC §6.5): the replay of a session,
 * saved in the project's store at a quiet point, so that a cold start (a new
 * extension instance, `pi -c`, `/resume`, a reload) walks up from the leaf
 * only to the saved entry instead of to the latest compaction. A saved
 * replay belongs to one session file and one home directory; anything else,
 * and anything damaged, is ignored: the branch is then replayed as usual.
 *
 * @module
 */
import { sha256Hex } from "../../core/hash.ts";
import { BranchKnowledge } from "../../core/knowledge.ts";
import type { ObjectStore } from "../../core/object_store.ts";
import { parseReplayState, type ReplayState } from "../../core/replay_state.ts";

/** Entries synced between two saves of a session's replay, by default. */
export const SAVE_REPLAY_EVERY = 1000;

/**
 * What a saved replay belongs to: the session (its id and file) and the
 * home directory `~` resolved against when its reads were converted.
 *
 * @example
 * ```ts ignore
 * const o: SavedReplayOwner = { session: "s1", file: "/home/me/.pi/sessions/s1.jsonl", home: "/home/me" };
 * ```
 */
export interface SavedReplayOwner {
  /** pi's session id. */
  session: string;
  /** The session's file (a session without one is never saved). */
  file: string;
  /** Home directory for `~`. */
  home: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The store key of an owner's saved replay: the SHA-256 of its session id and file. */
function keyOf(o: SavedReplayOwner): string {
  return sha256Hex(`${o.session}\u0000${o.file}`);
}

/**
 * The knowledge saved for `owner` in `store`, continued from where it was
 * saved, or `undefined` when there is none that is usable (no state support
 * in the store, none saved, damaged, another session, file, home or
 * format). Never throws.
 *
 * @example
 * ```ts ignore
 * const knowledge = await loadSavedReplay(FsObjectStore.forCwd(cwd), owner);
 * knowledge?.syncTip(leafId, lookup); // walks up to the saved entry only
 * ```
 */
export async function loadSavedReplay(
  store: ObjectStore,
  owner: SavedReplayOwner,
): Promise<BranchKnowledge | undefined> {
  if (store.getState === undefined) return undefined;
  try {
    const bytes = await store.getState(keyOf(owner));
    if (bytes === undefined) return undefined;
    const saved = JSON.parse(decoder.decode(bytes)) as Record<string, unknown> | null;
    if (
      saved === null || typeof saved !== "object" || saved.session !== owner.session ||
      saved.file !== owner.file || saved.home !== owner.home
    ) return undefined;
    const state = parseReplayState(saved.state);
    return state === undefined ? undefined : BranchKnowledge.restore(state);
  } catch {
    return undefined;
  }
}

/**
 * Saves the replay of `knowledge` for `owner` in `store` when its synced
 * leaf is a quiet point (SPEC §6.5); returns whether it handed a state to
 * the store. Never throws:
 * a store that cannot save only costs the next cold start its speed.
 *
 * @example
 * ```ts ignore
 * await saveReplay(FsObjectStore.forCwd(cwd), owner, knowledge); // true at a quiet point
 * ```
 */
export async function saveReplay(
  store: ObjectStore,
  owner: SavedReplayOwner,
  knowledge: BranchKnowledge,
): Promise<boolean> {
  if (store.putState === undefined) return false;
  let state: ReplayState | undefined;
  try {
    state = knowledge.saveState();
    if (state === undefined) return false;
    const payload = { session: owner.session, file: owner.file, home: owner.home, state };
    await store.putState(keyOf(owner), encoder.encode(JSON.stringify(payload)));
    return true;
  } catch {
    return false;
  }
}
