/**
 * Output parity of the pi extension's `read` override with pi's own read tool.
 *
 * Every case runs the extension (`createReadcacheExtension()`) in a FRESH
 * `FakePiHost` around a fresh in-memory pi `SessionManager`, so its read is a
 * first read: the branch holds no trust for the file and the override must
 * serve exactly what pi serves ("full" mode, or a plain read without readcache
 * metadata for sensitive / non-text files and for reads that show no line).
 * The same call then goes to pi's real `createReadTool(cwd).execute(...)`
 * (npm:@mariozechner/pi-coding-agent, pinned in deno.json). Success/failure,
 * the content blocks, `details.truncation` and error messages must match.
 *
 * Not covered here on purpose: offset/limit values that are 0, negative or
 * not integers. pi accepts them (0 means line 1); the adapter rejects them
 * with a RangeSyntaxError. That is a documented difference, not parity.
 */
import assert from "node:assert/strict";
import {
  createReadcacheExtension,
  type ReadcacheReadDetails,
} from "../../src/adapters/pi/extension.ts";
import { FakePiHost, newSession, type ToolOutcome } from "../../scripts/pi/pi_host.ts";
import {
  type Call,
  nodeUtf8 as decoder,
  numberedLines,
  type PiReadBranch as Branch,
  piReadBranch as branchOf,
  runPiRead as runPi,
  utf8,
} from "./support/pi_read_oracle.ts";

/** How the adapter is expected to serve a successful first read of a file. */
type Expect =
  /** Readcache metadata with mode "full" (or none, when pi shows no line: first line too long). */
  | "full"
  /** A plain read: never any readcache metadata (sensitive path, not UTF-8, binary). */
  | "plain";

/** A file in the parity table. */
interface FileCase {
  /** Test name (also used in step names). */
  title: string;
  /** File name inside the temp dir. */
  name: string;
  /** Raw file bytes. */
  bytes: Uint8Array;
  /** How the adapter serves it. Default "full". */
  expect?: Expect;
  /** Extra offset/limit combinations specific to this file. */
  extra?: Call[];
  /** Also read it by its absolute path. */
  absolute?: boolean;
  /** Branches of pi's read tool the file's calls must reach (guards the table itself). */
  reaches?: Branch[];
}

/** `count` lines "line N" padded with dots to `width` characters (no trailing newline). */
function numbered(count: number, width = 0): string {
  return numberedLines(count, width).join("\n");
}

/**
 * 2000 lines of 30 three-byte characters (91 bytes with the newline), with a
 * few lines of mixed é / 漢字 / emoji: the 50 KiB byte limit (51200) falls in
 * the middle of line 563, inside a run of multi-byte characters.
 */
function multibyte(): string {
  const lines: string[] = [];
  for (let i = 1; i <= 2000; i++) {
    lines.push(i % 100 === 0 ? `é漢字😀 ${i} café 中文 🎉𝄞` : "漢".repeat(30));
  }
  return lines.join("\n");
}

const PNG_1X1 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

