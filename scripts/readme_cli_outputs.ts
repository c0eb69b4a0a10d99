// The sample outputs of docs/cli.md (its "What it prints" section), made by running the CLI: the session
// files of tests/fixtures/sessions/ (one pi session with readcache, one without) placed in pi's
// sessions directory for a project in /tmp/readcache-demo/app, the project's files and the
// objects the extension stored copied into it, plus one stray copy no session refers to, written
// readable by others (so `doctor` has a problem and a tidy-up to show and `gc` something to
// remove); then `readcache status --latest`, `readcache savings`, `readcache doctor` and
// `readcache gc`, in that order, in the project directory.
//
//   deno run -A scripts/readme_cli_outputs.ts           rewrites the four ```text blocks
//   deno run -A scripts/readme_cli_outputs.ts --check   exits 1 when docs/cli.md differs
//
// tests/pi/readme_outputs_test.ts runs the same and fails when docs/cli.md (or the lines README.md
// quotes from it) differs. The demo is set up
// in a fresh directory of the same length as /tmp/readcache-demo (so every column lines up the
// same) and its name is replaced by /tmp/readcache-demo in the outputs; nothing else is
// normalised: the CLI runs with a fixed environment (no colour, HOME and pi's agent directory
// inside the demo) and the outputs hold no time that changes.
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const FIXTURES = join(REPO, "tests/fixtures/sessions");
const MAIN = join(REPO, "cli/main.ts");
const HOUR = 60 * 60 * 1000;

/** Where the CLI page says the demo project is (its parent). */
export const DEMO = "/tmp/readcache-demo";

/** The names pi gave the fixture sessions (fork.jsonl's parentSession names readcache's). */
export const SESSION_FILES: Readonly<Record<string, string>> = Object.freeze({
  "plain.jsonl": "2026-11-23T15-07-58-351Z_01a208f3-160e-72b5-8686-ba2de1245b15.jsonl",
  "readcache.jsonl": "2026-11-23T15-07-59-474Z_01a208f3-1a71-72f0-97d2-a951f7008660.jsonl",
  "fork.jsonl": "2026-11-23T15-08-00-066Z_01a208f3-1cc2-757a-be2c-863a8e150111.jsonl",
  "legacy.jsonl": "2026-11-23T15-08-03-000Z_01a208f3-2000-7000-8000-000000000002.jsonl",
});

/** The commands of the four blocks, in the page's order (and run in this order: gc last). */
export const README_COMMANDS: readonly (readonly string[])[] = [
  ["status", "--latest"],
  ["savings"],
  ["doctor"],
  ["gc"],
];

/** The exit code each command has on the demo (doctor finds the stray copy's mode). */
const EXPECTED_CODES = [0, 0, 1, 0];

/** The content of the stray copy. */
export const STRAY = "left over\n";

/** A demo set up under `base`. */
export interface Demo {
  /** The directory holding everything. */
  base: string;
  /** The project directory (pi's cwd). */
  app: string;
  /** pi's agent directory (`PI_CODING_AGENT_DIR`). */
  agent: string;
  /** pi's sessions directory of the project. */
  sessions: string;
  /** The project's object store's objects directory. */
  objects: string;
}

/** pi's directory name for the sessions of `cwd` (its `getDefaultSessionDir`). */
export function sessionDirName(cwd: string): string {
  return `--${cwd.replace(/^\//, "").replaceAll("/", "-")}--`;
}

async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    if (e.isDirectory) await copyTree(join(from, e.name), join(to, e.name));
    else await Deno.copyFile(join(from, e.name), join(to, e.name));
  }
}

/**
 * Copies a fixture session into the sessions directory with the placeholders
 * of its README replaced, and sets its modification time.
 */
export async function placeSession(
  d: Pick<Demo, "app" | "sessions">,
  name: string,
  mtime: Date,
): Promise<string> {
  const text = (await Deno.readTextFile(join(FIXTURES, name))).replaceAll("@CWD@", d.app)
    .replaceAll("@SESSIONS@", d.sessions);
  const path = join(d.sessions, SESSION_FILES[name]);
  await Deno.writeTextFile(path, text);
  await Deno.utime(path, mtime, mtime);
  return path;
}

