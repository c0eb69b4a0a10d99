/**
 * What every `readcache` command shares about output: exit codes, errors
 * that say what was wrong and what to do, colour (only on a terminal, never
 * with `NO_COLOR`), a progress bar on stderr (only on a terminal), and
 * `--json` printing.
 *
 * @module
 */
import { PLAIN_STYLE, type TextStyle } from "../../src/core/status.ts";

/** Exit code: done, nothing wrong. */
export const EXIT_OK = 0;
/** Exit code: the command ran and found a problem (or could not do its work). */
export const EXIT_PROBLEM = 1;
/** Exit code: the command line was wrong (unknown option, bad value, missing file). */
export const EXIT_USAGE = 2;

/**
 * An error that ends the command with a message and an exit code. The
 * message says what was wrong and what to do.
 *
 * @example
 * ```ts
 * import { CliError, EXIT_USAGE } from "./output.ts";
 * throw new CliError("No session file at /x.jsonl. Pass the path of a pi session file, or --latest.", EXIT_USAGE);
 * ```
 */
export class CliError extends Error {
  /** The exit code to end with. */
  readonly exitCode: number;

  /** `exitCode` defaults to {@linkcode EXIT_USAGE}. */
  constructor(message: string, exitCode: number = EXIT_USAGE) {
    super(message);
    this.name = "CliError";
    this.exitCode = exitCode;
  }
}

/**
 * The command did its job and found nothing to report on (no session of the
 * project, no agent data yet): exit code 0, the words on stdout, what to pass
 * to look elsewhere (the CLI's convention: 0 done, nothing found included; 1
 * problems it reports; 2 usage errors and unreadable inputs).
 *
 * @example
 * ```ts
 * import { NothingFound } from "./output.ts";
 * new NothingFound("No pi session of /w in /s.").exitCode; // 0
 * ```
 */
export class NothingFound extends CliError {
  /** A "nothing found" with this message. */
  constructor(message: string) {
    super(message, EXIT_OK);
    this.name = "NothingFound";
  }
}

/**
 * True when colour may be used on a stream: it is a terminal and `NO_COLOR`
 * is not set to a non-empty value (https://no-color.org).
 *
 * @example
 * ```ts
 * import { colorAllowed } from "./output.ts";
 * colorAllowed(Deno.stdout); // false when piped
 * ```
 */
export function colorAllowed(stream: { isTerminal(): boolean }): boolean {
  const noColor = Deno.env.get("NO_COLOR");
  return stream.isTerminal() && (noColor === undefined || noColor === "");
}

const ansi = (code: number) => (s: string): string => `\x1b[${code}m${s}\x1b[0m`;

/** ANSI colours for a terminal. */
const ANSI_STYLE: TextStyle = Object.freeze({
  heading: ansi(1),
  good: ansi(32),
  warn: ansi(33),
  bad: ansi(31),
  dim: ansi(2),
});

/**
 * The style for stdout: colour on a terminal without `NO_COLOR`, else plain.
 *
 * @example
 * ```ts
 * import { stdoutStyle } from "./output.ts";
 * console.log(stdoutStyle().bad("corrupt"));
 * ```
 */
export function stdoutStyle(): TextStyle {
  return colorAllowed(Deno.stdout) ? ANSI_STYLE : PLAIN_STYLE;
}

/**
 * Prints a value as indented JSON on stdout (`--json`).
 *
 * @example
 * ```ts
 * import { printJson } from "./output.ts";
 * printJson({ ok: true });
 * ```
 */
export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

/**
 * A one-line progress bar on stderr for work over many files, redrawn in
 * place at most every 80 ms and erased by {@linkcode Progress.done}. Shown
 * only when stderr is a terminal; otherwise every call does nothing.
 *
 * @example
 * ```ts
 * import { Progress } from "./output.ts";
 * const p = new Progress("hashing objects", 40);
 * for (let i = 0; i < 40; i++) p.tick();
 * p.done();
 * ```
 */
export class Progress {
  readonly #label: string;
  readonly #total: number;
  readonly #on: boolean;
  #done = 0;
  #last = 0;

  /**
   * `total` is the number of steps; the bar is shown only for 2 steps or more, on a terminal,
   * and never when `quiet` (`--json`).
   */
  constructor(label: string, total: number, quiet = false) {
    this.#label = label;
    this.#total = total;
    this.#on = !quiet && total > 1 && Deno.stderr.isTerminal();
  }

  /** One more step done. */
  tick(): void {
    this.#done++;
    if (!this.#on) return;
    const now = Date.now();
    if (now - this.#last < 80 && this.#done < this.#total) return;
    this.#last = now;
    const width = 24;
    const filled = Math.round((this.#done / this.#total) * width);
    const bar = "#".repeat(filled) + ".".repeat(width - filled);
    this.#write(`\r[${bar}] ${this.#done}/${this.#total} ${this.#label}\x1b[K`);
  }

  /** Erases the bar. */
  done(): void {
    if (this.#on) this.#write("\r\x1b[K");
  }

  #write(s: string): void {
    Deno.stderr.writeSync(new TextEncoder().encode(s));
  }
}

/**
 * A count with its noun: `1 file`, `3 files`.
 *
 * @example
 * ```ts
 * import { plural } from "./output.ts";
 * plural(2, "object"); // "2 objects"
 * plural(1, "copy", "copies"); // "1 copy"
 * ```
 */
export function plural(n: number, one: string, many: string = `${one}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

/**
 * The message of a caught value.
 *
 * @example
 * ```ts
 * import { messageOf } from "./output.ts";
 * messageOf(new Error("boom")); // "boom"
 * ```
 */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * A `(done, total)` callback that drives a {@linkcode Progress} bar created
 * on the first call and erased on the last.
 *
 * @example
 * ```ts
 * import { progressCallback } from "./output.ts";
 * const onFile = progressCallback("session files read");
 * onFile(1, 2);
 * onFile(2, 2);
 * ```
 */
export function progressCallback(
  label: string,
  quiet = false,
): (done: number, total: number) => void {
  let bar: Progress | undefined;
  return (done, total) => {
    bar ??= new Progress(label, total, quiet);
    bar.tick();
    if (done >= total) bar.done();
  };
}

/**
 * A stage of a command that may take a while (fetching, replaying): after a
 * second, one line on stderr saying what it is doing, and when it ends, how
 * long it took; nothing when it ends sooner, and nothing at all when
 * `quiet` (`--json`).
 *
 * @example
 * ```ts
 * import { slowStage } from "./output.ts";
 * const stage = slowStage("replaying 3 sessions", true);
 * stage.done();
 * ```
 */
export function slowStage(label: string, quiet: boolean): { done(): void } {
  const t0 = Date.now();
  let said = false;
  const timer = quiet ? undefined : setTimeout(() => {
    said = true;
    console.error(`readcache: ${label}...`);
  }, 1000);
  if (timer !== undefined) Deno.unrefTimer(timer);
  return {
    done() {
      if (timer !== undefined) clearTimeout(timer);
      if (said) console.error(`readcache: done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    },
  };
}
