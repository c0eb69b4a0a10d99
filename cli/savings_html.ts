/**
 * The `--html` page of `readcache savings`: one self-contained HTML file (no
 * script, no external resource) with a table of the sessions (named like the
 * terminal table: date, time, project and the end of the id; "on" when the
 * session ran with the read cache, "replayed" when it ran without it and the
 * read decision was replayed over its reads; what the read cache sent as a
 * share of what pi sent, and what it saved), an inline SVG bar chart of the
 * same, the totals, and the top files.
 *
 * @module
 */
import { BYTES_PER_TOKEN, bytesInWords } from "../src/core/status.ts";
import { plural } from "./support/output.ts";
import {
  type FileSavings,
  lessWords,
  notJudgedWords,
  type SavingsTotals,
  sessionLabel,
  type SessionSavings,
  shareOfPi,
} from "./savings_figures.ts";

/**
 * Escapes text for HTML and XML (element content and quoted attributes).
 *
 * @example
 * ```ts
 * import { escapeXml } from "./savings_html.ts";
 * escapeXml('<a href="x">'); // "&lt;a href=&quot;x&quot;&gt;"
 * ```
 */
export function escapeXml(s: string): string {
  return s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;").replaceAll("'", "&#39;");
}

/** "on" or "replayed", as in the terminal table. */
const modeOf = (s: SessionSavings) => s.withReadcache ? "on" : "replayed";

/** The percentages of a session (or the totals) in words. */
function shareWords(s: Pick<SessionSavings, "piBytes" | "readcacheBytes">): {
  served: string;
  saved: string;
} {
  const share = shareOfPi(s);
  return share === undefined
    ? { served: "-", saved: "-" }
    : { served: `${share.served}%`, saved: share.saved >= 0 ? `${share.saved}%` : "none" };
}

/**
 * The SVG chart alone: per session, its name and whether it ran with the
 * read cache ("on") or was replayed, a grey bar for what pi sent (or would
 * have sent) and a green bar for what the read cache sent (or would have
 * sent), on one scale, and the percentages. The name column is as wide as
 * the longest name needs (monospace).
 *
 * @example
 * ```ts
 * import { savingsSvg } from "./savings_html.ts";
 * savingsSvg([]).startsWith("<svg"); // true
 * ```
 */
export function savingsSvg(sessions: readonly SessionSavings[]): string {
  const rowH = 38;
  const labels = sessions.map(sessionLabel);
  const charW = 7.8; // a generous width of one 12px monospace character
  const left = Math.max(180, Math.ceil(Math.max(0, ...labels.map((l) => l.length)) * charW) + 24);
  const barW = 420;
  const width = left + barW + 280;
  const height = 40 + Math.max(1, sessions.length) * rowH;
  const max = Math.max(1, ...sessions.map((s) => Math.max(s.piBytes, s.readcacheBytes)));
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
    `viewBox="0 0 ${width} ${height}" role="img" aria-label="bytes sent per session">`,
    `<text x="${left}" y="16" font-size="12" fill="#555">grey: pi alone; green: readcache</text>`,
  ];
  sessions.forEach((s, i) => {
    const y = 28 + i * rowH;
    const pi = Math.round((s.piBytes / max) * barW);
    const rc = Math.round((s.readcacheBytes / max) * barW);
    const share = shareOfPi(s);
    const words = `${bytesInWords(s.piBytes)} / ${bytesInWords(s.readcacheBytes)}` +
      (share === undefined ? "" : `: ${share.served}% of pi, ${lessWords(share.saved)}`);
    parts.push(
      `<g class="session" data-mode="${modeOf(s)}"><title>${escapeXml(s.file)}</title>`,
      `<text class="label" x="0" y="${y + 11}" font-size="12" font-family="monospace">${
        escapeXml(labels[i])
      }</text>`,
      `<text class="mode" x="0" y="${y + 26}" font-size="11" fill="#555">${
        s.withReadcache ? "on: ran with readcache" : "replayed: ran without readcache"
      }</text>`,
      `<rect class="pi" x="${left}" y="${y}" width="${pi}" height="12" fill="#bbb"/>`,
      `<rect class="readcache" x="${left}" y="${y + 14}" width="${rc}" height="12" fill="#2a2"/>`,
      `<text class="share" x="${left + Math.max(pi, rc) + 6}" y="${y + 22}" font-size="11">${
        escapeXml(words)
      }</text>`,
      `</g>`,
    );
  });
  parts.push("</svg>");
  return parts.join("\n");
}

/**
 * The whole page.
 *
 * @example
 * ```ts ignore
 * await Deno.writeTextFile("savings.html", savingsHtml(sessions, totals, top));
 * ```
 */
