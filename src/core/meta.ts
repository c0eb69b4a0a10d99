/**
 * Wire schemas of the metadata a read cache writes into a pi session:
 * `details.readcache` on `read` tool results ({@linkcode ReadCacheMetaV1}) and
 * `pi-readcache` custom entries for explicit invalidation
 * ({@linkcode ReadCacheInvalidationV1}). Field names and values are
 * wire-compatible with sessions written by the existing pi-readcache
 * extension; unknown extra fields (such as `debug`) are tolerated.
 *
 * Parsing is fail-open: invalid metadata yields `undefined`, never throws, and
 * therefore never creates trust.
 *
 * Specified by SPEC.md §5.1.
 *
 * @module
 */
import { z } from "zod";
import { isScopeKey, type ScopeKey } from "./scope.ts";

/** Custom entry type of persistent invalidations in a pi session. */
export const READCACHE_CUSTOM_TYPE = "pi-readcache" as const;

/** Every mode a read can be served in. */
export const READ_MODES: readonly [
  "full",
  "unchanged",
  "unchanged_range",
  "diff",
  "baseline_fallback",
  "partial",
] = ["full", "unchanged", "unchanged_range", "diff", "baseline_fallback", "partial"];

/**
 * How a read was served. `full` and `baseline_fallback` are anchor modes (the
 * model was shown the content); the others are derived modes that rely on a
 * base already in context.
 *
 * @example
 * ```ts
 * import type { ReadMode } from "@readcache/core";
 * const m: ReadMode = "unchanged";
 * ```
 */
export type ReadMode =
  | "full"
  | "unchanged"
  | "unchanged_range"
  | "diff"
  | "baseline_fallback"
  | "partial";

/**
 * Metadata attached to a `read` tool result as `details.readcache`.
 *
 * @example
 * ```ts
 * import type { ReadCacheMetaV1 } from "@readcache/core";
 * const meta: ReadCacheMetaV1 = {
 *   v: 1, pathKey: "/w/a.ts", scopeKey: "full", servedHash: "ab".repeat(32),
 *   mode: "full", totalLines: 3, rangeStart: 1, rangeEnd: 3, bytes: 12,
 * };
 * ```
 */
export interface ReadCacheMetaV1 {
  /** Schema version, always 1. */
  v: 1;
  /** Canonical identity of the file. */
  pathKey: string;
  /** Scope the read covers (what the model was shown). */
  scopeKey: ScopeKey;
  /** SHA-256 of the file bytes the output was produced from. */
  servedHash: string;
  /** Hash the output was compared against, when there was a base. */
  baseHash?: string;
  /** How the read was served. */
  mode: ReadMode;
  /** Lines in the file. */
  totalLines: number;
  /** First line of the scope. */
  rangeStart: number;
  /** Last line of the scope. */
  rangeEnd: number;
  /** Bytes of the output text served. */
  bytes: number;
  /**
   * For a `partial` answer (SPEC §8.4): the stretches of the scope it answered
   * with a marker, each with the content its newest views show (the same line
   * text as now); it showed the other lines.
   */
  held?: { start: number; end: number; hash: string }[];
}

/**
 * A persistent invalidation (`/readcache-refresh`), stored as a custom entry of
 * type `pi-readcache`.
 *
 * @example
 * ```ts
 * import type { ReadCacheInvalidationV1 } from "@readcache/core/rules";
 * const inv: ReadCacheInvalidationV1 = { v: 1, kind: "invalidate", pathKey: "/w/a.ts", scopeKey: "full", at: 1 };
 * ```
 */
export interface ReadCacheInvalidationV1 {
  /** Schema version, always 1. */
  v: 1;
  /** Always `"invalidate"`. */
  kind: "invalidate";
  /** Canonical identity of the file. */
  pathKey: string;
  /** Scope to drop; `"full"` drops every scope of the path. */
  scopeKey: ScopeKey;
  /** Milliseconds since the epoch when the invalidation was requested. */
  at: number;
}

const DERIVED_MODES: ReadonlySet<ReadMode> = new Set([
  "unchanged",
  "unchanged_range",
  "diff",
  "partial",
]);

const scopeKeySchema = z.string().refine(isScopeKey, { message: "not a scope key" }).transform((
  s,
) => s as ScopeKey);
const positiveInt = z.number().int().positive();

