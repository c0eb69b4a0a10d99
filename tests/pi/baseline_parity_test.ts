/**
 * Parity of `renderBaselineRead` with pi's real read tool.
 *
 * pi's own `createReadTool(cwd).execute(...)` (npm:@mariozechner/pi-coding-agent,
 * pinned in deno.json) is imported directly into this Deno test and run on real
 * temp files; its text output, its `details.truncation` and any error message
 * must equal ours for every file x offset/limit combination below.
 */
import assert from "node:assert/strict";
import { renderBaselineRead } from "../../src/core/baseline.ts";
import { OffsetBeyondEndError } from "../../src/core/errors.ts";
import {
  type Call,
  nodeUtf8 as decoder,
  numberedLines as numbered,
  PI_READ_BRANCHES,
  type PiReadBranch as Branch,
  piReadBranch as branchOf,
  runPiRead,
  utf8,
} from "./support/pi_read_oracle.ts";

/** A file in the parity table. */
interface FileCase {
  /** File name inside the temp dir. */
  name: string;
  /** Raw file bytes. */
  bytes: Uint8Array;
  /** Extra offset/limit combinations specific to this file. */
  extra?: Call[];
  /** Extra paths (as the model would type them) to read the file by. */
  altPaths?: (dir: string) => string[];
}

/** A file whose first two lines together take exactly `51200 - d` bytes, the second being one emoji. */
function emojiAtBoundary(d: number): Uint8Array {
  // "a"*n + "\n" + "😀" (4 bytes) = n + 5 bytes.
  const first = "a".repeat(51200 - 5 - d);
  return utf8(`${first}\n😀\ntail line\n`);
}

function mixedUnicodeLines(count: number): string {
  const lines: string[] = [];
  for (let i = 1; i <= count; i++) {
    lines.push(`${i} héllo wörld 中文字 😀🎉 ${"ü".repeat(i % 7)}${"𝄞".repeat(i % 3)} end`);
  }
  return lines.join("\n");
}

const FILES: FileCase[] = [
  { name: "empty.txt", bytes: new Uint8Array(0) },
  { name: "single.txt", bytes: utf8("hello world") },
  { name: "trailing_newline.txt", bytes: utf8("alpha\nbeta\ngamma\n") },
  { name: "only_newlines.txt", bytes: utf8("\n\n\n") },
  { name: "crlf.txt", bytes: utf8("one\r\ntwo\r\nthree\r\n") },
  { name: "lines_2000.txt", bytes: utf8(numbered(2000).join("\n")), extra: [{ offset: 1000 }] },
  {
    name: "lines_2000_trailing_newline.txt",
    bytes: utf8(numbered(2000).join("\n") + "\n"),
    extra: [{ offset: 2 }, { offset: 1, limit: 2000 }, { limit: 1999 }],
  },
  {
    name: "lines_2001.txt",
    bytes: utf8(numbered(2001).join("\n")),
    extra: [{ offset: 2000 }, { limit: 2001 }, { limit: 2000 }, { offset: 1, limit: 1500 }],
  },
  {
    name: "lines_5000.txt",
    bytes: utf8(numbered(5000).join("\n")),
    extra: [{ offset: 2001 }, { offset: 4000 }, { offset: 100, limit: 2500 }],
  },
  {
    name: "bytes_over_50k.txt",
    // 1000 lines of 100 bytes (+ newline): ~101 KB in fewer than 2000 lines.
    bytes: utf8(numbered(1000, 100).join("\n") + "\n"),
    extra: [{ offset: 500 }, { offset: 400, limit: 300 }, { limit: 600 }],
  },
  {
    name: "bytes_exactly_50k.txt",
    // 512 lines of 99 chars + 511 newlines + final 1-byte line = 51200 bytes.
    bytes: utf8(numbered(512, 99).join("\n").slice(0, 51200)),
  },
  {
    name: "bytes_50k_plus_one.txt",
    bytes: utf8(numbered(513, 99).join("\n").slice(0, 51201)),
  },
  {
    name: "huge_first_line.txt",
    bytes: utf8(`${"x".repeat(60000)}\nsecond\nthird\n`),
    extra: [{ limit: 1, offset: 1 }],
    altPaths: (dir: string) => [`${dir}/huge_first_line.txt`, "@huge_first_line.txt"],
  },
  {
    name: "huge_first_line_1mb.txt",
    bytes: utf8(`${"y".repeat(1300000)}\nshort`),
  },
  {
    name: "huge_middle_line.txt",
    bytes: utf8(
      [...numbered(10), "z".repeat(70000), ...numbered(5)].join("\n") + "\n",
    ),
    extra: [
      { offset: 11 },
      { offset: 11, limit: 1 },
      { offset: 10 },
      { offset: 5, limit: 3 },
      { offset: 12 },
    ],
  },
  {
    name: "huge_multibyte_first_line.txt",
    bytes: utf8(`${"é".repeat(25601)}\nafter`),
  },
  { name: "unicode_small.txt", bytes: utf8("naïve café\n中文\n😀 emoji\n𝄞 clef\n") },
  {
    name: "unicode_many.txt",
    bytes: utf8(mixedUnicodeLines(1500)),
    extra: [{ offset: 700 }, { offset: 1, limit: 1499 }],
  },
  { name: "emoji_boundary_fits.txt", bytes: emojiAtBoundary(0), extra: [{ limit: 2 }] },
  { name: "emoji_boundary_under.txt", bytes: emojiAtBoundary(1) },
  { name: "emoji_boundary_over1.txt", bytes: emojiAtBoundary(-1) },
  { name: "emoji_boundary_over3.txt", bytes: emojiAtBoundary(-3) },
  { name: "emoji_boundary_over4.txt", bytes: emojiAtBoundary(-4) },
  {
    name: "bom.txt",
    bytes: new Uint8Array([0xef, 0xbb, 0xbf, ...utf8("first\nsecond\nthird")]),
  },
  { name: "bom_only.txt", bytes: new Uint8Array([0xef, 0xbb, 0xbf]) },
  {
    name: "invalid_utf8.txt",
    bytes: new Uint8Array([
      ...utf8("ok\n"),
      0xff,
      0xfe,
      0x41,
      0xc3,
      0x0a,
      0xe2,
      0x82,
      ...utf8("z"),
    ]),
  },
];

