// The page of `readcache savings --html`, opened in a real headless browser (Debian's chromium):
// each session is named by date, time, project and the end of its id (as in the terminal table,
// not by its file name), says whether it ran with readcache ("on") or was replayed, and shows
// what readcache sent as a share of pi and what it saved; in the chart, no name runs into the
// bars and no figure runs off the picture. The page itself has no script: a copy of it gets a
// small probe script that reads the DOM and the laid-out SVG after the browser parsed it, and
// `--dump-dom` brings the probe's findings back. Nothing is installed here: without
// /usr/bin/chromium the test is skipped (apt-get install -y chromium).
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { placeDemo, runReadcache, SESSION_FILES } from "../scripts/readme_cli_outputs.ts";

const FIXTURES = fileURLToPath(new URL("fixtures/sessions", import.meta.url));

const CHROMIUM = "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) {
  console.log(
    `html_page_test: SKIPPED, ${CHROMIUM} is missing; install it with: apt-get install -y chromium`,
  );
}

/** The DOM of `file` after chromium loaded it (headless, nothing from the network). */
async function dumpDom(file: string): Promise<string> {
  const profile = await Deno.makeTempDir({ prefix: "readcache-chromium-" });
  try {
    const out = await new Deno.Command(CHROMIUM, {
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        `--user-data-dir=${profile}`,
        "--window-size=1280,900",
        "--dump-dom",
        `file://${file}`,
      ],
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(120_000),
    }).output();
    const dom = new TextDecoder().decode(out.stdout);
    assert.ok(
      out.success && dom.includes("</html>"),
      `chromium failed (${out.code}):\n${new TextDecoder().decode(out.stderr)}`,
    );
    return dom;
  } finally {
    await Deno.remove(profile, { recursive: true });
  }
}

/** Reads the page as the browser built it; writes what it found as JSON into <pre id="probe">. */
const PROBE = `<script>
(() => {
  const SVG = "http://www.w3.org/2000/svg";
  const text = (el, sel) => el.querySelector(sel)?.textContent ?? null;
  const svg = document.querySelector("svg");
  const width = svg.viewBox.baseVal.width;
  const result = {
    summary: {
      served: text(document, "#summary .served"),
      saved: text(document, "#summary .saved"),
    },
    rows: [...document.querySelectorAll("#sessions tr.session")].map((tr) => ({
      label: text(tr, "td.label"),
      mode: text(tr, "td.mode"),
      dataMode: tr.dataset.mode,
      served: text(tr, "td.served"),
      saved: text(tr, "td.saved"),
    })),
    svgNamespace: svg.namespaceURI === SVG,
    chart: [...svg.querySelectorAll("g.session")].map((g) => {
      const label = g.querySelector("text.label");
      const mode = g.querySelector("text.mode");
      const share = g.querySelector("text.share");
      const bars = [...g.querySelectorAll("rect")];
      const barsX = Math.min(...bars.map((r) => r.x.baseVal.value));
      const shareBox = share.getBBox();
      return {
        label: label.textContent,
        mode: mode.textContent,
        dataMode: g.dataset.mode,
        share: share.textContent,
        rectsAreSvg: bars.length === 2 && bars.every((r) => r instanceof SVGRectElement),
        labelEnd: label.getBBox().x + label.getComputedTextLength(),
        modeEnd: mode.getBBox().x + mode.getComputedTextLength(),
        barsX,
        shareEnd: shareBox.x + shareBox.width,
        svgWidth: width,
      };
    }),
  };
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(result);
  document.body.append(pre);
})();
</script>`;

interface Probe {
  summary: { served: string; saved: string };
  rows: { label: string; mode: string; dataMode: string; served: string; saved: string }[];
  svgNamespace: boolean;
  chart: {
    label: string;
    mode: string;
    dataMode: string;
    share: string;
    rectsAreSvg: boolean;
    labelEnd: number;
    modeEnd: number;
    barsX: number;
    shareEnd: number;
    svgWidth: number;
  }[];
}

const unescapeHtml = (s: string) =>
  s.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&nbsp;", "\u00a0")
    .replaceAll("&amp;", "&");

interface SavingsJson {
  sessions: { file: string; withReadcache: boolean; piBytes: number; readcacheBytes: number }[];
  totals: { piBytes: number; readcacheBytes: number };
}

