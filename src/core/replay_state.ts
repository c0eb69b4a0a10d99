/**
 * A replay saved at a quiet point of a branch, and its schema (SPEC §6.5):
 * what lets a cold start continue from the latest saved entry on the branch
 * instead of replaying every entry since the latest compaction.
 * `ReplayCursor.saveState` makes one and `ReplayCursor.restore` continues
 * from it; this file holds the format, its validation and the packed layout
 * it is saved in (`packReplayState`, `unpackReplayState`). Pure.
 *
 * @module
 */
import { z } from "zod";
import { READ_MODES } from "./meta.ts";
import { isScopeKey, type ScopeKey } from "./scope.ts";
import type { PathTrust, ScopeTrust } from "./trust.ts";
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
 * REPLAY_STATE_FORMAT; // 4
 * ```
 */
export const REPLAY_STATE_FORMAT = 4;

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
/** {@linkcode isHash} without a regular expression (the packed layout checks every hash once). */
function isHexHash(v: unknown): boolean {
  if (typeof v !== "string" || v.length !== 64) return false;
  for (let i = 0; i < 64; i++) {
    const c = v.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}
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

// ---------------------------------------------------------------------------------------------
// The packed layout a saved replay is written in: the same state, each name, content hash and
// range scope written once, each group one flat run of numbers. A cold start parses it before its
// first answer, so its parse is most of what a saved replay costs (a third of the plain JSON of
// the state; flat, it parses in about half the time of nested arrays of the same numbers).

/**
 * A {@linkcode ReplayState} packed for saving (SPEC §6.5): every identity
 * and name in `names` once, every content hash in `hashes` once, every scope
 * key of a range in `scopes` once, and each group one flat run of numbers
 * referring to them by index (a flat array parses several times faster than
 * nested ones): the count of ids and the ids; the count of trusted paths and
 * for each its name, the full trust's hash (-1 for none) and seq (0 for
 * none), the count of ranges and for each its scope, hash and seq; the count
 * of views by identity and for each its name, the count of numbers and the
 * numbers (five a line view: `seq`, `start`, `end` with 0 for a view to the
 * end of the file, the index of its hash or -1 for none, 1 when vacant); the
 * same for views by name; `lastOrd`; `ignored`. Plain JSON data; made by
 * {@linkcode packReplayState}, read back by {@linkcode unpackReplayState}.
 *
 * @example
 * ```ts
 * import { packReplayState, ReplayCursor } from "@readcache/core/replay";
 * const c = new ReplayCursor();
 * c.advance([{ id: "u1", parentId: null, kind: "other" }]);
 * packReplayState(c.saveState()!).names; // []
 * ```
 */
export interface PackedReplayState extends Omit<ReplayState, "modeCounts" | "groups" | "shown"> {
  /** {@linkcode ReplayState.modeCounts}, in the order of `READ_MODES`. */
  modes: number[];
  /** Every identity and name, once. */
  names: string[];
  /** Every content hash, once. */
  hashes: string[];
  /** Every scope key of a trusted range, once. */
  scopes: string[];
  /** Each group, one flat run of numbers (see above). */
  groups: number[][];
  /** {@linkcode ReplayState.shown}, the identity as an index into `names`. */
  shown: [number, [string, string][]][];
}

/** A table of strings, each written once, and the index of a string in it (added when new). */
function interned(): [string[], (s: string) => number] {
  const table: string[] = [];
  const at = new Map<string, number>();
  return [table, (s) => {
    let i = at.get(s);
    if (i === undefined) at.set(s, i = table.push(s) - 1);
    return i;
  }];
}

/**
 * `state` in the packed layout a saved replay is written in (SPEC §6.5).
 * {@linkcode unpackReplayState} gives back an equal state.
 *
 * @example
 * ```ts
 * import { packReplayState, ReplayCursor, unpackReplayState } from "@readcache/core/replay";
 * const c = new ReplayCursor();
 * c.advance([{ id: "u1", parentId: null, kind: "other" }]);
 * unpackReplayState(JSON.parse(JSON.stringify(packReplayState(c.saveState()!))))?.leafId; // "u1"
 * ```
 */
export function packReplayState(state: ReplayState): PackedReplayState {
  const [names, name] = interned();
  const [hashes, hashOf] = interned();
  const [scopes, scopeOf] = interned();
  const views = (out: number[], byName: [string, LineView[]][]): void => {
    out.push(byName.length);
    for (const [k, vs] of byName) {
      out.push(name(k), vs.length * 5);
      for (const v of vs) {
        out.push(
          v.seq,
          v.start,
          v.end === Number.MAX_SAFE_INTEGER ? 0 : v.end,
          v.hash === null ? -1 : hashOf(v.hash),
          v.vacant === true ? 1 : 0,
        );
      }
    }
  };
  const groups = state.groups.map((g) => {
    const out: number[] = [g.ids.length];
    for (const id of g.ids) out.push(name(id));
    out.push(g.trust.length);
    for (const [k, t] of g.trust) {
      out.push(name(k));
      if (t.full === undefined) out.push(-1, 0);
      else out.push(hashOf(t.full.hash), t.full.seq);
      const ranges = Object.entries(t.ranges);
      out.push(ranges.length);
      for (const [scope, r] of ranges) out.push(scopeOf(scope), hashOf(r.hash), r.seq);
    }
    views(out, g.keyViews);
    views(out, g.nameViews);
    out.push(g.lastOrd, g.ignored);
    return out;
  });
  return {
    format: state.format,
    leafId: state.leafId,
    compactionId: state.compactionId,
    windowSize: state.windowSize,
    seq: state.seq,
    ord: state.ord,
    turnOrd: state.turnOrd,
    turnSeq: state.turnSeq,
    modes: READ_MODES.map((m) => state.modeCounts[m]),
    names,
    hashes,
    scopes,
    groups,
    shown: state.shown.map(([k, m]) => [name(k), m.map(([l, s]) => [l, s])]),
  };
}

const PACKED_KEYS = [
  "format",
  "leafId",
  "compactionId",
  "windowSize",
  "seq",
  "ord",
  "turnOrd",
  "turnSeq",
  "modes",
  "names",
  "hashes",
  "scopes",
  "groups",
  "shown",
];

/** Thrown inside {@linkcode unpackReplayState} at the first thing that is not as packed. */
class NotPacked extends Error {}

/**
 * The {@linkcode ReplayState} a packed one read back from JSON holds, or
 * `undefined` when the value is not a packed state of this format (another
 * version, a damaged file): the caller then replays the branch as if nothing
 * had been saved. What it gives is always a state the zod schema accepts
 * ({@linkcode validateReplayState}).
 *
 * @example
 * ```ts
 * import { unpackReplayState } from "@readcache/core/replay";
 * unpackReplayState({ format: 0 }); // undefined
 * ```
 */
export function unpackReplayState(value: unknown): ReplayState | undefined {
  try {
    return unpack(value);
  } catch (e) {
    if (e instanceof NotPacked) return undefined;
    throw e;
  }
}

function need(ok: boolean): void {
  if (!ok) throw new NotPacked();
}

/** The entry of `table` an index read from a packed state names (an integer within it). */
function entryOf<T>(table: readonly T[]): (i: unknown) => T {
  return (i) => {
    need(Number.isInteger(i) && (i as number) >= 0 && (i as number) < table.length);
    return table[i as number];
  };
}

function arrayOf(v: unknown, length?: number): unknown[] {
  need(Array.isArray(v) && (length === undefined || v.length === length));
  return v as unknown[];
}

function unpack(value: unknown): ReplayState {
  need(isRec(value) && keysWithin(value, PACKED_KEYS, PACKED_KEYS));
  const v = value as Rec;
  need(
    v.format === REPLAY_STATE_FORMAT && isStr(v.leafId) && v.leafId !== "" &&
      (v.compactionId === null || (isStr(v.compactionId) && v.compactionId !== "")) &&
      isCount(v.windowSize) && v.windowSize >= 1 && isNum(v.seq) && isCount(v.ord) &&
      isCount(v.turnOrd) && isNum(v.turnSeq),
  );
  const modes = arrayOf(v.modes, READ_MODES.length);
  const modeCounts: Record<string, number> = {};
  READ_MODES.forEach((m, i) => {
    need(isCount(modes[i]));
    modeCounts[m] = modes[i] as number;
  });
  const names = arrayOf(v.names);
  for (const n of names) need(isStr(n));
  const hashes = arrayOf(v.hashes);
  for (const h of hashes) need(isHexHash(h));
  const scopes = arrayOf(v.scopes);
  for (const k of scopes) need(isStr(k) && isScopeKey(k));
  const nameAt = entryOf(names as string[]);
  const hashAt = entryOf(hashes as string[]);
  const scopeAt = entryOf(scopes as ScopeKey[]);
  const groups: ReplayStateGroup[] = arrayOf(v.groups).map((packed) => {
    const g = arrayOf(packed);
    let at = 0;
    const num = (): number => {
      const x = g[at++];
      need(isNum(x));
      return x as number;
    };
    const countOf = (): number => {
      const x = g[at++];
      need(isCount(x));
      return x as number;
    };
    // a count of what follows: never more than the numbers left (a damaged file allocates nothing)
    const lengthOf = (): number => {
      const n = countOf();
      need(n <= g.length - at);
      return n;
    };
    const nameAtNext = () => nameAt(g[at++]);
    const views = (): [string, LineView[]][] => {
      const byName: [string, LineView[]][] = new Array(lengthOf());
      for (let j = 0; j < byName.length; j++) {
        const k = nameAtNext();
        const numbers = lengthOf();
        need(numbers % 5 === 0);
        const out: LineView[] = new Array(numbers / 5);
        for (let i = 0; i < out.length; i++) {
          const seq = num(), start = g[at++], end = g[at++], hash = g[at++], vacant = g[at++];
          need(isCount(start) && start > 0 && isCount(end) && (vacant === 0 || vacant === 1));
          const view = {
            seq,
            start: start as number,
            end: end === 0 ? Number.MAX_SAFE_INTEGER : end as number,
            hash: hash === -1 ? null : hashAt(hash),
          };
          out[i] = vacant === 1 ? { ...view, vacant: true } : view;
        }
        byName[j] = [k, out];
      }
      return byName;
    };
    const ids: string[] = new Array(lengthOf());
    for (let i = 0; i < ids.length; i++) ids[i] = nameAtNext();
    need(ids.length > 0 && ids.every((id) => id !== ""));
    const trust: [string, PathTrust][] = new Array(lengthOf());
    for (let i = 0; i < trust.length; i++) {
      const k = nameAtNext();
      const fullHash = g[at++];
      const fullSeq = num();
      const byScope: Record<string, ScopeTrust> = {};
      const ranges = lengthOf();
      for (let r = 0; r < ranges; r++) {
        const scope = scopeAt(g[at++]);
        need(!Object.hasOwn(byScope, scope));
        const hash = hashAt(g[at++]);
        byScope[scope] = { hash, seq: num() };
      }
      if (fullHash === -1) {
        need(fullSeq === 0);
        trust[i] = [k, { ranges: byScope }];
      } else trust[i] = [k, { full: { hash: hashAt(fullHash), seq: fullSeq }, ranges: byScope }];
    }
    const keyViews = views();
    const nameViews = views();
    const lastOrd = num();
    const ignored = countOf();
    need(at === g.length);
    return { ids, trust, keyViews, nameViews, lastOrd, ignored };
  });
  need(idsUnique(groups));
  const shown = arrayOf(v.shown).map((s): [string, [string, ScopeKey][]] => {
    const [k, m] = arrayOf(s, 2);
    return [
      nameAt(k),
      arrayOf(m).map((pair): [string, ScopeKey] => {
        const [l, scope] = arrayOf(pair, 2);
        need(isStr(l) && isStr(scope) && isScopeKey(scope));
        return [l as string, scope as ScopeKey];
      }),
    ];
  });
  return {
    format: REPLAY_STATE_FORMAT,
    leafId: v.leafId as string,
    compactionId: v.compactionId as string | null,
    windowSize: v.windowSize as number,
    seq: v.seq as number,
    ord: v.ord as number,
    turnOrd: v.turnOrd as number,
    turnSeq: v.turnSeq as number,
    modeCounts: modeCounts as ReplayState["modeCounts"],
    groups,
    shown,
  };
}
