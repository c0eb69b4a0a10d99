// Captures what OpenCode's own `read` tool returns for a set of awkward files and ranges, with the
// real binary (scripts/opencode/opencode_bin.ts) and WITHOUT the read cache plugin, into
// tests/opencode/fixtures/opencode-reads.json. tests/opencode/baseline_test.ts then checks
// `renderOpenCodeRead` against every captured output offline. Run it again after changing the
// OpenCode version:
//
//   deno run -A scripts/opencode/capture_reads.ts
//
// Each read is stored as the call's arguments and the output's SHA-256, length, first and last
// 200 characters (the files are the FILES below, rebuilt by the test), with the file's absolute
// path written as `{{path}}`.
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startMockChat } from "./mock_chat.ts";
import { OPENCODE_VERSION, openCodeBinary, openCodeConfigHome } from "./opencode_bin.ts";
import { startOpenCode } from "./opencode_server.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
const OUT = join(REPO, "tests/opencode/fixtures/opencode-reads.json");

const enc = new TextEncoder();
const lines = (n: number, f: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => f(i + 1)).join("\n") + "\n";

/** An output as the fixture keeps it. */
export function summarize(output: string): {
  sha256: string;
  length: number;
  head: string;
  tail: string;
} {
  // the hash is over the UTF-16 code units (exact even for a lone surrogate, which OpenCode's
  // 2000-character cut can leave); head and tail are made well-formed for the JSON file
  return {
    sha256: createHash("sha256").update(Buffer.from(output, "utf16le")).digest("hex"),
    length: output.length,
    head: output.slice(0, 200).toWellFormed(),
    tail: output.slice(-200).toWellFormed(),
  };
}

/** The files, by name. */
export const FILES: Record<string, Uint8Array> = {
  "small.txt": enc.encode("hello\nworld\n"),
  "no-newline.txt": enc.encode("no final newline"),
  "empty.txt": enc.encode(""),
  "newline-only.txt": enc.encode("\n"),
  "blank-lines.txt": enc.encode("\n\n\na\n\n"),
  "crlf.txt": enc.encode("one\r\ntwo\r\n"),
  "lone-cr.txt": enc.encode("one\rtwo\rthree"),
  "cr-end.txt": enc.encode("one\r"),
  "mixed-endings.txt": enc.encode("a\r\nb\nc\rd"),
  "bom.txt": enc.encode("\uFEFFbom line\nsecond\n"),
  "invalid-utf8.txt": new Uint8Array([0x61, 0xff, 0xfe, 0x62, 0x0a, 0x63, 0x0a]),
  "line-2000.txt": enc.encode("x".repeat(2000) + "\nafter\n"),
  "line-2001.txt": enc.encode("y".repeat(2001) + "\nafter\n"),
  "emoji-long.txt": enc.encode("a" + "\u{1F600}".repeat(1500) + "\n"),
  "many-lines.txt": enc.encode(lines(2500, (i) => `line ${i}`)),
  "lines-2000.txt": enc.encode(lines(2000, (i) => `row ${i}`)),
  "wide.txt": enc.encode(lines(1000, (i) => `${i} `.padEnd(100, "w"))),
  // 512 lines of 99 bytes and an empty line fill 51,200 bytes exactly; the next line is cut
  "bytes-edge.txt": enc.encode(lines(512, (i) => `${i}`.padEnd(99, "b")) + "\ntail\n"),
  "unicode.txt": enc.encode("héllo wörld ✓\n日本語\n"),
  "nul-late.txt": enc.encode(lines(100, (i) => `${i}`.padEnd(50, "n")) + "x\0y\n"),
};

/** The reads: a file and the call's `offset`/`limit`. */
export const READS: { file: string; offset?: number; limit?: number }[] = [
  ...Object.keys(FILES).map((file) => ({ file })),
  { file: "many-lines.txt", offset: 100, limit: 50 },
  { file: "many-lines.txt", offset: 0 },
  { file: "many-lines.txt", offset: 2500 },
  { file: "many-lines.txt", offset: 2499, limit: 10 },
  { file: "many-lines.txt", offset: 2001 },
  { file: "many-lines.txt", limit: 1 },
  { file: "many-lines.txt", limit: 0 },
  { file: "small.txt", offset: 2 },
  { file: "no-newline.txt", offset: 1, limit: 1 },
  { file: "wide.txt", offset: 600 },
];

if (import.meta.main) {
  const found = await openCodeBinary();
  if ("skip" in found) {
    console.error(`cannot capture: ${found.skip}`);
    Deno.exit(1);
  }
  const root = await Deno.makeTempDir({ prefix: "readcache-opencode-capture-" });
  const cwd = join(root, "project");
  await Deno.mkdir(cwd, { recursive: true });
  for (const [name, bytes] of Object.entries(FILES)) await Deno.writeFile(join(cwd, name), bytes);
  const mock = startMockChat();
  const server = await startOpenCode({
    bin: found.bin,
    cwd,
    home: join(root, "home"),
    configHome: openCodeConfigHome(),
    mock,
    plugin: false,
  });
  try {
    const { id } = await server.api("POST", "/session", {}) as { id: string };
    mock.queue.push({
      calls: READS.map(({ file, ...range }) => ({
        name: "read",
        args: { filePath: file, ...range },
      })),
    }, { text: "done" });
    await server.api("POST", `/session/${id}/message`, { parts: [{ type: "text", text: "read" }] });
    const messages = await server.api("GET", `/session/${id}/message`) as {
      parts: { type: string; callID?: string; state?: { status: string; output?: string } }[];
    }[];
    const parts = messages.flatMap((m) => m.parts).filter((p) => p.type === "tool");
    const cases = READS.map((read, i) => {
      const part = parts.find((p) => p.callID === mock.calls[i].id);
      if (part?.state?.status !== "completed") {
        throw new Error(`read ${JSON.stringify(read)} did not complete: ${JSON.stringify(part)}`);
      }
      const path = join(cwd, read.file);
      return { ...read, ...summarize(part.state.output!.replaceAll(path, "{{path}}")) };
    });
    const fixture = {
      $comment:
        `What OpenCode ${OPENCODE_VERSION}'s own read tool returned for the files and calls of ` +
        "scripts/opencode/capture_reads.ts (FILES, READS), which wrote this file: each output's " +
        "SHA-256 (of its UTF-16 code units), length, head and tail (made well-formed), with " +
        "`{{path}}` for the file's path.",
      opencode: OPENCODE_VERSION,
      reads: cases,
    };
    await Deno.mkdir(join(REPO, "tests/opencode/fixtures"), { recursive: true });
    await Deno.writeTextFile(OUT, JSON.stringify(fixture, null, 2) + "\n");
    console.log(`wrote ${cases.length} reads of ${Object.keys(FILES).length} files to ${OUT}`);
  } finally {
    await server.stop();
    await mock.close();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}
