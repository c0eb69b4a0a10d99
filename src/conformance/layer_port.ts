/**
 * Reference implementation of the layer-1/2 vector cases (path, range, trust,
 * replay): given one case, compute what a port must print. Used by the tests,
 * by the reference port and by the conformance runner.
 *
 * Specified by SPEC.md §10.
 *
 * @module
 */
import { ReadCacheError } from "../core/errors.ts";
import { BranchKnowledge } from "../core/knowledge.ts";
import { parseInvalidation, parseReadCacheMeta } from "../core/meta.ts";
import { canonicalPathKey } from "../core/path_key.ts";
import type { PathEnv } from "../core/path.ts";
import { resolveReadPath } from "../core/path.ts";
import { normalizeRange, resolveReadTarget } from "../core/range.ts";
import { activeBranch, type ReplayEntry } from "../core/replay.ts";
import { parseScopeKey, type ScopeKey } from "../core/scope.ts";
import {
  type PathTrust,
  pathTrustAfterInvalidation,
  pathTrustAfterRead,
  type ScopeTrust,
  selectBase,
  type TrustState,
} from "../core/trust.ts";
import type { LayerPortInput } from "./vector_schema.ts";

/** A port's answer to one layer case. */
export type LayerResult =
  | { id: string; output: Record<string, unknown> }
  | { id: string; error: { code?: string; message: string } };

/** One layer case as a port is given it on stdin (its inputs only, SPEC §10). */
export type LayerInput = LayerPortInput;
type PathInput = Extract<LayerInput, { layer: "path" }>;
type RangeInput = Extract<LayerInput, { layer: "range" }>;
type TrustInput = Extract<LayerInput, { layer: "trust" }>;
type ReplayInput = Extract<LayerInput, { layer: "replay" }>;

function envOf(input: { cwd: string; home: string; existing: string[] }): PathEnv {
  const existing = new Set(input.existing);
  return { cwd: input.cwd, home: input.home, exists: (p) => existing.has(p) };
}

function runPath(c: PathInput): Record<string, unknown> {
  const env = envOf(c.input);
  const resolved = resolveReadPath(c.input.path, env);
  const real = c.input.realpaths ?? {};
  const pathKey = canonicalPathKey(
    resolved,
    (p) => env.exists(p) ? (real[p] ?? p) : undefined,
  );
  return { resolved, pathKey };
}

function runRange(c: RangeInput): Record<string, unknown> {
  const t = resolveReadTarget(
    { path: c.input.path, offset: c.input.offset, limit: c.input.limit },
    envOf(c.input),
  );
  const out: Record<string, unknown> = { displayPath: t.displayPath, resolved: t.resolvedPath };
  if (t.offset !== undefined) out.offset = t.offset;
  if (t.limit !== undefined) out.limit = t.limit;
  if (c.input.totalLines !== undefined) {
    const r = normalizeRange(t.offset, t.limit, c.input.totalLines);
    out.start = r.start;
    out.end = r.end;
    out.scopeKey = r.scopeKey;
  }
  return out;
}

function selectAll(
  queries: { pathKey: string; scopeKey: string }[] | undefined,
  lookup: (pathKey: string) => PathTrust | undefined,
): { pathKey: string; scopeKey: string; base: ScopeTrust | null }[] {
  return (queries ?? []).map((q) => {
    const scope = parseScopeKey(q.scopeKey);
    const base = scope === undefined
      ? undefined
      : selectBase(lookup(q.pathKey), q.scopeKey as ScopeKey);
    return { pathKey: q.pathKey, scopeKey: q.scopeKey, base: base ?? null };
  });
}

function runTrust(c: TrustInput): Record<string, unknown> {
  const state: Record<string, PathTrust> = { ...c.initial };
  const outcomes: string[] = [];
  for (const ev of c.events) {
    if ("read" in ev) {
      const meta = parseReadCacheMeta(ev.read);
      if (!meta) {
        outcomes.push("invalid");
        continue;
      }
      const r = pathTrustAfterRead(state[meta.pathKey], meta, ev.seq);
      outcomes.push(r.outcome);
      if (r.trust) state[meta.pathKey] = r.trust;
    } else {
      const inv = parseInvalidation(ev.invalidate);
      if (!inv) {
        outcomes.push("invalid");
        continue;
      }
      const next = pathTrustAfterInvalidation(state[inv.pathKey], inv.scopeKey);
      if (next) state[inv.pathKey] = next;
      else delete state[inv.pathKey];
      outcomes.push("applied");
    }
  }
  return { trust: state, outcomes, select: selectAll(c.select, (p) => state[p]) };
}

function runReplay(c: ReplayInput): Record<string, unknown> {
  const entries = c.entries as ReplayEntry[];
  const k = new BranchKnowledge();
  for (const o of c.overlay ?? []) {
    k.sync(activeBranch(entries, o.anchor));
    const meta = parseReadCacheMeta(o.meta);
    if (meta) k.recordServed(o.callId === undefined ? { meta } : { meta, callId: o.callId });
  }
  const branch = activeBranch(entries, c.leaf);
  k.sync(branch);
  const snap = k.snapshot();
  const paths = new Set([
    ...Object.keys(snap.trust),
    ...k.inFlight.flatMap((r) => r.meta ? [r.meta.pathKey] : []),
  ]);
  const trust: Record<string, PathTrust> = {};
  for (const p of paths) {
    const t = k.pathTrust(p);
    if (t) trust[p] = t;
  }
  return {
    startIndex: snap.boundary.startIndex,
    compactionId: snap.boundary.compactionId,
    seq: snap.seq,
    windowSize: snap.windowSize,
    trust: trust as TrustState,
    select: selectAll(c.select, (p) => k.pathTrust(p)),
  };
}

/**
 * Runs one layer case against the reference implementation.
 *
 * @example
 * ```ts ignore
 * const result = runLayerCase({ layer: "path", ...pathCase });
 * ```
 */
export function runLayerCase(input: LayerInput): LayerResult {
  try {
    switch (input.layer) {
      case "path":
        return { id: input.id, output: runPath(input) };
      case "range":
        return { id: input.id, output: runRange(input) };
      case "trust":
        return { id: input.id, output: runTrust(input) };
      case "replay":
        return { id: input.id, output: runReplay(input) };
    }
  } catch (e) {
    if (e instanceof ReadCacheError) {
      return { id: input.id, error: { code: e.code, message: e.message } };
    }
    return { id: input.id, error: { message: e instanceof Error ? e.message : String(e) } };
  }
}
