// The differential mode end to end (`deno task conformance --random N --cmd "<port>"`,
// scripts/pi/differential.ts): the reference port through `--cmd` on random sessions gives no
// difference; a reference with a planted difference (a copy with one marker changed, as the
// oracle's mutants are made) is reported at the right read, with the session minimised to the two
// reads that show it, written as a vector the runner passes on the reference and fails on the
// mutant; a port that cannot run a session is reported; bad arguments have stable codes.
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  DifferentialArgsError,
  parseDifferentialArgs,
} from "../../scripts/differential/differential_args.ts";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const conformance = join(repo, "scripts", "conformance.ts");
/** The reference port, started with this Deno (not through npx: a session costs one start). */
const REFERENCE_PORT = `'${Deno.execPath()}' run -A '${join(repo, "scripts", "port.ts")}'`;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  lines: string[];
  summary: string;
}

async function conformanceRun(args: string[]): Promise<Run> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", conformance, ...args],
    cwd: repo,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const lines = stdout.split("\n").filter((l) => l !== "");
  return {
    code: out.code,
    stdout,
    stderr: new TextDecoder().decode(out.stderr),
    lines,
    summary: lines.at(-1) ?? "",
  };
}

/**
 * A copy of the reference port (src/, scripts/port.ts, deno.json, deno.lock) with `find`
 * replaced by `replace` in `file`; gives its port command and removes it after `fn`.
 */
