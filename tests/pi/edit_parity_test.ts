// pi's edit tool, as src/core/edit.ts models it (SPEC §5.9), against pi's own edit tool
// (0.73.1) run in memory: the same result text or the same error for random files (LF, CRLF,
// mixed, BOM, smart quotes, trailing spaces) and random replacements (found, missing, twice,
// normalised only, overlapping); the same reading of the argument shapes; and where the model's
// belief is determined, it is exactly what pi writes.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import fc from "fast-check";
import { createEditToolDefinition } from "@mariozechner/pi-coding-agent";
import { applyPiEdit, editBelief, editCallArgs } from "../../src/core/edit.ts";

/** pi's edit tool on one in-memory file: its result text, or its error message. */
async function piEdit(
  content: string,
  args: Record<string, unknown>,
): Promise<{ ok: true; text: string } | { ok: false; error: string }> {
  let written: string | undefined;
  const tool = createEditToolDefinition("/w", {
    operations: {
      readFile: () => Promise.resolve(Buffer.from(content, "utf-8")),
      writeFile: (_p: string, c: string) => {
        written = c;
        return Promise.resolve();
      },
      access: () => Promise.resolve(),
    },
  });
  const input = tool.prepareArguments ? tool.prepareArguments(args) : args;
  try {
    // deno-lint-ignore no-explicit-any
    await tool.execute("call_1", input as any, undefined, undefined, undefined as never);
    return { ok: true, text: written! };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

const WORDS = ["alpha", "beta", "it\u2019s", "gamma  ", "\u201Cq\u201D", "x\u2013y", "delta", ""];
const lineArb = fc.array(fc.constantFrom(...WORDS), { minLength: 0, maxLength: 3 }).map((w) =>
  w.join(" ")
);
const fileArb = fc.record({
  lines: fc.array(lineArb, { minLength: 1, maxLength: 8 }),
  ending: fc.constantFrom("\n", "\r\n", "mixed"),
  bom: fc.boolean(),
  finalNewline: fc.boolean(),
}).map(({ lines, ending, bom, finalNewline }) => {
  const body = lines.map((l, i) => l + (ending === "mixed" ? (i % 2 ? "\r\n" : "\n") : ending))
    .join("");
  return (bom ? "\uFEFF" : "") + (finalNewline ? body : body.replace(/\r?\n$/, ""));
});

/** A replacement whose oldText is a slice of the file, sometimes altered to miss or be fuzzy. */
const editArb = (file: string) =>
  fc.record({
    at: fc.nat(Math.max(file.length - 1, 0)),
    len: fc.integer({ min: 1, max: 12 }),
    alter: fc.constantFrom("none", "none", "none", "ascii-quotes", "ascii-quotes", "missing", "lf"),
    newText: fc.constantFrom("NEW", "", "a\nb", "line\n", "\u201Cz\u201D"),
  }).map(({ at, len, alter, newText }) => {
    let oldText = file.replace(/^\uFEFF/, "").slice(at, at + len) || "alpha";
    if (alter === "ascii-quotes") oldText = oldText.replace(/[\u2019\u201C\u201D]/g, "'");
    if (alter === "missing") oldText += "#missing#";
    if (alter === "lf") oldText = oldText.replace(/\r\n/g, "\n");
    return { oldText, newText };
  });

Deno.test("applyPiEdit gives pi's result or pi's error (property)", async () => {
  const seen = { applied: 0, fuzzy: 0, failed: 0, beliefs: 0 };
  await fc.assert(
    fc.asyncProperty(
      fileArb.chain((file) =>
        fc.tuple(fc.constant(file), fc.array(editArb(file), { minLength: 1, maxLength: 3 }))
      ),
      async ([file, edits]) => {
        const pi = await piEdit(file, { path: "f.txt", edits });
        const ours = applyPiEdit(file, edits, "f.txt");
        if (pi.ok) {
          assert.ok(ours.ok, `pi applied it, we said: ${!ours.ok && ours.error}`);
          assert.equal(ours.text, pi.text);
          seen.applied++;
          if (ours.fuzzy) seen.fuzzy++;
        } else {
          seen.failed++;
          assert.ok(!ours.ok, `pi failed (${pi.error}), we applied it`);
          assert.equal(ours.error, pi.error);
        }
        // where the belief is determined, it is exactly what pi writes, without the fallback
        const belief = editBelief(file, edits);
        if (belief !== undefined) {
          seen.beliefs++;
          assert.ok(pi.ok && ours.ok && !ours.fuzzy);
          assert.equal(belief.text, pi.text);
        }
      },
    ),
    { numRuns: 1000, seed: 1729 },
  );
  // the runs reach every kind of outcome
  for (const [k, n] of Object.entries(seen)) assert.ok(n >= 10, `only ${n} runs ${k}`);
});

Deno.test("edit argument shapes are read as pi's prepareArguments reads them", async () => {
  const file = "one\ntwo\nthree\n";
  const shapes: Record<string, unknown>[] = [
    { path: "f.txt", edits: [{ oldText: "two", newText: "2" }] },
    { path: "f.txt", edits: JSON.stringify([{ oldText: "two", newText: "2" }]) },
    { path: "f.txt", oldText: "two", newText: "2" },
    { path: "f.txt", edits: [{ oldText: "one", newText: "1" }], oldText: "two", newText: "2" },
    { path: "f.txt", edits: "not json", oldText: "two", newText: "2" },
  ];
  for (const args of shapes) {
    const parsed = editCallArgs(structuredClone(args));
    assert.ok(parsed, JSON.stringify(args));
    const pi = await piEdit(file, structuredClone(args));
    const ours = applyPiEdit(file, parsed.edits, parsed.path);
    assert.deepEqual(ours.ok && ours.text, pi.ok && pi.text, JSON.stringify(args));
  }
  // no replacement at all: pi rejects the call before it touches the file
  assert.equal(editCallArgs({ path: "f.txt", edits: [] }), undefined);
  assert.equal(editCallArgs({ path: "f.txt", edits: "[]" }), undefined);
  assert.equal((await piEdit(file, { path: "f.txt", edits: [] })).ok, false);
});
