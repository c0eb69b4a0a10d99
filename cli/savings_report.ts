/**
 * The text report of `readcache savings`: the table of sessions, the totals with what was checked
 * and what was not judged, and the files by wasted bytes, from the host-neutral figures
 * (cli/savings_figures.ts) every host's reader fills in; the HTML page (cli/savings_html.ts)
 * renders the same figures.
 *
 * @module
 */
import { join } from "node:path";
import { READ_MODES } from "../src/core/meta.ts";
import { bytesInWords, MODE_WORDS, type TextStyle } from "../src/core/status.ts";
import {
  type FileSavings,
  hostWords,
  lessWords,
  notJudgedWords,
  type SavingsTotals,
  sessionLabel,
  type SessionSavings,
  shareOfPi,
} from "./savings_figures.ts";

import { plural } from "./support/output.ts";
import { agentDir } from "./support/sessions.ts";

function bar(part: number, whole: number, width: number, color: boolean): string {
  if (whole <= 0) return " ".repeat(width);
  const kept = Math.min(width, Math.round((part / whole) * width));
  const a = "\u2588".repeat(kept);
  const b = "\u2591".repeat(width - kept);
  return color ? `${a}\x1b[32m${b}\x1b[0m` : a + b;
}

const pad = (s: string, n: number) => s.length >= n ? s : s + " ".repeat(n - s.length);
const lpad = (s: string, n: number) => s.length >= n ? s : " ".repeat(n - s.length) + s;

/**
 * What `readcache savings` prints, as figures (see {@linkcode formatSavings}).
 *
 * @example
 * ```ts
 * import type { SavingsReport } from "./savings_report.ts";
 * ```
 */
export interface SavingsReport {
  /** The sessions, in the order shown. */
  sessions: readonly SessionSavings[];
  /** Their totals. */
  totals: SavingsTotals;
  /** The files listed. */
  top: readonly FileSavings[];
  /** Where the session files were looked for. */
  roots: readonly string[];
  /** True when some of `roots` are files (named on the command line). */
  fromFiles: boolean;
  /** Files found in a directory that are not pi session files. */
  skipped: number;
  /** Files or directories found in a directory that cannot be read. */
  problems: readonly { path: string; what: string; fix: string }[];
  /** Where the page was written, if it was. */
  html?: string;
}

/**
 * The text `readcache savings` prints. Pure; `color` adds ANSI colour to the
 * bars.
 *
 * @example
 * ```ts
 * import { formatSavings } from "./savings_report.ts";
 * import { totalsOf } from "./savings_figures.ts";
 * import { PLAIN_STYLE } from "../src/core/status.ts";
 * formatSavings({ sessions: [], totals: totalsOf([]), top: [], roots: ["/s"], fromFiles: false,
 *   skipped: 0, problems: [] }, PLAIN_STYLE, false);
 * ```
 */
export function formatSavings(r: SavingsReport, style: TextStyle, color: boolean): string {
  const { sessions, totals, skipped, problems } = r;
  const out: string[] = [
    style.heading(
      `readcache savings: ${
        plural(
          sessions.length,
          totals.hosts.opencode > 0 || totals.hosts.claude > 0 ? "session" : "session file",
        )
      } ${r.fromFiles ? "from" : "in"} ${r.roots.join(", ")}`,
    ),
  ];
  if (skipped > 0) {
    out.push(
      `  (${plural(skipped, "file")} skipped: ${
        skipped === 1 ? "not a pi session file" : "not pi session files"
      })`,
    );
  }
  if (sessions.length === 0) {
    out.push(
      style.warn(
        "no pi session files found. Pass session files or directories that hold them " +
          `(pi keeps them in ${join(agentDir(), "sessions")}), or --opencode for OpenCode's ` +
          "sessions.",
      ),
    );
  } else {
    out.push(...sessionTable(sessions, color, hostWords(totals)), "", ...totalLines(totals, style));
    out.push(...fileTable(r.top, style));
  }
  if (problems.length > 0) {
    out.push("", style.bad(`${plural(problems.length, "problem")}:`));
    for (const p of problems) out.push(`  ${p.path} ${p.what}`, `    fix: ${p.fix}`);
  }
  if (r.html !== undefined) out.push("", `chart written to ${r.html}`);
  return out.join("\n");
}

