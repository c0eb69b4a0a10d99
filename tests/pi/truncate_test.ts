import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import fc from "fast-check";
import {
  formatSize as piFormatSize,
  truncateHead as piTruncateHead,
} from "@mariozechner/pi-coding-agent";
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  formatSize,
  truncateHead,
  type TruncationResult,
} from "../../src/core/truncate.ts";

function lines(count: number, make: (i: number) => string = (i) => `line ${i}`): string {
  const out: string[] = [];
  for (let i = 1; i <= count; i++) out.push(make(i));
  return out.join("\n");
}

Deno.test("defaults are 2000 lines and 50 KiB", () => {
  assert.equal(DEFAULT_MAX_LINES, 2000);
  assert.equal(DEFAULT_MAX_BYTES, 50 * 1024);
});

Deno.test("exactly 2000 lines is not truncated", () => {
  const content = lines(2000);
  const result = truncateHead(content);
  assert.equal(result.truncated, false);
  assert.equal(result.truncatedBy, null);
  assert.equal(result.content, content);
  assert.equal(result.totalLines, 2000);
  assert.equal(result.outputLines, 2000);
  assert.equal(result.totalBytes, Buffer.byteLength(content, "utf-8"));
  assert.equal(result.outputBytes, result.totalBytes);
  assert.equal(result.maxLines, 2000);
  assert.equal(result.maxBytes, 51200);
});

Deno.test("2001 lines keeps the first 2000, truncated by lines", () => {
  const content = lines(2001);
  const result = truncateHead(content);
  assert.equal(result.truncated, true);
  assert.equal(result.truncatedBy, "lines");
  assert.equal(result.totalLines, 2001);
  assert.equal(result.outputLines, 2000);
  assert.equal(result.content, lines(2000));
  assert.equal(result.outputBytes, Buffer.byteLength(lines(2000), "utf-8"));
  assert.equal(result.lastLinePartial, false);
  assert.equal(result.firstLineExceedsLimit, false);
});

Deno.test("2000 lines plus a trailing newline counts as 2001 lines", () => {
  const result = truncateHead(`${lines(2000)}\n`);
  assert.equal(result.totalLines, 2001);
  assert.equal(result.truncatedBy, "lines");
  assert.equal(result.content, lines(2000));
});

Deno.test("a single line of exactly 51200 bytes is kept", () => {
  const content = "a".repeat(51200);
  const result = truncateHead(content);
  assert.equal(result.truncated, false);
  assert.equal(result.content, content);
  assert.equal(result.totalBytes, 51200);
});

Deno.test("a single line of 51201 bytes exceeds the limit and nothing is kept", () => {
  const result = truncateHead("a".repeat(51201));
  assert.equal(result.truncated, true);
  assert.equal(result.truncatedBy, "bytes");
  assert.equal(result.firstLineExceedsLimit, true);
  assert.equal(result.content, "");
  assert.equal(result.outputLines, 0);
  assert.equal(result.outputBytes, 0);
  assert.equal(result.totalBytes, 51201);
  assert.equal(result.totalLines, 1);
});

Deno.test("multi-line content of exactly 51200 bytes is kept; 51201 drops the last line", () => {
  // 100 lines of 511 chars + 99 newlines = 51199 bytes; one more char on the last line = 51200.
  const exact = lines(100, (i) => "x".repeat(i === 100 ? 512 : 511));
  assert.equal(Buffer.byteLength(exact, "utf-8"), 51200);
  const kept = truncateHead(exact);
  assert.equal(kept.truncated, false);
  assert.equal(kept.content, exact);

  const over = `${exact}z`;
  const cut = truncateHead(over);
  assert.equal(cut.truncated, true);
  assert.equal(cut.truncatedBy, "bytes");
  assert.equal(cut.outputLines, 99);
  assert.equal(cut.content, over.split("\n").slice(0, 99).join("\n"));
  assert.equal(cut.outputBytes, 99 * 511 + 98);
  assert.equal(cut.totalBytes, 51201);
});