/**
 * Zod schema of {@linkcode ReadCacheMetaV1}. Extra fields are tolerated;
 * derived modes (`unchanged`, `unchanged_range`, `diff`) need a non-empty
 * `baseHash`.
 */
/** True when stretches are sorted and do not overlap (they may touch); only the last is open. */
function inOrderApart(stretches: readonly { start: number; end?: number }[]): boolean {
  return stretches.every((s, i) => {
    const before = stretches[i - 1];
    return i === 0 || (before.end !== undefined && s.start > before.end);
  });
}

const ReadCacheMetaV1Schema: z.ZodType<ReadCacheMetaV1, unknown> = z.looseObject({
  v: z.literal(1),
  pathKey: z.string().min(1),
  scopeKey: scopeKeySchema,
  servedHash: z.string().min(1),
  baseHash: z.string().min(1).optional(),
  mode: z.enum(READ_MODES),
  totalLines: positiveInt,
  rangeStart: positiveInt,
  rangeEnd: positiveInt,
  bytes: z.number().int().nonnegative(),
  held: z.array(z.strictObject({ start: positiveInt, end: positiveInt, hash: z.string().min(1) }))
    .optional(),
}).superRefine((m, ctx) => {
  if (m.mode === "partial") {
    const ok = m.held !== undefined && m.held.length > 0 && m.baseHash === m.servedHash &&
      inOrderApart(m.held) &&
      m.held.every((h) => h.end >= h.start && h.start >= m.rangeStart && h.end <= m.rangeEnd);
    if (!ok) {
      ctx.addIssue({
        code: "custom",
        message:
          "mode partial needs held stretches (sorted, not overlapping, within the scope) and baseHash = servedHash",
      });
    }
  }
  if (DERIVED_MODES.has(m.mode) && m.baseHash === undefined) {
    ctx.addIssue({ code: "custom", message: `mode ${m.mode} requires a non-empty baseHash` });
  }
  if (m.rangeEnd < m.rangeStart) {
    ctx.addIssue({ code: "custom", message: "rangeEnd is before rangeStart" });
  }
}).transform((m): ReadCacheMetaV1 => {
  const out: ReadCacheMetaV1 = {
    v: 1,
    pathKey: m.pathKey,
    scopeKey: m.scopeKey,
    servedHash: m.servedHash,
    mode: m.mode,
    totalLines: m.totalLines,
    rangeStart: m.rangeStart,
    rangeEnd: m.rangeEnd,
    bytes: m.bytes,
  };
  if (m.baseHash !== undefined) out.baseHash = m.baseHash;
  if (m.mode === "partial" && m.held !== undefined) {
    out.held = m.held.map((h) => ({ start: h.start, end: h.end, hash: h.hash }));
  }
  return out;
});

/**
 * Zod schema of {@linkcode ReadCacheInvalidationV1}. Extra fields are tolerated.
 */
const ReadCacheInvalidationV1Schema: z.ZodType<ReadCacheInvalidationV1, unknown> = z
  .looseObject({
    v: z.literal(1),
    kind: z.literal("invalidate"),
    pathKey: z.string().min(1),
    scopeKey: scopeKeySchema,
    at: positiveInt,
  }).transform((m): ReadCacheInvalidationV1 => ({
    v: 1,
    kind: "invalidate",
    pathKey: m.pathKey,
    scopeKey: m.scopeKey,
    at: m.at,
  }));

/**
 * Parses `details.readcache`; `undefined` when invalid. Never throws.
 *
 * @example
 * ```ts
 * import { parseReadCacheMeta } from "@readcache/core/rules";
 * parseReadCacheMeta({ v: 1, mode: "unchanged" }); // undefined
 * ```
 */
export function parseReadCacheMeta(value: unknown): ReadCacheMetaV1 | undefined {
  const fast = checkMetaFast(value);
  if (fast !== undefined) return fast;
  const r = validateReadCacheMeta(value);
  return r.ok ? r.meta : undefined;
}

/**
 * Validates `details.readcache` with its zod schema and says what is wrong
 * (SPEC §5.1). {@linkcode parseReadCacheMeta} gives the same answer faster.
 *
 * @example
 * ```ts
 * import { validateReadCacheMeta } from "@readcache/core/rules";
 * const r = validateReadCacheMeta({ v: 1, mode: "unchanged" });
 * r.ok; // false
 * ```
 */
