// OpenCode's read output, rendered by the adapter (src/adapters/opencode/baseline.ts): checked
// against what OpenCode 1.18.33's own read tool returned for awkward files and ranges
// (tests/opencode/fixtures/opencode-reads.json, captured by scripts/opencode/capture_reads.ts
// with the real binary), and the line and range rules one by one.
import assert from "node:assert/strict";
import { FILES, READS, summarize } from "../../scripts/opencode/capture_reads.ts";
import {
  decodeOpenCodeText,
  OPENCODE_MAX_BYTES,
  renderOpenCodeRead,
  splitOpenCodeLines,
} from "../../src/adapters/opencode/baseline.ts";

interface Captured {
  file: string;
  offset?: number;
  limit?: number;
  sha256: string;
  length: number;
  head: string;
  tail: string;
}

const fixture = JSON.parse(
  await Deno.readTextFile(new URL("./fixtures/opencode-reads.json", import.meta.url)),
) as { opencode: string; reads: Captured[] };

Deno.test("the fixture covers every read of the capture script", () => {
  assert.deepEqual(
    fixture.reads.map(({ file, offset, limit }) => ({ file, offset, limit })),
    READS.map(({ file, offset, limit }) => ({ file, offset, limit })),
  );
});

for (const c of fixture.reads) {
  const label = `${c.file}${c.offset === undefined ? "" : ` offset=${c.offset}`}${
    c.limit === undefined ? "" : ` limit=${c.limit}`
  }`;
  Deno.test(`renderOpenCodeRead is OpenCode ${fixture.opencode}'s read: ${label}`, () => {
    const view = renderOpenCodeRead({
      path: "{{path}}",
      text: decodeOpenCodeText(FILES[c.file]),
      offset: c.offset,
      limit: c.limit,
    });
    assert.ok(view !== undefined, "OpenCode served it, so must the renderer");
    assert.deepEqual(summarize(view.text), {
      sha256: c.sha256,
      length: c.length,
      head: c.head,
      tail: c.tail,
    });
  });
}

Deno.test("splitOpenCodeLines: \\n, \\r\\n and a lone \\r end lines; a final one adds none", () => {
  assert.deepEqual(splitOpenCodeLines(""), []);
  assert.deepEqual(splitOpenCodeLines("\n"), [""]);
  assert.deepEqual(splitOpenCodeLines("\r"), [""]);
  assert.deepEqual(splitOpenCodeLines("a"), ["a"]);
  assert.deepEqual(splitOpenCodeLines("a\n"), ["a"]);
  assert.deepEqual(splitOpenCodeLines("a\n\n"), ["a", ""]);
  assert.deepEqual(splitOpenCodeLines("a\r\nb\rc\nd"), ["a", "b", "c", "d"]);
  assert.deepEqual(splitOpenCodeLines("a\r\r\nb"), ["a", "", "b"]);
});

Deno.test("decodeOpenCodeText drops a BOM and replaces bad bytes", () => {
  assert.equal(decodeOpenCodeText(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])), "a");
  assert.equal(decodeOpenCodeText(new Uint8Array([0x61, 0xff])), "a\uFFFD");
});

Deno.test("renderOpenCodeRead: what a read showed", () => {
  const text = "one\ntwo\nthree\n";
  const whole = renderOpenCodeRead({ path: "/w/a", text })!;
  assert.deepEqual(
    { start: whole.start, end: whole.end, fileLines: whole.fileLines, more: whole.more },
    { start: 1, end: 3, fileLines: 3, more: false },
  );
  const range = renderOpenCodeRead({ path: "/w/a", text, offset: 2, limit: 1 })!;
  assert.deepEqual([range.start, range.end, range.more, range.counted], [2, 2, true, 3]);
  assert.equal(renderOpenCodeRead({ path: "/w/a", text, offset: 0 })!.start, 1);
  const nothing = renderOpenCodeRead({ path: "/w/a", text, limit: 0 })!;
  assert.equal(nothing.end, nothing.start - 1);
  assert.equal(renderOpenCodeRead({ path: "/w/a", text: "", offset: 1 })!.end, 0);
});

Deno.test("renderOpenCodeRead: OpenCode's refusals give undefined", () => {
  assert.equal(renderOpenCodeRead({ path: "/w/a", text: "x\n", offset: 2 }), undefined);
  assert.equal(renderOpenCodeRead({ path: "/w/a", text: "", offset: 2 }), undefined);
  assert.equal(renderOpenCodeRead({ path: "/w/a", text: "x\n", offset: -1 }), undefined);
  assert.equal(renderOpenCodeRead({ path: "/w/a", text: "x\n", limit: 1.5 }), undefined);
});

Deno.test("renderOpenCodeRead: shortened lines and the 50 KB cut are reported", () => {
  const long = renderOpenCodeRead({ path: "/w/a", text: "x".repeat(2001) + "\nok\n" })!;
  assert.equal(long.shortenedLines, true);
  assert.equal(renderOpenCodeRead({ path: "/w/a", text: "x".repeat(2000) })!.shortenedLines, false);
  const wide = renderOpenCodeRead({ path: "/w/a", text: ("y".repeat(99) + "\n").repeat(600) })!;
  assert.equal(wide.cut, true);
  assert.equal(wide.end, Math.floor((OPENCODE_MAX_BYTES + 1) / 100));
});