function fromBase64(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

const FILES: FileCase[] = [
  { title: "empty file", name: "empty.txt", bytes: new Uint8Array(0), reaches: ["error", "plain"] },
  {
    title: "one line without trailing newline",
    name: "one_line.txt",
    bytes: utf8("hello world"),
    absolute: true,
    reaches: ["error", "plain"],
  },
  { title: "CRLF line endings", name: "crlf.txt", bytes: utf8("one\r\ntwo\r\nthree\r\nfour\r\n") },
  { title: "exactly 2000 lines", name: "lines_2000.txt", bytes: utf8(numbered(2000)) },
  {
    title: "2001 lines",
    name: "lines_2001.txt",
    bytes: utf8(numbered(2001)),
    extra: [{ offset: 2 }, { limit: 2001 }, { offset: 1, limit: 1500 }],
    reaches: ["error", "plain", "limited", "truncated-lines"],
  },
  {
    title: "over 50 KiB (1200 lines of 60 bytes)",
    name: "over_50k.txt",
    bytes: utf8(numbered(1200, 59) + "\n"),
    extra: [{ offset: 400, limit: 900 }, { offset: 300 }],
    reaches: ["error", "plain", "limited", "truncated-bytes"],
  },
  {
    title: "first line over 50 KiB",
    name: "huge_first_line.txt",
    bytes: utf8(`${"x".repeat(60 * 1024)}\nsecond\nthird\nfourth\n`),
    extra: [{ offset: 1, limit: 1 }, { offset: 2, limit: 2 }],
    absolute: true,
    reaches: ["error", "plain", "limited", "first-line-too-large"],
  },
  {
    title: "multi-byte unicode cut by the byte limit",
    name: "unicode.txt",
    bytes: utf8(multibyte()),
    extra: [{ offset: 500 }, { offset: 99, limit: 3 }, { limit: 600 }],
    reaches: ["error", "plain", "limited", "truncated-bytes"],
  },
  { title: "trailing blank line", name: "trailing_blank.txt", bytes: utf8("alpha\nbeta\n\n") },
  { title: "only a newline", name: "only_newline.txt", bytes: utf8("\n") },
  // Extra: files the adapter serves without readcache metadata.
  {
    title: "sensitive path (.env)",
    name: ".env",
    bytes: utf8("SECRET=1\nOTHER=2\n"),
    expect: "plain",
  },
  {
    title: "binary (NUL bytes)",
    name: "binary.bin",
    bytes: new Uint8Array([0x00, 0x01, 0x0a, 0x02, 0x00, 0x0a, 0x41]),
    expect: "plain",
  },
  {
    title: "invalid UTF-8",
    name: "latin1.txt",
    bytes: new Uint8Array([...utf8("ok\ncaf"), 0xe9, 0x0a, 0xff, 0xfe, ...utf8("\nend")]),
    expect: "plain",
  },
];

/**
 * The offset/limit combinations for a file of `n` lines (pi's count,
 * `text.split("\n").length`). Duplicates collapse: in a 1- or 2-line file
 * "offset 2", "middle" and "last line" are the same call (or, for 1 line,
 * offset 2 is already the beyond-the-end error case), so they run once.
 */
function callsFor(n: number, extra: Call[] = []): Call[] {
  const mid = Math.max(1, Math.ceil(n / 2));
  const all: Call[] = [
    {},
    // offset only: first, second, middle, last line
    { offset: 1 },
    { offset: 2 },
    { offset: mid },
    { offset: n },
    // limit only
    { limit: 1 },
    { limit: 10 },
    { limit: 2000 },
    { limit: 5000 },
    // offset + limit: inside the file, crossing its end
    { offset: mid, limit: 3 },
    { offset: Math.max(1, n - 1), limit: 10 },
    // offset beyond the end: pi's error
    { offset: n + 1 },
    { offset: n + 100, limit: 5 },
    ...extra,
  ];
  const seen = new Set<string>();
  return all.filter((c) => {
    const key = describe(c);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function describe(call: Call): string {
  const parts: string[] = [];
  if (call.offset !== undefined) parts.push(`offset=${call.offset}`);
  if (call.limit !== undefined) parts.push(`limit=${call.limit}`);
  return parts.length === 0 ? "no offset/limit" : parts.join(" ");
}

function params(path: string, call: Call): Record<string, unknown> {
  const p: Record<string, unknown> = { path };
  if (call.offset !== undefined) p.offset = call.offset;
  if (call.limit !== undefined) p.limit = call.limit;
  return p;
}

/** The adapter's read in a fresh host and session (a first read). */
async function runAdapter(cwd: string, path: string, call: Call): Promise<ToolOutcome> {
  const host = new FakePiHost(newSession(cwd), cwd);
  createReadcacheExtension()(host);
  host.userMessage("go");
  return await host.callTool("read", params(path, call));
}

/** Runs one call both ways, asserts parity and returns the branch pi took. */
async function checkParity(
  cwd: string,
  path: string,
  call: Call,
  expect: Expect | "image",
): Promise<Branch> {
  const label = `${path} ${describe(call)}`;
  const pi = await runPi(cwd, path, call);
  const ours = await runAdapter(cwd, path, call);
  if (!pi.ok) {
    assert.equal(ours.ok, false, `${label}: pi failed with "${pi.message}", the adapter succeeded`);
    if (!ours.ok) assert.equal(ours.error, pi.message, `${label}: error message`);
    return branchOf(pi);
  }
  if (!ours.ok) assert.fail(`${label}: pi succeeded, the adapter failed with "${ours.error}"`);
  const details = ours.result.details as ReadcacheReadDetails | undefined;
  assert.deepStrictEqual(ours.result.content, pi.content, `${label}: content`);
  assert.equal(ours.text, pi.text, `${label}: text`);
  assert.deepStrictEqual(details?.truncation, pi.details?.truncation, `${label}: truncation`);
  if (details?.readcache !== undefined) {
    assert.equal(details.readcache.mode, "full", `${label}: readcache mode`);
  } else {
    // Without readcache metadata the details are pi's own, `undefined` included.
    assert.deepStrictEqual(details, pi.details, `${label}: details`);
  }
  if (expect === "plain" || expect === "image") {
    assert.equal(details?.readcache, undefined, `${label}: no readcache metadata`);
  } else if (!pi.details?.truncation?.firstLineExceedsLimit) {
    // Something was shown: it is a cached first read.
    assert.ok(details?.readcache !== undefined, `${label}: readcache metadata present`);
  }
  return branchOf(pi);
}

/** A temp dir (realpath'd) for `body`, removed afterwards. */
async function withTempDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "readcache_pi_parity_" }));
  try {
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

for (const file of FILES) {
  Deno.test(`pi read parity: ${file.title}`, async (t) => {
    await withTempDir(async (dir) => {
      await Deno.writeFile(`${dir}/${file.name}`, file.bytes);
      const n = decoder.decode(file.bytes).split("\n").length;
      const paths = file.absolute ? [file.name, `${dir}/${file.name}`] : [file.name];
      const reached = new Set<Branch>();
      for (const path of paths) {
        for (const call of callsFor(n, file.extra)) {
          const name = `${file.title}${path === file.name ? "" : " (absolute path)"}, ${
            describe(call)
          }`;
          await t.step(name, async () => {
            reached.add(await checkParity(dir, path, call, file.expect ?? "full"));
          });
        }
      }
      for (const b of file.reaches ?? ["error", "plain", "limited"]) {
        assert.ok(reached.has(b), `${file.title}: some call reaches pi's "${b}" branch`);
      }
    });
  });
}

Deno.test("pi read parity: PNG image is delegated to pi's own tool", async (t) => {
  await withTempDir(async (dir) => {
    await Deno.writeFile(`${dir}/pixel.png`, fromBase64(PNG_1X1));
    // pi ignores offset/limit for images; the adapter must too.
    for (const call of [{}, { offset: 5 }, { offset: 2, limit: 1 }]) {
      await t.step(`1x1 PNG, ${describe(call)}`, async () => {
        await checkParity(dir, "pixel.png", call, "image");
        const ours = await runAdapter(dir, "pixel.png", call);
        assert.ok(ours.ok);
        assert.ok(ours.result.content.some((c) => c.type === "image"), "an image block");
        assert.equal(ours.result.details, undefined, "no readcache details");
      });
    }
  });
});

Deno.test("pi read parity: missing file and directory give pi's error", async (t) => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/subdir`);
    const cases: [string, string, Call][] = [
      ["missing file", "missing.txt", {}],
      ["missing file, offset=2 limit=3", "missing.txt", { offset: 2, limit: 3 }],
      ["missing file, absolute path", `${dir}/nope/missing.txt`, {}],
      ["directory", "subdir", {}],
      ["directory, offset=1", "subdir", { offset: 1 }],
    ];
    for (const [name, path, call] of cases) {
      await t.step(name, async () => {
        const pi = await runPi(dir, path, call);
        assert.equal(pi.ok, false, `${name}: pi fails`);
        await checkParity(dir, path, call, "plain");
      });
    }
  });
});