export function savingsHtml(
  sessions: readonly SessionSavings[],
  totals: SavingsTotals,
  top: readonly FileSavings[],
): string {
  const sessionRows = sessions.map((s) => {
    const share = s.notReplayed === true ? { served: "-", saved: "not judged" } : shareWords(s);
    return `<tr class="session" data-mode="${modeOf(s)}"><td class="label" title="${
      escapeXml(s.file)
    }">${escapeXml(sessionLabel(s))}</td><td class="mode">${modeOf(s)}</td><td>${s.reads}</td><td>${
      escapeXml(bytesInWords(s.piBytes))
    }</td><td>${
      escapeXml(bytesInWords(s.readcacheBytes))
    }</td><td class="served">${share.served}</td><td class="saved">${share.saved}</td></tr>`;
  }).join("\n");
  const fileRows = top.map((f) =>
    `<tr><td>${escapeXml(f.path)}</td><td>${f.reads}</td><td>${f.repeats}</td><td>${
      f.notJudgedReads === f.reads ? "not judged" : escapeXml(bytesInWords(f.wastedBytes))
    }</td><td>${escapeXml(bytesInWords(f.savedBytes))}</td></tr>`
  ).join("\n");
  const share = shareWords(totals);
  const notes: string[] = [];
  if (totals.withReadcache > 0) {
    notes.push(
      `<li><b>on</b>: ${
        plural(totals.withReadcache, "session")
      } ran with readcache; what it sent is measured, what pi alone would have sent is an ` +
        "estimate (lines times bytes per line of the file's latest full read, or of what the " +
        "model wrote).</li>",
    );
  }
  const { replay: byReplay, transcript: byTranscript } = totals.estimates;
  if (byReplay > 0) {
    notes.push(
      `<li><b>replayed</b>: ${
        plural(byReplay, "session")
      } ran without readcache; what pi sent is measured, what readcache would have sent is an ` +
        "estimate: the session's own calls run again through pi and the extension, on files " +
        "rebuilt from what the session's outputs showed (the replay of deno task bench:real).</li>",
    );
  }
  if (byTranscript > 0) {
    notes.push(
      `<li><b>replayed</b>: ${
        plural(byTranscript, "Claude Code session")
      } ran without readcache; what Claude Code sent is measured, what readcache would have sent ` +
        "is an estimate: the transcript's calls run again through the Claude Code host, on files " +
        "rebuilt from what the session's reads, writes, edits and <code>cat</code> showed.</li>",
    );
  }
  if (byReplay + byTranscript > 0) {
    notes.push(
      `<li>${plural(totals.safety.checked, "short answer")} checked against what the model had ` +
        `been shown: ${totals.safety.violations} wrong${
          totals.safety.notChecked > 0
            ? `; ${totals.safety.notChecked} not checked (after a rewind in a Claude Code ` +
              "session's file: the check follows its rows one after another)"
            : ""
        }.</li>`,
    );
  }
  if (totals.estimates.session > 0) {
    notes.push(
      `<li><b>replayed</b>: ${
        plural(totals.estimates.session, "session")
      } ran without readcache; what pi sent is measured, what readcache would have sent is its ` +
        "read decision replayed over the session's own reads only.</li>",
    );
  }
  const nj = notJudgedWords(totals);
  if (nj !== undefined) notes.push(`<li>${escapeXml(nj)}.</li>`);
  if (totals.unknown.reads > 0) {
    notes.push(
      `<li>${plural(totals.unknown.reads, "read")} (${
        escapeXml(bytesInWords(totals.unknown.bytes))
      }) ${totals.unknown.reads === 1 ? "shows" : "show"} part of a file whose whole content ` +
        `the session never showed before; ${
          totals.unknown.reads === 1 ? "it counts" : "they count"
        } as sent in full on both sides.</li>`,
    );
  }
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>readcache savings</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin-bottom: 1.5em; } td, th { padding: 2px 10px; text-align: right; }
td:first-child, th:first-child { text-align: left; }
td.label { font-family: monospace; white-space: nowrap; }
td.mode { text-align: left; }
</style>
</head>
<body>
<h1>readcache savings</h1>
<p id="summary">${plural(totals.sessions, "session file")}, ${
    plural(totals.reads, "read")
  }: pi alone <span class="pi">${
    escapeXml(bytesInWords(totals.piBytes))
  }</span>, readcache <span class="readcache">${
    escapeXml(bytesInWords(totals.readcacheBytes))
  }</span> (<span class="served">${share.served}</span> of pi; saved: <span class="saved">${share.saved}</span>), about ${
    plural(totals.estimatedTokensSaved, "token")
  } saved (estimate, ${BYTES_PER_TOKEN} bytes per token).</p>
<table id="sessions">
<tr><th>session</th><th>readcache</th><th>reads</th><th>pi alone</th><th>readcache</th><th>readcache / pi</th><th>saved</th></tr>
${sessionRows}
</table>
<ul id="notes">
${notes.join("\n")}
</ul>
${savingsSvg(sessions)}
<h2>Files by wasted bytes</h2>
<p>wasted: in sessions without readcache, what it would not have sent; saved: in sessions with it, what it did not send.</p>
<table id="files">
<tr><th>file</th><th>reads</th><th>repeats</th><th>wasted</th><th>saved</th></tr>
${fileRows}
</table>
</body>
</html>
`;
}
