/**
 * Path normalisation with parity to pi's built-in `read` tool.
 *
 * Pure: the working directory, the home directory and file existence are
 * injected, so the same rules can be driven by vectors without a disk.
 *
 * Specified by SPEC.md §3.1.
 *
 * @module
 */
import { posix, win32 } from "node:path";

/**
 * What path normalisation needs from the outside world.
 *
 * @example
 * ```ts
 * import type { PathEnv } from "@readcache/core/rules";
 * const env: PathEnv = { cwd: "/work", home: "/home/me", exists: (p) => p === "/work/a.ts" };
 * ```
 */
export interface PathEnv {
  /** Absolute working directory relative paths resolve against. */
  cwd: string;
  /** Home directory that `~` expands to. */
  home: string;
  /** Whether something exists at an absolute path. */
  exists(path: string): boolean;
  /** Path flavour; `"posix"` unless stated. */
  style?: "posix" | "win32";
}

const UNICODE_SPACES = /[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g;
const NARROW_NO_BREAK_SPACE = "\u202F";
const RIGHT_SINGLE_QUOTE = "\u2019";

/**
 * Expands what the model typed into a path string without touching the disk:
 * strips one leading `@`, maps unicode spaces (U+00A0, U+2000-U+200A, U+202F,
 * U+205F, U+3000) to a plain space, and expands `~` and `~/`.
 *
 * @example
 * ```ts
 * import { expandReadPath } from "@readcache/core/rules";
 * expandReadPath("@~/notes.md", "/home/me"); // "/home/me/notes.md"
 * ```
 */
export function expandReadPath(input: string, home: string): string {
  const withoutAt = input.startsWith("@") ? input.slice(1) : input;
  const spaced = withoutAt.replace(UNICODE_SPACES, " ");
  if (spaced === "~") return home;
  if (spaced.startsWith("~/")) return home + spaced.slice(1);
  return spaced;
}

/**
 * Expands the input and resolves it against `cwd` when relative. Does not look
 * at the disk.
 *
 * @example
 * ```ts
 * import { resolveToCwd } from "@readcache/core/rules";
 * resolveToCwd("src/a.ts", { cwd: "/w", home: "/h", exists: () => false }); // "/w/src/a.ts"
 * ```
 */
export function resolveToCwd(input: string, env: PathEnv): string {
  const p = env.style === "win32" ? win32 : posix;
  const expanded = expandReadPath(input, env.home);
  return p.isAbsolute(expanded) ? expanded : p.resolve(env.cwd, expanded);
}

/**
 * The macOS filename variants tried, in order, when the plain path does not
 * exist: narrow no-break space before AM/PM, NFD, straight apostrophe to
 * U+2019, and NFD plus U+2019. Variants equal to the plain path are omitted.
 *
 * @example
 * ```ts
 * import { macosPathVariants } from "@readcache/core/rules";
 * macosPathVariants("/s/Shot 1.2 PM.png"); // ["/s/Shot 1.2\u202FPM.png"]
 * ```
 */
export function macosPathVariants(resolved: string): string[] {
  const amPm = resolved.replace(/ (AM|PM)\./gi, `${NARROW_NO_BREAK_SPACE}$1.`);
  const nfd = resolved.normalize("NFD");
  const curly = resolved.replace(/'/g, RIGHT_SINGLE_QUOTE);
  const nfdCurly = nfd.replace(/'/g, RIGHT_SINGLE_QUOTE);
  return [amPm, nfd, curly, nfdCurly].filter((v) => v !== resolved);
}

/**
 * Resolves a `read` path exactly as pi's read tool does: expand, resolve
 * against `cwd`, and when the plain path does not exist try the macOS
 * variants; the first that exists wins, else the plain path is returned.
 *
 * @example
 * ```ts
 * import { resolveReadPath } from "@readcache/core/rules";
 * const env = { cwd: "/w", home: "/h", exists: (p: string) => p === "/w/caf\u0065\u0301.txt" };
 * resolveReadPath("café.txt", env); // "/w/cafe\u0301.txt" (NFD variant exists)
 * ```
 */
export function resolveReadPath(input: string, env: PathEnv): string {
  const resolved = resolveToCwd(input, env);
  if (env.exists(resolved)) return resolved;
  for (const variant of macosPathVariants(resolved)) {
    if (env.exists(variant)) return variant;
  }
  return resolved;
}