/** offset/limit combinations applied to every file (offsets relative to its line count). */
function commonCalls(totalLines: number): Call[] {
  return [
    {},
    { offset: 2 },
    { limit: 1 },
    { limit: 3 },
    { offset: 2, limit: 2 },
    { limit: totalLines + 50 },
    { offset: totalLines },
    { offset: totalLines, limit: 1 },
    { offset: totalLines + 1 },
    { offset: totalLines + 10, limit: 5 },
    // Values callers are expected to reject, but pi accepts: keep its semantics.
    { offset: 0 },
    { offset: 0, limit: 2 },
    { offset: -3 },
    { limit: 0 },
    { offset: 2, limit: 0 },
    { limit: -1 },
  ];
}

function describe(path: string, call: Call): string {
  return `${path} offset=${call.offset} limit=${call.limit}`;
}

/** Checks one call and returns the branch pi took. */
async function checkCall(
  dir: string,
  path: string,
  text: string,
  call: Call,
): Promise<Branch> {
  const label = describe(path, call);
  const pi = await runPiRead(dir, path, call);
  const input = { text, displayPath: path, ...call };
  if (pi.ok) {
    assert.equal(pi.content.length, 1, `${label}: pi returned one content block`);
    assert.equal(pi.content[0].type, "text", `${label}: pi returned a text block`);
  }

  if (!pi.ok) {
    assert.throws(
      () => renderBaselineRead(input),
      (error: unknown) => {
        assert.ok(error instanceof OffsetBeyondEndError, `${label}: OffsetBeyondEndError`);
        assert.equal(error.message, pi.message, `${label}: error message`);
        return true;
      },
      `${label}: pi threw "${pi.message}"`,
    );
    return branchOf(pi);
  }

  const ours = renderBaselineRead(input);
  assert.equal(ours.text, pi.text, `${label}: text`);
  const truncation = pi.details?.truncation;
  assert.deepStrictEqual(ours.truncation, truncation, `${label}: details.truncation`);
  assert.equal("truncation" in ours, truncation !== undefined, `${label}: truncation presence`);

  // Line accounting, checked against the file and pi's own output.
  const fileLines = text.split("\n");
  assert.equal(ours.totalLines, fileLines.length, `${label}: totalLines`);
  const showing = /\n\n\[Showing lines (\d+)-(\d+) of (\d+)/.exec(pi.text);
  if (truncation?.firstLineExceedsLimit) {
    assert.ok(pi.text.startsWith(`[Line ${ours.shownStart} is `), `${label}: shownStart`);
    assert.equal(ours.shownEnd, ours.shownStart - 1, `${label}: nothing shown`);
  } else if (showing) {
    assert.equal(ours.shownStart, Number(showing[1]), `${label}: shownStart`);
    assert.equal(ours.shownEnd, Number(showing[2]), `${label}: shownEnd`);
    assert.equal(ours.totalLines, Number(showing[3]), `${label}: totalLines in notice`);
  }
  if (!truncation?.firstLineExceedsLimit) {
    const body = pi.text.replace(/\n\n\[[^\n]*\]$/, "");
    const expectedBody = fileLines.slice(ours.shownStart - 1, ours.shownEnd).join("\n");
    assert.equal(body, expectedBody, `${label}: shown range matches the lines pi printed`);
  }
  return branchOf(pi);
}

Deno.test("renderBaselineRead matches pi's read tool on real files", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "readcache_parity_" });
  const seen = new Set<Branch>();
  try {
    for (const file of FILES) {
      await Deno.writeFile(`${dir}/${file.name}`, file.bytes);
      const text = decoder.decode(file.bytes);
      const totalLines = text.split("\n").length;
      const calls = [...commonCalls(totalLines), ...(file.extra ?? [])];
      const paths = [file.name, ...(file.altPaths?.(dir) ?? [])];
      await t.step(file.name, async () => {
        for (const path of paths) {
          for (const call of calls) seen.add(await checkCall(dir, path, text, call));
        }
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  assert.deepStrictEqual(
    [...seen].sort(),
    [...PI_READ_BRANCHES].sort(),
    "the table exercises every branch",
  );
});

Deno.test("BOM decoding used by the parity table keeps U+FEFF like Node's Buffer", () => {
  const text = decoder.decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x61]));
  assert.equal(text, "\uFEFFa");
});
