// The command line of the differential mode (`deno task conformance --random N --cmd "<port>"`,
// scripts/pi/differential.ts): its options, parsed and checked, and the typed error with a stable
// code that a bad one raises.

/** The usage line of the differential mode. */
export const DIFFERENTIAL_USAGE =
  'usage: deno task conformance --random <N> --cmd "<port command>" [--seed <S>] ' +
  "[--host pi|opencode|claude-code] [--timeout <seconds>] [--shrink <K>] [--out <file.json>] " +
  "[--no-tools] [--no-symlinks] [--no-in-flight]";

/** The hosts whose terms a port may answer in (`--host`; pi's are the reference's). */
export const DIFFERENTIAL_HOSTS = ["pi", "opencode", "claude-code"] as const;

/**
 * Stable codes of {@linkcode DifferentialArgsError}.
 *
 * @example
 * ```ts
 * import type { DifferentialArgsCode } from "./differential_args.ts";
 * const code: DifferentialArgsCode = "BAD_RANDOM";
 * ```
 */
export type DifferentialArgsCode =
  | "BAD_RANDOM"
  | "BAD_SEED"
  | "BAD_TIMEOUT"
  | "BAD_SHRINK"
  | "BAD_HOST"
  | "MISSING_CMD"
  | "MISSING_VALUE"
  | "UNKNOWN_ARGUMENT";

/**
 * A bad command line of the differential mode (exit 2), with a stable code.
 *
 * @example
 * ```ts
 * import { DifferentialArgsError, parseDifferentialArgs } from "./differential_args.ts";
 * try {
 *   parseDifferentialArgs(["--random", "ten", "--cmd", "./port"]);
 * } catch (e) {
 *   if (e instanceof DifferentialArgsError) e.code; // "BAD_RANDOM"
 * }
 * ```
 */
export class DifferentialArgsError extends Error {
  /** Stable machine-readable code. */
  readonly code: DifferentialArgsCode;

  /**
   * @param code stable code
   * @param message what was wrong and what is expected instead
   */
  constructor(code: DifferentialArgsCode, message: string) {
    super(message);
    this.name = "DifferentialArgsError";
    this.code = code;
  }
}

/**
 * The options of a differential run.
 *
 * @example
 * ```ts
 * import type { DifferentialArgs } from "./differential_args.ts";
 * const a: DifferentialArgs = { sessions: 30, seed: 1, cmd: "./port", timeoutSeconds: 30,
 *   shrinkBudget: 200, host: "pi", generator: {} };
 * ```
 */
export interface DifferentialArgs {
  /** Random sessions to run (`--random`). */
  sessions: number;
  /** The generator's seed (`--seed`; default: a new one, printed). */
  seed: number;
  /** The port command, run with `sh -c` once per session (`--cmd`). */
  cmd: string;
  /** Seconds a port may run per session (`--timeout`, default 30). */
  timeoutSeconds: number;
  /** Most port runs spent minimising the first difference (`--shrink`, default 200; 0: none). */
  shrinkBudget: number;
  /**
   * The host whose terms the port answers in (`--host`, default `pi`): the reference's answers
   * are rewritten to them (and steps that do not apply to the host are not compared), as the
   * host port's own vector mode does.
   */
  host?: (typeof DIFFERENTIAL_HOSTS)[number];
  /** Where to write the minimised session as a scenario vector (`--out`). */
  out?: string;
  /** Generator switches: no `bash`/`grep` steps, no `symlink` steps, no in-flight reads. */
  generator: { tools?: false; symlinks?: false; inFlight?: false };
}

const INTEGER = /^-?\d+$/;

/**
 * Parses the differential mode's arguments (those of `deno task conformance`
 * with `--random`). Throws {@linkcode DifferentialArgsError} on a bad one.
 *
 * @example
 * ```ts
 * import { parseDifferentialArgs } from "./differential_args.ts";
 * const a = parseDifferentialArgs(["--random", "30", "--seed", "7", "--cmd", "./port"]);
 * a.sessions; // 30
 * a.seed; // 7
 * ```
 */
export function parseDifferentialArgs(args: readonly string[]): DifferentialArgs {
  const values = new Map<string, string>();
  const flags = new Set<string>();
  const withValue = ["--random", "--seed", "--cmd", "--timeout", "--shrink", "--out", "--host"];
  const switches = ["--no-tools", "--no-symlinks", "--no-in-flight"];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (withValue.includes(a)) {
      const v = args[i + 1];
      if (v === undefined || v === "") {
        throw new DifferentialArgsError("MISSING_VALUE", `${a} needs a value`);
      }
      values.set(a, v);
      i++;
    } else if (switches.includes(a)) flags.add(a);
    else {
      throw new DifferentialArgsError(
        "UNKNOWN_ARGUMENT",
        `unknown argument ${JSON.stringify(a)} (the random mode takes no vector files or layers)`,
      );
    }
  }
  const count = (flag: string, code: DifferentialArgsCode, min: number, fallback?: number) => {
    const v = values.get(flag);
    if (v === undefined && fallback !== undefined) return fallback;
    if (v === undefined || !INTEGER.test(v) || Number(v) < min) {
      throw new DifferentialArgsError(
        code,
        `${flag} needs a whole number of at least ${min}, got ${JSON.stringify(v ?? "")}`,
      );
    }
    return Number(v);
  };
  const sessions = count("--random", "BAD_RANDOM", 1);
  const seedText = values.get("--seed");
  if (seedText !== undefined && !INTEGER.test(seedText)) {
    throw new DifferentialArgsError(
      "BAD_SEED",
      `--seed needs an integer, got ${JSON.stringify(seedText)}`,
    );
  }
  const seed = seedText === undefined
    ? (Date.now() ^ (Math.random() * 2 ** 31)) | 0
    : Number(seedText) | 0;
  const cmd = values.get("--cmd");
  if (cmd === undefined) {
    throw new DifferentialArgsError(
      "MISSING_CMD",
      '--random needs the port to compare: --cmd "<port command>"',
    );
  }
  const timeoutText = values.get("--timeout");
  const timeoutSeconds = timeoutText === undefined ? 30 : Number(timeoutText);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) {
    throw new DifferentialArgsError(
      "BAD_TIMEOUT",
      `--timeout needs a positive number of seconds, got ${JSON.stringify(timeoutText)}`,
    );
  }
  const shrinkBudget = count("--shrink", "BAD_SHRINK", 0, 200);
  const generator: DifferentialArgs["generator"] = {};
  if (flags.has("--no-tools")) generator.tools = false;
  if (flags.has("--no-symlinks")) generator.symlinks = false;
  if (flags.has("--no-in-flight")) generator.inFlight = false;
  const hostText = values.get("--host") ?? "pi";
  const host = DIFFERENTIAL_HOSTS.find((h) => h === hostText);
  if (host === undefined) {
    throw new DifferentialArgsError(
      "BAD_HOST",
      `--host needs one of ${DIFFERENTIAL_HOSTS.join(", ")}, got ${JSON.stringify(hostText)}`,
    );
  }
  const out = values.get("--out");
  return {
    sessions,
    seed,
    cmd,
    timeoutSeconds,
    shrinkBudget,
    host,
    generator,
    ...(out ? { out } : {}),
  };
}
