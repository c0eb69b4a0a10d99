#!/usr/bin/env node
// `readcache` for npm (the `bin` of package.json): the CLI is TypeScript for Deno (cli/main.ts),
// so this launcher runs it with Deno. It takes the first Deno it can run without the network:
// $READCACHE_DENO; the Deno installed with this package (the `deno` npm dependency); `deno` on
// PATH; a Deno 2 npx already fetched (its cache); only then `npx --prefer-offline -y deno@2`,
// which fetches Deno once (one try: where the registry cannot be reached it says so at once). Arguments, stdin/stdout/stderr (and so terminal detection), the exit
// code and Ctrl-C pass through unchanged. The CLI comes bundled into one file where the package
// ships it (dist/readcache.js: no npm package is resolved at run time), else from the checkout
// with its deno.json, so it works from any directory.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const bundle = join(here, "..", "dist", "readcache.js");
const denoArgs = existsSync(bundle)
  ? ["run", "-A", "--quiet", "--no-config", bundle, ...process.argv.slice(2)]
  : [
    "run",
    "-A",
    "--quiet",
    "--config",
    join(here, "..", "deno.json"),
    join(here, "main.ts"),
    ...process.argv.slice(2),
  ];
const exe = process.platform === "win32" ? "deno.exe" : "deno";

function isFile(path) {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The Deno installed with this package (its `deno` dependency), if any. */
function packagedDeno() {
  try {
    const require = createRequire(import.meta.url);
    const api = require("deno/install_api.cjs");
    const path = api.runInstall();
    return isFile(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

/** `deno` on PATH, if any. */
function denoOnPath() {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir !== "" && isFile(join(dir, exe))) return join(dir, exe);
  }
  return undefined;
}

/** A Deno 2 that `npx deno@2` fetched before (npm's cache), if any: no registry is asked. */
function cachedNpxDeno() {
  const cache = process.env.npm_config_cache || join(homedir(), ".npm");
  let dirs;
  try {
    dirs = readdirSync(join(cache, "_npx"));
  } catch {
    return undefined;
  }
  for (const d of dirs) {
    const pkg = join(cache, "_npx", d, "node_modules", "deno");
    try {
      const version = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).version;
      if (!/^2\./.test(version)) continue;
    } catch {
      continue;
    }
    if (isFile(join(pkg, exe))) return join(pkg, exe);
  }
  return undefined;
}

function run(command, args, env = process.env, onFail = undefined) {
  const child = spawn(command, args, { stdio: "inherit", env });
  const forward = (signal) => child.kill(signal);
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  child.on("error", (e) => {
    process.off("SIGINT", forward);
    process.off("SIGTERM", forward);
    console.error(
      `readcache: could not start ${command}: ${e.message}. Install Deno 2 (https://deno.com) or Node's npx.`,
    );
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal) process.kill(process.pid, signal);
    else {
      if (code !== 0 && onFail !== undefined) onFail();
      process.exit(code ?? 1);
    }
  });
}

const deno = process.env.READCACHE_DENO || packagedDeno() || denoOnPath() || cachedNpxDeno();
if (deno !== undefined) run(deno, denoArgs);
else {
  // The first run with no Deno anywhere: npx fetches one. npm retries an unreachable registry for
  // over two minutes; one try is enough to know, and then the user is told what to do.
  run(
    "npx",
    ["--prefer-offline", "-y", "deno@2", ...denoArgs],
    { ...process.env, npm_config_fetch_retries: "0" },
    () => {
      if (cachedNpxDeno() !== undefined) return; // Deno came: the exit code is the CLI's own
      console.error(
        "readcache: no Deno 2 was found (READCACHE_DENO, the npm package's own, deno on PATH, " +
          "npx's cache) and npx could not fetch one. Run it once with the npm registry " +
          "reachable, install Deno 2 (https://deno.com), or install the readcache npm package, " +
          "which carries its own Deno.",
      );
    },
  );
}