async function withMutant<T>(
  file: string,
  find: string,
  replace: string,
  fn: (cmd: string, dir: string) => Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "readcache-diff-mutant-"));
  try {
    cpSync(join(repo, "src"), join(dir, "src"), { recursive: true });
    mkdirSync(join(dir, "scripts"));
    // the reference port and the command line every port shares
    for (const f of ["port.ts", "port_main.ts"]) {
      cpSync(join(repo, "scripts", f), join(dir, "scripts", f));
    }
    for (const f of ["deno.json", "deno.lock"]) cpSync(join(repo, f), join(dir, f));
    const text = readFileSync(join(dir, file), "utf8");
    assert.equal(text.split(find).length - 1, 1, `${find} occurs once in ${file}`);
    writeFileSync(join(dir, file), text.replace(find, () => replace));
    return await fn(`'${Deno.execPath()}' run -A '${join(dir, "scripts", "port.ts")}'`, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

Deno.test("the reference port through --cmd: 20 random sessions, 0 differences", async () => {
  const r = await conformanceRun(["--random", "20", "--seed", "28", "--cmd", REFERENCE_PORT]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const m = /^20 sessions, (\d+) reads compared, 0 not applicable, 0 differences$/.exec(r.summary);
  assert.ok(m, r.summary);
  assert.ok(Number(m[1]) > 100, `${m[1]} reads`);
  assert.ok(r.lines.includes(`seed 28, port: ${REFERENCE_PORT}`), r.stdout);
});

Deno.test("a planted difference is reported at its read, minimised, as a vector", async () => {
  await withMutant(
    "src/core/markers.ts",
    "return `[readcache: unchanged, ${lines(totalLines)}]`;",
    "return `[readcache: unchanged, ${totalLines} line(s)]`;",
    async (mutant, dir) => {
      const out = join(dir, "found.json");
      const r = await conformanceRun([
        "--random",
        "30",
        "--seed",
        "28",
        "--cmd",
        mutant,
        "--out",
        out,
      ]);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.summary, /^\d+ sessions, \d+ reads compared, 0 not applicable, 1 difference$/);
      const first = r.lines.find((l) => l.includes("first differing read"));
      assert.ok(first, r.stdout);
      // the smallest session that shows it: read a file, read it again unchanged
      const vector = JSON.parse(readFileSync(out, "utf8"));
      assert.equal(vector.steps.length, 2, JSON.stringify(vector.steps));
      assert.deepEqual(vector.steps.map((s: { op: string }) => s.op), ["read", "read"]);
      assert.equal(vector.steps[1].expect.mode, "unchanged");
      assert.match(first, /first differing read: step 1 \(read /);
      const ref = r.lines.find((l) => l.trimStart().startsWith("reference: "));
      const port = r.lines.find((l) => l.trimStart().startsWith("port: "));
      assert.match(ref ?? "", /"text":"\[readcache: unchanged, \d+ lines\]"/);
      assert.match(port ?? "", /"text":"\[readcache: unchanged, \d+ line\(s\)\]"/);
      assert.ok(r.lines.some((l) => l.startsWith("reproduce: deno task conformance --random 30")));
      // the vector it wrote is one the runner takes: the reference passes it, the mutant fails it
      const again = await conformanceRun([out]);
      assert.equal(again.summary, "1 passed, 0 failed", again.stdout);
      const onMutant = await conformanceRun([out, "--cmd", mutant]);
      assert.equal(onMutant.summary, "0 passed, 1 failed", onMutant.stdout);
    },
  );
});

Deno.test("a port that cannot run a session is reported, minimised to what it cannot run", async () => {
  // the reference, except that it fails every session with a bash step
  const port = `input=$(cat); case "$input" in *'"op":"bash"'*) echo 'unsupported op: bash' >&2; ` +
    `exit 3;; esac; printf %s "$input" | ${REFERENCE_PORT}`;
  const r = await conformanceRun([
    "--random",
    "10",
    "--seed",
    "28",
    "--shrink",
    "40",
    "--cmd",
    port,
  ]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(
    r.stdout,
    /session \d+: the port could not run it .*port exited with code 3 \(stderr: unsupported op: bash\)/,
  );
  assert.match(r.stdout, /its steps: bash \(/);
  assert.match(r.summary, /^\d+ sessions, \d+ reads compared, 0 not applicable, 1 difference$/);
});

Deno.test("sessions a port declares not applicable are counted apart, and the run goes on", async () => {
  // the reference, except that it declares every session with a bash step not applicable
  const declare = `'${Deno.execPath()}' eval 'const i = JSON.parse(await new Response(` +
    `Deno.stdin.readable).text()); console.log(JSON.stringify({ id: i.id, notApplicable: ` +
    `{ step: 0, reason: "no bash here" } }))'`;
  const port =
    `input=$(cat); case "$input" in *'"op":"bash"'*) printf %s "$input" | ${declare};; ` +
    `*) printf %s "$input" | ${REFERENCE_PORT};; esac`;
  const r = await conformanceRun(["--random", "12", "--seed", "28", "--cmd", port]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const m = /^12 sessions, (\d+) reads compared, (\d+) not applicable, 0 differences$/.exec(
    r.summary,
  );
  assert.ok(m, r.stdout);
  const skipped = Number(m[2]);
  assert.ok(skipped > 0 && skipped < 12, r.stdout);
  assert.ok(Number(m[1]) > 0, r.stdout);
  assert.ok(
    r.lines.includes(
      `not applicable to the port (not compared): ${skipped} session${
        skipped === 1 ? "" : "s"
      }: no bash here`,
    ),
    r.stdout,
  );
  // a port that declares everything not applicable has compared nothing: that is no pass
  const none = await conformanceRun(["--random", "3", "--seed", "28", "--cmd", declare]);
  assert.equal(none.code, 1, none.stdout + none.stderr);
  assert.match(none.summary, /^3 sessions, 0 reads compared, 3 not applicable, 0 differences$/);
  assert.match(none.stdout, /nothing compared: the port declared every session not applicable/);
});

Deno.test("bad arguments of the random mode have stable codes (exit 2)", async () => {
  const codeOf = (args: string[]) => {
    try {
      parseDifferentialArgs(args);
      return "none";
    } catch (e) {
      assert.ok(e instanceof DifferentialArgsError);
      return e.code;
    }
  };
  assert.equal(codeOf(["--random", "ten", "--cmd", "p"]), "BAD_RANDOM");
  assert.equal(codeOf(["--random", "0", "--cmd", "p"]), "BAD_RANDOM");
  assert.equal(codeOf(["--random", "3"]), "MISSING_CMD");
  assert.equal(codeOf(["--random", "3", "--cmd", "p", "--seed", "x"]), "BAD_SEED");
  assert.equal(codeOf(["--random", "3", "--cmd", "p", "--timeout", "0"]), "BAD_TIMEOUT");
  assert.equal(codeOf(["--random", "3", "--cmd", "p", "--shrink", "-1"]), "BAD_SHRINK");
  assert.equal(codeOf(["--random", "3", "--cmd", "p", "scenario"]), "UNKNOWN_ARGUMENT");
  assert.equal(codeOf(["--random", "3", "--cmd", "p", "--host", "vim"]), "BAD_HOST");
  assert.equal(codeOf(["--random", "3", "--cmd", "p", "--host", "claude-code"]), "none");
  assert.equal(codeOf(["--random", "3", "--cmd", "p", "--seed", "5"]), "none");
  const r = await conformanceRun(["--random", "ten", "--cmd", "p"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /BAD_RANDOM: --random needs a whole number of at least 1, got "ten"/);
});

Deno.test("a host port answers in its host's terms: with --host the reference's answers are rewritten to them", async () => {
  const port = `'${Deno.execPath()}' run -A '${
    join(repo, "scripts", "claude", "port_claude.ts")
  }' --stdin`;
  const r = await conformanceRun([
    "--random",
    "12",
    "--seed",
    "1201",
    "--host",
    "claude-code",
    "--cmd",
    port,
  ]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const m = /^12 sessions, (\d+) reads compared, (\d+) not applicable, 0 differences$/.exec(
    r.summary,
  );
  assert.ok(m !== null && Number(m[1]) > 0, r.summary);
});

Deno.test("vectors/README.md documents the command, its last line and its options", () => {
  const readme = readFileSync(join(repo, "vectors", "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Differential testing on random sessions"));
  assert.match(section, /deno task conformance --random 200 --cmd "python3 my_port.py"/);
  assert.match(section, /`N sessions, N reads compared, N not applicable, N differences`/);
  for (const option of ["--seed", "--out", "--shrink", "--no-tools", "--no-symlinks", "--host"]) {
    assert.ok(section.includes(option), option);
  }
});