export function validateReadCacheMeta(
  value: unknown,
): { ok: true; meta: ReadCacheMetaV1 } | { ok: false; issues: string[] } {
  const r = ReadCacheMetaV1Schema.safeParse(value);
  return r.success ? { ok: true, meta: r.data } : {
    ok: false,
    issues: r.error.issues.map((i) => `${i.path.join(".") || "value"}: ${i.message}`),
  };
}

const MODE_SET: ReadonlySet<string> = new Set(READ_MODES);
const scopeKeyCache = new Map<string, boolean>();
/** `isScopeKey`, remembered for the few distinct keys a session uses (bounded). */
function knownScopeKey(key: string): boolean {
  let ok = scopeKeyCache.get(key);
  if (ok === undefined) {
    ok = isScopeKey(key);
    if (scopeKeyCache.size > 4096) scopeKeyCache.clear();
    scopeKeyCache.set(key, ok);
  }
  return ok;
}
const isPositiveInt = (v: unknown): v is number => Number.isInteger(v) && (v as number) > 0;
const isNonEmpty = (v: unknown): v is string => typeof v === "string" && v !== "";

/**
 * The schema's checks written out by hand, for replay's hot path: returns the
 * parsed metadata when `value` is valid, `undefined` when it is not (or is
 * unusual): then the zod schema decides. `tests/meta_fast_test.ts` checks that
 * both agree.
 */
function checkMetaFast(value: unknown): ReadCacheMetaV1 | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const m = value as Record<string, unknown>;
  const { pathKey, scopeKey, servedHash, baseHash, mode, totalLines, rangeStart, rangeEnd, bytes } =
    m;
  if (
    m.v !== 1 || !isNonEmpty(pathKey) || typeof scopeKey !== "string" || !knownScopeKey(scopeKey) ||
    !isNonEmpty(servedHash) || typeof mode !== "string" || !MODE_SET.has(mode) ||
    !isPositiveInt(totalLines) || !isPositiveInt(rangeStart) || !isPositiveInt(rangeEnd) ||
    !Number.isInteger(bytes) || (bytes as number) < 0 || rangeEnd < rangeStart
  ) return undefined;
  if (baseHash !== undefined && !isNonEmpty(baseHash)) return undefined;
  if (baseHash === undefined && DERIVED_MODES.has(mode as ReadMode)) return undefined;
  if (mode === "partial") return undefined; // its stretches: the schema checks them
  const out: ReadCacheMetaV1 = {
    v: 1,
    pathKey,
    scopeKey: scopeKey as ScopeKey,
    servedHash,
    mode: mode as ReadMode,
    totalLines,
    rangeStart,
    rangeEnd,
    bytes: bytes as number,
  };
  if (baseHash !== undefined) out.baseHash = baseHash;
  return out;
}

/**
 * Parses the data of a `pi-readcache` custom entry; `undefined` when it is not
 * a valid invalidation. Never throws.
 *
 * @example
 * ```ts
 * import { parseInvalidation } from "@readcache/core/rules";
 * parseInvalidation({ v: 1, kind: "invalidate", pathKey: "/a", scopeKey: "r:1:2", at: 5 })?.scopeKey; // "r:1:2"
 * ```
 */
export function parseInvalidation(value: unknown): ReadCacheInvalidationV1 | undefined {
  const r = ReadCacheInvalidationV1Schema.safeParse(value);
  return r.success ? r.data : undefined;
}

/**
 * True for modes that can establish trust from nothing (`full`,
 * `baseline_fallback`).
 *
 * @example
 * ```ts
 * import { isAnchorMode } from "@readcache/core/rules";
 * isAnchorMode("diff"); // false
 * ```
 */
export function isAnchorMode(mode: ReadMode): boolean {
  return mode === "full" || mode === "baseline_fallback";
}

/**
 * Lines `start..end` of a file; `end` omitted: to the end of the file.
 *
 * @example
 * ```ts
 * import type { LineStretch } from "@readcache/core/rules";
 * const s: LineStretch = { start: 5 }; // line 5 to the end
 * ```
 */
export interface LineStretch {
  /** First line, 1-based. */
  start: number;
  /** Last line, inclusive; omitted for "to the end of the file". */
  end?: number;
}

