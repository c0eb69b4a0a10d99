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
import {
  packReplayState,
  REPLAY_STATE_FORMAT,
  type ReplayState,
  unpackReplayState,
} from "../../core/replay_state.ts";

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
 * The first line of a saved replay: whose it is and what loading it saves,
 * read before the packed state on the second line is parsed.
 */
interface SavedHeader {
  /** `REPLAY_STATE_FORMAT` of the state (what `readcache doctor` checks without parsing it). */
  format: number;
  session: string;
  file: string;
  home: string;
  /** The entry the state is after. */
  leafId: string;
  /** Entries of the window the state replaces (from the compaction or root to `leafId`). */
  windowSize: number;
  /** Groups of identities (files) it holds. */
  groups: number;
}

/**
 * What a cold start pays, in nanoseconds (SPEC §6.5), measured under Node 20 on 2 cores (bench's
 * sessions of 1,000 and 5,000 entries, 200 files): walking an entry (pi's `getEntry`, converting
 * and replaying it), resolving a file a read named (one realpath), parsing and restoring a byte of
 * a packed state, and opening and checking the state file at all. Measured before a walk took
 * identities by directory listing and before format 3's flat groups (both cheaper); not since.
 */
const WALK_NS_PER_ENTRY = 1_500;
const WALK_NS_PER_FILE = 8_000;
const LOAD_NS_PER_BYTE = 30;
const LOAD_NS_FIXED = 100_000;

/**
 * True when loading a saved replay of `bytes` is cheaper than the walk it
 * replaces: `windowSize` entries that name `groups` files (SPEC §6.5).
 *
 * @example
 * ```ts ignore
 * cheaperThanWalk(1000, 200, 42_000); // true
 * cheaperThanWalk(20, 1, 300); // false: 20 entries walk faster than a file is opened
 * ```
 */
export function cheaperThanWalk(windowSize: number, groups: number, bytes: number): boolean {
  return LOAD_NS_FIXED + bytes * LOAD_NS_PER_BYTE <
    windowSize * WALK_NS_PER_ENTRY + groups * WALK_NS_PER_FILE;
}

/**
 * How {@linkcode loadSavedReplay} and {@linkcode saveReplay} go about a
 * saved replay.
 *
 * @example
 * ```ts ignore
 * const how: SavedReplayUse = { weigh: false }; // save at every quiet point (tests)
 * ```
 */
export interface SavedReplayUse {
  /**
   * Use the saved replay only if the branch reaches its entry (`leafId`)
   * before a compaction; without it, the walk finds out.
   */
  reaches?: (leafId: string) => boolean;
  /**
   * Save and load only where loading is cheaper than the walk it replaces
   * ({@linkcode cheaperThanWalk}); default true. `false` saves at every
   * quiet point, so tests on short sessions go through saved replays.
   */
  weigh?: boolean;
}

/**
 * The knowledge saved for `owner` in `store`, continued from where it was
 * saved, or `undefined` when there is none that is usable (no state support
 * in the store, none saved, damaged, another session, file, home or
 * format), when `reaches` says the branch does not reach the saved entry
 * before a compaction (it would be replayed from the compaction anyway), or
 * when loading it costs more than the walk it replaces
 * ({@linkcode cheaperThanWalk}). Never throws.
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
  how: SavedReplayUse = {},
): Promise<BranchKnowledge | undefined> {
  if (store.getState === undefined) return undefined;
  try {
    const bytes = await store.getState(keyOf(owner));
    if (bytes === undefined) return undefined;
    const cut = bytes.indexOf(0x0a);
    if (cut < 0) return undefined;
    const h = JSON.parse(decoder.decode(bytes.subarray(0, cut))) as Partial<SavedHeader> | null;
    if (
      h === null || typeof h !== "object" || h.format !== REPLAY_STATE_FORMAT ||
      h.session !== owner.session ||
      h.file !== owner.file || h.home !== owner.home || typeof h.leafId !== "string" ||
      !Number.isSafeInteger(h.windowSize) || !Number.isSafeInteger(h.groups)
    ) return undefined;
    if (how.weigh !== false && !cheaperThanWalk(h.windowSize!, h.groups!, bytes.length)) {
      return undefined;
    }
    if (how.reaches !== undefined && !how.reaches(h.leafId)) return undefined;
    const state = unpackReplayState(JSON.parse(decoder.decode(bytes.subarray(cut + 1))));
    // the header must describe the state it heads
    if (state === undefined || state.leafId !== h.leafId) return undefined;
    return BranchKnowledge.restore(state);
  } catch {
    return undefined;
  }
}

/**
 * Saves the replay of `knowledge` for `owner` in `store` when its synced
 * leaf is a quiet point (SPEC §6.5) and loading it would be cheaper than the
 * walk it replaces ({@linkcode cheaperThanWalk}); returns whether it handed a
 * state to the store. Never throws: a store that cannot save only costs the
 * next cold start its speed.
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
  how: SavedReplayUse = {},
): Promise<boolean> {
  if (store.putState === undefined) return false;
  let state: ReplayState | undefined;
  try {
    state = knowledge.saveState();
    if (state === undefined) return false;
    const header: SavedHeader = {
      format: state.format,
      session: owner.session,
      file: owner.file,
      home: owner.home,
      leafId: state.leafId,
      windowSize: state.windowSize,
      groups: state.groups.length,
    };
    // packed (SPEC §6.5): a third of the state's plain JSON, which a cold start parses first
    const bytes = encoder.encode(
      `${JSON.stringify(header)}\n${JSON.stringify(packReplayState(state))}`,
    );
    if (
      how.weigh !== false && !cheaperThanWalk(state.windowSize, state.groups.length, bytes.length)
    ) return false;
    await store.putState(keyOf(owner), bytes);
    return true;
  } catch {
    return false;
  }
}
