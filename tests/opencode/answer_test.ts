// From the core's decision to OpenCode's answer (src/adapters/opencode/answer.ts): which reads
// may be cached, the request the core decides, the scope check, and the answer texts.
import assert from "node:assert/strict";
import { decideRead } from "../../src/core/decision.ts";
import { TO_END } from "../../src/core/view.ts";
import {
  cacheableView,
  coreRequest,
  openCodeAnswerText,
  scopeMatchesView,
} from "../../src/adapters/opencode/answer.ts";
import { renderOpenCodeRead } from "../../src/adapters/opencode/baseline.ts";

const enc = new TextEncoder();
const view = (text: string, offset?: number, limit?: number) =>
  renderOpenCodeRead({ path: "/w/a.txt", text, offset, limit })!;

/** The core's decision for the read OpenCode showed as `v`, with `held` as what the model holds. */
function decide(text: string, v: ReturnType<typeof view>, limit?: number, held?: string) {
  const bytes = enc.encode(text);
  const base = held === undefined ? undefined : decideRead({
    displayPath: "a.txt",
    pathKey: "/w/a.txt",
    bytes: enc.encode(held),
    knowledge: { trust: undefined, keyViews: [], nameViews: [] },
  }).details.readcache!;
  const seen = base === undefined ? [] : [{ seq: 1, start: 1, end: TO_END, hash: base.servedHash }];
  return decideRead({
    displayPath: "a.txt",
    pathKey: "/w/a.txt",
    ...coreRequest(v, limit),
    bytes,
    knowledge: {
      trust: base === undefined
        ? undefined
        : { full: { hash: base.servedHash, seq: 1 }, ranges: {} },
      keyViews: seen,
      nameViews: seen,
    },
    objects: new Map(held === undefined ? [] : [[base!.servedHash, enc.encode(held)]]),
  });
}

Deno.test("cacheableView: only files whose lines are the core's lines", () => {
  const ok = "a\nb\n";
  assert.equal(cacheableView(view(ok), enc.encode(ok), ok), true);
  for (const t of ["a\r\nb\r\n", "a\rb", "x".repeat(2001) + "\n"]) {
    assert.equal(cacheableView(view(t), enc.encode(t), t), false, JSON.stringify(t.slice(0, 9)));
  }
  const bom = new Uint8Array([0xef, 0xbb, 0xbf, 0x61]);
  assert.equal(cacheableView(view("a"), bom, "a"), false);
  assert.equal(cacheableView(view(""), new Uint8Array(), ""), false, "nothing shown");
});

Deno.test("the core's scope is OpenCode's shown lines, for whole files, ranges and cuts", () => {
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `l${i + 1}`).join("\n") + "\n";
  const cases: [string, number | undefined, number | undefined][] = [
    [lines(10), undefined, undefined], // ends with \n: pi counts 11 lines
    ["a\nb", undefined, undefined], // no final newline
    [lines(10), 3, 4],
    [lines(10), 8, 3], // limit reaches the end exactly
    [lines(10), 8, 100],
    [lines(2500), undefined, undefined], // OpenCode's 2000-line default
    [lines(2000), undefined, undefined], // pi's extra empty line would be line 2001
    [("w".repeat(99) + "\n").repeat(600), undefined, undefined], // the 50 KB cut
    [("w".repeat(99) + "\n").repeat(512) + "\nrest\n", undefined, undefined], // exactly 50 KB
  ];
  for (const [text, offset, limit] of cases) {
    const v = view(text, offset, limit);
    const meta = decide(text, v, limit).details.readcache!;
    assert.ok(scopeMatchesView(meta, v), `${text.length} ${offset} ${limit}: ${meta.scopeKey}`);
  }
  const v = view(lines(10), 2, 3);
  const meta = decide(lines(10), v, 3).details.readcache!;
  assert.equal(scopeMatchesView({ ...meta, rangeEnd: 5 }, v), false);
  assert.equal(scopeMatchesView({ ...meta, rangeStart: 1 }, v), false);
});

Deno.test("answers use OpenCode's line count and keep the core's diff hunks", () => {
  const text = "one\ntwo\nthree\n";
  const whole = view(text);
  const unchanged = decide(text, whole, undefined, text);
  assert.equal(unchanged.mode, "unchanged");
  assert.equal(openCodeAnswerText(unchanged, whole), "[readcache: unchanged, 3 lines]");

  const range = view(text, 2, 1);
  const r = decide(text, range, 1, text);
  assert.equal(r.mode, "unchanged_range");
  assert.equal(openCodeAnswerText(r, range), "[readcache: unchanged in lines 2-2 of 3]");

  const before = Array.from({ length: 40 }, (_, i) => `line number ${i + 1}`).join("\n") + "\n";
  const now = before.replace("line number 20\n", "line NUMBER 20\n");
  const changed = decide(now, view(now), undefined, before);
  assert.equal(changed.mode, "diff");
  const diff = openCodeAnswerText(changed, view(now))!;
  assert.equal(diff.split("\n")[0], "[readcache: 2 lines changed of 40]");
  assert.equal(diff.slice(diff.indexOf("\n")), changed.text.slice(changed.text.indexOf("\n")));

  const elsewhere = decide(now, view(now, 5, 2), 2, before);
  assert.equal(elsewhere.reason, "range_slice_unchanged");
  assert.equal(
    openCodeAnswerText(elsewhere, view(now, 5, 2)),
    "[readcache: unchanged in lines 5-6; changes exist outside this range]",
  );

  const first = decide(text, whole);
  assert.equal(first.mode, "full");
  assert.equal(openCodeAnswerText(first, whole), undefined, "a first read keeps OpenCode's text");
});

Deno.test("no range diff whose range takes in pi's empty line after the final line break", () => {
  // found by the oracle through the OpenCode port: line 31 of 46 removed, then lines 23 to the
  // end read: pi's range diff of lines 23-46 adds pi's empty last line, a blank line OpenCode's
  // model would believe in
  const before =
    Array.from({ length: 46 }, (_, i) => `a${i + 1} the quick brown fox jumps over the lazy dog`)
      .join("\n") + "\n";
  const now = before.replace("a31 the quick brown fox jumps over the lazy dog\n", "");
  const toEnd = view(now, 23);
  const d = decide(now, toEnd, undefined, before);
  assert.equal(d.mode, "diff");
  assert.equal(d.details.readcache!.rangeEnd, toEnd.end + 1, "pi's empty line is in the range");
  assert.equal(openCodeAnswerText(d, toEnd), undefined);
  // the whole-file diff of the same change is given (whole texts: pi's empty line is no line)
  const whole = decide(now, view(now), undefined, before);
  assert.equal(whole.mode, "diff");
  assert.match(openCodeAnswerText(whole, view(now))!, /^\[readcache: 1 line changed of 45\]\n/);
});
