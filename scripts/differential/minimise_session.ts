/**
 * Minimises a failing session: drops steps (whole stretches first, halving
 * their length down to single steps, as delta debugging does), then initial
 * files, then the second half of each initial text file's lines, keeping
 * each change only while the failure stays. The
 * differential mode (`deno task conformance --random`) runs it on the first
 * session where a port differs from the reference, so the session it prints
 * is small enough to read.
 *
 * Specified by SPEC.md §10.
 *
 * @module
 */

/**
 * What the minimiser changes: a session's initial files and its steps (a
 * scenario vector is one).
 *
 * @example
 * ```ts
 * import type { Minimisable } from "./minimise_session.ts";
 * const v: Minimisable = { files: { "a.txt": "x\n" }, steps: [{ op: "read", path: "a.txt" }] };
 * ```
 */
export interface Minimisable {
  /** Initial files by name. */
  files: Record<string, unknown>;
  /** The steps, in order. */
  steps: readonly unknown[];
}

/**
 * Options of {@linkcode minimiseSession}.
 *
 * @example
 * ```ts
 * import type { MinimiseOptions } from "./minimise_session.ts";
 * const o: MinimiseOptions<{ files: Record<string, string>; steps: string[] }> = { budget: 50 };
 * ```
 */
export interface MinimiseOptions<V extends Minimisable> {
  /** Most candidates to try (each is one run of the failure check; default 200). */
  budget?: number;
  /**
   * Makes a candidate runnable (drops the steps that lost their meaning, such
   * as a navigation to a label whose step was dropped); default: as it is.
   */
  sanitize?: (v: V) => V;
}

/**
 * The smallest session found that still fails, and how many candidates
 * were tried.
 *
 * @example
 * ```ts
 * import type { Minimised } from "./minimise_session.ts";
 * const m: Minimised<{ files: Record<string, string>; steps: string[] }> = {
 *   vector: { files: {}, steps: ["read"] }, runs: 12 };
 * ```
 */
export interface Minimised<V> {
  /** The smallest failing session found. */
  vector: V;
  /** Candidates tried (each one run of the failure check). */
  runs: number;
}

/**
 * Drops steps, files and lines of files of `vector` while `stillFails` holds, within a
 * budget of candidates. `vector` itself must fail; a candidate with no step
 * left is never tried.
 *
 * @example
 * ```ts
 * import { minimiseSession } from "./minimise_session.ts";
 * const v = { files: { "a.txt": "x", "b.txt": "y" }, steps: ["w", "read", "x", "read", "y"] };
 * const m = await minimiseSession(v, (c) => Promise.resolve(c.steps.includes("x")));
 * m.vector; // { files: {}, steps: ["x"] }
 * ```
 */
export async function minimiseSession<V extends Minimisable>(
  vector: V,
  stillFails: (candidate: V) => Promise<boolean>,
  options: MinimiseOptions<V> = {},
): Promise<Minimised<V>> {
  const budget = options.budget ?? 200;
  const sanitize = options.sanitize ?? ((v: V) => v);
  let cur = vector;
  let runs = 0;
  const seen = new Set<string>([JSON.stringify(cur)]);
  /** Tries a candidate; true (and it becomes the current session) when it still fails. */
  const attempt = async (candidate: V): Promise<boolean> => {
    const c = sanitize(candidate);
    const key = JSON.stringify(c);
    if (c.steps.length === 0 || seen.has(key) || runs >= budget) return false;
    seen.add(key);
    runs++;
    if (!await stillFails(c)) return false;
    cur = c;
    return true;
  };

  for (let size = Math.ceil(cur.steps.length / 2); size >= 1 && runs < budget;) {
    let dropped = false;
    // from the end: late steps are the likeliest to be irrelevant to an earlier difference
    for (let start = cur.steps.length - size; start > -size && runs < budget; start -= size) {
      const from = Math.max(0, start);
      const steps = cur.steps.filter((_, i) => i < from || i >= start + size);
      if (await attempt({ ...cur, steps })) dropped = true;
    }
    if (!dropped) size = size === 1 ? 0 : Math.ceil(size / 2);
    else size = Math.min(size, Math.ceil(cur.steps.length / 2));
  }
  for (const name of Object.keys(cur.files)) {
    if (runs >= budget) break;
    const files = { ...cur.files };
    delete files[name];
    await attempt({ ...cur, files });
  }
  // shorter texts: the first half of a file's lines, again while it still fails
  for (const name of Object.keys(cur.files)) {
    for (;;) {
      const text = cur.files[name];
      if (typeof text !== "string" || runs >= budget) break;
      const lines = text.split("\n");
      if (lines.length < 4) break;
      const half = lines.slice(0, Math.ceil(lines.length / 2));
      const shorter = half.join("\n") + (text.endsWith("\n") ? "\n" : "");
      if (!await attempt({ ...cur, files: { ...cur.files, [name]: shorter } })) break;
    }
  }
  return { vector: cur, runs };
}
