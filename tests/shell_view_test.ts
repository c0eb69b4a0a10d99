// Which shell commands only read, and which output shows which lines (SPEC §5.10).
import assert from "node:assert/strict";
import {
  classifyShellCommand,
  gitDiffNewSide,
  grepShownLines,
  grepToolLines,
  printedWhileChanging,
  searchRows,
  shownLinesOf,
} from "../src/core/shell_view.ts";
import { TO_END } from "../src/core/view.ts";

Deno.test("commands that only read files are read-only", () => {
  for (
    const c of [
      "cat a.txt",
      "find . -name '*.ts' | head -20",
      "ls -la 2>/dev/null",
      "git status && git diff --stat",
      "grep -rn 'foo bar' src | wc -l",
      "cd packages/x && ls",
      "sed -n '10,20p' a.ts",
      "rg TODO src; echo done",
      "cat a.txt 2>&1",
      "head -n 5 a.txt >/dev/null",
    ]
  ) assert.equal(classifyShellCommand(c).readOnly, true, c);
});

Deno.test("commands that may change a file, or that the cache cannot read, are not", () => {
  for (
    const c of [
      "sed -i 's/a/b/' a.txt",
      "echo hi > a.txt",
      "echo hi >> a.txt",
      "cat a.txt | tee b.txt",
      "cat $(ls)",
      "cat `ls`",
      "diff <(cat a) b",
      "cat <<EOF\nx\nEOF",
      "find . -name x -delete",
      "find . -exec rm {} ;",
      "rg --pre ./script x",
      "sort -o out.txt in.txt",
      "git diff --output=x.patch",
      "git checkout -- a.txt",
      "npm test",
      "./build.sh",
      "GIT_EXTERNAL_DIFF=x git diff",
      "sleep 5 &",
      "(cd x && rm y)",
      "cat 'unterminated",
      "sed -n 'w out' a.txt",
      "file -C -m magic",
    ]
  ) assert.equal(classifyShellCommand(c).readOnly, false, c);
});

Deno.test("recognised view forms name their file and lines", () => {
  const view = (c: string) => classifyShellCommand(c).view;
  assert.deepEqual(view("cat a.txt"), { path: "a.txt", lines: { kind: "whole" } });
  assert.deepEqual(view("cat 'my file.txt'"), { path: "my file.txt", lines: { kind: "whole" } });
  assert.deepEqual(view("cat -n a.txt"), { path: "a.txt", lines: { kind: "numbered" } });
  assert.deepEqual(view("sed -n '3,7p' a.txt"), {
    path: "a.txt",
    lines: { kind: "range", start: 3, end: 7 },
  });
  assert.deepEqual(view("sed -n 4p a.txt")?.lines, { kind: "range", start: 4, end: 4 });
  assert.deepEqual(view("sed -n '4,$p' a.txt")?.lines, { kind: "range", start: 4, end: TO_END });
  assert.deepEqual(view("head -n 5 a.txt")?.lines, { kind: "head", count: 5 });
  assert.deepEqual(view("head -5 a.txt")?.lines, { kind: "head", count: 5 });
  assert.deepEqual(view("head a.txt")?.lines, { kind: "head", count: 10 });
  assert.deepEqual(view("cat a.txt | head -30")?.lines, { kind: "head", count: 30 });
  assert.deepEqual(view("tail -n +9 a.txt")?.lines, { kind: "range", start: 9, end: TO_END });
  assert.deepEqual(view("tail -n 3 a.txt")?.lines, { kind: "tail", count: 3 });
  assert.deepEqual(view("grep -ni foo a.txt"), { path: "a.txt", lines: { kind: "grep" } });
  // not one file in a known form (several files are `multi`)
  for (
    const c of [
      "cat a.txt b.txt",
      "cat $F",
      "cat ~/a.txt",
      "cat *.txt",
      "grep foo a.txt",
      "grep -c foo a.txt",
      "head -c 10 a.txt",
      "cd x || cat a.txt",
      "cat a.txt | grep x",
      "nl a.txt",
    ]
  ) assert.equal(view(c), undefined, c);
});

