// Planted-bug harness: proves the oracle can fail. A planted bug is a
// textual edit of a copy of src/ and scripts/ (made under `.oracle-mutants/`
// in the repository, so the copy resolves the same import map and
// node_modules); the mutant's runners are imported dynamically and the oracle
// runs on them next to the unmodified ports on the same sessions.
//
// Adding a planted bug is one entry in PLANTED_BUGS:
//   { name: "overlay-never-dropped", ports: ["reference", "pi"],
//     file: "src/core/knowledge.ts", find: "<exact text>", replace: "<new text>" },
import { cp, mkdir, mkdtemp, readFile, rm, rmdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadPorts, type PortName, PORTS } from "./ports.ts";
import { runSession } from "./run.ts";
import { compileSession, sessionArb } from "./generator.ts";
import fc from "fast-check";
import type { Scenario } from "../../../../src/conformance/vector_schema.ts";
import type { UnsafeAnswer } from "./checker.ts";

/** One textual edit of a file of the copy (path relative to the repository root). */
export interface TextEdit {
  file: string;
  find: string;
  replace: string;
}

/** A planted bug: one edit (`file`/`find`/`replace`) or several (`edits`). */
export type PlantedBug =
  & {
    name: string;
    /** Ports the bug affects (the oracle runs on these). */
    ports: PortName[];
    /** Sessions the test runs before it must have caught the bug (default 200). */
    sessions?: number;
    /** The seed the test samples its sessions from (default the test's own). */
    seed?: number;
  }
  & (TextEdit | { edits: TextEdit[] });