/**
 * `details.readcache` on a successful `edit` tool result (SPEC §5.9): what
 * the model believes it wrote. `baseHash` is the content of its newest view
 * on the `held` lines when it made the call; `servedHash` the content that
 * view becomes with the replacements applied (pi's exact match), of which it
 * now holds the `shown` lines (`held`, renumbered). From line `from` on, its
 * older views are out of date.
 *
 * @example
 * ```ts
 * import type { ReadCacheEditMetaV1 } from "@readcache/core/rules";
 * const m: ReadCacheEditMetaV1 = { v: 1, kind: "edit", pathKey: "/w/a.ts", baseHash: "a".repeat(64),
 *   servedHash: "b".repeat(64), totalLines: 11, from: 5, held: [{ start: 1 }], shown: [{ start: 1 }] };
 * ```
 */
export interface ReadCacheEditMetaV1 {
  /** Schema version, always 1. */
  v: 1;
  /** Always `"edit"`. */
  kind: "edit";
  /** Canonical identity of the file. */
  pathKey: string;
  /** SHA-256 of the content the model's newest view held. */
  baseHash: string;
  /** SHA-256 of the content the model believes it wrote. */
  servedHash: string;
  /** Lines of the believed content. */
  totalLines: number;
  /** First line the edit touched. */
  from: number;
  /**
   * Lines of the base the model held, each checked against its views at replay (with `hash`
   * when the model holds them as another content whose lines are the base's, else with
   * `baseHash`); none when the edit touched lines it did not hold (then only the lines before
   * `from` stay known).
   */
  held: (LineStretch & { hash?: string })[];
  /** The same lines in the believed content, in the same order. */
  shown: LineStretch[];
}

const HEX64 = /^[0-9a-f]{64}$/;
const stretchSchema = z.strictObject({ start: positiveInt, end: positiveInt.optional() })
  .refine((s) => s.end === undefined || s.end >= s.start, { message: "end is before start" });

const heldStretchSchema = z.strictObject({
  start: positiveInt,
  end: positiveInt.optional(),
  hash: z.string().regex(HEX64).optional(),
}).refine((s) => s.end === undefined || s.end >= s.start, { message: "end is before start" });

const ReadCacheEditMetaV1Schema: z.ZodType<ReadCacheEditMetaV1, unknown> = z.looseObject({
  v: z.literal(1),
  kind: z.literal("edit"),
  pathKey: z.string().min(1),
  baseHash: z.string().regex(HEX64),
  servedHash: z.string().regex(HEX64),
  totalLines: positiveInt,
  from: positiveInt,
  held: z.array(heldStretchSchema),
  shown: z.array(stretchSchema),
}).refine((m) => m.held.length === m.shown.length, {
  message: "held and shown differ in length",
}).refine((m) => inOrderApart(m.held) && inOrderApart(m.shown), {
  message:
    "held and shown stretches must be sorted and not overlap (only the last may run to the end)",
}).transform((m): ReadCacheEditMetaV1 => ({
  v: 1,
  kind: "edit",
  pathKey: m.pathKey,
  baseHash: m.baseHash,
  servedHash: m.servedHash,
  totalLines: m.totalLines,
  from: m.from,
  held: m.held.map((s) => ({
    start: s.start,
    ...(s.end === undefined ? {} : { end: s.end }),
    ...(s.hash === undefined ? {} : { hash: s.hash }),
  })),
  shown: m.shown.map((s) =>
    s.end === undefined ? { start: s.start } : { start: s.start, end: s.end }
  ),
}));

/**
 * Parses `details.readcache` of an `edit` tool result; `undefined` when
 * invalid. Never throws.
 *
 * @example
 * ```ts
 * import { parseEditMeta } from "@readcache/core/rules";
 * parseEditMeta({ v: 1, kind: "edit" }); // undefined
 * ```
 */
export function parseEditMeta(value: unknown): ReadCacheEditMetaV1 | undefined {
  const r = ReadCacheEditMetaV1Schema.safeParse(value);
  return r.success ? r.data : undefined;
}

/**
 * `details.readcache` on the result of a tool other than `read`, `write` and
 * `edit` (a shell command, a search, any tool the adapter does not know;
 * SPEC §5.10): the files whose content on disk, when the result came back,
 * differed from the model's newest view of them. Each entry is an identity
 * (a `pathKey` or a name the model used); from this result on, the model's
 * view of it is unknown. An empty list says every file the model held was
 * as it held it.
 *
 * @example
 * ```ts
 * import type { ReadCacheToolMetaV1 } from "@readcache/core/rules";
 * const m: ReadCacheToolMetaV1 = { v: 1, kind: "tool", changed: ["/w/a.txt"] };
 * ```
 */