Deno.test("output is a view only when it is exactly the file's lines", () => {
  const text = "l1\nl2\nl3\n"; // 4 lines as the cache counts them, the last one empty
  assert.deepEqual(shownLinesOf({ kind: "whole" }, text, text), [{ start: 1, end: TO_END }]);
  assert.deepEqual(shownLinesOf({ kind: "whole" }, text, "l1\nl2\nl3"), [
    { start: 1, end: TO_END },
  ]);
  assert.deepEqual(shownLinesOf({ kind: "whole" }, text, "l1\nL2\nl3\n"), []);
  assert.deepEqual(
    shownLinesOf({ kind: "whole" }, text, text + "\n\nCommand exited with code 1"),
    [],
  );
  assert.deepEqual(shownLinesOf({ kind: "range", start: 2, end: 3 }, text, "l2\nl3\n"), [
    { start: 2, end: 3 },
  ]);
  // asked for more than there is: the output showed where the file ends
  assert.deepEqual(shownLinesOf({ kind: "range", start: 2, end: 40 }, text, "l2\nl3\n"), [
    { start: 2, end: TO_END },
  ]);
  assert.deepEqual(shownLinesOf({ kind: "head", count: 2 }, text, "l1\nl2\n"), [
    { start: 1, end: 2 },
  ]);
  assert.deepEqual(shownLinesOf({ kind: "head", count: 9 }, text, text), [
    { start: 1, end: TO_END },
  ]);
  assert.deepEqual(
    shownLinesOf({ kind: "numbered" }, text, "     1\tl1\n     2\tl2\n     3\tl3\n"),
    [{ start: 1, end: TO_END }],
  );
  assert.deepEqual(shownLinesOf({ kind: "grep" }, text, "1:l1\n3:l3\n"), [
    { start: 1, end: 1 },
    { start: 3, end: 3 },
  ]);
  assert.deepEqual(shownLinesOf({ kind: "grep" }, text, "1:l1\n3:lX\n"), []);
  // the last lines without numbers: only the whole file is a view
  assert.deepEqual(shownLinesOf({ kind: "tail", count: 2 }, text, "l2\nl3\n"), []);
  assert.deepEqual(shownLinesOf({ kind: "tail", count: 3 }, text, text), [
    { start: 1, end: TO_END },
  ]);
  // carriage returns make line breaks ambiguous; empty output shows nothing
  assert.deepEqual(shownLinesOf({ kind: "whole" }, "a\r\nb\r\n", "a\r\nb\r\n"), []);
  assert.deepEqual(shownLinesOf({ kind: "whole" }, "", ""), []);
});

Deno.test("pi's grep rows are views of the lines they print as they are", () => {
  const rows = grepToolLines(
    "src/a.ts:2: b\nsrc/a.ts-3- c\nsrc/a.ts:4: d... [truncated]\n\n[100 matches limit reached]",
  );
  assert.deepEqual(rows, [
    { path: "src/a.ts", line: 2, text: "b" },
    { path: "src/a.ts", line: 3, text: "c" },
    { path: "src/a.ts", line: 4, text: "d... [truncated]" },
  ]);
  assert.deepEqual(grepShownLines(rows, "a\nb\nc\ndddddd\n"), [{ start: 2, end: 3 }]);
});

Deno.test("files a command may print while it changes files (SPEC §5.10)", () => {
  const p = (c: string) => printedWhileChanging(c);
  // the two shapes of issue 37: printed, then put back before the result
  assert.deepEqual(p("cat a.txt && cp a.keep a.txt"), { kind: "paths", paths: ["a.txt"] });
  assert.deepEqual(p("git stash && cat a.txt && git stash pop"), {
    kind: "paths",
    paths: ["a.txt"],
  });
  // a print after every change shows the file as it is at the result
  assert.deepEqual(p("cp a.keep a.txt && cat a.txt"), { kind: "none" });
  // read-only commands change nothing
  assert.deepEqual(p("cat a.txt | head -5"), { kind: "none" });
  // a pipeline's parts run side by side
  assert.deepEqual(p("cat a.txt | sed -i s/x/y/ b.txt"), {
    kind: "paths",
    paths: ["a.txt", "b.txt", "s/x/y/"],
  });
  // after `cd DIR;` a failed cd leaves the directory as it was: both are possible
  assert.deepEqual(p("cd sub; cat a.txt; rm b"), { kind: "paths", paths: ["a.txt", "sub/a.txt"] });
  // a search's pattern is no path; a recursive one without a path searches where it runs
  assert.deepEqual(p("grep -rn foo && git checkout ."), { kind: "paths", paths: ["."] });
  assert.deepEqual(p("grep -n foo a.txt; touch b"), { kind: "paths", paths: ["a.txt"] });
  // programs the cache cannot see into, unplain paths, git's printing commands: everything
  for (
    const c of [
      "npm test",
      "sh restore.sh",
      "cat *.ts && rm x",
      "cat a | tee b",
      "git add -p",
      "git stash show -p",
      "git diff && git add .",
      "cd $DIR && cat a && rm b",
      "(cat a; rm a)",
      "git commit -m x",
    ]
  ) assert.deepEqual(p(c), { kind: "all" }, c);
  // changes that print no file content
  assert.deepEqual(p("git stash -u && git checkout main && git stash pop"), { kind: "none" });
  assert.deepEqual(p("echo hi > a.txt && cat b.txt"), { kind: "none" });
});

