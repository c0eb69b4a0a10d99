/**
 * What `readcache status` reports for a session of either host: the report
 * `formatStatusReport` prints and the fields of `--json` that do not depend
 * on the host. `cli/status.ts` (pi) and `cli/opencode_status.ts` (OpenCode)
 * add their own.
 *
 * @module
 */
import type { ReplayEntry } from "../../src/core/replay.ts";
import {
  describeHeld,
  describeReads,
  describeSavings,
  type NextRead,
  shownPath,
  type StatusReport,
  tallyReads,
} from "../../src/core/status.ts";
import type { FsObjectStore } from "../../src/store/fs_object_store.ts";
import { messageOf } from "./output.ts";

/**
 * The status report of a session: its branch (as replayed), all its entries,
 * what the model holds with the next reads, and the store's figures.
 * `problem` is true when the store cannot be listed or has a problem (exit
 * code 1).
 *
 * @example
 * ```ts ignore
 * const { report, problem } = await statusReport({ sessionFile, cwd, branch, all, held, store });
 * ```
 */
export async function statusReport(input: {
  sessionFile: string;
  cwd: string;
  branch: readonly ReplayEntry[];
  all: readonly ReplayEntry[];
  held: StatusReport["held"];
  store: FsObjectStore;
}): Promise<{ report: StatusReport; problem: boolean }> {
  let store: StatusReport["store"];
  try {
    store = { path: input.store.root, ...(await input.store.stats()) };
  } catch (e) {
    store = { path: input.store.root, error: `cannot be listed (${messageOf(e)})` };
  }
  const report: StatusReport = {
    sessionFile: input.sessionFile,
    cwd: input.cwd,
    branchEntries: input.branch.length,
    compactions: compactionsIn(input.branch),
    held: input.held,
    branch: tallyReads(input.branch),
    session: tallyReads(input.all),
    store,
  };
  return { report, problem: "error" in store || store.problem !== undefined };
}

/**
 * The `--json` fields of a status report both hosts print alike: the
 * branch's and the whole session's figures, what the model holds (with the
 * next read in the host's words) and the store.
 *
 * @example
 * ```ts ignore
 * printJson({ sessionFile, cwd, ...statusJson(report, all, describeNextRead, describeReads) });
 * ```
 */
export function statusJson(
  report: StatusReport,
  all: readonly ReplayEntry[],
  nextWords: (next: NextRead) => string,
  readWords: (reads: StatusReport["branch"]) => string = describeReads,
): Record<string, unknown> & {
  branch: Record<string, unknown>;
  wholeSession: Record<string, unknown>;
} {
  return {
    branch: {
      entries: report.branchEntries,
      compactions: report.compactions,
      reads: report.branch,
      words: { reads: readWords(report.branch), saved: describeSavings(report.branch) },
    },
    wholeSession: {
      entries: all.length,
      compactions: compactionsIn(all),
      reads: report.session,
    },
    held: report.held.map((h) => ({
      path: shownPath(h.pathKey, report.cwd),
      pathKey: h.pathKey,
      scope: h.scope,
      start: h.start,
      end: h.end,
      totalLines: h.totalLines,
      words: describeHeld(shownPath(h.pathKey, report.cwd), h),
      next: h.next === undefined ? null : { ...h.next, words: nextWords(h.next) },
    })),
    store: report.store,
  };
}

/** The compactions among `entries`. */
function compactionsIn(entries: readonly ReplayEntry[]): number {
  return entries.filter((e) => e.kind === "compaction").length;
}
