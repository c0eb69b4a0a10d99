// pi's own read tool as a test oracle, shared by the parity tests: run it on a
// real file, classify which branch of its output logic it took, and the small
// file-building helpers the parity tables use.
import { createReadTool } from "@mariozechner/pi-coding-agent";
import type { TruncationResult } from "../../../src/core/truncate.ts";

/** One read call's line arguments (absent keys are not sent at all). */
export interface Call {
  offset?: number;
  limit?: number;
}

/** One content block of a tool result. */
export type ContentBlock =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string };

/** What pi's read tool produced for one call. */
export type PiReadOutcome =
  | {
    ok: true;
    content: ContentBlock[];
    /** The text blocks joined. */
    text: string;
    details: { truncation?: TruncationResult } | undefined;
  }
  | { ok: false; message: string };

/** Runs pi's own `createReadTool(cwd)` once. */
export async function runPiRead(cwd: string, path: string, call: Call): Promise<PiReadOutcome> {
  try {
    const result = await createReadTool(cwd).execute("parity", { path, ...call });
    const content = result.content as ContentBlock[];
    return {
      ok: true,
      content,
      text: content.map((c) => c.type === "text" ? c.text : "").join(""),
      details: result.details as { truncation?: TruncationResult } | undefined,
    };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/** The branches of pi's read output logic. */
export const PI_READ_BRANCHES = [
  "error",
  "first-line-too-large",
  "truncated-lines",
  "truncated-bytes",
  "limited",
  "plain",
] as const;

/** Which branch of pi's read tool produced an outcome. */
export type PiReadBranch = typeof PI_READ_BRANCHES[number];

/** Classifies an outcome (used to check that a table reaches every branch). */
export function piReadBranch(pi: PiReadOutcome): PiReadBranch {
  if (!pi.ok) return "error";
  const t = pi.details?.truncation;
  if (t?.firstLineExceedsLimit) return "first-line-too-large";
  if (t?.truncatedBy === "lines") return "truncated-lines";
  if (t?.truncatedBy === "bytes") return "truncated-bytes";
  return /\n\n\[\d+ more lines in file\. Use offset=-?\d+ to continue\.\]$/.test(pi.text)
    ? "limited"
    : "plain";
}

const encoder: TextEncoder = new TextEncoder();

/** UTF-8 bytes of `text`. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Decodes like Node's `Buffer#toString("utf-8")` (how pi reads text): a leading BOM stays. */
export const nodeUtf8: TextDecoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** `count` lines "line N", each padded with dots to `width` characters. */
export function numberedLines(count: number, width = 0): string[] {
  const lines: string[] = [];
  for (let i = 1; i <= count; i++) lines.push(`line ${i}`.padEnd(width, "."));
  return lines;
}
