/**
 * Runs a port (SPEC §10) on one input: the command under `sh -c` in its own
 * process group, the input as JSON on stdin, its stdout parsed as one JSON
 * object. Anything wrong (a non-zero exit, a signal, a hang past the timeout,
 * empty or non-JSON stdout) is a one-line reason, never a throw. The
 * conformance runner and the differential mode (`--random`) both run ports
 * through it.
 *
 * @example
 * ```ts ignore
 * import { runPort } from "./port_process.ts";
 * const r = await runPort("python3 my_port.py", 30, { id: "v1", files: {}, steps: [] });
 * if (!r.ok) console.log(r.reason); // e.g. "port exited with code 1 (stderr: ...)"
 * ```
 *
 * Specified by SPEC.md §10.
 *
 * @module
 */
import { parsePortStdout, type PortCheck } from "./port_output.ts";

const ANSI_COLOR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

/**
 * Short one-line excerpt of a port's stderr: its first non-empty lines while
 * they fit in about 200 characters, and always its last line.
 */
function stderrExcerpt(stderr: string): string {
  const plain = stderr.replace(ANSI_COLOR, "");
  const cut = (l: string) => (l.length > 120 ? `${l.slice(0, 117)}...` : l);
  const lines = plain.split("\n").map((l) => cut(l.trim())).filter((l) => l !== "");
  if (lines.length === 0) return "no stderr";
  const last = lines.pop()!;
  const shown: string[] = [];
  let size = last.length;
  for (const l of lines) {
    if (size + l.length > 200) {
      shown.push("...");
      break;
    }
    shown.push(l);
    size += l.length;
  }
  return `stderr: ${[...shown, last].join(" / ")}`;
}

/** Reads a stream to the end into a string; gives up quietly when cancelled. */
async function collect(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  try {
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  } catch {
    // the port was killed: what it printed so far is all there is
  }
  return text + decoder.decode();
}

/**
 * Runs the port on one input: the input JSON on stdin, stdout parsed as one
 * JSON object. The port runs in its own process group, so a timeout kills it
 * and everything it started.
 *
 * @example
 * ```ts ignore
 * import { runPort } from "./port_process.ts";
 * const r = await runPort("./my-port", 5, { id: "v1", files: {}, steps: [{ op: "message" }] });
 * r.ok ? r.value.id : r.reason;
 * ```
 */
export async function runPort(
  cmd: string,
  timeoutSeconds: number,
  input: unknown,
): Promise<PortCheck<Record<string, unknown>>> {
  const child = new Deno.Command("sh", {
    args: ["-c", cmd],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
  const stdout = collect(child.stdout);
  const stderr = collect(child.stderr);
  const feed = (async () => {
    const w = child.stdin.getWriter();
    try {
      await w.write(new TextEncoder().encode(JSON.stringify(input)));
      await w.close();
    } catch {
      // the port did not read its input: its answer (or exit) says what went wrong
    }
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutSeconds * 1000);
  });
  const done = Promise.all([child.status, stdout, stderr, feed]);
  const first = await Promise.race([done, timedOut]);
  clearTimeout(timer);
  if (first === "timeout") {
    for (const target of [-child.pid, child.pid]) {
      try {
        Deno.kill(target, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await Promise.race([done, new Promise((r) => setTimeout(r, 1000))]);
    return { ok: false, reason: `timed out after ${timeoutSeconds} s (port killed)` };
  }
  const [status, out, err] = first;
  if (status.signal !== null) {
    return { ok: false, reason: `port was killed by ${status.signal} (${stderrExcerpt(err)})` };
  }
  if (status.code !== 0) {
    return { ok: false, reason: `port exited with code ${status.code} (${stderrExcerpt(err)})` };
  }
  const parsed = parsePortStdout(out);
  if (!parsed.ok && out.trim() === "" && err.trim() !== "") {
    return { ok: false, reason: `${parsed.reason} (${stderrExcerpt(err)})` };
  }
  return parsed;
}