export interface ReadCacheToolMetaV1 {
  /** Schema version, always 1. */
  v: 1;
  /** Always `"tool"`. */
  kind: "tool";
  /** Identities (absolute paths) whose content differed from the model's newest view. */
  changed: string[];
  /**
   * Lines the result showed exactly as the file held them when it came back
   * (a recognised shell view such as `cat F` or `sed -n 'A,Bp' F`, or lines
   * of pi's `grep` output): from this result on, they are the model's newest
   * view of those lines. Applied after `changed`.
   */
  shown?: ToolShownV1[];
}

/**
 * One stretch of a file a tool result showed (SPEC §5.10): lines
 * `start..end` (`end` omitted: to the end, the output showed where the file
 * ends) of the content `hash`, which has `totalLines` lines.
 *
 * @example
 * ```ts
 * import type { ToolShownV1 } from "@readcache/core/rules";
 * const s: ToolShownV1 = { pathKey: "/w/a.txt", name: "/w/a.txt", hash: "a".repeat(64),
 *   totalLines: 13, start: 1 }; // `cat a.txt`
 * ```
 */
export interface ToolShownV1 {
  /** Canonical identity of the file. */
  pathKey: string;
  /** The file's name as the command named it, resolved against the working directory. */
  name: string;
  /** SHA-256 of the file's bytes when the result came back. */
  hash: string;
  /** Lines of that content. */
  totalLines: number;
  /** First line shown, 1-based. */
  start: number;
  /** Last line shown; omitted when the output showed the file to its end. */
  end?: number;
}

const toolShownSchema = z.strictObject({
  pathKey: z.string().min(1),
  name: z.string().min(1),
  hash: z.string().regex(HEX64),
  totalLines: positiveInt,
  start: positiveInt,
  end: positiveInt.optional(),
}).refine((s) => (s.end ?? s.totalLines) >= s.start && (s.end ?? s.start) <= s.totalLines, {
  message: "lines outside the content",
});

const ReadCacheToolMetaV1Schema: z.ZodType<ReadCacheToolMetaV1, unknown> = z.looseObject({
  v: z.literal(1),
  kind: z.literal("tool"),
  changed: z.array(z.string().min(1)),
  shown: z.array(toolShownSchema).optional(),
}).transform((m): ReadCacheToolMetaV1 =>
  m.shown === undefined
    ? { v: 1, kind: "tool", changed: [...m.changed] }
    : { v: 1, kind: "tool", changed: [...m.changed], shown: m.shown.map((s) => ({ ...s })) }
);

/**
 * Parses `details.readcache` of another tool's result (SPEC §5.10);
 * `undefined` when invalid (replay then counts every file as changed). Never
 * throws.
 *
 * @example
 * ```ts
 * import { parseToolMeta } from "@readcache/core/rules";
 * parseToolMeta({ v: 1, kind: "tool", changed: [] }); // { v: 1, kind: "tool", changed: [] }
 * parseToolMeta({ v: 1, kind: "tool" }); // undefined
 * ```
 */
export function parseToolMeta(value: unknown): ReadCacheToolMetaV1 | undefined {
  const r = ReadCacheToolMetaV1Schema.safeParse(value);
  return r.success ? r.data : undefined;
}

/**
 * A tool result's `details` (pi) or `metadata` (OpenCode) with `readcache`
 * set to `meta`: the other fields kept, anything that is not an object
 * replaced by one. How every adapter attaches its metadata to a result.
 *
 * @example
 * ```ts
 * import { withReadcacheMeta } from "@readcache/core/rules";
 * withReadcacheMeta({ diff: "..." }, { v: 1 }); // { diff: "...", readcache: { v: 1 } }
 * withReadcacheMeta(undefined, { v: 1 }); // { readcache: { v: 1 } }
 * ```
 */
export function withReadcacheMeta(details: unknown, meta: unknown): Record<string, unknown> {
  const rest = typeof details === "object" && details !== null ? details : {};
  return { ...rest, readcache: meta };
}
