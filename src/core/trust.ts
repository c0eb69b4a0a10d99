/**
 * The trust state machine: which content hash the model provably holds, per
 * file and scope, and how read metadata and invalidations change that.
 *
 * Every function here is pure: state in, state out. Inputs are never mutated.
 *
 * Specified by SPEC.md §5.2–§5.4.
 *
 * @module
 */
import type { ReadCacheInvalidationV1, ReadCacheMetaV1 } from "./meta.ts";
import { FULL_SCOPE, type ScopeKey } from "./scope.ts";

/**
 * Trust in one scope: the hash the model was shown and the replay sequence
 * number that established it (higher is fresher).
 *
 * @example
 * ```ts
 * import type { ScopeTrust } from "@readcache/core/rules";
 * const t: ScopeTrust = { hash: "ab".repeat(32), seq: 3 };
 * ```
 */
export interface ScopeTrust {
  /** Content hash (SHA-256 hex of the file bytes) the model holds. */
  readonly hash: string;
  /** Freshness: the sequence number of the event that set this slot. */
  readonly seq: number;
}

/**
 * Trust slots of one file: the whole-file slot and independent range slots.
 *
 * @example
 * ```ts
 * import type { PathTrust } from "@readcache/core/rules";
 * const p: PathTrust = { full: { hash: "h1", seq: 1 }, ranges: { "r:2:4": { hash: "h0", seq: 0 } } };
 * ```
 */
export interface PathTrust {
  /** Trust in scope `"full"`, if any. */
  readonly full?: ScopeTrust;
  /** Trust per range scope key (`r:<start>:<end>`). */
  readonly ranges: Readonly<Record<string, ScopeTrust>>;
}

/**
 * Trust of every file, keyed by `pathKey`. Files without any trusted scope are
 * absent.
 *
 * @example
 * ```ts
 * import type { TrustState } from "@readcache/core/rules";
 * const s: TrustState = { "/w/a.ts": { full: { hash: "h", seq: 1 }, ranges: {} } };
 * ```
 */
export type TrustState = Readonly<Record<string, PathTrust>>;

/** The empty trust state. */
export const EMPTY_TRUST: TrustState = Object.freeze({});

/**
 * Why a read-meta event did or did not change trust.
 *
 * @example
 * ```ts
 * import type { TransitionOutcome } from "@readcache/core/rules";
 * const o: TransitionOutcome = "ignored";
 * ```
 */
export type TransitionOutcome = "applied" | "ignored";

function getScope(p: PathTrust | undefined, scope: ScopeKey): ScopeTrust | undefined {
  if (!p) return undefined;
  return scope === FULL_SCOPE ? p.full : p.ranges[scope];
}

function setScope(p: PathTrust | undefined, scope: ScopeKey, t: ScopeTrust): PathTrust {
  const ranges = p?.ranges ?? {};
  if (scope === FULL_SCOPE) return { full: t, ranges };
  const nextRanges = { ...ranges, [scope]: t };
  return p?.full ? { full: p.full, ranges: nextRanges } : { ranges: nextRanges };
}

/**
 * Trust of a file after a successful write of the model's own content
 * (SPEC §5.8): the full slot holds `hash` at `seq`, like an anchor full read;
 * range slots are kept (the newest-view rule decides whether they still back
 * anything).
 *
 * @example
 * ```ts
 * import { pathTrustAfterWrite } from "@readcache/core/rules";
 * pathTrustAfterWrite(undefined, "h", 3); // { full: { hash: "h", seq: 3 }, ranges: {} }
 * ```
 */
export function pathTrustAfterWrite(
  current: PathTrust | undefined,
  hash: string,
  seq: number,
): PathTrust {
  return setScope(current, FULL_SCOPE, { hash, seq });
}

/**
 * Applies one read-meta event to the trust of its file, per the transition
 * table: anchor modes always set the slot; `unchanged` (full) needs
 * `trust(full).hash == baseHash == servedHash`; `diff` (full) needs
 * `trust(full).hash == baseHash`; `unchanged_range` (range) needs the exact
 * range or the full slot to hold `baseHash`. Anything else is ignored.
 *
 * @example
 * ```ts
 * import { pathTrustAfterRead } from "@readcache/core/rules";
 * const meta = { v: 1, pathKey: "/a", scopeKey: "full", servedHash: "h", baseHash: "h",
 *   mode: "unchanged", totalLines: 1, rangeStart: 1, rangeEnd: 1, bytes: 0 } as const;
 * pathTrustAfterRead(undefined, meta, 1).outcome; // "ignored": no anchor yet
 * ```
 */