/**
 * Sets up the demo under `base` (an empty or missing directory): the
 * project, its store, pi's sessions of it (without readcache two hours ago,
 * with it one hour ago) and the stray copy. Copies are three hours old, so gc
 * does not keep them as just written.
 */
export async function placeDemo(base: string): Promise<Demo> {
  const app = join(base, "app");
  const agent = join(base, "agent");
  const sessions = join(agent, "sessions", sessionDirName(app));
  const objects = join(app, ".pi/readcache/objects");
  await copyTree(join(FIXTURES, "work"), app);
  for (const d of [".pi", ".pi/readcache", ".pi/readcache/objects", ".pi/readcache/tmp"]) {
    await Deno.mkdir(join(app, d), { mode: 0o700 });
    await Deno.chmod(join(app, d), 0o700);
  }
  const old = new Date(Date.now() - 3 * HOUR);
  for await (const e of Deno.readDir(join(FIXTURES, "store/objects"))) {
    await Deno.copyFile(join(FIXTURES, "store/objects", e.name), join(objects, e.name));
    await Deno.chmod(join(objects, e.name), 0o600);
    await Deno.utime(join(objects, e.name), old, old);
  }
  const strayBytes = new TextEncoder().encode(STRAY);
  const hash = Array.from(
    new Uint8Array(await crypto.subtle.digest("SHA-256", strayBytes)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  const stray = join(objects, `sha256-${hash}.txt`);
  await Deno.writeFile(stray, strayBytes);
  await Deno.chmod(stray, 0o644);
  await Deno.utime(stray, old, old);
  await Deno.mkdir(sessions, { recursive: true });
  const d = { base, app, agent, sessions, objects };
  await placeSession(d, "plain.jsonl", new Date(Date.now() - 2 * HOUR));
  await placeSession(d, "readcache.jsonl", new Date(Date.now() - HOUR));
  return d;
}

let denoDir: string | undefined;

/** Deno's cache directory, so the CLI's runs with their own HOME find the npm packages. */
async function cacheDir(): Promise<string> {
  if (denoDir !== undefined) return denoDir;
  const env = Deno.env.get("DENO_DIR");
  if (env) return denoDir = env;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  }).output();
  denoDir = (JSON.parse(new TextDecoder().decode(out.stdout)) as { denoDir: string }).denoDir;
  return denoDir;
}