Deno.test("the newline before a line counts toward the byte limit", () => {
  // "aaaa\nbbbb" is 9 bytes: with maxBytes 8 only the first line fits.
  const result = truncateHead("aaaa\nbbbb\nc", { maxBytes: 8 });
  assert.equal(result.content, "aaaa");
  assert.equal(result.truncatedBy, "bytes");
  const fits = truncateHead("aaaa\nbbbb\nc", { maxBytes: 9 });
  assert.equal(fits.content, "aaaa\nbbbb");
});

Deno.test("bytes are UTF-8: 2-, 3- and 4-byte characters at the boundary", () => {
  assert.equal(truncateHead("é".repeat(25600)).truncated, false);
  assert.equal(truncateHead("é".repeat(25601)).firstLineExceedsLimit, true);
  assert.equal(truncateHead("😀".repeat(12800)).truncated, false);
  assert.equal(truncateHead("😀".repeat(12800) + "a").firstLineExceedsLimit, true);
  const cjk = truncateHead("中".repeat(17066) + "\n" + "ab");
  // 51198 + 1 + 2 = 51201 bytes: the second line no longer fits.
  assert.equal(cjk.totalBytes, 51201);
  assert.equal(cjk.outputLines, 1);
  assert.equal(cjk.outputBytes, 51198);
});

Deno.test("lone surrogates count as 3 bytes like Buffer.byteLength", () => {
  for (const sample of ["\ud83d", "\ude00", "a\ud83dz", "\ude00\ud83d", "😀\ud83d"]) {
    assert.equal(truncateHead(sample).totalBytes, Buffer.byteLength(sample, "utf-8"), sample);
  }
});

Deno.test("hitting the line limit is reported as 'lines' even when bytes also overflow", () => {
  // 2000 short lines fit in 50 KiB, but the 2001st line pushes the total over it.
  const content = `${lines(2000)}\n${"q".repeat(60000)}`;
  const result = truncateHead(content);
  assert.equal(result.truncatedBy, "lines");
  assert.equal(result.outputLines, 2000);
});

Deno.test("custom limits are applied and echoed", () => {
  const result: TruncationResult = truncateHead("a\nb\nc\nd", { maxLines: 2, maxBytes: 100 });
  assert.equal(result.content, "a\nb");
  assert.equal(result.maxLines, 2);
  assert.equal(result.maxBytes, 100);
  assert.equal(result.truncatedBy, "lines");
});

Deno.test("empty content is one empty line and never truncated", () => {
  const result = truncateHead("");
  assert.equal(result.truncated, false);
  assert.equal(result.totalLines, 1);
  assert.equal(result.totalBytes, 0);
  assert.equal(result.content, "");
});

Deno.test("formatSize uses B, KB and MB with one decimal", () => {
  assert.equal(formatSize(0), "0B");
  assert.equal(formatSize(512), "512B");
  assert.equal(formatSize(1023), "1023B");
  assert.equal(formatSize(1024), "1.0KB");
  assert.equal(formatSize(1536), "1.5KB");
  assert.equal(formatSize(51200), "50.0KB");
  assert.equal(formatSize(60000), "58.6KB");
  // Just under 1 MiB rounds up but stays in KB, as in pi.
  assert.equal(formatSize(1048575), "1024.0KB");
  assert.equal(formatSize(1048576), "1.0MB");
  assert.equal(formatSize(1258291), "1.2MB");
});

const textArb: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.constantFrom("\n", "\r\n", "a", "é", "中", "😀", "\ud83d", "\ude00", "\uFEFF"),
      fc.string({ unit: "binary", maxLength: 8 }),
    ),
    { maxLength: 60 },
  )
  .map((parts: string[]) => parts.join(""));

Deno.test("truncateHead agrees with pi's truncateHead (property)", () => {
  fc.assert(
    fc.property(
      textArb,
      fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }),
      fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined }),
      (content: string, maxLines: number | undefined, maxBytes: number | undefined) => {
        const options = { maxLines, maxBytes };
        assert.deepStrictEqual(truncateHead(content, options), piTruncateHead(content, options));
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("formatSize agrees with pi's formatSize (property)", () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 5 * 1024 * 1024 * 1024 }), (bytes: number) => {
      assert.equal(formatSize(bytes), piFormatSize(bytes));
    }),
    { numRuns: 2000 },
  );
});