export function pathTrustAfterRead(
  current: PathTrust | undefined,
  meta: ReadCacheMetaV1,
  seq: number,
): { trust: PathTrust | undefined; outcome: TransitionOutcome } {
  const S = meta.scopeKey;
  const H = meta.servedHash;
  const B = meta.baseHash;
  const full = current?.full;
  const set = () => ({
    trust: setScope(current, S, { hash: H, seq }),
    outcome: "applied" as const,
  });
  const ignore = { trust: current, outcome: "ignored" as const };
  switch (meta.mode) {
    case "full":
    case "baseline_fallback":
      return set();
    case "unchanged":
      return S === FULL_SCOPE && B !== undefined && B !== "" && full !== undefined &&
          full.hash === B && H === B
        ? set()
        : ignore;
    case "diff": {
      if (B === undefined || B === "") return ignore;
      if (S === FULL_SCOPE) return full !== undefined && full.hash === B ? set() : ignore;
      // a range diff (SPEC §8.2): like unchanged_range, the range or the full slot held the base
      const exact = getScope(current, S);
      return (exact !== undefined && exact.hash === B) || (full !== undefined && full.hash === B)
        ? set()
        : ignore;
    }
    case "unchanged_range": {
      if (S === FULL_SCOPE || B === undefined || B === "") return ignore;
      const exact = getScope(current, S);
      return (exact !== undefined && exact.hash === B) || (full !== undefined && full.hash === B)
        ? set()
        : ignore;
    }
    case "partial":
      // needs the model's views (SPEC §8.4): replay decides, the slots alone cannot
      return ignore;
  }
}

/**
 * Applies an invalidation to the trust of its file: `full` drops every slot of
 * the file; a range drops only that range slot. Returns `undefined` when the
 * file has no trusted scope left.
 *
 * @example
 * ```ts
 * import { pathTrustAfterInvalidation } from "@readcache/core/rules";
 * const p = { full: { hash: "h", seq: 1 }, ranges: { "r:1:2": { hash: "h", seq: 2 } } };
 * pathTrustAfterInvalidation(p, "r:1:2"); // { full: { hash: "h", seq: 1 }, ranges: {} }
 * ```
 */
export function pathTrustAfterInvalidation(
  current: PathTrust | undefined,
  scope: ScopeKey,
): PathTrust | undefined {
  if (!current || scope === FULL_SCOPE) return undefined;
  if (!(scope in current.ranges)) return current;
  const ranges: Record<string, ScopeTrust> = { ...current.ranges };
  delete ranges[scope];
  if (!current.full && Object.keys(ranges).length === 0) return undefined;
  return current.full ? { full: current.full, ranges } : { ranges };
}

function withPath(state: TrustState, pathKey: string, p: PathTrust | undefined): TrustState {
  if (p === state[pathKey]) return state;
  const next: Record<string, PathTrust> = { ...state };
  if (p === undefined) delete next[pathKey];
  else next[pathKey] = p;
  return next;
}

/**
 * Applies one valid read-meta event with sequence number `seq` to the whole
 * trust state. Pure: the input state is not modified.
 *
 * @example
 * ```ts
 * import { applyReadMeta, EMPTY_TRUST } from "@readcache/core/rules";
 * const s = applyReadMeta(EMPTY_TRUST, { v: 1, pathKey: "/a", scopeKey: "full", servedHash: "h",
 *   mode: "full", totalLines: 1, rangeStart: 1, rangeEnd: 1, bytes: 1 }, 1);
 * s["/a"].full; // { hash: "h", seq: 1 }
 * ```
 */
export function applyReadMeta(state: TrustState, meta: ReadCacheMetaV1, seq: number): TrustState {
  return withPath(state, meta.pathKey, pathTrustAfterRead(state[meta.pathKey], meta, seq).trust);
}

/**
 * Applies an invalidation to the whole trust state. Pure.
 *
 * @example
 * ```ts
 * import { applyInvalidation } from "@readcache/core/rules";
 * const s = { "/a": { full: { hash: "h", seq: 1 }, ranges: {} } };
 * applyInvalidation(s, { v: 1, kind: "invalidate", pathKey: "/a", scopeKey: "full", at: 1 }); // {}
 * ```
 */
export function applyInvalidation(state: TrustState, inv: ReadCacheInvalidationV1): TrustState {
  return withPath(state, inv.pathKey, pathTrustAfterInvalidation(state[inv.pathKey], inv.scopeKey));
}

/**
 * Chooses the base for a request: for `full`, the full slot only; for a range,
 * the exact range slot or the full slot, whichever has the higher `seq`, the
 * exact range winning ties. `undefined` means no base: serve a baseline read.
 *
 * @example
 * ```ts
 * import { selectBase } from "@readcache/core/rules";
 * const p = { full: { hash: "new", seq: 5 }, ranges: { "r:2:3": { hash: "old", seq: 2 } } };
 * selectBase(p, "r:2:3"); // { hash: "new", seq: 5 }
 * ```
 */
export function selectBase(
  trust: PathTrust | undefined,
  scope: ScopeKey,
): ScopeTrust | undefined {
  if (!trust) return undefined;
  if (scope === FULL_SCOPE) return trust.full;
  const exact = trust.ranges[scope];
  const full = trust.full;
  if (exact && full) return full.seq > exact.seq ? full : exact;
  return exact ?? full;
}
