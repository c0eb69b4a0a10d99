#!/usr/bin/env node
// `readcache` for npm (the `bin` of package.json): the CLI is TypeScript for Deno (cli/main.ts),
// so this launcher runs it with Deno: `deno` from PATH (or $READCACHE_DENO), else Deno from the
// npm registry through `npx -y deno@2`. Arguments, stdin/stdout/stderr (and so terminal
// detection), the exit code and Ctrl-C pass through unchanged. The project's deno.json is passed
// explicitly, so it works from any directory.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const denoArgs = [
  "run",
  "-A",
  "--quiet",
  "--config",
  join(here, "..", "deno.json"),
  join(here, "main.ts"),
  ...process.argv.slice(2),
];

function run(command, args, onMissing) {
  const child = spawn(command, args, { stdio: "inherit" });
  const forward = (signal) => child.kill(signal);
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);
  child.on("error", (e) => {
    process.off("SIGINT", forward);
    process.off("SIGTERM", forward);
    if (e.code === "ENOENT" && onMissing) return onMissing();
    console.error(
      `readcache: could not start ${command}: ${e.message}. Install Deno 2 (https://deno.com) or Node's npx.`,
    );
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}

const deno = process.env.READCACHE_DENO || "deno";
run(deno, denoArgs, () => run("npx", ["-y", "deno@2", ...denoArgs]));
