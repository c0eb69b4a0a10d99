/**
 * How Claude Code reaches the service (SPEC §11.9): a command hook runs a
 * tiny client that passes the hook's input (stdin) to the service's socket
 * and prints its answer. The client is a Perl script (Perl starts in about
 * 2 ms and is on macOS and almost every Linux), else a Deno script. It
 * fails open: when the service is down, slow (past its deadline) or broken
 * it prints nothing and exits 0, so Claude Code's own output stands and no
 * error is shown. {@linkcode claudeHookSettings} gives the hooks, with the
 * matchers that send each event only the tools it needs.
 *
 * Specified by SPEC.md §11.9.
 *
 * @module
 */
import { renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLAUDE_SOCKET_NAME } from "./service.ts";

/**
 * The Perl client: `perl hook-client.pl <dir> [deadline seconds]`. It uses
 * no module (loading `Socket` alone triples its start), so it packs the
 * socket address itself, for the BSD layout (macOS) or the Linux one, and
 * connects by a name relative to the directory (no length limit on the
 * directory's path).
 *
 * @example
 * ```ts
 * import { CLAUDE_HOOK_CLIENT_PERL } from "@readcache/core/claude-code";
 * CLAUDE_HOOK_CLIENT_PERL.startsWith("#"); // true
 * ```
 */
export const CLAUDE_HOOK_CLIENT_PERL =
  `# readcache: Claude Code's hook client (SPEC 11.9). Passes the hook input on stdin to the
# service's socket in the directory given and prints its answer; on any failure it prints nothing
# and exits 0, so Claude Code's own output stands.
$SIG{ALRM} = sub { exit 0 }; alarm($ARGV[1] || 8);
binmode STDIN; binmode STDOUT;
chdir $ARGV[0] or exit 0;
my $in = do { local $/; <STDIN> }; $in = '' unless defined $in;
my $name = "${CLAUDE_SOCKET_NAME}\\0";
my $addr = $^O =~ /bsd|darwin|dragonfly/ ? pack('CCa*', 2 + length($name), 1, $name) : pack('Sa*', 1, $name);
socket(S, 1, 1, 0) or exit 0;
connect(S, $addr) or exit 0;
my $req = "POST /hook HTTP/1.0\\r\\nHost: readcache\\r\\nContent-Type: application/json\\r\\nContent-Length: " . length($in) . "\\r\\n\\r\\n" . $in;
for (my $at = 0; $at < length $req;) { my $n = syswrite(S, $req, 65536, $at); exit 0 unless $n; $at += $n; }
my $res = ''; while (sysread(S, my $buf, 65536)) { $res .= $buf; }
exit 0 unless $res =~ /\\AHTTP\\/1\\.[01] 200 [^\\r\\n]*\\r\\n(?:[^\\r\\n]+\\r\\n)*\\r\\n/;
print substr($res, $+[0]);
exit 0;
`;

/**
 * The Deno client, for a machine without Perl:
 * `deno run --no-config --allow-read=<dir> --allow-write=<dir> hook-client.js <dir> [deadline]`.
 *
 * @example
 * ```ts
 * import { CLAUDE_HOOK_CLIENT_DENO } from "@readcache/core/claude-code";
 * CLAUDE_HOOK_CLIENT_DENO.includes("Deno.connect"); // true
 * ```
 */
export const CLAUDE_HOOK_CLIENT_DENO =
  `// readcache: Claude Code's hook client (SPEC 11.9), for machines without Perl. Passes the hook
// input on stdin to the service's socket in the directory given and prints its answer; on any
// failure it prints nothing and exits 0, so Claude Code's own output stands.
const [dir, deadline] = Deno.args;
setTimeout(() => Deno.exit(0), (Number(deadline) || 8) * 1000);
try {
  const input = new Uint8Array(await new Response(Deno.stdin.readable).arrayBuffer());
  const conn = await Deno.connect({ transport: "unix", path: dir + "/${CLAUDE_SOCKET_NAME}" });
  const head = new TextEncoder().encode(
    "POST /hook HTTP/1.0\\r\\nHost: readcache\\r\\nContent-Type: application/json\\r\\n" +
      "Content-Length: " + input.length + "\\r\\n\\r\\n",
  );
  const req = new Uint8Array(head.length + input.length);
  req.set(head);
  req.set(input, head.length);
  for (let at = 0; at < req.length;) at += await conn.write(req.subarray(at));
  const res = new Uint8Array(await new Response(conn.readable).arrayBuffer());
  const text = new TextDecoder().decode(res);
  const m = /^HTTP\\/1\\.[01] 200 [^\\r\\n]*\\r\\n(?:[^\\r\\n]+\\r\\n)*\\r\\n/.exec(text);
  if (m !== null) await Deno.stdout.write(new TextEncoder().encode(text.slice(m[0].length)));
} catch {
  // fail open
}
Deno.exit(0);
`;

/**
 * The tools `PreToolUse` is not sent for: the service takes the statuses of
 * held files as a call starts only for tools that may change any file
 * (`Bash` and tools it does not know); it plans an `Edit` as it returns.
 */
