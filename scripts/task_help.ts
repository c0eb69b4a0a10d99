/**
 * `--help` for a `deno task` that takes no arguments: with `--help` or `-h`
 * it prints `help` and exits 0; with any other argument it says so and exits
 * 2; with none it returns and the task runs.
 *
 * @example
 * ```ts ignore
 * import { noArgsTask } from "./task_help.ts";
 * noArgsTask("deno task demo", "A scripted session showing modes and token savings.");
 * ```
 *
 * @module
 */
export function noArgsTask(name: string, help: string): void {
  const args = Deno.args;
  if (args.includes("--help") || args.includes("-h")) {
    console.log(`usage: ${name}\n\n${help}`);
    Deno.exit(0);
  }
  if (args.length > 0) {
    console.error(`${name}: it takes no arguments (got ${args[0]})\n\nusage: ${name}\n\n${help}`);
    Deno.exit(2);
  }
}
