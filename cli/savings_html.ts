/**
 * The `--html` page of `readcache savings`: one self-contained HTML file (no
 * script, no external resource) with an inline SVG bar chart of what pi and
 * the read cache sent per session, the totals, and the top files.
 *
 * @module
 */
import { bytesInWords } from "../src/core/status.ts";
import type { FileSavings, SavingsTotals, SessionSavings } from "./savings.ts";

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

/**
 * The SVG chart alone: per session, a grey bar for what pi sent (or would
 * have sent) and a green bar for what the read cache sent (or would have
 * sent), on one scale.
 *
 * @example
 * ```ts
 * import { savingsSvg } from "./savings_html.ts";
 * savingsSvg([]).startsWith("<svg"); // true
 * ```
 */
export function savingsSvg(sessions: readonly SessionSavings[]): string {
  const rowH = 34;
  const left = 260;
  const width = 760;
  const barW = width - left - 110;
  const height = 40 + Math.max(1, sessions.length) * rowH;
  const max = Math.max(1, ...sessions.map((s) => Math.max(s.piBytes, s.readcacheBytes)));
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
    `viewBox="0 0 ${width} ${height}" role="img" aria-label="bytes sent per session">`,
    `<text x="${left}" y="16" font-size="12" fill="#555">grey: pi; green: readcache</text>`,
  ];
  sessions.forEach((s, i) => {
    const y = 28 + i * rowH;
    const name = (s.file.split("/").at(-1) ?? s.file).slice(0, 36);
    const pi = Math.round((s.piBytes / max) * barW);
    const rc = Math.round((s.readcacheBytes / max) * barW);
    parts.push(
      `<g class="session"><title>${escapeXml(s.file)}</title>`,
      `<text x="0" y="${y + 13}" font-size="12">${escapeXml(name)}</text>`,
      `<rect x="${left}" y="${y}" width="${pi}" height="12" fill="#bbb"/>`,
      `<rect x="${left}" y="${y + 14}" width="${rc}" height="12" fill="#2a2"/>`,
      `<text x="${left + Math.max(pi, rc) + 6}" y="${y + 22}" font-size="11">${
        escapeXml(`${bytesInWords(s.piBytes)} / ${bytesInWords(s.readcacheBytes)}`)
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
  const rows = top.map((f) =>
    `<tr><td>${escapeXml(f.path)}</td><td>${f.reads}</td><td>${f.repeats}</td><td>${
      escapeXml(bytesInWords(f.wastedBytes))
    }</td><td>${escapeXml(bytesInWords(f.savedBytes))}</td></tr>`
  ).join("\n");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>readcache savings</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; } td, th { padding: 2px 10px; text-align: right; }
td:first-child, th:first-child { text-align: left; }
</style>
</head>
<body>
<h1>readcache savings</h1>
<p>${totals.sessions} session files, ${totals.reads} reads: pi ${
    escapeXml(bytesInWords(totals.piBytes))
  }, readcache ${
    escapeXml(bytesInWords(totals.readcacheBytes))
  }, about ${totals.estimatedTokensSaved} tokens saved
(estimate, 4 bytes per token). ${totals.unknown.reads} reads whose content cannot be known count as sent in full on both sides.</p>
${savingsSvg(sessions)}
<h2>Files by wasted bytes</h2>
<table>
<tr><th>file</th><th>reads</th><th>repeats</th><th>wasted</th><th>saved</th></tr>
${rows}
</table>
</body>
</html>
`;
}
