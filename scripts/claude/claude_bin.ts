// The real Claude Code binary for the end-to-end test, from the npm registry: the platform package
// (`@anthropic-ai/claude-code-<os>-<arch>`, about 400 MB, a self-contained executable that does
// not need Node) installed with npm into a cache directory, by default `.scratch/claude-code/
// <version>` in this repository (git ignores `.scratch/`), or `$READCACHE_CLAUDE_DIR`. The version
// is pinned: from 2.1.198 on the main package declares node >= 22, so an unpinned install on
// Node 20 silently gets 2.1.197. Installed once; later runs reuse it.
//
//   deno run -A scripts/claude/claude_bin.ts          # installs if needed, prints the path
//
// `claudeBinary()` answers `{ bin }`, or `{ skip }` with the reason where the binary cannot run
// here (no package for this platform, or the installed binary does not start); a failed download
// is an error.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The Claude Code version the host is tested with. */
export const CLAUDE_CODE_VERSION = "2.1.332";

const REPO = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");

/** Where the npm package is installed. */
export function claudeCacheDir(): string {
  return Deno.env.get("READCACHE_CLAUDE_DIR") ??
    join(REPO, ".scratch", "claude-code", CLAUDE_CODE_VERSION);
}

/** The npm package holding the binary for this machine (glibc Linux and macOS). */
export function claudePlatformPackage(): string | undefined {
  const os = ({ linux: "linux", darwin: "darwin" } as Record<string, string>)[Deno.build.os];
  const arch = ({ x86_64: "x64", aarch64: "arm64" } as Record<string, string>)[Deno.build.arch];
  if (os === undefined || arch === undefined) return undefined;
  return `@anthropic-ai/claude-code-${os}-${arch}`;
}

async function run(cmd: string, args: string[]): Promise<{ ok: boolean; out: string }> {
  try {
    const r = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
    const dec = new TextDecoder();
    return { ok: r.success, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
  } catch (e) {
    return { ok: false, out: e instanceof Error ? e.message : String(e) };
  }
}

/**
 * The path of a working Claude Code binary of {@linkcode CLAUDE_CODE_VERSION}, installing it with
 * npm when missing; `{ skip }` where it cannot run on this machine.
 */
export async function claudeBinary(): Promise<{ bin: string } | { skip: string }> {
  const pkg = claudePlatformPackage();
  if (pkg === undefined) {
    return { skip: `Claude Code publishes no binary for ${Deno.build.os}-${Deno.build.arch}` };
  }
  const dir = claudeCacheDir();
  const bin = join(dir, "node_modules", pkg, "claude");
  if (!existsSync(bin)) {
    await Deno.mkdir(dir, { recursive: true });
    const npm = await run("npm", [
      "install",
      "--prefix",
      dir,
      "--no-save",
      "--no-package-lock",
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      "--force", // the package declares node >= 22; the binary does not use node
      `${pkg}@${CLAUDE_CODE_VERSION}`,
    ]);
    if (!npm.ok || !existsSync(bin)) {
      throw new Error(
        `could not install ${pkg}@${CLAUDE_CODE_VERSION} with npm into ${dir}:\n${npm.out}`,
      );
    }
  }
  const version = await run(bin, ["--version"]);
  if (!version.ok || !version.out.trim().startsWith(CLAUDE_CODE_VERSION)) {
    return {
      skip: `the Claude Code binary ${bin} does not run here: ${version.out.trim().slice(0, 300)}`,
    };
  }
  return { bin };
}

if (import.meta.main) {
  const r = await claudeBinary();
  if ("skip" in r) {
    console.error(`skipped: ${r.skip}`);
    Deno.exit(1);
  }
  console.log(r.bin);
}
