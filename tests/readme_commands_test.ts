// Every shell command in the code blocks of the user's guides (README.md and the docs/ pages it
// links) is either run here, as a user would run it (in a temporary HOME, with its output
// checked), or named with the test or CI step that runs it and why it is not run again here. A
// command added to a guide without an entry here fails, and so does a guide's link to a file that
// is not there.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { GUIDES as DOC_GUIDES } from "../scripts/npm_package.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
/** The user's guides: the README and the docs/ pages both packages carry beside it. */
const GUIDES = ["README.md", ...DOC_GUIDES.map((g) => `docs/${g}`)];
const guides = GUIDES.map((f) => readFileSync(join(root, f), "utf8")).join("\n");

/** The command lines of the guides' sh blocks, comments and blank lines dropped. */
function readmeCommands(): string[] {
  const out: string[] = [];
  for (const block of guides.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)) {
    for (const line of block[1].split("\n")) {
      const cmd = line.replace(/\s+#.*$/, "").trim();
      if (cmd !== "" && !cmd.startsWith("#")) out.push(cmd);
    }
  }
  return out;
}

/** A command run elsewhere: the file (test or CI script) that runs it, and a string it holds. */
interface Covered {
  by: string;
  holds: string;
  why: string;
}

const COVERED: Record<string, Covered> = {
  "npx --prefer-offline -y deno@2 task pack": {
    by: "tests/npm_package_test.ts",
    holds: "installNpmPackage",
    why: "the package test builds the package as `deno task pack` does (scripts/npm_package.ts)",
  },
  "npm install -g .scratch/npm/readcache-cli-0.1.0.tgz": {
    by: "scripts/npm_package.ts",
    holds: '"install", "-g", "--prefix"',
    why: "the package tests install the tarball so, into an empty prefix",
  },
  'pi install "$(npm root -g)/@readcache/cli"': {
    by: "tests/pi/package_pi_test.ts",
    holds: '["install", pkgDir]',
    why: "the pi suite installs the installed package into pi and reads through it",
  },
  "readcache claude install": {
    by: "tests/npm_package_test.ts",
    holds: '["claude", "install", "--json"]',
    why: "the package test runs the installed command, offline",
  },
  "npx --prefer-offline -y deno@2 task demo": {
    by: "tests/pi/install_order_test.ts",
    holds: '["task", "demo"]',
    why: "the install-order test runs the demo on a fresh copy of the checkout",
  },
  "npx --prefer-offline -y deno@2 task test": {
    by: ".ci/run",
    holds: "task test",
    why: "CI runs the README's test command",
  },
  "git clone <this repository> readcache && cd readcache": {
    by: "tests/pi/install_order_test.ts",
    holds: "git",
    why: "the install-order test works on a fresh copy of the checkout (no remote here)",
  },
  "npm install --omit=peer": {
    by: "tests/pi/install_order_test.ts",
    holds: "--omit=peer",
    why: "the install-order test runs it before and after the Deno tasks",
  },
  "pi -e .": {
    by: "tests/pi/pi_rpc_e2e_test.ts",
    holds: '"-e", REPO',
    why: "the end-to-end test runs a real pi with `-e <checkout>`",
  },
  'pi install "$PWD"': {
    by: "tests/pi/readme_pi_install_test.ts",
    holds: 'pi install "$PWD"',
    why: "needs pi itself: the pi suite runs it",
  },
  "git clone <this repository> ~/readcache": {
    by: "tests/opencode/opencode_e2e_test.ts",
    holds: "plugin",
    why: "the OpenCode end-to-end test loads the plugin from the checkout",
  },
  "cd ~/readcache && npm install --omit=peer": {
    by: "tests/pi/install_order_test.ts",
    holds: "--omit=peer",
    why: "the same install as for pi",
  },
  "npx -y /path/to/checkout savings": {
    by: "tests/readme_commands_test.ts",
    holds: "npx readcache doctor",
    why: "the same package bin as `npx readcache doctor`, run below",
  },
  'npx --prefer-offline -y deno@2 run -A jsr:@readcache/core/conformance scenario --cmd "python3 my_port.py"':
    {
      by: "tests/conformance_kit_test.ts",
      holds: "my_port.py",
      why:
        "the kit test runs docs/porting.md's Python port through the runner (JSR is not reachable)",
    },
  "npx --prefer-offline -y deno@2 task ci": {
    by: "deno.json",
    holds: '"ci": "bash .ci/run"',
    why: "the task is CI's own script, which runs every step",
  },
  "readcache savings": {
    by: "tests/cli_test.ts",
    holds: 'cli(w, ["savings"])',
    why: "the CLI tests run it over pi session files in pi's sessions directory",
  },
  "readcache savings --claude": {
    by: "tests/claude/claude_e2e_test.ts",
    holds: '"savings", "--json", "--claude"',
    why: "the Claude Code end-to-end test runs it over transcripts the real binary wrote",
  },
  "readcache savings --html report.html": {
    by: "tests/cli_test.ts",
    holds: '["savings", "--html", page]',
    why: "the CLI tests write the page and check what it shows",
  },
  "npx --prefer-offline -y deno@2 task schema": {
    by: "tests/layer_vectors_test.ts",
    holds: "run `deno task schema`",
    why: "the committed schemas must be what the task writes",
  },
  "npx --prefer-offline -y deno@2 task port:pi": {
    by: ".ci/run",
    holds: "task port:pi",
    why: "a CI step",
  },
  "npx --prefer-offline -y deno@2 task oracle --sessions 20000": {
    by: "tests/pi/oracle_test.ts",
    holds: "runOracle",
    why: "the oracle test runs the same oracle on fewer sessions (20,000 take minutes)",
  },
  "npx --prefer-offline -y deno@2 task hostile": {
    by: "tests/pi/hostile_read_test.ts",
    holds: "FIFO",
    why: "the hostile tests are part of the pi suite",
  },
  "npx --prefer-offline -y deno@2 task bench": {
    by: "scripts/suites.ts",
    holds: "...bench.pi",
    why: "not run by CI (it measures this machine for minutes): `deno task check`, a CI step, " +
      "type-checks every bench file, and bench/README.md records its runs",
  },
  "npx --prefer-offline -y deno@2 task opencode:e2e": {
    by: "tests/opencode/opencode_e2e_test.ts",
    holds: "opencode",
    why: "the OpenCode suite runs it",
  },
};