const NO_PRE = [
  "Read",
  "Write",
  "Edit",
  "MultiEdit",
  "NotebookEdit",
  "Grep",
  "Glob",
  "TodoWrite",
  "ToolSearch",
  "EnterPlanMode",
  "ExitPlanMode",
];

/**
 * The tools `PostToolUse` is not sent for: their results carry nothing the
 * service adds (a `Write` is proof by itself; the others change no file and
 * show none, or leave the file unknown anyway).
 */
const NO_POST = [
  "Write",
  "MultiEdit",
  "NotebookEdit",
  "Glob",
  "TodoWrite",
  "ToolSearch",
  "EnterPlanMode",
  "ExitPlanMode",
];

/** A hook matcher (Claude Code's regular expression) for every tool but these. */
function allBut(names: readonly string[]): string {
  return `^(?!(?:${names.join("|")})$)`;
}

/**
 * The command that runs the hook client: the program and its arguments
 * (Claude Code's exec form, no shell).
 *
 * @example
 * ```ts
 * import type { ClaudeHookClient } from "@readcache/core/claude-code";
 * const c: ClaudeHookClient = { command: "/usr/bin/perl", args: ["/d/hook-client.pl", "/d"] };
 * ```
 */
export interface ClaudeHookClient {
  /** The program (an absolute path). */
  command: string;
  /** Its arguments. */
  args: string[];
}

/**
 * The client command for the service directory `dir`, given the Perl or
 * Deno executable and where the client script is.
 *
 * @example
 * ```ts
 * import { claudeHookClient } from "@readcache/core/claude-code";
 * claudeHookClient({ perl: "/usr/bin/perl" }, "/d", "/d/hook-client.pl").args;
 * // ["/d/hook-client.pl", "/d", "8"]
 * ```
 */
export function claudeHookClient(
  runtime: { perl: string } | { deno: string },
  dir: string,
  script: string,
): ClaudeHookClient {
  if ("perl" in runtime) return { command: runtime.perl, args: [script, dir, "8"] };
  return {
    command: runtime.deno,
    args: [
      "run",
      "--no-config",
      "--quiet",
      `--allow-read=${dir}`,
      `--allow-write=${dir}`,
      script,
      dir,
      "8",
    ],
  };
}

/**
 * The hooks that reach the service through `client`: `PreToolUse` for the
 * tools that may change any file, `PostToolUse` for every tool whose
 * result the service reads or records; each with a 10 s timeout (the client
 * gives up after 8 s). Every hook carries `mark: true` under the given key,
 * so an uninstall finds exactly these.
 *
 * @example
 * ```ts
 * import { claudeHookSettings } from "@readcache/core/claude-code";
 * const h = claudeHookSettings({ command: "/usr/bin/perl", args: [] }, "readcache");
 * h.PostToolUse[0].matcher; // "^(?!(?:Write|MultiEdit|...)$)"
 * ```
 */
export function claudeHookSettings(
  client: ClaudeHookClient,
  mark?: string,
): Record<"PreToolUse" | "PostToolUse", { matcher: string; hooks: Record<string, unknown>[] }[]> {
  const hook = {
    type: "command",
    command: client.command,
    args: client.args,
    timeout: 10,
    ...(mark === undefined ? {} : { [mark]: true }),
  };
  return {
    PreToolUse: [{ matcher: allBut(NO_PRE), hooks: [hook] }],
    PostToolUse: [{ matcher: allBut(NO_POST), hooks: [hook] }],
  };
}

/**
 * The runtime the hook client runs on here: Perl when an executable `perl`
 * is on `PATH` (its absolute path), else this Deno.
 *
 * @example
 * ```ts ignore
 * import { claudeHookRuntime } from "@readcache/core/claude-code";
 * claudeHookRuntime(); // { perl: "/usr/bin/perl" }
 * ```
 */
export function claudeHookRuntime(
  path: string = Deno.env.get("PATH") ?? "",
): { perl: string } | { deno: string } {
  for (const dir of path.split(":")) {
    if (!dir.startsWith("/")) continue;
    const perl = join(dir, "perl");
    try {
      const st = statSync(perl);
      if (st.isFile() && (st.mode & 0o111) !== 0) return { perl };
    } catch {
      // not here
    }
  }
  return { deno: Deno.execPath() };
}

/**
 * Writes the hook client for `runtime` into the service directory `dir`
 * (`hook-client.pl` or `hook-client.js`, mode 0600) and gives the command
 * that runs it.
 *
 * @example
 * ```ts ignore
 * import { claudeHookRuntime, writeClaudeHookClient } from "@readcache/core/claude-code";
 * const client = writeClaudeHookClient(dir, claudeHookRuntime());
 * ```
 */
export function writeClaudeHookClient(
  dir: string,
  runtime: { perl: string } | { deno: string },
): ClaudeHookClient {
  const script = join(dir, "perl" in runtime ? "hook-client.pl" : "hook-client.js");
  const tmp = `${script}.${Deno.pid}.tmp`;
  writeFileSync(tmp, "perl" in runtime ? CLAUDE_HOOK_CLIENT_PERL : CLAUDE_HOOK_CLIENT_DENO, {
    mode: 0o600,
  });
  renameSync(tmp, script);
  return claudeHookClient(runtime, dir, script);
}
