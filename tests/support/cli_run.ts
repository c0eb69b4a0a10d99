// Runs the `readcache` CLI as a user runs it (a subprocess of cli/main.ts with the repository's
// Deno config), for the CLI tests of both hosts.
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** What one CLI run printed and its exit code. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The arguments of `deno` that run `readcache <args>` as a user runs it. */
export function cliArgs(args: string[]): string[] {
  return [
    "run",
    "-A",
    "--quiet",
    "--config",
    join(REPO, "deno.json"),
    join(REPO, "cli/main.ts"),
    ...args,
  ];
}

/** Runs `readcache <args>` in `cwd`, `env` added to the environment. */
export async function runCli(
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<Run> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: cliArgs(args),
    cwd,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** The run's stdout as JSON; says what it printed when it is not. */
export function jsonOf<T>(r: Run): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
}
