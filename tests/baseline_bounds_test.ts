// The lines a read shows, found without rendering pi's output (baselineShownLines), are the lines
// renderBaselineRead shows, wherever the shortcut answers (files of at most 2,000 lines and 50 KiB),
// so a decision that needs no text (an unchanged answer) never renders it.
import assert from "node:assert/strict";
import fc from "fast-check";
import { baselineShownLines, renderBaselineRead } from "../src/core/baseline.ts";

const encoder = new TextEncoder();

/** Texts around both limits: few or many lines, short or long ones, multi-byte characters. */
const textArb = fc.oneof(
  fc.array(fc.string({ maxLength: 12 }), { maxLength: 30 }).map((ls) => ls.join("\n")),
  fc.tuple(fc.integer({ min: 1900, max: 2100 }), fc.boolean()).map(([n, end]) =>
    "x\n".repeat(n) + (end ? "" : "last")
  ),
  fc.tuple(fc.integer({ min: 51_150, max: 51_250 }), fc.constantFrom("a", "é", "😀")).map((
    [n, c],
  ) => c.repeat(Math.floor(n / encoder.encode(c).length)).replace(/(.{100})/g, "$1\n")),
);

Deno.test("the lines a read shows, without rendering, are the lines pi's output shows", () => {
  let answered = 0;
  fc.assert(
    fc.property(
      textArb,
      fc.option(fc.integer({ min: 0, max: 2200 }), { nil: undefined }),
      fc.option(fc.integer({ min: 0, max: 2200 }), { nil: undefined }),
      (text, offset, limit) => {
        const totalLines = text.split("\n").length;
        const bytes = encoder.encode(text).length;
        const fast = baselineShownLines({ offset, limit }, totalLines, bytes);
        const start = offset ? offset - 1 : 0;
        if (start >= totalLines) {
          assert.equal(fast, undefined);
          return;
        }
        const r = renderBaselineRead({ text, displayPath: "f.txt", offset, limit });
        if (bytes <= 51_200 && totalLines <= 2000) {
          assert.deepEqual(fast, { shownStart: r.shownStart, shownEnd: r.shownEnd });
          assert.equal(r.truncation?.truncated ?? false, false);
          answered++;
        } else assert.equal(fast, undefined);
      },
    ),
    { numRuns: 3000 },
  );
  assert.ok(answered > 500, `${answered} answered without rendering`);
});