Deno.test("a redirection alone writes its file", () => {
  assert.equal(classifyShellCommand("> a.txt").readOnly, false);
  assert.deepEqual(printedWhileChanging("cat a.txt; > a.txt"), { kind: "paths", paths: ["a.txt"] });
});

Deno.test("views as agents type them: cd, pipes into head, sed and tail, several files", () => {
  const c = (cmd: string) => {
    const { view, multi } = classifyShellCommand(cmd);
    return view ?? multi;
  };
  assert.deepEqual(c("cd packages/x && cat a.ts"), {
    path: "packages/x/a.ts",
    lines: { kind: "whole" },
  });
  assert.deepEqual(c("cd a; cd b && sed -n '1,5p' c.ts"), {
    path: "a/b/c.ts",
    lines: { kind: "range", start: 1, end: 5 },
  });
  assert.deepEqual(c("grep -n foo a.ts | head -20"), { path: "a.ts", lines: { kind: "grep" } });
  assert.deepEqual(c("cat -n a.ts | sed -n '10,20p'"), {
    path: "a.ts",
    lines: { kind: "numberedRange", start: 10, end: 20 },
  });
  assert.deepEqual(c("nl -ba a.ts | sed -n '3,4p'"), {
    path: "a.ts",
    lines: { kind: "numberedRange", start: 3, end: 4 },
  });
  assert.deepEqual(c("head -n 30 a.ts | tail -n 10"), {
    path: "a.ts",
    lines: { kind: "headTail", head: 30, tail: 10 },
  });
  assert.deepEqual(c("cat a.ts b.ts"), { kind: "concat", paths: ["a.ts", "b.ts"] });
  assert.deepEqual(c("grep -rn foo src"), { kind: "rows", paths: ["src"], bare: true });
  assert.deepEqual(c("grep -n foo a.ts b.ts"), {
    kind: "rows",
    paths: ["a.ts", "b.ts"],
    bare: false,
  });
  assert.deepEqual(c("rg -n foo"), { kind: "rows", paths: ["."], bare: false });
  assert.deepEqual(c("git diff -- a.ts"), { kind: "gitDiff", dir: "" });
  // another version of a file, or numbers that are not line numbers: no view
  for (
    const cmd of [
      "git diff --cached",
      "git diff a b",
      "git show HEAD:a.ts",
      "nl a.ts",
      "grep -c x a",
    ]
  ) {
    assert.equal(c(cmd), undefined, cmd);
  }
});

Deno.test("numbered ranges and head | tail show only what the command prints for the file", () => {
  const t = "a\nb\nc\nd\ne\n";
  assert.deepEqual(
    shownLinesOf({ kind: "numberedRange", start: 2, end: 3 }, t, "     2\tb\n     3\tc\n"),
    [
      { start: 2, end: 3 },
    ],
  );
  // asked past the end: the output showed where the file ends
  assert.deepEqual(
    shownLinesOf({ kind: "numberedRange", start: 4, end: 9 }, t, "     4\td\n     5\te"),
    [
      { start: 4, end: TO_END },
    ],
  );
  assert.deepEqual(shownLinesOf({ kind: "headTail", head: 4, tail: 2 }, t, "c\nd\n"), [
    { start: 3, end: 4 },
  ]);
  assert.deepEqual(shownLinesOf({ kind: "headTail", head: 9, tail: 2 }, t, "d\ne\n"), []);
});

Deno.test("rows of searches over several files and the new side of git diff", () => {
  assert.deepEqual(searchRows("src/a.ts:3:x = 1\nBinary file b matches\n./c:10:y", false), [
    { path: "src/a.ts", line: 3, text: "x = 1" },
    { path: "./c", line: 10, text: "y" },
  ]);
  assert.deepEqual(searchRows("3:x = 1", true), [{ path: "", line: 3, text: "x = 1" }]);
  const diff = [
    "diff --git a/x.txt b/x.txt",
    "index 1..2 100644",
    "--- a/x.txt",
    "+++ b/x.txt",
    "@@ -2,3 +2,4 @@ head",
    " b",
    "-c",
    "+C",
    "+C2",
    " d",
    "diff --git a/gone b/gone",
    "--- a/gone",
    "+++ /dev/null",
    "@@ -1 +0,0 @@",
    "-x",
  ].join("\n");
  assert.deepEqual(gitDiffNewSide(diff), [{
    path: "x.txt",
    rows: [{ line: 2, text: "b" }, { line: 3, text: "C" }, { line: 4, text: "C2" }, {
      line: 5,
      text: "d",
    }],
  }]);
});