/** The planted bugs every oracle test run must catch. */
export const PLANTED_BUGS: PlantedBug[] = [
  {
    name: "simulator-compaction-is-a-message",
    ports: ["reference"],
    file: "src/conformance/session_simulator.ts",
    find: `      case "compact": {\n`,
    replace: `      case "compact": {\n        if (step.op === "compact") {\n` +
      `          append({ kind: "other" });\n          return;\n        }\n`,
  },
  {
    name: "replay-compaction-keeps-trust",
    ports: ["reference", "pi"],
    edits: [
      {
        file: "src/core/replay.ts",
        find: `    if (e.kind === "compaction") return { startIndex: i + 1, compactionId: e.id };`,
        replace: `    if (e.kind === "compaction") return { startIndex: 0, compactionId: e.id };`,
      },
      {
        file: "src/core/replay.ts",
        find: `        this.#reset({ startIndex: i + 1, compactionId: e.id });`,
        replace: `        this.#boundary = { startIndex: 0, compactionId: e.id };`,
      },
      // the pi adapter's incremental sync stops walking up the branch at a compaction
      {
        file: "src/core/knowledge.ts",
        find: `      if (e.kind === "compaction") break;\n`,
        replace: ``,
      },
    ],
  },
  // the three below were written against the core as of commit 81f5f34
  {
    name: "newest-view-check-off",
    ports: ["reference", "pi"],
    file: "src/core/decision.ts",
    find: `  const conflict = newestViewConflict(query, linesOf(base.hash)!, linesOf);`,
    replace: `  const conflict = false ? newestViewConflict(query, [], linesOf) : undefined;`,
  },
  {
    name: "requested-instead-of-shown-scope",
    ports: ["reference", "pi"],
    file: "src/core/decision.ts",
    find: `  const end = shown.shownEnd;`,
    replace:
      `  const end = Math.min(totalLines, input.limit ? start + input.limit - 1 : totalLines);`,
  },
  {
    name: "interval-coverage-ignores-content",
    ports: ["reference", "pi"],
    file: "src/core/view.ts",
    find: `      if (v.hash !== hash) return false;\n`,
    replace: ``,
  },
  {
    name: "range-diff-slice-line-numbers",
    ports: ["reference", "pi"],
    file: "src/core/decision.ts",
    find: `        p.start - 1,\n`,
    replace: `        0,\n`,
  },
  {
    name: "overlay-never-dropped",
    ports: ["reference", "pi"],
    file: "src/core/knowledge.ts",
    find:
      `if (!anchored || o.anchorIndex < barrier || o.anchorIndex >= branch.length) return false;`,
    replace: `if (o.anchorIndex >= branch.length) return false;`,
  },
  // SPEC §6.5: a saved replay is continued only from its own entry, on the branch (the pi port
  // saves one at every quiet read of a file-backed session)
  {
    name: "saved-replay-continued-off-branch",
    ports: ["pi"],
    file: "src/core/replay.ts",
    find: `    const continues = this.#consumed <= branch.length &&`,
    replace: `    const continues = this.#restoredBefore > 0 || this.#consumed <= branch.length &&`,
  },
  // SPEC §5.8: a write call that never got a result leaves its file unknown after its turn
  {
    name: "unanswered-write-ignored",
    ports: ["reference", "pi"],
    file: "src/core/replay.ts",
    find: `    for (const call of this.#pending.values()) this.#unknownFromTurnStart(call);\n`,
    replace: `    for (const call of this.#pending.values()) if (call === undefined) break;\n`,
  },
  // SPEC §5.8: a read of a file whose write is pending in the same turn is served in full
  {
    name: "pending-write-ignored",
    ports: ["reference", "pi"],
    file: "src/shell/read_service.ts",
    find:
      `export function writeInFlight(call: ReadCall, pending: readonly ReadCall[]): boolean {\n`,
    replace:
      `export function writeInFlight(call: ReadCall, pending: readonly ReadCall[]): boolean {\n` +
      `  if (call !== undefined) return false;\n`,
  },
  // SPEC §5.9: an edit result is the model's belief; with the old rule it changed nothing
  {
    name: "edit-changes-nothing",
    ports: ["reference", "pi"],
    file: "src/core/replay.ts",
    find: `      } else if (e.kind === "changed") {\n` +
      `        if (e.callId !== undefined) this.#pending.delete(e.callId);\n`,
    replace: `      } else if (e.kind === "changed") {\n` +
      `        if (e.callId !== undefined) this.#pending.delete(e.callId);\n` +
      `        if (e.kind === "changed") continue;\n`,
  },
  // SPEC §5.9: only pi's exact match makes a belief; a normalised match rewrote the whole file
  // (since several edits of one message are generated, the first session of the test's seed it
  // showed in was session 391; since chains of bash steps are generated too, session 1049: so
  // the test samples from seed 20251125, which shows it in session 99 on both ports)
  {
    name: "belief-without-exact-match",
    ports: ["reference", "pi"],
    sessions: 200,
    seed: 20_251_125,
    file: "src/core/edit.ts",
    find: `  if ("error" in m || m.fuzzy) return undefined;\n`,
    replace: `  if ("error" in m) return undefined;\n`,
  },
  // SPEC §5.9: a read of a file an edit call of the same message changes is served in full
  {
    name: "edit-pending-in-same-message-ignored",
    ports: ["reference", "pi"],
    edits: [
      {
        file: "src/adapters/pi/branch.ts",
        find: `new Set(["write", "edit"]);`,
        replace: `new Set(["write"]);`,
      },
      {
        file: "src/conformance/session_simulator.ts",
        find: `if ((s.op === "writeTool" || s.op === "editTool") && call) {`,
        replace: `if (s.op === "writeTool" && call) {`,
      },
    ],
  },
  // SPEC §8.4: a line is held only when its newest views show the current line's text; with
  // the comparison dropped, any line both newest views show from one content counts as held
  {
    name: "partial-held-by-position",
    ports: ["reference", "pi", "pi-no-events"],
    file: "src/core/decision.ts",
    find:
      `    const ok = h !== null && h === hashAt(name, n) && linesOf(h)?.[n - 1] === lines[n - 1] &&\n`,
    replace: `    const ok = h !== null && h === hashAt(name, n) &&\n`,
  },
  // SPEC §5.10: a tool result's record lists the files that differ from the model's newest view;
  // with the list ignored in replay, a file a command showed changed keeps the trust of the
  // view before (read F; changed outside; `cat F`; put back; read F: `unchanged`)
  {
    name: "tool-changed-list-ignored",
    ports: ["reference", "pi"],
    file: "src/core/replay.ts",
    find: `          for (const id of meta.changed) {\n`,
    replace: `          for (const id of meta.changed.slice(0, 0)) {\n`,
  },
  // SPEC §5.10: a read result of a message that also ran an opaque command gives no trust (the
  // command may have shown the file at any point of the message); trusted, the read is the newest
  // view even where what the command showed differs (a change between the two)
  {
    name: "read-in-opaque-message-trusted",
    ports: ["reference", "pi"],
    sessions: 300,
    file: "src/core/replay.ts",
    find: `        const meta = e.meta === undefined || this.#turnOpaque\n`,
    replace: `        const meta = e.meta === undefined\n`,
  },
  // SPEC §5.10: while an opaque call of the current turn has no result, reads are served in full;
  // with the check gone, a read in the message of a command is answered from the cache
  {
    name: "served-while-command-in-flight",
    ports: ["reference", "pi"],
    file: "src/shell/read_service.ts",
    find: `    bypass: req.bypass_cache === true || knowledge.opaqueInFlight() ||\n`,
    replace: `    bypass: req.bypass_cache === true ||\n`,
  },
  // SPEC §5.10 (recognised shell views): what `sed -n 'A,Bp' F` printed is a view of lines A-B;
  // recorded as a view of the whole file, lines it never printed count as seen afresh
  {
    name: "sed-range-view-recorded-as-whole-file",
    ports: ["reference", "pi"],
    seed: 3,
    file: "src/core/shell_view.ts",
    find: `        ? [{ start: shape.start, end: shape.end > total ? TO_END : last }]\n`,
    replace: `        ? [{ start: 1, end: TO_END }]\n`,
  },
  // SPEC §5.10 (printed while changing): a file a command printed between two of its changes is
  // unknown at its result when the call touched it; with the rule off, a file put back before the
  // result (`cat P && cp K P` after another process changed P; `cp P K && sed -i ... P && cat P &&
  // cp K P`) agrees with the view before the call and is answered `unchanged`, though what the
  // model saw last is what `cat` printed
  {
    name: "printed-while-changing-ignored",
    ports: ["reference", "pi", "opencode"],
    file: "src/shell/tool_result.ts",
    find:
      `    if (printed(id) && (call.snapshot === undefined || await touchedSince(call.snapshot, id))) {`,
    replace:
      `    if (false && printed(id) && (call.snapshot === undefined || await touchedSince(call.snapshot, id))) {`,
  },
  // the OpenCode plugin's partial answer (SPEC §11.8) names the line before each held stretch as
  // held too: a line the model lacks, or holds otherwise, is claimed unchanged
  {
    name: "opencode-partial-claims-line-before",
    ports: ["opencode"],
    file: "src/adapters/opencode/answer.ts",
    find: `.map((h) => ({ start: Math.max(h.start, view.start), end: Math.min(h.end, view.end) }))`,
    replace:
      `.map((h) => ({ start: Math.max(h.start - 1, view.start), end: Math.min(h.end, view.end) }))`,
  },
  // the OpenCode plugin: a finished compaction summary is no barrier (SPEC §6.1), so reads the
  // model lost to compaction still back cached answers; caught through the OpenCode port
  {
    name: "opencode-summary-not-a-barrier",
    ports: ["opencode"],
    file: "src/adapters/opencode/branch.ts",
    find:
      `      return { kind: "entries", entries: [{ id: mid, parentId: null, kind: "compaction" }] };\n`,
    replace:
      `      return { kind: "entries", entries: [{ id: mid, parentId: null, kind: "other" }] };\n`,
  },
];

