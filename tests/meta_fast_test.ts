// Replay parses read metadata with a hand-written fast path before the zod schema: both must
// accept exactly the same values and give the same result.
import assert from "node:assert/strict";
import fc from "fast-check";
import { parseReadCacheMeta, READ_MODES, validateReadCacheMeta } from "../src/core/meta.ts";

const valid = {
  v: 1,
  pathKey: "/w/a.ts",
  scopeKey: "r:2:5",
  servedHash: "ab".repeat(32),
  baseHash: "cd".repeat(32),
  mode: "unchanged_range",
  totalLines: 9,
  rangeStart: 2,
  rangeEnd: 5,
  bytes: 40,
};
const odd = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant(""),
  fc.constant(0),
  fc.constant(-1),
  fc.constant(1.5),
  fc.constant(Number.NaN),
  fc.constant(Infinity),
  fc.constant("x"),
  fc.constant("full"),
  fc.constant("r:0:3"),
  fc.constant("r:5:2"),
  fc.constantFrom(...READ_MODES),
  fc.integer(),
  fc.string(),
  fc.constant([]),
  fc.constant({}),
);
const mutated = fc.tuple(
  fc.subarray(Object.keys(valid)),
  fc.array(fc.tuple(fc.constantFrom(...Object.keys(valid), "debug"), odd), { maxLength: 3 }),
).map(([drop, sets]) => {
  const o: Record<string, unknown> = { ...valid };
  for (const k of drop) delete o[k];
  for (const [k, v] of sets) o[k] = v;
  return o;
});

// The zod schema alone is the reference.
const reference = (v: unknown) => {
  const r = validateReadCacheMeta(v);
  return r.ok ? r.meta : undefined;
};

Deno.test("fast path and zod schema agree on mutated metadata", () => {
  fc.assert(
    fc.property(fc.oneof(mutated, fc.anything()), (v) => {
      assert.deepEqual(parseReadCacheMeta(v), reference(v));
    }),
    { numRuns: 3000 },
  );
});

Deno.test("the schema names what is wrong", () => {
  const r = validateReadCacheMeta({ ...valid, rangeStart: 0 });
  assert.ok(!r.ok && r.issues.some((i) => i.startsWith("rangeStart")), JSON.stringify(r));
  assert.deepEqual(parseReadCacheMeta(valid), validateReadCacheMeta(valid).ok ? valid : undefined);
});
