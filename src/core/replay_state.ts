/**
 * A replay saved at a quiet point of a branch, and its schema (SPEC §6.5):
 * what lets a cold start continue from the latest saved entry on the branch
 * instead of replaying every entry since the latest compaction.
 * `ReplayCursor.saveState` makes one and `ReplayCursor.restore` continues
 * from it; this file holds the format and its validation only. Pure.
 *
 * @module
 */
import { z } from "zod";
import { READ_MODES } from "./meta.ts";
import { isScopeKey, type ScopeKey } from "./scope.ts";
import type { PathTrust } from "./trust.ts";
import type { LineView } from "./view.ts";

/**
 * Version of {@linkcode ReplayState}: a saved state of another version is
 * never restored. Bump it whenever replay's rules, the conversion of host
 * entries or the layout of the state change (`tests/replay_state_test.ts`
 * pins the files those rules live in to this version).
 *
 * @example
 * ```ts
 * import { REPLAY_STATE_FORMAT } from "@readcache/core/replay";
 * REPLAY_STATE_FORMAT; // 1
 * ```
 */
export const REPLAY_STATE_FORMAT = 1;

/**
 * The folded trust and views of one group of identities, in a
 * {@linkcode ReplayState}.
 *
 * @example
 * ```ts
 * import type { ReplayStateGroup } from "@readcache/core/replay";
 * const g: ReplayStateGroup = { ids: ["/w/a"], trust: [], keyViews: [], nameViews: [],
 *   lastOrd: 3, ignored: 0 };
 * ```
 */
export interface ReplayStateGroup {
  /** Every identity of the group (`pathKey`s and names); the first is its root. */
  ids: string[];
  /** Trust slots by `pathKey`. */
  trust: [string, PathTrust][];
  /** Views kept under each `pathKey`, oldest first. */
  keyViews: [string, LineView[]][];
  /** Views kept under each name, oldest first. */
  nameViews: [string, LineView[]][];
  /** `ord` of the last event folded. */
  lastOrd: number;
  /** Read events the guards ignored. */
  ignored: number;
}

/**
 * The replay of a branch saved at a quiet point (SPEC §6.5): after an entry
 * that ended a turn with no call of it waiting for a result, every file
 * folded. Plain JSON data.
 *
 * @example
 * ```ts
 * import { ReplayCursor } from "@readcache/core/replay";
 * const c = new ReplayCursor();
 * c.advance([{ id: "u1", parentId: null, kind: "other" }]);
 * const state = c.saveState()!;
 * state.leafId; // "u1"
 * ```
 */
export interface ReplayState {
  /** Always {@linkcode REPLAY_STATE_FORMAT}. */
  format: number;
  /** The entry the state is after (the branch's leaf when it was saved). */
  leafId: string;
  /** The compaction the replay window starts after, `null` for the root. */
  compactionId: string | null;
  /** Entries in the window up to and including `leafId`. */
  windowSize: number;
  /** Last `seq` used. */
  seq: number;
  /** Next event order. */
  ord: number;
  /** Event order and `seq` where the current turn starts. */
  turnOrd: number;
  turnSeq: number;
  /** Valid read events in the window by mode. */
  modeCounts: Record<string, number>;
  groups: ReplayStateGroup[];
  /** Scope shown by the latest trusted read of each request: pathKey, then offset/limit key. */
  shown: [string, [string, ScopeKey][]][];
}

const count = z.number().int().nonnegative();
const hash = z.string().regex(/^[0-9a-f]{64}$/);
const scopeKey = z.string().refine(isScopeKey) as unknown as z.ZodType<ScopeKey>;
const scopeTrust = z.object({ hash, seq: z.number() }).strict();
const pathTrust = z.object({
  full: scopeTrust.optional(),
  ranges: z.record(scopeKey, scopeTrust),
}).strict();
const lineView = z.object({
  seq: z.number(),
  start: z.number().int().positive(),
  end: z.number().int().positive(),
  hash: hash.nullable(),
  vacant: z.literal(true).optional(),
}).strict();
const views = z.array(z.tuple([z.string(), z.array(lineView)]));

/** The schema of a {@linkcode ReplayState}. */
const replayStateSchema = z.object({
  format: z.literal(REPLAY_STATE_FORMAT),
  leafId: z.string().min(1),
  compactionId: z.string().min(1).nullable(),
  windowSize: count.min(1),
  seq: z.number(),
  ord: count,
  turnOrd: count,
  turnSeq: z.number(),
  modeCounts: z.record(z.enum(READ_MODES), count),
  groups: z.array(
    z.object({
      ids: z.array(z.string().min(1)).min(1),
      trust: z.array(z.tuple([z.string(), pathTrust])),
      keyViews: views,
      nameViews: views,
      lastOrd: z.number(),
      ignored: count,
    }).strict(),
  ),
  shown: z.array(z.tuple([z.string(), z.array(z.tuple([z.string(), scopeKey]))])),
}).strict();

/**
 * A {@linkcode ReplayState} read back from JSON, or `undefined` when the
 * value is not one of this format (another version, a damaged file): the
 * caller then replays the branch as if nothing had been saved.
 *
 * @example
 * ```ts
 * import { parseReplayState } from "@readcache/core/replay";
 * parseReplayState({ format: 0 }); // undefined
 * ```
 */
export function parseReplayState(value: unknown): ReplayState | undefined {
  const r = replayStateSchema.safeParse(value);
  if (!r.success) return undefined;
  // every identity in one group only, every group's root first in its list
  const seen = new Set<string>();
  for (const g of r.data.groups) {
    for (const id of g.ids) {
      if (seen.has(id)) return undefined;
      seen.add(id);
    }
  }
  return r.data as ReplayState;
}
