// Running a command with the network cut, for the tests of what works offline: `unshare -n` (a
// network namespace with nothing in it; it needs root). Where it is not allowed, `why` says so.
import { existsSync } from "node:fs";

/** The `unshare` binary of this machine, if any. */
export const UNSHARE = ["/usr/bin/unshare", "/bin/unshare"].find((p) => existsSync(p));

/** Why the network cannot be cut here, or `undefined` when it can. */
export const NETWORK_CUT_UNAVAILABLE: string | undefined = await (async () => {
  if (UNSHARE === undefined) return "no unshare on this machine";
  const r = await new Deno.Command(UNSHARE, { args: ["-n", "true"], stderr: "null" }).output()
    .catch(() => undefined);
  return r?.success ? undefined : "unshare -n is not allowed here (it needs root)";
})();

/**
 * The command and arguments that run `line` (a program and its arguments) with the network cut
 * where that is possible, else as it is.
 */
export function withoutNetwork(line: readonly string[]): { cmd: string; args: string[] } {
  return NETWORK_CUT_UNAVAILABLE === undefined
    ? { cmd: UNSHARE!, args: ["-n", ...line] }
    : { cmd: line[0], args: line.slice(1) };
}