/** This machine's PATH without any directory that holds a `deno` (a machine with Node only). */
function withoutDeno(): string {
  return (Deno.env.get("PATH") ?? "").split(":").filter((d) =>
    d !== "" && !existsSync(join(d, "deno"))
  ).join(":");
}

/** Runs a command line in `cwd` with a temporary HOME; returns its exit code and output. */
async function sh(
  line: string,
  cwd: string,
  home: string,
  env: Record<string, string> = {},
): Promise<{ code: number; out: string }> {
  const out = await new Deno.Command("bash", {
    args: ["-c", line],
    cwd,
    env: {
      HOME: home,
      NO_COLOR: "1",
      DENO_NO_UPDATE_CHECK: "1",
      // as on a machine with Node and no Deno: every README line must work so
      PATH: withoutDeno(),
      // Deno's module cache of this machine (it lives under the real HOME by default)
      DENO_DIR: Deno.env.get("DENO_DIR") ?? join(homedir(), ".cache", "deno"),
      ...env,
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const td = new TextDecoder();
  return { code: out.code, out: td.decode(out.stdout) + td.decode(out.stderr) };
}

/** The commands run here, and what a user sees. */
const RUN: Record<string, (home: string) => Promise<void>> = {
  "npx --prefer-offline -y deno@2 task cli status --latest": async (home) => {
    const r = await sh("npx --prefer-offline -y deno@2 task cli status --latest", root, home);
    // no pi session in a fresh HOME: it says so and what to pass (exit 0: nothing found)
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /No pi session of .* pass that directory with --cwd DIR/);
  },
  "npm install -g /path/to/checkout": async (home) => {
    const prefix = join(home, ".npm-global");
    const r = await sh(`npm install -g --no-audit --no-fund "${root}"`, home, home, {
      npm_config_prefix: prefix,
    });
    assert.equal(r.code, 0, r.out);
    // the installed command, run from another directory with no Deno on PATH
    const status = await sh("readcache status --latest", home, home, {
      PATH: `${join(prefix, "bin")}:${withoutDeno()}`,
    });
    assert.equal(status.code, 0, status.out);
    assert.match(status.out, /No pi session of .* pass that directory with --cwd DIR/);
  },
  "cd ~/readcache && npx readcache claude install": async (home) => {
    const r = await sh("npx readcache claude install", root, home);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /readcache is installed for Claude Code/);
    const settings = JSON.parse(readFileSync(join(home, ".claude", "settings.json"), "utf8"));
    const hook = settings.hooks.PostToolUse[0].hooks[0];
    assert.equal(hook.type, "command");
    assert.ok(hook.args.includes(join(home, ".claude", "readcache")), JSON.stringify(hook));
    assert.equal(statSync(join(home, ".claude", "readcache")).mode & 0o777, 0o700);
  },
  "npx readcache claude uninstall": async (home) => {
    assert.equal((await sh("npx readcache claude install", root, home)).code, 0);
    const r = await sh("npx readcache claude uninstall", root, home);
    assert.equal(r.code, 0, r.out);
    // install made the settings file; uninstall leaves none, and none of its files
    assert.ok(!existsSync(join(home, ".claude", "settings.json")));
    assert.ok(!existsSync(join(home, ".claude", "readcache")));
  },
  "npx readcache doctor": async (home) => {
    const r = await sh("npx readcache doctor", root, home);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /no problems found/);
  },
  "npx --prefer-offline -y deno@2 run -A jsr:@readcache/core/conformance --help": async (home) => {
    // as written, in a fresh directory whose deno.json links this checkout (what the guides say
    // to do until the package is published): the kit comes from the checkout, JSR is not asked
    const dir = join(home, "my-port");
    Deno.mkdirSync(dir);
    Deno.writeTextFileSync(
      join(dir, "deno.json"),
      JSON.stringify({
        links: [root],
        imports: { "@readcache/core": "jsr:@readcache/core@^0.1.0" },
      }),
    );
    const r = await sh(
      "npx --prefer-offline -y deno@2 run -A jsr:@readcache/core/conformance --help",
      dir,
      home,
    );
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /--cmd/);
  },
  "npx --prefer-offline -y deno@2 task conformance": async (home) => {
    const r = await sh("npx --prefer-offline -y deno@2 task conformance", root, home);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /\d+ passed, 0 failed/);
  },
  "npx --prefer-offline -y deno@2 task conformance --help": async (home) => {
    const r = await sh("npx --prefer-offline -y deno@2 task conformance --help", root, home);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /N passed, N failed/);
  },
};

