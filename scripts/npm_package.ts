// The npm package a user installs without cloning: the `readcache` CLI (bundled into one file, run
// by a pinned Deno that npm installs with it), the pi extension and the OpenCode plugin (TypeScript
// that pi and OpenCode load themselves, with zod and diff beside them) and the Claude Code
// installer (its service prebuilt into one file).
//
//   deno task pack [--out DIR]     builds the package and packs it with npm; prints the tarball
//
// The package's name and scope are here and nowhere else (NPM_PACKAGE). It is not published yet:
// install the tarball (`npm install -g <tarball>`).
import { copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The npm package's scope and name: the one place they are written. */
export const NPM_PACKAGE = { scope: "@readcache", name: "cli" } as const;

/** Its full name, `@scope/name`. */
export const NPM_PACKAGE_NAME = `${NPM_PACKAGE.scope}/${NPM_PACKAGE.name}`;

/** The Deno the package depends on (an exact version: nothing is resolved at run time). */
export const PINNED_DENO = "2.9.6";

const ROOT = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");

async function run(cmd: string, args: string[], cwd = ROOT): Promise<string> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  const td = new TextDecoder();
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")} failed:\n${td.decode(out.stderr)}`);
  }
  return td.decode(out.stdout);
}

/** What `readcache savings` runs to replay pi sessions through pi (bench:real's replay). */
const REPLAY_FILES = [
  "bench/pi/real.ts",
  "cli/savings_bash.ts",
  "cli/savings_model.ts",
  "bench/pi/real_log.ts",
  "bench/pi/real_replay.ts",
  "scripts/pi/pi_host.ts",
];

/** The user's guides in docs/ that both packages carry beside the README. */
export const GUIDES = [
  "pi.md",
  "opencode.md",
  "claude-code.md",
  "cli.md",
  "porting.md",
  "development.md",
];

/**
 * Builds the package in `<out>/package` and packs it into `<out>`; resolves to the tarball's path.
 */
export async function buildNpmPackage(out = join(ROOT, ".scratch", "npm")): Promise<string> {
  const dir = join(out, "package");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "dist"), { recursive: true });
  const repo = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const version = JSON.parse(readFileSync(join(ROOT, "deno.json"), "utf8")).version;
  for (const f of ["README.md", "LICENSE", "SPEC.md"]) copyFileSync(join(ROOT, f), join(dir, f));
  // the guides the README links for each agent, the CLI and porting
  mkdirSync(join(dir, "docs"), { recursive: true });
  for (const f of GUIDES) copyFileSync(join(ROOT, "docs", f), join(dir, "docs", f));
  mkdirSync(join(dir, "cli"), { recursive: true });
  copyFileSync(join(ROOT, "cli", "readcache.mjs"), join(dir, "cli", "readcache.mjs"));
  // the TypeScript pi and OpenCode load: the library and its hosts
  cpSync(join(ROOT, "src"), join(dir, "src"), {
    recursive: true,
    filter: (p) => !p.endsWith("_test.ts"),
  });
  // `readcache savings` replays pi sessions recorded without readcache through pi (bench:real's
  // replay, run with the pi suite's config): its files, and the config with its lockfile, which
  // takes pi from Deno's cache without writing a node_modules into the installed package
  for (const f of REPLAY_FILES) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    copyFileSync(join(ROOT, f), join(dir, f));
  }
  const piConfig = JSON.parse(readFileSync(join(ROOT, "pi-suite", "deno.json"), "utf8"));
  delete piConfig.$comment;
  mkdirSync(join(dir, "pi-suite"), { recursive: true });
  writeFileSync(
    join(dir, "pi-suite", "deno.json"),
    JSON.stringify({ ...piConfig, nodeModulesDir: "none" }, null, 2) + "\n",
  );
  copyFileSync(join(ROOT, "pi-suite", "deno.lock"), join(dir, "pi-suite", "deno.lock"));
  // the CLI and the Claude Code service, each bundled into one file with its npm packages
  for (
    const [entry, file] of [["cli/main.ts", "readcache.js"], [
      "cli/claude_service.ts",
      "claude_service.bundle.js",
    ]]
  ) {
    await run(Deno.execPath(), [
      "bundle",
      "--quiet",
      "--platform",
      "deno",
      "--config",
      join(ROOT, "deno.json"),
      "-o",
      join(dir, "dist", file),
      join(ROOT, entry),
    ]);
  }
  const pkg = {
    name: NPM_PACKAGE_NAME,
    version,
    description: repo.description,
    license: repo.license,
    type: "module",
    bin: { readcache: "cli/readcache.mjs" },
    keywords: ["pi-package", "opencode-plugin", "claude-code"],
    pi: repo.pi,
    exports: {
      "./opencode": "./src/adapters/opencode/load.ts",
      "./pi": "./src/adapters/pi/extension.ts",
    },
    files: [
      "bench/",
      "cli/",
      "dist/",
      "docs/",
      "pi-suite/",
      "scripts/",
      "src/",
      "README.md",
      "SPEC.md",
      "LICENSE",
    ],
    dependencies: { ...repo.dependencies, deno: PINNED_DENO },
    peerDependencies: repo.peerDependencies,
    peerDependenciesMeta: repo.peerDependenciesMeta,
  };
  writeFileSync(join(dir, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
  const packed = (await run("npm", ["pack", "--pack-destination", resolve(out)], dir)).trim()
    .split("\n").at(-1)!;
  return join(resolve(out), packed);
}

if (import.meta.main) {
  const i = Deno.args.indexOf("--out");
  const out = i >= 0 ? Deno.args[i + 1] : undefined;
  if (Deno.args.includes("--help")) {
    console.log("usage: deno task pack [--out DIR]   (prints the tarball's path)");
    Deno.exit(0);
  }
  const tarball = await buildNpmPackage(out === undefined ? undefined : resolve(out));
  mkdirSync(dirname(tarball), { recursive: true });
  console.log(tarball);
}

/**
 * Packs the package into `work/out` and installs the tarball with npm into the empty prefix
 * `work/prefix` (npm's cache in `work` too: nothing of this machine's is used); resolves to the
 * prefix and the installed package's directory.
 */
export async function installNpmPackage(
  work: string,
): Promise<{ prefix: string; pkgDir: string; tarball: string }> {
  const tarball = await buildNpmPackage(join(work, "out"));
  const prefix = join(work, "prefix");
  const home = join(work, "npm-home");
  mkdirSync(home, { recursive: true });
  const out = await new Deno.Command("npm", {
    args: ["install", "-g", "--prefix", prefix, "--no-audit", "--no-fund", tarball],
    cwd: home,
    env: { HOME: home, npm_config_cache: join(work, "npm-cache") },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`npm install of ${tarball} failed:\n${new TextDecoder().decode(out.stderr)}`);
  }
  return { prefix, pkgDir: join(prefix, "lib", "node_modules", NPM_PACKAGE_NAME), tarball };
}