/** The repository root (four levels above this file). */
export const REPO_ROOT: string = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "..",
  "..",
);

/** A copy of src/ and scripts/ with a planted bug. */
export interface Mutant {
  dir: string;
  /** Removes the copy. */
  cleanup(): Promise<void>;
}

/**
 * Copies `src/` and `scripts/` of the repository to a new directory under
 * `.oracle-mutants/` and applies the bug's edits. Throws when a `find` text
 * does not occur exactly once (the planted bug no longer matches the code).
 */
export async function makeMutant(bug: PlantedBug, root: string = REPO_ROOT): Promise<Mutant> {
  const parent = join(root, ".oracle-mutants");
  await mkdir(parent, { recursive: true });
  const dir = await mkdtemp(join(parent, `${bug.name}-`));
  // the copy, then `.oracle-mutants/` itself once no other copy is in it (another run's stays)
  const cleanup = async () => {
    await rm(dir, { recursive: true, force: true });
    await rmdir(parent).catch(() => {});
  };
  try {
    await cp(join(root, "src"), join(dir, "src"), { recursive: true });
    await cp(join(root, "scripts"), join(dir, "scripts"), { recursive: true });
    const edits = "edits" in bug ? bug.edits : [bug];
    for (const e of edits) {
      const p = join(dir, e.file);
      const text = await readFile(p, "utf8");
      const count = text.split(e.find).length - 1;
      if (count !== 1) {
        throw new Error(
          `planted bug ${bug.name}: the text to replace occurs ${count} times in ${e.file} ` +
            `(expected exactly once):\n${e.find}`,
        );
      }
      await writeFile(p, text.replace(e.find, () => e.replace));
    }
  } catch (e) {
    await cleanup();
    throw e;
  }
  return { dir, cleanup };
}