/** Every page a user reads: the guides, SPEC, the vectors' and bench's READMEs, the changelog. */
const PAGES = [
  ...GUIDES,
  "SPEC.md",
  "CHANGELOG.md",
  "vectors/README.md",
  "bench/README.md",
  "docs/pi-integration-notes.md",
  "docs/opencode-integration-notes.md",
];

Deno.test("pages: every relative link names a file or directory of the repository", () => {
  const broken: string[] = [];
  for (const guide of PAGES) {
    const text = readFileSync(join(root, guide), "utf8");
    for (const m of text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
      const target = m[1];
      if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
      if (!existsSync(join(root, dirname(guide), target))) broken.push(`${guide}: ${target}`);
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("pages: no page a user reads names the project's internal issue numbers", () => {
  const named: string[] = [];
  for (const page of PAGES) {
    const text = readFileSync(join(root, page), "utf8");
    for (const m of text.matchAll(/\b(?:issue|task)s?\s*#?\d+/gi)) named.push(`${page}: ${m[0]}`);
  }
  assert.deepEqual(named, []);
});

Deno.test("README: every shell command is run here or by a named test", () => {
  const commands = readmeCommands();
  assert.ok(commands.length >= 20, `found only ${commands.length} commands`);
  const missing = commands.filter((c) => !(c in RUN) && !(c in COVERED));
  assert.deepEqual(missing, [], "README commands neither run nor covered: add them here");
  const stale = [...Object.keys(RUN), ...Object.keys(COVERED)].filter((c) => !commands.includes(c));
  assert.deepEqual(stale, [], "entries for commands the README no longer has");
  for (const [cmd, c] of Object.entries(COVERED)) {
    const file = join(root, c.by);
    assert.ok(existsSync(file), `${cmd}: ${c.by} does not exist`);
    assert.ok(readFileSync(file, "utf8").includes(c.holds), `${cmd}: ${c.by} lacks ${c.holds}`);
  }
});

for (const [cmd, run] of Object.entries(RUN)) {
  Deno.test(`README: ${cmd}`, async () => {
    const home = mkdtempSync(join(tmpdir(), "readcache-readme-"));
    try {
      await run(home);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
}