Deno.test({
  name: "savings --html in a real browser: sessions named and marked on/replayed, percentages",
  ignore: !HAVE_CHROMIUM,
  fn: async () => {
    const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "readcache-html-" }));
    try {
      const d = await placeDemo(base);
      // a third session, of a project whose name is long (cut to 17 characters and "..." in the
      // name): the fork fixture, as if pi had run it there
      const long = join(base, "a-project-with-a-rather-long-name");
      await Deno.writeTextFile(
        join(d.sessions, SESSION_FILES["fork.jsonl"]),
        (await Deno.readTextFile(join(FIXTURES, "fork.jsonl"))).replaceAll("@CWD@", long)
          .replaceAll("@SESSIONS@", d.sessions),
      );
      const page = join(base, "savings.html");
      const r = await runReadcache(d, ["savings", "--no-replay", "--html", page]);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const figures = JSON.parse(
        (await runReadcache(d, ["savings", "--no-replay", "--json"])).stdout,
      ) as SavingsJson;
      const html = await Deno.readTextFile(page);
      assert.ok(!/<script|src=|href=/i.test(html), "the page has no script, no external resource");

      // what each session should show, from its header (the test's own reading) and its figures
      const expected: { label: string; mode: string; served: string; saved: string }[] = [];
      for (const s of figures.sessions) {
        const header = JSON.parse((await Deno.readTextFile(s.file)).split("\n")[0]) as {
          id: string;
          timestamp: string;
          cwd: string;
        };
        const project = header.cwd.split("/").at(-1)!;
        const label = `${header.timestamp.slice(0, 10)} ${header.timestamp.slice(11, 16)} ${
          project.length > 20 ? `${project.slice(0, 17)}...` : project
        } ${header.id.slice(-6)}`;
        const served = Math.round((s.readcacheBytes / s.piBytes) * 100);
        expected.push({
          label,
          mode: s.withReadcache ? "on" : "replayed",
          served: `${served}%`,
          saved: `${100 - served}%`,
        });
      }
      assert.deepEqual(expected.map((e) => e.mode).sort(), ["on", "on", "replayed"]);
      assert.ok(expected.some((e) => e.label.includes(" a-project-with-a-... ")), "a long name");
      const totalServed = Math.round(
        (figures.totals.readcacheBytes / figures.totals.piBytes) * 100,
      );

      // the page as the browser parsed it, without any script
      const plain = await dumpDom(page);
      for (const e of expected) {
        assert.ok(plain.includes(`>${e.label}</td><td class="mode">${e.mode}</td>`), e.label);
      }
      assert.ok(
        !/\.jsonl<\/(td|text)>/.test(plain),
        "no session is shown by its file name (only in its tooltip)",
      );

      // the probe: the DOM and the laid-out chart
      const probed = join(base, "probed.html");
      await Deno.writeTextFile(probed, html.replace("</body>", `${PROBE}\n</body>`));
      const dom = await dumpDom(probed);
      const m = /<pre id="probe">([\s\S]*?)<\/pre>/.exec(dom);
      assert.ok(m, `the probe did not run:\n${dom.slice(0, 2000)}`);
      const p = JSON.parse(unescapeHtml(m[1])) as Probe;

      assert.deepEqual(p.summary, { served: `${totalServed}%`, saved: `${100 - totalServed}%` });
      assert.deepEqual(
        p.rows,
        expected.map((e) => ({ ...e, dataMode: e.mode })),
        "the sessions table",
      );
      assert.ok(p.svgNamespace, "the chart is parsed as SVG");
      assert.equal(p.chart.length, expected.length);
      for (const [i, c] of p.chart.entries()) {
        const e = expected[i];
        assert.equal(c.label, e.label);
        assert.equal(c.dataMode, e.mode);
        assert.match(c.mode, e.mode === "on" ? /^on: ran with readcache$/ : /^replayed: /);
        assert.ok(
          c.share.endsWith(`: ${e.served} of pi, ${100 - parseInt(e.served)}% less`),
          c.share,
        );
        assert.ok(c.rectsAreSvg, "two SVG bars");
        assert.ok(c.labelEnd < c.barsX, `"${c.label}" runs into the bars (${c.labelEnd} px)`);
        assert.ok(c.modeEnd < c.barsX, `"${c.mode}" runs into the bars (${c.modeEnd} px)`);
        assert.ok(c.shareEnd <= c.svgWidth, `"${c.share}" runs off the chart (${c.shareEnd} px)`);
      }
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});