/** An unsafe answer the mutant gives where the unmodified code does not. */
export interface NewUnsafe {
  port: PortName;
  session: number;
  vector: Scenario;
  unsafe: UnsafeAnswer;
}

/** What the oracle found on a mutant. */
export interface MutantReport {
  bug: string;
  /** Per port: sessions run, and unsafe answers on the mutant and on the unmodified code. */
  counts: Record<string, { sessions: number; mutant: number; original: number }>;
  /** Unsafe answers (session, step, category) the unmodified code does not give. */
  introduced: NewUnsafe[];
}

/**
 * Runs the oracle's sessions on the mutant and on the unmodified ports of
 * this checkout, and reports the unsafe answers the planted bug introduced
 * (so the check still means something while the unmodified code has unsafe
 * answers of its own).
 */
export async function runMutant(
  bug: PlantedBug,
  options: {
    sessions: number;
    seed: number;
    /** Stop a port after this many introduced unsafe answers (default: run every session). */
    stopAfter?: number;
    root?: string;
    keep?: boolean;
  },
): Promise<MutantReport> {
  const mutant = await makeMutant(bug, options.root);
  try {
    const ports = await loadPorts(mutant.dir);
    const samples = fc.sample(sessionArb(), { seed: options.seed, numRuns: options.sessions });
    const report: MutantReport = { bug: bug.name, counts: {}, introduced: [] };
    for (const port of bug.ports) {
      const counts = { sessions: 0, mutant: 0, original: 0 };
      for (const [i, s] of samples.entries()) {
        const found = report.introduced.filter((x) => x.port === port).length;
        if (options.stopAfter !== undefined && found >= options.stopAfter) break;
        counts.sessions++;
        const vector = compileSession(s, `oracle-mutant-${i}`);
        const m = await runSession(ports[port], vector);
        const o = await runSession(PORTS[port], vector);
        counts.original += o.ok ? o.unsafe.length : 0;
        if (!m.ok) continue;
        counts.mutant += m.unsafe.length;
        const before = new Set(o.ok ? o.unsafe.map((u) => `${u.step} ${u.category}`) : []);
        for (const u of m.unsafe) {
          if (!before.has(`${u.step} ${u.category}`)) {
            report.introduced.push({ port, session: i, vector, unsafe: u });
          }
        }
      }
      report.counts[port] = counts;
    }
    return report;
  } finally {
    if (!options.keep) await mutant.cleanup();
  }
}
