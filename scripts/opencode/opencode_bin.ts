// The real OpenCode binary for the end-to-end test, from the npm registry: the platform package
// (`opencode-<os>-<arch>[-baseline]`, about 185 MB, a self-contained executable) installed with
// npm into a cache directory, by default `.scratch/opencode/<version>` in this repository (git
// ignores `.scratch/`), or `$READCACHE_OPENCODE_DIR`. Installed once; later runs reuse it.
//
//   deno run -A scripts/opencode/opencode_bin.ts          # installs if needed, prints the path
//
// `openCodeBinary()` answers `{ bin }`, or `{ skip }` with the reason where the binary cannot run
// here (no package for this platform, or the installed binary does not start); a failed
// download is an error.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The OpenCode version the adapter is tested with. */
export const OPENCODE_VERSION = "1.18.33";

const REPO = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");

/** Where the npm package is installed. */
export function openCodeCacheDir(): string {
  return Deno.env.get("READCACHE_OPENCODE_DIR") ??
    join(REPO, ".scratch", "opencode", OPENCODE_VERSION);
}

/**
 * An XDG_CONFIG_HOME kept with the binary: OpenCode installs its plugin SDK there once (see
 * `StartOptions.configHome` in opencode_server.ts) instead of at every start.
 */
export function openCodeConfigHome(): string {
  return join(openCodeCacheDir(), "xdg-config");
}

/**
 * The npm package holding the binary for this machine, as opencode-ai's installer picks it for a
 * glibc system (musl systems are not detected: the binary then does not start and the test says
 * so).
 */
export function platformPackage(): string | undefined {
  const os = ({ linux: "linux", darwin: "darwin", windows: "windows" } as Record<string, string>)[
    Deno.build.os
  ];
  const arch = ({ x86_64: "x64", aarch64: "arm64" } as Record<string, string>)[Deno.build.arch];
  if (os === undefined || arch === undefined || os === "windows") return undefined;
  let name = `opencode-${os}-${arch}`;
  if (os === "linux" && arch === "x64") {
    let avx2 = false;
    try {
      avx2 = /(^|\s)avx2(\s|$)/.test(Deno.readTextFileSync("/proc/cpuinfo"));
    } catch {
      // no /proc: take the baseline build
    }
    if (!avx2) name += "-baseline";
  }
  return name;
}

async function run(
  cmd: string,
  args: string[],
  cwd?: string,
): Promise<{ ok: boolean; out: string }> {
  try {
    const r = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
    const dec = new TextDecoder();
    return { ok: r.success, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
  } catch (e) {
    return { ok: false, out: e instanceof Error ? e.message : String(e) };
  }
}

/**
 * The path of a working OpenCode binary of {@linkcode OPENCODE_VERSION}, installing it with npm
 * when missing; `{ skip }` where it cannot run on this machine.
 */
export async function openCodeBinary(): Promise<{ bin: string } | { skip: string }> {
  const pkg = platformPackage();
  if (pkg === undefined) {
    return { skip: `OpenCode publishes no binary package for ${Deno.build.os}-${Deno.build.arch}` };
  }
  const dir = openCodeCacheDir();
  const bin = join(dir, "node_modules", pkg, "bin", "opencode");
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
      `${pkg}@${OPENCODE_VERSION}`,
    ]);
    if (!npm.ok || !existsSync(bin)) {
      throw new Error(
        `could not install ${pkg}@${OPENCODE_VERSION} with npm into ${dir}:\n${npm.out}`,
      );
    }
  }
  const version = await run(bin, ["--version"]);
  if (!version.ok || version.out.trim() !== OPENCODE_VERSION) {
    return {
      skip: `the OpenCode binary ${bin} does not run here: ${version.out.trim().slice(0, 300)}`,
    };
  }
  return { bin };
}

if (import.meta.main) {
  const r = await openCodeBinary();
  if ("skip" in r) {
    console.error(`skipped: ${r.skip}`);
    Deno.exit(1);
  }
  console.log(r.bin);
}