/** Runs `readcache ARGS` in the demo's project directory with a fixed environment. */
export async function runReadcache(
  d: Demo,
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", "--config", join(REPO, "deno.json"), MAIN, ...args],
    cwd: d.app,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: join(d.base, "home"),
      DENO_DIR: await cacheDir(),
      DENO_NO_UPDATE_CHECK: "1",
      NO_COLOR: "1",
      PI_CODING_AGENT_DIR: d.agent,
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** A new empty directory whose path is as long as {@linkcode DEMO}. */
async function demoLikeDir(): Promise<string> {
  const prefix = "/tmp/rcdemo-";
  for (let attempt = 0; attempt < 100; attempt++) {
    const tail = Array.from(
      crypto.getRandomValues(new Uint8Array(DEMO.length - prefix.length)),
      (b) => "abcdefghijklmnopqrstuvwxyz0123456789"[b % 36],
    ).join("");
    const dir = prefix + tail;
    try {
      await Deno.mkdir(dir, { mode: 0o700 });
    } catch (e) {
      if (e instanceof Deno.errors.AlreadyExists) continue;
      throw e;
    }
    if (await Deno.realPath(dir) !== dir) {
      await Deno.remove(dir);
      throw new Error(`${dir} is reached through a link; the outputs need /tmp to be a directory`);
    }
    return dir;
  }
  throw new Error("could not make a directory in /tmp");
}

/**
 * The four blocks (`$ readcache ...` then what it printed), in the page's order,
 * from a demo set up in a fresh directory that is removed afterwards. Throws
 * when a command exits otherwise than expected or prints on stderr.
 */
export async function readmeOutputs(): Promise<string[]> {
  const base = await demoLikeDir();
  try {
    const d = await placeDemo(base);
    const blocks: string[] = [];
    for (const [i, args] of README_COMMANDS.entries()) {
      const r = await runReadcache(d, args);
      if (r.code !== EXPECTED_CODES[i] || r.stderr !== "") {
        throw new Error(
          `readcache ${args.join(" ")} exited ${r.code} (expected ${EXPECTED_CODES[i]}):\n` +
            r.stdout + r.stderr,
        );
      }
      blocks.push(normalise(`$ readcache ${args.join(" ")}\n${r.stdout.trimEnd()}`, base));
    }
    return blocks;
  } finally {
    await Deno.remove(base, { recursive: true });
  }
}

/** The demo directory's name, and pi's directory name of its project, as on the CLI page. */
function normalise(text: string, base: string): string {
  return text.replaceAll(base, DEMO)
    .replaceAll(sessionDirName(join(base, "app")), sessionDirName(join(DEMO, "app")));
}

/** The page that shows the four outputs, in the repository. */
export const CLI_PAGE = "docs/cli.md";

/** The heading of the page's section that holds them. */
export const OUTPUTS_SECTION = "## What it prints";

/** Where the four blocks are in the page: the text between each ```text line and its ```. */
export function readmeBlocks(readme: string): { start: number; end: number; text: string }[] {
  const section = readme.indexOf(`\n${OUTPUTS_SECTION}\n`);
  if (section === -1) throw new Error(`${CLI_PAGE} has no "${OUTPUTS_SECTION}" section`);
  const next = readme.indexOf("\n## ", section + 1);
  const end = next === -1 ? readme.length : next;
  const out: { start: number; end: number; text: string }[] = [];
  const fence = /\n```text\n([\s\S]*?)\n```\n/g;
  fence.lastIndex = section;
  for (let m = fence.exec(readme); m !== null && m.index < end; m = fence.exec(readme)) {
    const start = m.index + "\n```text\n".length;
    out.push({ start, end: start + m[1].length, text: m[1] });
  }
  const firsts = out.map((b) => b.text.split("\n")[0]);
  const wanted = README_COMMANDS.map((c) => `$ readcache ${c.join(" ")}`);
  if (JSON.stringify(firsts) !== JSON.stringify(wanted)) {
    throw new Error(
      `${CLI_PAGE}'s "${OUTPUTS_SECTION}" section should have ${wanted.length} \`\`\`text blocks ` +
        `starting ${wanted.join(", ")}; it has: ${firsts.join(", ") || "none"}`,
    );
  }
  return out;
}

/** The page with the four blocks replaced by `blocks`. */
export function withBlocks(readme: string, blocks: readonly string[]): string {
  const at = readmeBlocks(readme);
  let out = readme;
  for (let i = at.length - 1; i >= 0; i--) {
    out = out.slice(0, at[i].start) + blocks[i] + out.slice(at[i].end);
  }
  return out;
}

if (import.meta.main) {
  const path = join(REPO, CLI_PAGE);
  const readme = await Deno.readTextFile(path);
  const blocks = await readmeOutputs();
  const updated = withBlocks(readme, blocks);
  if (Deno.args.includes("--check")) {
    if (updated !== readme) {
      console.error(
        `${CLI_PAGE}'s CLI outputs are not current: deno run -A ` +
          "scripts/readme_cli_outputs.ts",
      );
      Deno.exit(1);
    }
    console.log(`${CLI_PAGE}'s CLI outputs are current`);
  } else if (updated === readme) {
    console.log(`${CLI_PAGE}'s CLI outputs are current; nothing written`);
  } else {
    await Deno.writeTextFile(path, updated);
    const changed = readmeBlocks(readme).map((b, i) => b.text !== blocks[i] ? i : -1)
      .filter((i) => i >= 0).map((i) => README_COMMANDS[i].join(" "));
    console.log(`${CLI_PAGE}: rewrote the outputs of readcache ${changed.join(", readcache ")}`);
  }
}
