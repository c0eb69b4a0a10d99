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
 * REPLAY_STATE_FORMAT; // 2
 * ```
 */
export const REPLAY_STATE_FORMAT = 2;

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
  /** Event order where the current turn starts. */
  turnOrd: number;
  /** `seq` where the current turn starts. */
  turnSeq: number;
  /** Valid read events in the window by mode. */
  modeCounts: Record<string, number>;
  /** Every group of identities, folded. */
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

/** Every identity in one group only. */
function idsUnique(groups: readonly { ids: readonly string[] }[]): boolean {
  const seen = new Set<string>();
  for (const g of groups) {
    for (const id of g.ids) {
      if (seen.has(id)) return false;
      seen.add(id);
    }
  }
  return true;
}

/**
 * {@linkcode parseReplayState} through the zod schema: the definition the
 * fast parser is checked against (`tests/replay_state_test.ts`).
 *
 * @example
 * ```ts
 * import { validateReplayState } from "@readcache/core/replay";
 * validateReplayState({ format: 0 }); // undefined
 * ```
 */
export function validateReplayState(value: unknown): ReplayState | undefined {
  const r = replayStateSchema.safeParse(value);
  return r.success && idsUnique(r.data.groups) ? r.data as ReplayState : undefined;
}

// The fast parser: the schema above, written out by hand. A cold start parses one state before its
// first answer, and zod compiles a schema on its first use in a process (tens of milliseconds).

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === "object" && v !== null && !Array.isArray(v);
const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isHash = (v: unknown): boolean => typeof v === "string" && /^[0-9a-f]{64}$/.test(v);
const isStr = (v: unknown): v is string => typeof v === "string";
/** Only these keys, and every key of `required`. */
function keysWithin(o: Rec, allowed: readonly string[], required: readonly string[]): boolean {
  for (const k in o) if (!allowed.includes(k)) return false;
  return required.every((k) => k in o);
}
const isPair = (v: unknown): v is [unknown, unknown] => Array.isArray(v) && v.length === 2;
function everyPair(v: unknown, ok: (k: unknown, x: unknown) => boolean): boolean {
  return Array.isArray(v) && v.every((p) => isPair(p) && ok(p[0], p[1]));
}
function isScopeTrust(v: unknown): boolean {
  return isRec(v) && keysWithin(v, ["hash", "seq"], ["hash", "seq"]) && isHash(v.hash) &&
    isNum(v.seq);
}
function isPathTrust(v: unknown): boolean {
  if (!isRec(v) || !keysWithin(v, ["full", "ranges"], ["ranges"])) return false;
  if (v.full !== undefined && !isScopeTrust(v.full)) return false;
  const ranges = v.ranges;
  if (!isRec(ranges)) return false;
  for (const k in ranges) if (!isScopeKey(k) || !isScopeTrust(ranges[k])) return false;
  return true;
}
function isLineView(v: unknown): boolean {
  return isRec(v) && keysWithin(v, ["seq", "start", "end", "hash", "vacant"], [
    "seq",
    "start",
    "end",
    "hash",
  ]) && isNum(v.seq) && isCount(v.start) && v.start > 0 && isCount(v.end) && v.end > 0 &&
    (v.hash === null || isHash(v.hash)) && (v.vacant === undefined || v.vacant === true);
}
const isViews = (v: unknown) =>
  everyPair(v, (k, x) => isStr(k) && Array.isArray(x) && x.every(isLineView));
const GROUP_KEYS = ["ids", "trust", "keyViews", "nameViews", "lastOrd", "ignored"];
function isGroup(v: unknown): boolean {
  return isRec(v) && keysWithin(v, GROUP_KEYS, GROUP_KEYS) && Array.isArray(v.ids) &&
    v.ids.length > 0 && v.ids.every((id) => isStr(id) && id !== "") &&
    everyPair(v.trust, (k, t) => isStr(k) && isPathTrust(t)) && isViews(v.keyViews) &&
    isViews(v.nameViews) && isNum(v.lastOrd) && isCount(v.ignored);
}
const STATE_KEYS = [
  "format",
  "leafId",
  "compactionId",
  "windowSize",
  "seq",
  "ord",
  "turnOrd",
  "turnSeq",
  "modeCounts",
  "groups",
  "shown",
];

/**
 * A {@linkcode ReplayState} read back from JSON, or `undefined` when the
 * value is not one of this format (another version, a damaged file): the
 * caller then replays the branch as if nothing had been saved. Accepts
 * exactly what the zod schema accepts ({@linkcode validateReplayState}).
 *
 * @example
 * ```ts
 * import { parseReplayState } from "@readcache/core/replay";
 * parseReplayState({ format: 0 }); // undefined
 * ```
 */
export function parseReplayState(value: unknown): ReplayState | undefined {
  const v = value;
  if (!isRec(v) || !keysWithin(v, STATE_KEYS, STATE_KEYS)) return undefined;
  const counts = v.modeCounts;
  const ok = v.format === REPLAY_STATE_FORMAT && isStr(v.leafId) && v.leafId !== "" &&
    (v.compactionId === null || (isStr(v.compactionId) && v.compactionId !== "")) &&
    isCount(v.windowSize) && v.windowSize >= 1 && isNum(v.seq) && isCount(v.ord) &&
    isCount(v.turnOrd) && isNum(v.turnSeq) && isRec(counts) &&
    keysWithin(counts, READ_MODES, READ_MODES) && READ_MODES.every((m) => isCount(counts[m])) &&
    Array.isArray(v.groups) && v.groups.every(isGroup) &&
    everyPair(
      v.shown,
      (k, m) => isStr(k) && everyPair(m, (l, s) => isStr(l) && isStr(s) && isScopeKey(s)),
    );
  if (!ok) return undefined;
  const state = v as unknown as ReplayState;
  return idsUnique(state.groups) ? state : undefined;
}