function sessionTable(
  sessions: readonly SessionSavings[],
  color: boolean,
  host: string,
): string[] {
  const names = sessions.map(sessionLabel);
  const nameWidth = Math.max(...names.map((n) => n.length), 7);
  const alone = host.includes(" or ") ? "own read" : `${host} alone`;
  const w = Math.max(9, alone.length);
  const out = [
    "",
    `  ${pad("session", nameWidth)}  ${pad("readcache", 9)}  ${lpad("reads", 5)}  ${
      lpad(alone, w)
    }  ${lpad("readcache", 9)}  readcache / ${host === "pi" ? "pi" : "own"}`,
  ];
  const widest = Math.max(...sessions.map((s) => s.piBytes), 1);
  for (const [i, s] of sessions.entries()) {
    const width = Math.max(1, Math.round((s.piBytes / widest) * 30));
    const share = shareOfPi(s);
    out.push(
      `  ${pad(names[i], nameWidth)}  ${
        pad(s.withReadcache ? "on" : s.notReplayed ? "off" : "replayed", 9)
      }  ${lpad(String(s.reads), 5)}  ${lpad(bytesInWords(s.piBytes), w)}  ${
        lpad(bytesInWords(s.readcacheBytes), 9)
      }  ${
        s.notReplayed === true
          ? "not judged (not replayed)"
          : share === undefined
          ? "nothing sent"
          : `${bar(s.readcacheBytes, s.piBytes, width, color)} ${lessWords(share.saved)}`
      }`,
    );
  }
  return out;
}

