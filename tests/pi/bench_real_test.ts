// `deno task bench:real` (bench/pi/real.ts): its oracle parts on small cases, and one real session
// replayed end to end (the table's shape, no violation). The session folders live outside the
// repository (../shared/realworld); without them that test is skipped.
import assert from "node:assert/strict";
import { defaultSessionDirs, runRealBench, sessionInputs } from "../../bench/pi/real.ts";
import { bashShown, fileOpsOf, viewKind } from "../../cli/savings_bash.ts";
import {
  applyOldEdit,
  parseShownRead,
  renderOldRead,
  resyncFromShown,
  splitObjects,
} from "../../bench/pi/real_log.ts";
import { checkCachedAnswer, idealAnswer, ModelContext } from "../../cli/savings_model.ts";

const file = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`);

Deno.test("bench:real log: glued objects, old read output, resync, old edits", () => {
  assert.deepEqual(splitObjects('{"a":"}{"}{"b":[1,{"c":2}]}'), [
    '{"a":"}{"}',
    '{"b":[1,{"c":2}]}',
  ]);
  const text = file(30).join("\n");
  assert.deepEqual(
    (renderOldRead(text, 10, 5, "2025-11") as { text: string }).text.split("\n\n")[1],
    "... (16 more lines not shown. Use offset=15 to continue reading)",
  );
  assert.deepEqual(
    (renderOldRead(text, 10, 5, "2025-12") as { text: string }).text.split("\n\n")[1],
    "[16 more lines in file. Use offset=15 to continue]",
  );
  assert.deepEqual(
    parseShownRead("a\nb\n\n[16 more lines in file. Use offset=15 to continue]", "2025-12"),
    {
      lines: ["a", "b"],
      total: 30,
    },
  );
  // a window read patches its lines when the line count agrees, else it cannot be adopted
  const shown = ["X", "Y"].join("\n") + "\n\n[27 more lines in file. Use offset=4 to continue]";
  assert.deepEqual(resyncFromShown(text, shown, 2, "2025-12")?.split("\n").slice(0, 4), [
    "line 1",
    "X",
    "Y",
    "line 4",
  ]);
  assert.deepEqual(resyncFromShown(file(31).join("\n"), shown, 2, "2025-12"), undefined);
  assert.deepEqual(resyncFromShown(undefined, "whole\nfile", undefined, "2025-12"), "whole\nfile");
  // 2025-11 replaced with String.replace: `$$` became `$`
  assert.deepEqual(
    applyOldEdit("a X b", [{ oldText: "X", newText: "$${y}" }], "2025-11"),
    "a ${y} b",
  );
  assert.deepEqual(
    applyOldEdit("a X b", [{ oldText: "X", newText: "$${y}" }], "2025-12"),
    "a $${y} b",
  );
  assert.deepEqual(applyOldEdit("X X", [{ oldText: "X", newText: "Y" }], "2025-12"), undefined);
});

Deno.test("bench:real bash: only plain cp/mv/rm", () => {
  assert.deepEqual(fileOpsOf("cd /w/src && mv a.ts b.ts utils/"), [
    { op: "cd", dir: "/w/src" },
    { op: "mv", sources: ["a.ts", "b.ts"], target: "utils/" },
  ]);
  assert.deepEqual(fileOpsOf('rm x.ts 2>/dev/null; echo "done"'), [
    { op: "rm", paths: ["x.ts"], recursive: false },
  ]);
  assert.deepEqual(fileOpsOf("mv theme/* modes/"), undefined);
  assert.deepEqual(fileOpsOf("git checkout -- . && rm -rf dir"), undefined);
  assert.deepEqual(fileOpsOf("npm run check"), undefined);
});

Deno.test("bench:real ideal: markers for held stretches, plain text for the rest", () => {
  const ctx = new ModelContext();
  const now = file(10).map((l) => `const ${l.replace(" ", "")} = compute("${l}");`);
  ctx.read("/f", 1, now.slice(0, 4), 10);
  // lines 1-4 held, 5-10 unknown: one marker, six lines, the notice
  const a = idealAnswer(ctx.view("/f"), now, 1, 10, "");
  const marker = "[readcache: unchanged in lines 1-4 of 10]";
  assert.deepEqual(a.bytes, marker.length + 1 + now.slice(4).join("\n").length);
  assert.deepEqual([a.held, a.stale, a.unknown], [4, 0, 6]);
  // held throughout: one marker, even for a window with a notice
  ctx.read("/f", 1, now, 10);
  assert.deepEqual(
    idealAnswer(ctx.view("/f"), now, 1, 10, "").bytes,
    "[readcache: unchanged, 10 lines]".length,
  );
  assert.deepEqual(
    idealAnswer(ctx.view("/f"), now, 2, 9, "\n\n[1 more lines in file. Use offset=10 to continue.]")
      .bytes,
    "[readcache: unchanged in lines 2-9 of 10]".length,
  );
  // the model's own edit: its view with the replacement applied
  // a stretch shorter than its marker costs its plain text
  const short = file(10);
  ctx.read("/s", 1, short.slice(0, 2), 10);
  assert.deepEqual(
    idealAnswer(ctx.view("/s"), short, 1, 3, "").bytes,
    "line 1\nline 2\nline 3".length,
  );
  // the model's own edit: its view with the replacement applied
  const replacement = { oldText: `${now[2]}\n${now[3]}`, newText: "three\nfour\nfour and a half" };
  ctx.edited("/f", [replacement], 3);
  const edited = [now[0], now[1], "three", "four", "four and a half", ...now.slice(4)];
  const b = idealAnswer(ctx.view("/f"), edited, 1, 11, "");
  assert.deepEqual([b.held, b.via], [11, "edit"]);
  // an edit outside what the model holds: from the match on, nothing is known
  ctx.compact();
  ctx.read("/f", 1, edited.slice(0, 3), 11);
  ctx.read("/f", 6, edited.slice(5, 8), 11);
  ctx.edited("/f", [{ oldText: "four\n", newText: "" }], 4);
  assert.deepEqual(ctx.view("/f")?.lines, edited.slice(0, 3)); // lines 6-8 may have moved
  // the 2025-11 `$$` edit: the model believes what it sent, not what pi wrote
  ctx.read("/g", 1, ["a X b"], 1);
  ctx.edited("/g", [{ oldText: "X", newText: "$${y}" }], 1);
  assert.deepEqual(idealAnswer(ctx.view("/g"), ["a ${y} b"], 1, 1, "").stale, 1);
});

Deno.test("bench:real safety: cached answers checked against the model's view", () => {
  const ctx = new ModelContext();
  const before = file(8);
  ctx.read("/f", 1, before, 8);
  const view = ctx.view("/f");
  const whole = { start: 1, end: 8 };
  assert.deepEqual(
    checkCachedAnswer("[readcache: unchanged, 8 lines]", view, before, whole),
    undefined,
  );
  const after = [...before];
  after[4] = "changed";
  assert.match(
    checkCachedAnswer("[readcache: unchanged, 8 lines]", view, after, whole) ?? "",
    /line 5 differs/,
  );
  assert.match(
    checkCachedAnswer("[readcache: unchanged in lines 2-3 of 8]", view, after, whole) ?? "",
    /answers lines 2-3/,
  );
  const diff = [
    "[readcache: 2 lines changed of 8]",
    "--- a/f",
    "+++ b/f",
    "@@ -2,7 +2,7 @@",
    " line 2",
    " line 3",
    " line 4",
    "-line 5",
    "+changed",
    " line 6",
    " line 7",
    " line 8",
    "\\ No newline at end of file",
  ].join("\n");
  assert.deepEqual(checkCachedAnswer(diff, view, after, whole), undefined);
  const wrong = diff.replace("+changed", "+other");
  assert.match(checkCachedAnswer(wrong, view, after, whole) ?? "", /does not give the file/);
  const range = [
    "[readcache: 2 lines changed in lines 4-6 of 8]",
    "--- a/f",
    "+++ b/f",
    "@@ -4,3 +4,3 @@",
    " line 4",
    "-line 5",
    "+changed",
    " line 6",
  ].join("\n");
  assert.deepEqual(checkCachedAnswer(range, view, after, { start: 4, end: 6 }), undefined);
});

const session = defaultSessionDirs().find((d) => d.endsWith("/session"));

Deno.test({
  name: "bench:real replays a real session: the table's shape, no violation",
  ignore: session === undefined,
  async fn() {
    const { sessions, text } = await runRealBench([session!]);
    assert.deepEqual(sessions.length, 1);
    const [s] = sessions;
    assert.deepEqual(s.reads.length, 29);
    assert.deepEqual(s.reads.filter((r) => r.violation !== undefined), []);
    assert.deepEqual(s.counts.plainDiffers, 0);
    const header = text.split("\n").find((l) => l.startsWith("| session "));
    assert.deepEqual(
      header?.split("|").map((c) => c.trim()).filter((c) => c !== ""),
      [
        "session",
        "reads",
        "resynced",
        "plain bytes",
        "served bytes",
        "ideal bytes",
        "served / plain",
        "savings claimed",
      ],
    );
    assert.match(
      text,
      /^\| session +\| +29 \| +\d+ \| +\d+ \| +\d+ \| +\d+ \| +[\d.]+% \| +[\d.]+% \|$/m,
    );
    assert.match(
      text,
      /Safety: \d+ cached answers checked against the model's context, 0 violations/,
    );
    const served = s.reads.reduce((a, r) => a + r.served, 0);
    const plain = s.reads.reduce((a, r) => a + r.plain, 0);
    assert.ok(served < plain);
  },
});

Deno.test("bench:real reads views as agents type them on its own, each line checked", () => {
  const dir = Deno.makeTempDirSync();
  try {
    Deno.mkdirSync(`${dir}/sub`);
    const text = "a\nb foo\nc\nd foo\ne\n";
    Deno.writeTextFileSync(`${dir}/sub/x.txt`, text);
    Deno.writeTextFileSync(`${dir}/y.txt`, text);
    const read = (p: string) => {
      try {
        return Deno.readTextFileSync(p);
      } catch {
        return undefined;
      }
    };
    const shown = (command: string, output: string) =>
      bashShown(command, output, dir, read).map((s) => [
        s.file.slice(dir.length + 1),
        s.start,
        s.lines.length,
      ]);
    assert.deepEqual(shown("cd sub && cat x.txt", text), [["sub/x.txt", 1, 6]]);
    assert.deepEqual(shown('grep -n "foo" y.txt | head -1', "2:b foo\n"), [["y.txt", 2, 1]]);
    assert.deepEqual(shown("grep -rn foo sub", "sub/x.txt:4:d foo\n"), [["sub/x.txt", 4, 1]]);
    // the file filters agents add, before or after the paths, and a head: rows as the cache reads
    // them (SPEC §5.10)
    assert.deepEqual(
      shown(`cd ${dir} && grep -rn "foo" sub --include="*.txt" | head -30`, "sub/x.txt:4:d foo\n"),
      [["sub/x.txt", 4, 1]],
    );
    assert.deepEqual(
      shown('grep -rn --include="*.txt" foo sub', "sub/x.txt:2:b foo\n"),
      [["sub/x.txt", 2, 1]],
    );
    assert.deepEqual(shown("cat -n y.txt | sed -n '2,3p'", "     2\tb foo\n     3\tc\n"), [
      ["y.txt", 2, 1],
      ["y.txt", 3, 1],
    ]);
    assert.deepEqual(shown("head -n 4 y.txt | tail -n 2", "c\nd foo\n"), [["y.txt", 3, 2]]);
    // a row that is not the file's line, or lines the model cannot place: nothing
    assert.deepEqual(shown("grep -rn foo sub", "sub/x.txt:3:d foo\n"), []);
    assert.deepEqual(shown("head -n 9 y.txt | tail -n 2", "d foo\ne\n"), []);
    assert.equal(viewKind("cd x && grep -n foo a | head -5"), "positioned");
    assert.equal(viewKind("grep -A 3 foo a"), "unpositioned");
    assert.equal(viewKind("git status"), undefined);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("bench:real replays no staler than the session: a conflict seen through bash", async () => {
  // tests/fixtures/realworld/conflict: the model reads lines 1-15; `git pull --rebase` leaves
  // conflict markers the replay cannot apply; `cd DIR && cat CHANGELOG.md | head -30` shows them;
  // a write is aborted; `git checkout --theirs` puts the old lines back; the model reads 1-15
  const dir = new URL("../fixtures/realworld/conflict", import.meta.url).pathname;
  const { sessions, text } = await runRealBench([dir]);
  const reads = sessions[0].reads;
  assert.equal(reads.length, 2);
  // the rebuild took the lines the output printed, so the extension saw the conflict at the
  // bash result, as the live extension would: the last read is not answered from the cache
  assert.equal(reads[1].mode, "baseline_fallback");
  assert.equal(reads[1].unapplied, true, "a read after `git checkout` the replay cannot apply");
  assert.equal(sessions[0].counts.bashResyncs, 1);
  assert.match(text, /0 violations/);
  // measured: the lines bash showed that the model already held (here: the conflict changed them)
  assert.match(text, /Bash re-shows \(conflict\): \d+ of \d+ file lines bash outputs showed/);
  assert.ok(sessions[0].counts.bashShownLines.lines > 0);
  assert.ok(reads.every((r) => r.served >= r.ideal), "never above 100% of the achievable");
});

Deno.test("bench:real on any pi session: no manifest, or a word on what is wrong", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    // a session file alone: the cwd is its header's, files come from its own outputs
    const fixture = new URL("../fixtures/realworld/conflict/session.jsonl", import.meta.url);
    Deno.copyFileSync(fixture, `${dir}/one.jsonl`);
    Deno.writeTextFileSync(`${dir}/broken.jsonl`, "not json\n");
    const inputs = sessionInputs(dir);
    assert.deepEqual(inputs.map((p) => p.slice(dir.length + 1)), ["broken.jsonl", "one.jsonl"]);
    const { sessions, skipped } = await runRealBench(inputs);
    assert.equal(sessions.length, 1);
    assert.equal(sessions[0].reads.length, 2);
    assert.match(skipped[0], /broken\.jsonl: the first line is not a pi session header/);
    assert.throws(() => sessionInputs(`${dir}/nothing`), /no such file or folder/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

/** `readcache savings --json` on `inputs` (session files), as the CLI prints it. */
async function cliSavings(inputs: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../../cli/main.ts", import.meta.url).pathname,
      "savings",
      "--json",
      ...inputs,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout)) as {
    sessions: { file: string; estimate?: string; notJudged?: Record<string, { reads: number }> }[];
    totals: {
      piBytes: number;
      readcacheBytes: number;
      safety: { checked: number; violations: number };
    };
  };
}

Deno.test("readcache savings and bench:real give one figure on the same sessions", async () => {
  // the conflict fixture, and the shared real sessions when they are there (their folders, so
  // both sides rebuild files from the same snapshots)
  const dirs = [
    new URL("../fixtures/realworld/conflict", import.meta.url).pathname,
    ...defaultSessionDirs(),
  ];
  const { sessions } = await runRealBench(dirs);
  const reads = sessions.flatMap((s) => s.reads).filter((r) => !r.unapplied);
  const bench = reads.reduce((a, r) => a + r.served, 0) / reads.reduce((a, r) => a + r.plain, 0);
  const cli = await cliSavings(dirs.map((d) => `${d}/session.jsonl`));
  assert.ok(cli.sessions.every((s) => s.estimate === "replay"), "every session replayed");
  const share = cli.totals.readcacheBytes / cli.totals.piBytes;
  assert.ok(Math.abs(share - bench) <= 0.01, `savings ${share} vs bench:real ${bench}`);
  // the read the replay cannot judge (after `git checkout --theirs`) is counted, not a saving
  const conflict = cli.sessions.find((s) => s.file.includes("/conflict/"));
  assert.equal(conflict?.notJudged?.unapplied?.reads, 1);
  assert.equal(cli.totals.safety.violations, 0);
  console.log(
    `served / plain: savings ${(100 * share).toFixed(2)}%, bench:real ${(100 * bench).toFixed(2)}%`,
  );
});

Deno.test("the shared real sessions as users have them, bare files without snapshots: bench:real and readcache savings judge no answer wrong, and claim no more than the achievable", async () => {
  const dirs = defaultSessionDirs();
  if (dirs.length === 0) {
    console.log("skipped: the shared real sessions are not beside this checkout");
    return;
  }
  const bare = Deno.makeTempDirSync();
  try {
    // a user's sessions are bare JSONL files: the same sessions, copied without their folders
    const files = dirs.map((d) => {
      const f = `${bare}/${d.split("/").at(-1)}.jsonl`;
      Deno.copyFileSync(`${d}/session.jsonl`, f);
      return f;
    });
    const { sessions, text } = await runRealBench(files);
    for (const s of sessions) {
      const judged = s.reads.filter((r) => !r.unapplied);
      assert.ok(judged.every((r) => r.violation === undefined), `${s.name}: ${text}`);
      const plain = judged.reduce((a, r) => a + r.plain, 0);
      const served = judged.reduce((a, r) => a + r.served, 0);
      const ideal = judged.reduce((a, r) => a + r.ideal, 0);
      assert.ok(
        served >= ideal,
        `${s.name}: claims ${plain - served} of ${plain - ideal} achievable`,
      );
    }
    const cli = await cliSavings(files);
    assert.equal(cli.totals.safety.violations, 0, "the CLI prints no 'wrong'");
  } finally {
    Deno.removeSync(bare, { recursive: true });
  }
});

Deno.test("bench:real's model: an edit whose old text the view holds twice leaves the lines before the first known", () => {
  // the model wrote the file, another version put the same lines back further down, then it
  // read lines 1-15 and edited text that occurs twice in what it holds
  const m = new ModelContext();
  const lines = Array.from({ length: 15 }, (_, i) => `line ${i + 1}`);
  lines[5] = "- change 1";
  lines[11] = "- change 1";
  m.read("/w/CHANGELOG.md", 1, lines, 30);
  m.edited("/w/CHANGELOG.md", [{ oldText: "- change 1", newText: "- change one" }], undefined);
  const v = m.view("/w/CHANGELOG.md")!;
  // known before the first occurrence (lines 1-5), unknown from it on
  assert.deepEqual(v.lines.slice(0, 5), lines.slice(0, 5));
  assert.equal(v.lines.length, 5);
  // once in the view: applied where it is
  const n = new ModelContext();
  n.read("/w/a.md", 1, ["a", "b", "c"], 3);
  n.edited("/w/a.md", [{ oldText: "b", newText: "B" }], undefined);
  assert.deepEqual(n.view("/w/a.md")!.lines, ["a", "B", "c"]);
});

Deno.test("bench:real on bare session files of the shapes once judged wrongly: grep -rn --include | head, an edit of text the view holds twice, BSD sed -i ''", async () => {
  // tests/fixtures/realworld-bare (make_fixtures.py writes them): sessions as users have them,
  // without snapshots
  const dir = new URL("../fixtures/realworld-bare/", import.meta.url).pathname;
  const files = ["grep-include-head", "edit-old-text-twice", "bsd-sed-in-place"].map((n) =>
    `${dir}${n}.jsonl`
  );
  const { sessions, text } = await runRealBench(files);
  const [grep, edit, sed] = sessions;
  for (const s of sessions) {
    assert.ok(s.reads.every((r) => r.violation === undefined), `${s.name}: ${text}`);
    const judged = s.reads.filter((r) => !r.unapplied);
    assert.ok(judged.every((r) => r.served >= r.ideal), `${s.name}: over 100% of the achievable`);
  }
  // the grep rows showed line 19: the read of 19-98 is answered with the lines the model lacks,
  // and judged (SPEC §5.10: those rows are the model's view of line 19)
  assert.deepEqual(grep.reads.map((r) => [r.mode, r.unapplied ?? false]), [
    ["full", false],
    ["partial", false],
    ["unchanged_range", false],
  ]);
  // after `git checkout --theirs`, which no replay applies, a bare file shows other text than the
  // rebuild: not judged (the rule for an edit of text held twice is pinned on bench:real's model
  // below, and on a folder with snapshots by the shared sessions)
  assert.ok(edit.reads.every((r) => r.unapplied), JSON.stringify(edit.reads));
  // `sed -i ''` changed lines 10 and 12: the reads of 9-13 after it are not judged, the one
  // before it is (and is right)
  assert.deepEqual(sed.reads.map((r) => [r.mode, r.unapplied ?? false]), [
    ["full", false],
    ["unchanged_range", false],
    ["unchanged_range", true],
    ["unchanged_range", true],
  ]);
  assert.match(text, /Unapplied: 5 reads came after a bash command the replay could not apply/);
  // the CLI judges them the same: nothing wrong
  const cli = await cliSavings(files);
  assert.equal(cli.totals.safety.violations, 0);
});