function totalLines(totals: SavingsTotals, style: TextStyle): string[] {
  const out: string[] = [];
  const diff = totals.piBytes - totals.readcacheBytes;
  const share = shareOfPi(totals);
  const tokens = totals.estimatedTokensSaved;
  const host = hostWords(totals);
  out.push(
    style.heading("total") +
      `: ${plural(totals.reads, "read")}; ${host} ${bytesInWords(totals.piBytes)}, readcache ${
        bytesInWords(totals.readcacheBytes)
      }` +
      (share === undefined ? "" : `: ${
        style.good(
          diff >= 0
            ? `${bytesInWords(diff)} less (${share.saved}%), about ${plural(tokens, "token")}`
            : `${bytesInWords(-diff)} more (${-share.saved}%)`,
        )
      }`),
  );
  const modes = ([...READ_MODES, "plain"] as const).filter((m) => totals.byMode[m] > 0)
    .map((m) =>
      `${totals.byMode[m]} ${m === "plain" ? `served by ${host} itself` : MODE_WORDS[m]}`
    );
  if (modes.length > 0) out.push(`  reads: ${modes.join(", ")}`);
  const used = totals.withReadcache;
  const off = totals.notReplayed.sessions;
  const offClaude = totals.notReplayedClaude.sessions;
  const replayed = totals.sessions - used - off - offClaude;
  if (used > 0) {
    out.push(
      `  ${
        plural(used, "session")
      } with readcache ("on"): what it sent is measured; what ${host} ` +
        "would have sent is an estimate (lines times bytes per line of the file's latest full " +
        "read, or of what the model wrote)",
    );
  }
  const { replay: byReplay, session: bySession } = totals.estimates;
  if (byReplay > 0) {
    out.push(
      `  ${
        plural(byReplay, "session")
      } without readcache ("replayed"): what pi sent is measured; what readcache would have ` +
        "sent is an estimate: the session's own calls run again through pi and the extension, " +
        "on files rebuilt from what the session's outputs showed (the replay of " +
        "deno task bench:real)",
    );
  }
  const byTranscript = totals.estimates.transcript;
  if (byTranscript > 0) {
    out.push(
      `  ${
        plural(byTranscript, "Claude Code session")
      } without readcache ("replayed"): what Claude Code sent is measured; what readcache would ` +
        "have sent is an estimate: the transcript's calls run again through the Claude Code host, " +
        "on files rebuilt from what the session's reads, writes, edits and `cat` showed",
    );
  }
  if (byReplay + byTranscript > 0) {
    const v = totals.safety;
    const check = `  check: ${plural(v.checked, "short answer")} checked against what the model ` +
      `had been shown: ${v.violations} wrong${
        v.notChecked > 0
          ? `; ${v.notChecked} not checked (after a rewind in a Claude Code session's file: the ` +
            "check follows its rows one after another)"
          : ""
      }`;
    out.push(v.violations > 0 ? style.bad(check) : check);
  }
  const nj = notJudgedWords(totals);
  if (nj !== undefined) out.push(style.warn(`  ${nj}`));
  if (replayed > 0 && bySession > 0) {
    out.push(
      `  ${
        plural(bySession, "session")
      } without readcache ("replayed"): what pi sent is measured; what readcache would have ` +
        "sent is its read decision replayed over the session's own read results only (a lower " +
        `figure than the replay through pi)${
          totals.replaySkipped.length > 0 ? `, because ${totals.replaySkipped.join("; ")}` : ""
        }`,
    );
    const c = totals.checked;
    out.push(
      c.reads === 0
        ? "  check: no replayed answer was sent in full, so none could be compared with pi's text"
        : `  check: ${c.matched} of ${plural(c.reads, "replayed answer")} sent in full ${
          c.matched === 1 ? "equals" : "equal"
        } pi's own text exactly`,
    );
  }
  if (off > 0) {
    const n = totals.notReplayed;
    out.push(
      style.warn(
        `  ${plural(off, "OpenCode session")} without readcache ("off"): not replayed, because ` +
          "OpenCode's read output does not show the file exactly (not whether it ends with a " +
          `line break, nor CR or a byte order mark); ${plural(n.reads, "read")} (${
            bytesInWords(n.bytes)
          }) count as sent in full on both sides`,
      ),
    );
  }
  if (offClaude > 0) {
    const n = totals.notReplayedClaude;
    out.push(
      style.warn(
        `  ${plural(offClaude, "Claude Code session")} without readcache ("off"): not replayed ` +
          `(--no-replay was given, or the replay failed); ${plural(n.reads, "read")} (${
            bytesInWords(n.bytes)
          }) count as sent in full on both sides`,
      ),
    );
  }
  const u = totals.unknown;
  if (u.reads > 0) {
    out.push(
      style.warn(
        `  cannot be known: ${plural(u.reads, "read")} (${bytesInWords(u.bytes)}) ${
          u.reads === 1 ? "shows" : "show"
        } part of a file whose whole content the session never showed before; ${
          u.reads === 1 ? "it counts" : "they count"
        } as sent in full on both sides`,
      ),
    );
  }
  return out;
}

function fileTable(top: readonly FileSavings[], style: TextStyle): string[] {
  if (top.length === 0) return [];
  const out = [
    "",
    style.heading("files by wasted bytes") + " (re-sent in full while the model held them)",
  ];
  const w = Math.max(...top.map((f) => f.path.length), 4);
  out.push(
    `  ${pad("file", w)}  ${lpad("reads", 5)}  ${lpad("repeats", 7)}  ${lpad("wasted", 10)}  ${
      lpad("saved", 9)
    }`,
  );
  for (const f of top) {
    out.push(
      `  ${pad(f.path, w)}  ${lpad(String(f.reads), 5)}  ${lpad(String(f.repeats), 7)}  ${
        lpad(f.notJudgedReads === f.reads ? "not judged" : bytesInWords(f.wastedBytes), 10)
      }  ${lpad(bytesInWords(f.savedBytes), 9)}`,
    );
  }
  out.push(
    style.dim(
      "  wasted: in sessions without readcache, what it would not have sent (not judged: read " +
        "only in sessions that were not replayed); saved: in sessions with it, what it did not send",
    ),
  );
  return out;
}
