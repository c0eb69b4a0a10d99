// Random pi sessions as scenario vectors. fast-check generates an abstract
// session (file shapes plus a list of chunks: single steps, whole turns, and
// patterns that tend to leave the model with a stale view); `compileSession`
// turns it into a concrete vector against the oracle's own file model
// (edits are computed from the current content, ranges from the current
// line count, reverts pick an earlier content, the content of a write call
// is a fresh version, the current content or an edit of it, now and then
// with a lone surrogate; the replacements of an edit call are taken from the
// current content, mostly 1-3 lines the model was shown, some typed for
// pi's normalised match, some not in the file or in it twice; a change by
// someone else after an edit call can revert it, revert part of it or edit
// further; a `bash` call runs one of a family of commands over the session's
// files, typed as the shell takes them (views: `cat`, `cat -n`, `sed -n`,
// `head`, `tail`, `cat | head`, `grep -n` with a word present or absent;
// changes: `sed -i` on a line a read showed or on one none did, `>>`, `>`,
// `cp`, `rm`; `true`; chains of views and changes joined by `&&` or `;`, in
// either order, some printing the file between a keep copy `cp P K` (taken
// in the same command or by an earlier one) and the copy back `cp K P`;
// and one the oracle reads the strictest way), run on the
// file model; a `grep` call searches a word of the file or of none, in the
// cwd, the file or its directory; patterns put them between a read, a change
// by someone else, its revert and the read again, or in one message with a
// read, a write or an edit of the same file), and
// `sanitizeScenario` drops the steps a runner could not execute (a label
// before the first entry, a navigation to a label outside the current
// session, a range refresh of a missing file, a storeFault before anything
// was served, a write through looping links, ...).
import fc from "fast-check";
import {
  type Scenario,
  ScenarioSchema,
  type ScenarioStep,
  ScenarioStepSchema,
} from "../../../../src/conformance/vector_schema.ts";
import {
  bytesContent,
  contentBytes,
  editToolArgs,
  fileText,
  FsModel,
  nameOf,
  relativeTarget,
  type Replacement,
  resolveRead,
  strictText,
  type VectorContent,
  writeNameOf,
} from "./fs_model.ts";
import { isCallStep, resultLands, SessionTree, startsTurn, turnCalls } from "./session_model.ts";

/** Whether the scenario schema knows the `symlink` step (it is being added). */
export const SCHEMA_HAS_SYMLINK: boolean = ScenarioStepSchema.safeParse({
  op: "symlink",
  path: "link.txt",
  target: "a.txt",
}).success;

/** Generator switches. */
export interface GeneratorOptions {
  /** Generate `symlink` steps (default: when the schema has them). */
  symlinks?: boolean;
  /** Most chunks per session (default 14). */
  maxChunks?: number;
  /** Generate unpersisted (`persist: false`) reads (default true). */
  inFlight?: boolean;
  /** Generate `bash` and `grep` steps (default true). */
  tools?: boolean;
}

const WORDS = ["alpha", "beta", "gamma", "delta", "omega"];
const SMALL_NAMES = ["a.txt", "b.txt", "sub/c.txt"];
const LINK_NAMES = ["link.txt", "sub/ln.txt"];
/** Files no session starts with: only a write call creates them (name index 300+k). */
const NEW_NAMES = ["new.txt", "sub/new.txt"];

interface SmallSpec {
  lines: number;
  eol: boolean;
  /** CRLF line endings. */
  crlf?: boolean;
  /** A UTF-8 BOM. */
  bom?: boolean;
  /** Smart quotes, dashes and trailing spaces on some lines (what pi's normalised match rewrites). */
  fancy?: boolean;
}
interface BigSpec {
  lines: number;
  wide: boolean;
  eol: boolean;
}

/** File shapes of a session. */
export interface FilesSpec {
  count: number;
  small: SmallSpec[];
  big: BigSpec | null;
  huge: boolean;
  initialLink: boolean;
}

/** A read range, relative to the file's length when compiled. */
export type ARange =
  | { k: "full" }
  | { k: "window"; at: number; len: number }
  | { k: "offset"; at: number }
  | { k: "limit"; len: number }
  | { k: "past"; extra: number }
  | { k: "again"; i: number }
  | { k: "overlap"; i: number; shift: number; grow: number }
  | { k: "trunc"; v: number }
  | { k: "shorthand"; at: number; len: number };

/** A file edit, computed from the current content when compiled. */
export type AEdit =
  | { k: "revert"; i: number }
  | { k: "change"; at: number; w: number; boundary: boolean }
  | { k: "append"; n: number; w: number }
  | { k: "insert"; at: number; w: number }
  | { k: "delete"; at: number }
  | { k: "eol" }
  | { k: "binary"; at: number }
  | { k: "restore" }
  /** The content before the model's last edit call of the file. */
  | { k: "unedit" }
  /** The model's last edit of the file with one of its changes undone. */
  | { k: "partial"; i: number }
  /** The model's last edit of the file, then more on its first new line. */
  | { k: "further"; w: number }
  /** The first line with a curly `it’s` changed (it no longer matches its ASCII twin). */
  | { k: "uncurl" };

/** One read. */
export interface ARead {
  f: number;
  form: number;
  range: ARange;
  persist: boolean;
  bypass: boolean;
}

/** What a write call writes, computed from the current content when compiled. */
export type AWriteContent =
  /** The current content with an edit (a binary edit becomes a change: the tool writes text). */
  | { k: "edit"; e: AEdit }
  /** A fresh version: `lines` lines of the file's kind, words shifted by `shift`. */
  | { k: "fresh"; lines: number; shift: number; eol: boolean }
  /** The current content as it is. */
  | { k: "same" }
  /** The current content with a lone surrogate on one line (pi writes U+FFFD in its place). */
  | { k: "lone"; at: number };

/** One call of pi's `write` tool (`f` picks a name like a read's, 300+k a new file). */
export interface AWrite {
  f: number;
  form: number;
  c: AWriteContent;
  persist: boolean;
  /** Its result comes with the next call of its turn that returns at once (`persist: "deferred"`). */
  deferred?: boolean;
}

/** One replacement of an edit call, computed from the current content when compiled. */
export interface ARep {
  /**
   * `exact` whole lines as the file has them, `part` the start of a line,
   * `fuzzy` lines typed for pi's normalised match (ASCII quotes and dashes,
   * no trailing spaces, or a trailing space too many), `missing` text not in
   * the file, `dup` a word most lines have, `stale` a line of an earlier
   * content, `twin` the ASCII `it's W` of a line whose curly twin `it’s W`
   * is on the line before (pi counts them together once normalised).
   */
  k: "exact" | "part" | "fuzzy" | "missing" | "dup" | "stale" | "twin";
  at: number;
  /** Lines of the old text. */
  n: number;
  /** Lines of the new text (0: the empty string). */
  add: number;
  w: number;
  /** The old and new text end with a line break. */
  nl: boolean;
}

/** One call of pi's `edit` tool (`f` picks a name like a write's). */
export interface AEditCall {
  f: number;
  form: number;
  /** 0-6 an `edits` list, 7 the list as a JSON string, 8 the legacy top-level `oldText`/`newText`, 9 both. */
  shape: number;
  reps: ARep[];
  /** Place the replacements in lines a read showed (else anywhere in the file). */
  seen: boolean;
  /** Place them in the lines of this read (0: the newest), not of any recent one. */
  inRead?: number;
  persist: boolean;
  /** Its result comes with the next call of its turn that returns at once (`persist: "deferred"`). */
  deferred?: boolean;
}

/**
 * The shell commands a `bash` step runs (see {@linkcode Compiler.bash}):
 * views of a file, commands that change one, `true`, chains of views and
 * changes joined by `&&` or `;` (a view V of the file, a change C of it, a
 * keep copy `cp P K` and the restore `cp K P`; see
 * {@linkcode Compiler.chainCommand}), a lone keep copy, and one the oracle
 * reads the strictest way (`sed -i && nl`).
 */
export const BASH_FORMS = [
  "cat",
  "cat -n",
  "sed -n",
  "head",
  "tail",
  "cat | head",
  "grep -n",
  "sed -i",
  "printf >>",
  "echo >",
  "cp",
  "rm",
  "true",
  "sed -i && cat",
  // chains (14-19)
  "V && C",
  "C && V",
  "V && C && V",
  "keep && C && V && restore",
  "V && restore",
  "C && V && restore",
  // the strictest reading (20), a keep copy alone (21)
  "sed -i && nl",
  "keep",
] as const;

/** The chains of {@linkcode BASH_FORMS}, as parts: `V` a view, `C` a change, `K` keep, `R` restore. */
const CHAIN_PLANS: Partial<Record<typeof BASH_FORMS[number], string>> = {
  "V && C": "VC",
  "C && V": "CV",
  "V && C && V": "VCV",
  "keep && C && V && restore": "KCVR",
  "V && restore": "VR",
  "C && V && restore": "CVR",
};

/** The views a chain prints with (`ABash.v`; `cat` most, as it shows what a change did). */
const CHAIN_VIEWS = [
  "cat",
  "cat",
  "cat",
  "cat",
  "cat -n",
  "sed -n",
  "head",
  "tail",
  "cat | head",
  "grep -n",
] as const;

/** The changes a chain makes (`ABash.c`; `sed -i` most). */
const CHAIN_CHANGES = ["sed -i", "sed -i", "sed -i", "printf >>", "cp", "echo >"] as const;

/** One call of pi's `bash` tool (`f` picks a name like a read's; `g` the source of `cp`). */
export interface ABash {
  /** Index into {@linkcode BASH_FORMS}. */
  cmd: number;
  f: number;
  g: number;
  /** How its paths are typed (see {@linkcode shellPath}). */
  form: number;
  /** Where a range or count falls, relative to the file's length (0-999). */
  a: number;
  len: number;
  w: number;
  /** `sed -i` on a line a read showed (else on one none did); `grep -n` for a word in the file. */
  held: boolean;
  /** A chain's view (index into {@linkcode CHAIN_VIEWS}). */
  v?: number;
  /** A chain's change (index into {@linkcode CHAIN_CHANGES}). */
  c?: number;
  /** How a chain's parts join: 0-2 all `&&`, 3 all `;`, 4 `&&` then `;`, 5 `;` then `&&`. */
  join?: number;
  persist: boolean;
  /** Its result comes with the next call of its turn that returns at once (`persist: "deferred"`). */
  deferred?: boolean;
  /** A result without a readcache record (`record: false`). */
  noRecord?: boolean;
}

/** One call of pi's `grep` tool. */
export interface AGrep {
  f: number;
  w: number;
  /** The pattern is a word of the file (else a word in no file). */
  present: boolean;
  /**
   * The pattern `[0-9]`: every numbered line, so rows that touch and, past
   * 100 matches, output pi cuts (also when `present` with form 3 and an even
   * word).
   */
  wide?: boolean;
  /** 0 no path (the cwd), 1 the file, 2 its directory. */
  where: number;
  form: number;
  persist: boolean;
  deferred?: boolean;
  noRecord?: boolean;
}

/** One abstract step. */
export type AStep =
  | ({ t: "read" } & ARead)
  | ({ t: "writeTool" } & AWrite)
  | ({ t: "editTool" } & AEditCall)
  | ({ t: "bash" } & ABash)
  | ({ t: "grep" } & AGrep)
  | { t: "edit"; f: number; e: AEdit }
  | { t: "remove"; f: number }
  | { t: "symlink"; l: number; target: number }
  | { t: "message" }
  | { t: "label"; n: number }
  | { t: "navigate"; n: number }
  | { t: "compact" }
  | { t: "fork" }
  | { t: "restart" }
  | { t: "invalidate"; f: number; form: number; range: ARange }
  | { t: "storeFault"; f: number; fault: "delete" | "corrupt" };

/** An abstract session: what fast-check generates and shrinks. */
export interface ASession {
  files: FilesSpec;
  chunks: AStep[][];
}

// ---------------------------------------------------------------- arbitraries

const at = fc.integer({ min: 0, max: 999 });
const word = fc.integer({ min: 0, max: WORDS.length - 1 });
const fileIx = fc.nat({ max: 6 });

const rangeArb: fc.Arbitrary<ARange> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ k: "full" as const }) },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant("window" as const),
      at,
      len: fc.integer({ min: 1, max: 12 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("offset" as const), at }) },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("limit" as const),
      len: fc.integer({ min: 1, max: 12 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ k: fc.constant("past" as const), extra: fc.nat({ max: 3 }) }),
  },
  { weight: 3, arbitrary: fc.record({ k: fc.constant("again" as const), i: fc.nat({ max: 7 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant("overlap" as const),
      i: fc.nat({ max: 7 }),
      shift: fc.integer({ min: -4, max: 4 }),
      grow: fc.integer({ min: -2, max: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("trunc" as const), v: fc.nat({ max: 5 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("shorthand" as const),
      at,
      len: fc.integer({ min: 0, max: 8 }),
    }),
  },
);

const editArb: fc.Arbitrary<AEdit> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ k: fc.constant("revert" as const), i: fc.nat({ max: 3 }) }) },
  {
    weight: 5,
    arbitrary: fc.record({
      k: fc.constant("change" as const),
      at,
      w: word,
      boundary: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant("append" as const),
      n: fc.integer({ min: 1, max: 3 }),
      w: word,
    }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant("insert" as const), at, w: word }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("delete" as const), at }) },
  { weight: 1, arbitrary: fc.constant({ k: "eol" as const }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("binary" as const), at }) },
  { weight: 1, arbitrary: fc.constant({ k: "restore" as const }) },
  { weight: 1, arbitrary: fc.constant({ k: "unedit" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ k: fc.constant("partial" as const), i: fc.nat({ max: 2 }) }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("further" as const), w: word }) },
);

/** A change by someone else right after an edit call: mostly about that edit. */
const postEditArb: fc.Arbitrary<AEdit> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ k: "unedit" as const }) },
  {
    weight: 2,
    arbitrary: fc.record({ k: fc.constant("partial" as const), i: fc.nat({ max: 2 }) }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant("further" as const), w: word }) },
  { weight: 2, arbitrary: editArb },
);

const readArb = (persist: fc.Arbitrary<boolean>): fc.Arbitrary<ARead> =>
  fc.record({
    f: fileIx,
    form: fc.nat({ max: 9 }),
    range: rangeArb,
    persist,
    bypass: fc.nat({ max: 19 }).map((n) => n === 0),
  });

const persistMostly = fc.nat({ max: 4 }).map((n) => n !== 0);

const writeContentArb: fc.Arbitrary<AWriteContent> = fc.oneof(
  { weight: 5, arbitrary: editArb.map((e) => ({ k: "edit" as const, e })) },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant("fresh" as const),
      lines: fc.oneof(
        { weight: 12, arbitrary: fc.integer({ min: 1, max: 40 }) },
        { weight: 1, arbitrary: fc.integer({ min: 1995, max: 2080 }) },
      ),
      shift: fc.nat({ max: 4 }),
      eol: fc.nat({ max: 4 }).map((n) => n !== 0),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ k: "same" as const }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("lone" as const), at }) },
);

/** A name to write: mostly one a read could pick, sometimes a file no session starts with. */
const writeFileIx = fc.oneof(
  { weight: 6, arbitrary: fileIx },
  { weight: 1, arbitrary: fc.constantFrom(300, 301) },
);

const writeArb = (persist: fc.Arbitrary<boolean>): fc.Arbitrary<AWrite> =>
  fc.record({ f: writeFileIx, form: fc.nat({ max: 9 }), c: writeContentArb, persist });

const repArb: fc.Arbitrary<ARep> = fc.record({
  k: fc.oneof(
    { weight: 14, arbitrary: fc.constant("exact" as const) },
    { weight: 2, arbitrary: fc.constant("part" as const) },
    { weight: 2, arbitrary: fc.constant("fuzzy" as const) },
    { weight: 1, arbitrary: fc.constant("missing" as const) },
    { weight: 1, arbitrary: fc.constant("dup" as const) },
    { weight: 1, arbitrary: fc.constant("stale" as const) },
  ),
  at,
  n: fc.oneof(
    { weight: 3, arbitrary: fc.constant(1) },
    { weight: 2, arbitrary: fc.integer({ min: 2, max: 3 }) },
  ),
  add: fc.oneof(
    { weight: 4, arbitrary: fc.constant(1) },
    { weight: 2, arbitrary: fc.integer({ min: 2, max: 3 }) },
    { weight: 1, arbitrary: fc.constant(0) },
  ),
  w: word,
  nl: fc.nat({ max: 3 }).map((n) => n === 0),
});

/** A name to edit: mostly a regular file, sometimes any name, now and then one that may not exist. */
const editFileIx = fc.oneof(
  { weight: 8, arbitrary: fileIx.map((i) => 100 + i) },
  { weight: 3, arbitrary: fileIx },
  { weight: 1, arbitrary: fc.constantFrom(300, 301) },
);

const editCallArb = (persist: fc.Arbitrary<boolean>): fc.Arbitrary<AEditCall> =>
  fc.record({
    f: editFileIx,
    form: fc.nat({ max: 9 }),
    shape: fc.nat({ max: 9 }),
    reps: fc.oneof(
      { weight: 6, arbitrary: fc.array(repArb, { minLength: 1, maxLength: 1 }) },
      { weight: 2, arbitrary: fc.array(repArb, { minLength: 2, maxLength: 2 }) },
      { weight: 1, arbitrary: fc.array(repArb, { minLength: 3, maxLength: 3 }) },
    ),
    seen: fc.nat({ max: 4 }).map((n) => n !== 0),
    persist,
  });

/** Mostly views, then changes, then chains; the strictest-reading command now and then. */
const bashCmd = fc.oneof(
  { weight: 24, arbitrary: fc.integer({ min: 0, max: 6 }) },
  { weight: 6, arbitrary: fc.constant(7) },
  { weight: 4, arbitrary: fc.integer({ min: 8, max: 10 }) },
  { weight: 1, arbitrary: fc.constant(11) },
  { weight: 2, arbitrary: fc.constant(12) },
  { weight: 2, arbitrary: fc.constant(13) },
  { weight: 6, arbitrary: fc.integer({ min: 14, max: 19 }) },
  { weight: 2, arbitrary: fc.constant(20) },
  { weight: 1, arbitrary: fc.constant(21) },
);

const bashArb = (persist: fc.Arbitrary<boolean>): fc.Arbitrary<ABash> =>
  fc.record({
    cmd: bashCmd,
    f: fileIx,
    g: fileIx,
    form: fc.nat({ max: 3 }),
    a: at,
    len: fc.integer({ min: 1, max: 12 }),
    w: word,
    held: fc.nat({ max: 3 }).map((n) => n !== 0),
    v: fc.nat({ max: CHAIN_VIEWS.length - 1 }),
    c: fc.nat({ max: CHAIN_CHANGES.length - 1 }),
    join: fc.nat({ max: 5 }),
    persist,
    noRecord: fc.nat({ max: 11 }).map((n) => n === 0),
  });

const grepArb = (persist: fc.Arbitrary<boolean>): fc.Arbitrary<AGrep> =>
  fc.record({
    f: fileIx,
    w: word,
    present: fc.nat({ max: 3 }).map((n) => n !== 0),
    where: fc.nat({ max: 2 }),
    form: fc.nat({ max: 3 }),
    persist,
    noRecord: fc.nat({ max: 11 }).map((n) => n === 0),
  });

const stepArb = (o: Required<GeneratorOptions>): fc.Arbitrary<AStep> =>
  fc.oneof(
    { weight: 10, arbitrary: readArb(persistMostly).map((r) => ({ t: "read" as const, ...r })) },
    {
      weight: 7,
      arbitrary: writeArb(persistMostly).map((w) => ({ t: "writeTool" as const, ...w })),
    },
    {
      weight: 6,
      arbitrary: editCallArb(persistMostly).map((e) => ({ t: "editTool" as const, ...e })),
    },
    { weight: 6, arbitrary: fc.record({ t: fc.constant("edit" as const), f: fileIx, e: editArb }) },
    {
      weight: o.tools ? 22 : 0,
      arbitrary: bashArb(persistMostly).map((b) => ({ t: "bash" as const, ...b })),
    },
    {
      weight: o.tools ? 7 : 0,
      arbitrary: grepArb(persistMostly).map((g) => ({ t: "grep" as const, ...g })),
    },
    { weight: 1, arbitrary: fc.record({ t: fc.constant("remove" as const), f: fileIx }) },
    {
      weight: o.symlinks ? 2 : 0,
      arbitrary: fc.record({
        t: fc.constant("symlink" as const),
        l: fc.nat({ max: 1 }),
        target: fc.nat({ max: 6 }),
      }),
    },
    { weight: 2, arbitrary: fc.constant({ t: "message" as const }) },
    {
      weight: 3,
      arbitrary: fc.record({ t: fc.constant("label" as const), n: fc.nat({ max: 2 }) }),
    },
    {
      weight: 3,
      arbitrary: fc.record({ t: fc.constant("navigate" as const), n: fc.nat({ max: 2 }) }),
    },
    { weight: 2, arbitrary: fc.constant({ t: "compact" as const }) },
    { weight: 2, arbitrary: fc.constant({ t: "fork" as const }) },
    { weight: 2, arbitrary: fc.constant({ t: "restart" as const }) },
    {
      weight: 2,
      arbitrary: fc.record({
        t: fc.constant("invalidate" as const),
        f: fileIx,
        form: fc.nat({ max: 9 }),
        range: fc.oneof(
          fc.constant({ k: "full" as const }),
          fc.record({ k: fc.constant("again" as const), i: fc.nat({ max: 7 }) }),
          fc.record({
            k: fc.constant("window" as const),
            at,
            len: fc.integer({ min: 1, max: 12 }),
          }),
        ),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        t: fc.constant("storeFault" as const),
        f: fileIx,
        fault: fc.constantFrom("delete" as const, "corrupt" as const),
      }),
    },
  );

const full: ARange = { k: "full" };
const rd = (f: number, range: ARange, persist = true, form = 0): AStep => ({
  t: "read",
  f,
  form,
  range,
  persist,
  bypass: false,
});
const change = (f: number, a: number, w: number): AStep => ({
  t: "edit",
  f,
  e: { k: "change", at: a, w, boundary: false },
});
const revert = (f: number): AStep => ({ t: "edit", f, e: { k: "revert", i: 0 } });
const wr = (f: number, c: AWriteContent, persist = true, form = 0): AStep => ({
  t: "writeTool",
  f,
  form,
  c,
  persist,
});

/** Patterns before this number read and edit; from it on they write with the write tool. */
const WRITE_PATTERNS = 9;
/** The write patterns. */
const WRITE_PATTERN_COUNT = 5;

/** Patterns that tend to leave the model with a stale or missing view. */
const patternArb = (o: Required<GeneratorOptions>): fc.Arbitrary<AStep[]> =>
  fc.record({
    p: fc.nat({ max: WRITE_PATTERNS + WRITE_PATTERN_COUNT + (o.symlinks ? 0 : -1) }),
    f: fileIx,
    g: fileIx,
    a: at,
    w: word,
    len: fc.integer({ min: 1, max: 6 }),
    shift: fc.integer({ min: -4, max: 4 }),
    form: fc.nat({ max: 9 }),
    n: fc.nat({ max: 2 }),
    c: writeContentArb,
    nf: fc.nat({ max: 3 }).map((n) => n === 0),
    inFlight: fc.oneof(fc.constant(0), fc.nat({ max: 63 })),
    sameRange: fc.boolean(),
  }).map(({ p, inFlight, sameRange, ...rest }) =>
    withInFlight(pattern(p, rest), inFlight, sameRange)
  );

/**
 * Puts an unpersisted read (of the whole file, or of the same range) before
 * the reads whose bit is set in `mask`: one turn of two calls, whose first
 * result never reaches the session.
 */
function withInFlight(steps: AStep[], mask: number, sameRange: boolean): AStep[] {
  const out: AStep[] = [];
  let k = 0;
  for (const s of steps) {
    if (s.t === "read" && s.persist && ((mask >> k++) & 1) === 1) {
      out.push({ ...s, persist: false, range: sameRange ? s.range : full });
    }
    out.push(s);
  }
  return out;
}

function pattern(
  p: number,
  { f: fi, g: gi, a, w, len, shift, form, n, c, nf }: {
    f: number;
    g: number;
    a: number;
    w: number;
    len: number;
    shift: number;
    form: number;
    n: number;
    c: AWriteContent;
    nf: boolean;
  },
): AStep[] {
  // 100+i: the i-th regular file (same file for reads and edits); 200: the first link;
  // 300+i: a file only a write call creates
  const f = 100 + fi;
  const g = 100 + gi;
  const wf = nf ? 300 + (fi % NEW_NAMES.length) : f;
  const win: ARange = { k: "window", at: a, len };
  const moved: ARange = { k: "overlap", i: 0, shift, grow: 0 };
  switch (p) {
    case 0: // fresher overlapping range read, then a revert
      return [rd(f, full), change(f, a, w), rd(f, win), revert(f), rd(f, full, true, form)];
    case 1: // range first, full in between, revert, the range again
      return [rd(f, win), change(f, a, w), rd(f, full), revert(f), rd(f, { k: "again", i: 0 })];
    case 2: // overlapping ranges across a change and a revert
      return [rd(f, full), change(f, a, w), rd(f, win), revert(f), rd(f, moved)];
    case 3: // a turn: unpersisted reads, then the turn ends
      return [
        rd(f, full, false),
        change(f, a, w),
        rd(f, win, false),
        rd(f, full, true),
        { t: "message" },
        rd(f, full),
      ];
    case 4: // compaction between two reads
      return [rd(f, full), change(f, a, w), rd(f, win), { t: "compact" }, rd(f, full)];
    case 5: // /tree back to before a read
      return [
        { t: "label", n },
        rd(f, full),
        change(f, a, w),
        rd(f, full),
        { t: "navigate", n },
        rd(f, full),
      ];
    case 6: // range refresh of an earlier range, then reads around it
      return [
        rd(f, full),
        rd(f, win),
        { t: "invalidate", f, form, range: { k: "again", i: 0 } },
        change(f, a, w),
        rd(f, win),
        rd(f, full),
      ];
    case 7: // the same file under two path forms, with an unpersisted read between
      return [rd(f, full, true, form), change(f, a, w), rd(f, full, false), rd(f, win, true, 0)];
    case 8: { // a wide range away from both ends, a change inside it, the range again (range diffs)
      const from = 100 + (a % 350);
      const wide: ARange = { k: "window", at: from, len: 22 + 2 * len };
      const again: ARange = { k: "again", i: 0 };
      const inside = from + 30;
      return [
        rd(f, wide),
        change(f, inside, w),
        rd(f, again),
        change(f, inside, (w + 1) % WORDS.length),
        rd(f, again),
      ];
    }
    case WRITE_PATTERNS: // a write, reads of it, a change by someone else, reads again
      return [
        wr(wf, c, true, form),
        rd(wf, full),
        rd(wf, win),
        change(wf, a, w),
        rd(wf, full, true, form),
        rd(wf, moved),
      ];
    case WRITE_PATTERNS + 1: // a write that never returns, in a turn that reads another file
      return [
        rd(f, full),
        wr(f, c, false, form),
        rd(f + 1, win), // the next file (the same one when there is only one)
        ...(n === 0 ? [{ t: "message" as const }] : []),
        rd(f, full),
        rd(f, win),
      ];
    case WRITE_PATTERNS + 2: // reads of a file whose write is pending in the same turn
      return [
        rd(f, full),
        rd(f, win),
        wr(f, c, false, form),
        rd(f, n === 0 ? win : full, false),
        rd(f, { k: "again", i: 0 }, n !== 2),
        rd(f, full),
      ];
    case WRITE_PATTERNS + 3: // a read in the turn before its write runs, the write returns
      return [
        rd(f, n === 0 ? win : full),
        rd(f, full, false, form),
        wr(f, c),
        rd(f, full),
        change(f, a, w),
        rd(f, n === 1 ? win : full),
      ];
    case WRITE_PATTERNS + 4: { // a write around /tree, compaction, fork or restart
      const around: AStep = [
        { t: "compact" as const },
        { t: "restart" as const },
        { t: "fork" as const },
      ][n];
      return [
        { t: "label", n },
        wr(wf, c, n !== 1 || a % 3 !== 0, form),
        rd(wf, win),
        { t: "navigate", n },
        rd(wf, full),
        wr(wf, { k: "edit", e: { k: "change", at: a, w, boundary: false } }),
        around,
        rd(wf, full),
        rd(wf, win),
      ];
    }
    default: // a link retargeted between two files, then the files by their own names
      return [
        { t: "symlink", l: 0, target: f },
        rd(200, full),
        { t: "symlink", l: 0, target: g },
        rd(200, full),
        rd(g, full),
        rd(f, full),
      ];
  }
}

/** The edit patterns (see {@linkcode editPattern}). */
const EDIT_PATTERN_COUNT = 7;

/** Patterns around an edit call of the model. */
const editPatternArb: fc.Arbitrary<AStep[]> = fc.record({
  p: fc.nat({ max: EDIT_PATTERN_COUNT - 1 }),
  f: fileIx,
  a: at,
  w: word,
  len: fc.integer({ min: 1, max: 8 }),
  form: fc.nat({ max: 9 }),
  n: fc.nat({ max: 3 }),
  call: editCallArb(fc.constant(true)),
  call2: editCallArb(fc.constant(true)),
  post: postEditArb,
  c: writeContentArb,
  nf: fc.nat({ max: 3 }).map((n) => n === 0),
}).map(editPattern);

function editPattern(
  { p, f: fi, a, w, len, form, n, call, call2, post, c, nf }: {
    p: number;
    f: number;
    a: number;
    w: number;
    len: number;
    form: number;
    n: number;
    call: AEditCall;
    call2: AEditCall;
    post: AEdit;
    c: AWriteContent;
    nf: boolean;
  },
): AStep[] {
  const f = 100 + fi;
  const win: ARange = { k: "window", at: a, len };
  const again: ARange = { k: "again", i: 0 };
  const ed = (file: number, e: AEditCall, persist = true): AStep => ({
    t: "editTool",
    ...e,
    f: file,
    persist,
  });
  const other = (file: number, e: AEdit = post): AStep => ({ t: "edit", f: file, e });
  switch (p) {
    case 0: // an edit of lines it read, reads, someone else reverts it (or part of it, or more)
      return [
        rd(f, full),
        ed(f, call),
        rd(f, full),
        rd(f, win),
        other(f),
        rd(f, full, true, form),
        rd(f, again),
      ];
    case 1: { // an edit inside a range it read, the range again (renumbered) and around it
      if (n < 2) {
        return [
          rd(f, win),
          ed(f, { ...call, seen: true }),
          rd(f, again),
          rd(f, { k: "overlap", i: 0, shift: (a % 5) - 2, grow: n }),
          other(f),
          rd(f, again),
          rd(f, full),
        ];
      }
      // only two ranges in the context, the edit in the first: the second one renumbered
      return [
        { t: "compact" },
        rd(f, { k: "window", at: a % 400, len }),
        rd(f, { k: "window", at: 500 + (a % 500), len: len + 6 }),
        ed(f, { ...call, seen: true, inRead: 1 }),
        rd(f, again),
        rd(f, { k: "again", i: 1 }),
        rd(f, { k: "overlap", i: n, shift: (a % 5) - 2, grow: n }),
        other(f),
        rd(f, again),
        rd(f, full),
      ];
    }
    case 2: // reads while the edit of the same message has not returned
      return [
        rd(f, full),
        ed(f, call, false),
        rd(f, n === 0 ? win : full, n === 3),
        ...(n === 1 ? [rd(f, full, false)] : []),
        ...(n === 2 ? [{ t: "message" as const }] : []),
        rd(f, full),
        rd(f, win),
      ];
    case 3: { // an edit after compaction, on another branch, around fork or restart
      const around = ([{ t: "compact" }, { t: "fork" }, { t: "restart" }] as AStep[])[a % 3];
      if (n === 0) return [rd(f, full), { t: "compact" }, ed(f, call), rd(f, full), rd(f, win)];
      if (n === 1) {
        return [
          { t: "label", n: a % 3 },
          rd(f, full),
          ed(f, call),
          rd(f, full),
          { t: "navigate", n: a % 3 },
          rd(f, full),
          rd(f, win),
        ];
      }
      return [rd(f, full), ed(f, call), around, rd(f, full), other(f), rd(f, win)];
    }
    case 4: // a read in the same message before the edit, the edit returns
      return [
        rd(f, n === 0 ? win : full),
        rd(f, full, false, form),
        ed(f, call),
        rd(f, full),
        other(f),
        rd(f, full),
      ];
    case 5: { // an edit of what it wrote (or of a file only a write created)
      const wf = nf ? 300 + (fi % NEW_NAMES.length) : f;
      return [
        wr(wf, c, true, form),
        ed(wf, call),
        rd(wf, full),
        rd(wf, win),
        other(wf),
        rd(wf, full),
      ];
    }
    default: // two edits in a row, then someone else undoes the last one
      return [
        rd(f, full),
        ed(f, call),
        ed(f, call2),
        rd(f, win),
        rd(f, full),
        other(f, { k: "unedit" }),
        rd(f, full),
        other(f, { k: "change", at: a, w, boundary: false }),
        rd(f, win),
      ];
  }
}

/** The tool patterns (see {@linkcode toolPattern}). */
const TOOL_PATTERN_COUNT = 14;

/** A shell command that shows a file (a view form of {@linkcode BASH_FORMS}). */
const viewBashArb = bashArb(fc.constant(true)).chain((b) =>
  fc.integer({ min: 0, max: 6 }).map((cmd) => ({ ...b, cmd }))
);
/** A shell command that changes a file (`sed -i` mostly). */
const changeBashArb = bashArb(fc.constant(true)).chain((b) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(7) },
    { weight: 3, arbitrary: fc.integer({ min: 8, max: 11 }) },
    { weight: 1, arbitrary: fc.constant(13) },
  ).map((cmd) => ({ ...b, cmd }))
);

/** Patterns around what a shell command or pi's grep tool showed or changed (SPEC §5.10). */
const toolPatternArb: fc.Arbitrary<AStep[]> = fc.record({
  p: fc.nat({ max: TOOL_PATTERN_COUNT - 1 }),
  f: fileIx,
  g: fileIx,
  a: at,
  w: word,
  len: fc.integer({ min: 1, max: 8 }),
  n: fc.nat({ max: 3 }),
  view: viewBashArb,
  chg: changeBashArb,
  grep: grepArb(fc.constant(true)),
  call: editCallArb(fc.constant(true)),
  c: writeContentArb,
}).map(toolPattern);

function toolPattern(
  { p, f: fi, g: gi, a, w, len, n, view, chg, grep, call, c }: {
    p: number;
    f: number;
    g: number;
    a: number;
    w: number;
    len: number;
    n: number;
    view: ABash;
    chg: ABash;
    grep: AGrep;
    call: AEditCall;
    c: AWriteContent;
  },
): AStep[] {
  const f = 100 + fi;
  const g = 100 + gi;
  const win: ARange = { k: "window", at: a, len };
  const again: ARange = { k: "again", i: 0 };
  // the view and the change fall on the same lines (the same `a`), the grep word is the change's
  // (n = 2: a view of other lines than the change)
  const shows: AStep = n % 2 === 0
    ? { t: "bash", ...view, f, a: n === 2 ? (a + 500) % 1000 : a, w, held: true }
    : { t: "grep", ...grep, f, w, present: true };
  const sed = (held: boolean, extra: Partial<ABash> = {}): AStep => ({
    t: "bash",
    ...chg,
    cmd: 7,
    f,
    a,
    held,
    ...extra,
  });
  switch (p) {
    case 0: // read; changed outside; a tool shows it; put back outside; read again
      return [
        rd(f, n < 2 ? full : win),
        change(f, a, w),
        shows,
        revert(f),
        rd(f, n < 2 ? full : again),
        ...(n === 3 ? [{ t: "bash" as const, ...view, f, cmd: 12 }] : []),
        rd(f, win),
      ];
    case 1: // a change of lines it read by a command, then reads, then put back outside
      return [rd(f, win), sed(true), rd(f, again), rd(f, full), revert(f), rd(f, full)];
    case 2: { // a tool call and a read of the file in one message (an outside change between)
      const tool: AStep = n < 2
        ? {
          t: "bash",
          ...(n === 0 ? view : chg),
          f,
          a,
          w,
          held: true,
          persist: a % 3 !== 0,
          deferred: a % 3 !== 0,
        }
        : { ...shows, persist: true, deferred: true } as AStep;
      return [
        rd(f, full),
        tool,
        ...(w % 2 === 0 ? [change(f, a, w)] : []),
        rd(f, n === 3 ? win : full),
        revert(f),
        rd(f, full),
        rd(f, win),
      ];
    }
    case 3: { // a command and an edit (or a write) of the file in one message
      const cmd: AStep = {
        t: "bash",
        ...(n % 2 === 0 ? view : chg),
        f,
        a,
        w,
        held: true,
        deferred: true,
      };
      const own: AStep = n < 2
        ? { t: "editTool", ...call, f, seen: true, persist: true }
        : { t: "writeTool", f, form: 0, c, persist: true };
      const first = a % 2 === 0;
      return [
        rd(f, full),
        ...(first
          ? [cmd, own]
          : [{ ...own, deferred: true } as AStep, { ...cmd, deferred: false }]),
        rd(f, full),
        { t: "edit", f, e: { k: "unedit" } },
        rd(f, full),
        rd(f, win),
      ];
    }
    case 4: // the file copied over another, or removed, then put back outside
      return [
        rd(g, full),
        n < 2 ? { t: "bash", ...chg, cmd: 10, f: g, g: f } : { t: "bash", ...chg, cmd: 11, f: g },
        rd(g, full),
        revert(g),
        rd(g, full),
        rd(g, win),
      ];
    case 5: // a command that never returns, in the message of a read
      return [
        rd(f, full),
        { t: "bash", ...(n % 2 === 0 ? chg : view), f, a, w, held: true, persist: false },
        rd(f, n < 2 ? full : win),
        ...(n === 3 ? [] : [{ t: "message" as const }]),
        rd(f, full),
        revert(f),
        rd(f, full),
      ];
    case 6: // a command changes lines the model never saw; reads of the lines it saw
      return [
        rd(f, win),
        sed(false),
        rd(f, again),
        ...(n % 2 === 0
          ? [shows.t === "bash" ? { ...shows, held: false } : { ...shows, present: false }]
          : []),
        rd(f, full),
        revert(f),
        rd(f, again),
      ];
    case 7: { // a command the oracle reads the strictest way and a read in one message
      const cmd: AStep = {
        t: "bash",
        ...chg,
        cmd: 20,
        f,
        a,
        w,
        held: n % 2 === 0,
        persist: n !== 3,
        deferred: n !== 3,
      };
      return [
        rd(f, full),
        cmd,
        ...(w % 3 !== 0 ? [change(f, (a + 500) % 1000, w)] : []),
        rd(f, n < 2 ? full : win),
        revert(f),
        rd(f, full),
        rd(f, win),
      ];
    }
    case 9: // printed while changing (SPEC §5.10): a keep copy, a change, a view, the copy back
      return [
        rd(f, n < 2 ? full : win),
        ...(n === 1 ? [change(f, a, w)] : []),
        { t: "bash", ...chg, cmd: 17, f, g: n === 3 ? g : 300, a, w, held: n !== 2 },
        rd(f, n < 2 ? full : again),
        rd(f, full),
        rd(f, win),
      ];
    case 10: { // the keep copy taken before, another process changes the file, a view, copy back
      const k = n % 2 === 0 ? 300 : g;
      return [
        rd(f, n < 2 ? full : win),
        { t: "bash", ...chg, cmd: 21, f, g: k, persist: true },
        change(f, a, w),
        ...(n === 3 ? [rd(f, again)] : []),
        { t: "bash", ...chg, cmd: n < 2 ? 18 : 19, f, g: k, a, w, held: true },
        rd(f, n < 2 ? full : again),
        rd(f, full),
        rd(f, win),
      ];
    }
    case 11: // a view and a change of the file in one command, in either order; put back outside
      return [
        rd(f, n < 2 ? full : win),
        { t: "bash", ...chg, cmd: 14 + (n % 3), f, a, w, held: true },
        rd(f, n < 2 ? full : again),
        rd(f, full),
        revert(f),
        rd(f, full),
        rd(f, win),
      ];
    case 12: // changed outside; pi's grep of every numbered line (touching rows, cut past 100)
      return [
        rd(f, n < 2 ? full : win),
        change(f, a, w),
        { t: "grep", ...grep, f, w, present: true, wide: true },
        ...(n % 2 === 1 ? [change(f, (a + 37) % 1000, w + 1)] : []),
        rd(f, win),
        rd(f, full),
        ...(n === 3 ? [revert(f), rd(f, full)] : []),
      ];
    case 13: // the view holds `it’s W` and its ASCII twin; the curly one changed outside; an edit
      // of `it's W` (pi finds it once; in the model's view it is there twice once normalised)
      return [
        rd(f, full),
        ...(n < 3 ? [{ t: "edit" as const, f, e: { k: "uncurl" as const } }] : []),
        {
          t: "editTool",
          ...call,
          f,
          shape: 0,
          reps: [{ k: "twin", at: a, n: 1, add: 1, w, nl: false }],
          seen: true,
          persist: true,
        },
        rd(f, full),
        ...(n % 2 === 0 ? [rd(f, win)] : [{ t: "edit" as const, f, e: { k: "unedit" as const } }]),
        rd(f, full),
      ];
    default: // a view after an own edit, the edit undone outside
      return [
        rd(f, full),
        { t: "editTool", ...call, f, seen: true, persist: true },
        shows,
        { t: "edit", f, e: { k: "unedit" } },
        rd(f, full),
        rd(f, win),
      ];
  }
}

/**
 * A turn: several calls of one assistant message, all but the last
 * unpersisted; sometimes one of them a write or an edit call (of a file a
 * read of the turn names, or of another).
 */
const turnArb = (o: Required<GeneratorOptions>): fc.Arbitrary<AStep[]> =>
  fc.record({
    reads: fc.array(readArb(fc.constant(false)), { minLength: 2, maxLength: 3 }),
    last: fc.boolean(),
    edit: fc.option(fc.record({ f: fileIx, e: editArb }), { freq: 3 }),
    write: fc.oneof(
      { weight: 2, arbitrary: fc.constant(null) },
      {
        weight: 1,
        arbitrary: fc.record({
          at: fc.nat({ max: 3 }),
          sameAs: fc.boolean(),
          w: writeArb(fc.constant(false)),
        }),
      },
    ),
    editCall: fc.oneof(
      { weight: 2, arbitrary: fc.constant(null) },
      {
        weight: 1,
        arbitrary: fc.record({
          at: fc.nat({ max: 3 }),
          sameAs: fc.boolean(),
          e: editCallArb(fc.constant(false)),
        }),
      },
    ),
    tool: fc.oneof(
      { weight: 2, arbitrary: fc.constant(null) },
      {
        weight: o.tools ? 1 : 0,
        arbitrary: fc.record({
          at: fc.nat({ max: 3 }),
          sameAs: fc.boolean(),
          deferred: fc.boolean(),
          b: fc.oneof(
            {
              weight: 3,
              arbitrary: bashArb(fc.constant(false)).map((b) => ({ t: "bash" as const, ...b })),
            },
            {
              weight: 1,
              arbitrary: grepArb(fc.constant(false)).map((g) => ({ t: "grep" as const, ...g })),
            },
          ),
        }),
      },
    ),
  }).map(({ reads, last, edit, write, editCall, tool }) => {
    const steps: AStep[] = reads.map((r) => ({ t: "read" as const, ...r }));
    if (write !== null) {
      const f = write.sameAs ? reads[write.at % reads.length].f : write.w.f;
      steps.splice(write.at % (steps.length + 1), 0, { t: "writeTool", ...write.w, f });
    }
    if (editCall !== null) {
      const f = editCall.sameAs ? reads[editCall.at % reads.length].f : editCall.e.f;
      steps.splice(editCall.at % (steps.length + 1), 0, { t: "editTool", ...editCall.e, f });
    }
    if (tool !== null) {
      const f = tool.sameAs ? reads[tool.at % reads.length].f : tool.b.f;
      steps.splice(tool.at % (steps.length + 1), 0, { ...tool.b, f, deferred: tool.deferred });
    }
    if (last) {
      const l = steps[steps.length - 1] as ARead | AWrite | AEditCall | ABash | AGrep;
      l.persist = true;
      if ("deferred" in l) l.deferred = false;
    }
    if (edit !== null) steps.splice(1, 0, { t: "edit", ...edit });
    return steps;
  });

/**
 * Several edit calls of one file in one assistant message, their results
 * after the last one ran (pi appends a message's results in call order):
 * sometimes with a write of the file among them, sometimes a call that never
 * returns, sometimes a read of the file that returns first; then a read.
 */
const editBatchArb: fc.Arbitrary<AStep[]> = fc.record({
  f: fileIx,
  calls: fc.array(editCallArb(fc.constant(true)), { minLength: 2, maxLength: 3 }),
  end: fc.nat({ max: 4 }),
  write: fc.option(writeArb(fc.constant(true)), { freq: 5 }),
  before: fc.boolean(),
  after: fc.oneof(fc.constant(full), rangeArb),
}).map(({ f, calls, end, write, before, after }) => {
  const steps: AStep[] = calls.map((e) => ({
    t: "editTool" as const,
    ...e,
    f: 100 + f,
    seen: true,
    deferred: true,
  }));
  if (write !== null) steps.splice(1, 0, { t: "writeTool", ...write, f: 100 + f, deferred: true });
  const last = steps[steps.length - 1] as AEditCall;
  // 0, 1: the last call returns at once; 2: it never returns; 3: a read of the file returns
  // first; 4: none returns (the turn ends)
  if (end <= 1) last.deferred = false;
  else if (end === 2) {
    last.deferred = false;
    last.persist = false;
  } else if (end === 3) steps.push(rd(f, after));
  if (before) steps.unshift(rd(f, full), { t: "message" });
  steps.push({ t: "message" }, rd(f, after));
  return steps;
});

const filesArb: fc.Arbitrary<FilesSpec> = fc.record({
  count: fc.integer({ min: 1, max: 3 }),
  small: fc.array(
    fc.record({
      lines: fc.integer({ min: 5, max: 120 }),
      eol: fc.nat({ max: 4 }).map((n) => n !== 0),
      crlf: fc.nat({ max: 4 }).map((n) => n === 0),
      bom: fc.nat({ max: 7 }).map((n) => n === 0),
      fancy: fc.nat({ max: 3 }).map((n) => n === 0),
    }),
    { minLength: 3, maxLength: 3 },
  ),
  big: fc.oneof(
    { weight: 3, arbitrary: fc.constant(null) },
    {
      weight: 1,
      arbitrary: fc.record({
        lines: fc.integer({ min: 2000, max: 2600 }),
        wide: fc.nat({ max: 2 }).map((n) => n === 0),
        eol: fc.boolean(),
      }),
    },
  ),
  huge: fc.nat({ max: 39 }).map((n) => n === 0),
  initialLink: fc.boolean(),
});

/** The arbitrary of abstract sessions. */
export function sessionArb(options: GeneratorOptions = {}): fc.Arbitrary<ASession> {
  const o: Required<GeneratorOptions> = {
    symlinks: options.symlinks ?? SCHEMA_HAS_SYMLINK,
    maxChunks: options.maxChunks ?? 14,
    inFlight: options.inFlight ?? true,
    tools: options.tools ?? true,
  };
  const chunk = fc.oneof(
    { weight: 10, arbitrary: stepArb(o).map((s) => [s]) },
    { weight: 5, arbitrary: patternArb(o) },
    { weight: 3, arbitrary: turnArb(o) },
    { weight: 3, arbitrary: editPatternArb },
    { weight: o.tools ? 11 : 0, arbitrary: toolPatternArb },
    { weight: o.inFlight ? 2 : 0, arbitrary: editBatchArb },
  );
  return fc.record({
    files: filesArb.map((f) => ({ ...f, initialLink: f.initialLink && o.symlinks })),
    chunks: fc.array(chunk, { minLength: 1, maxLength: o.maxChunks }),
  });
}

// ---------------------------------------------------------------- compilation

function smallContent(name: string, spec: SmallSpec): string {
  const stem = name.replace(/^.*\//, "").replace(/\.txt$/, "");
  const lines: string[] = [];
  for (let i = 1; i <= spec.lines; i++) {
    const word = WORDS[i % WORDS.length];
    lines.push(
      !spec.fancy
        ? `${stem}${i} ${word}`
        : i % 6 === 2
        ? `${stem}${i} it\u2019s ${word}`
        : i % 6 === 3
        ? `${stem}${i} it's ${WORDS[(i - 1) % WORDS.length]}`
        : i % 9 === 4
        ? `${stem}${i} ${word}  `
        : i % 10 === 7
        ? `${stem}${i} \u2013 \u201C${word}\u201D`
        : `${stem}${i} ${word}`,
    );
  }
  const nl = spec.crlf ? "\r\n" : "\n";
  return (spec.bom ? "\uFEFF" : "") + lines.join(nl) + (spec.eol ? nl : "");
}

function bigContent(spec: BigSpec): string {
  const lines: string[] = [];
  for (let i = 1; i <= spec.lines; i++) {
    lines.push(spec.wide ? `row ${i} ${"x".repeat(22)}` : `${i}`);
  }
  return lines.join("\n") + (spec.eol ? "\n" : "");
}

/** A fresh version of a file for a write call: `n` lines in the style of the small files. */
function freshContent(name: string, n: number, shift: number, eol: boolean): string {
  const stem = name.replace(/^.*\//, "").replace(/\.txt$/, "");
  const lines: string[] = [];
  for (let i = 1; i <= n; i++) lines.push(`${stem}${i} ${WORDS[(i + shift) % WORDS.length]}`);
  return lines.join("\n") + (eol ? "\n" : "");
}

function hugeContent(): string {
  return `${"h".repeat(52_000)}\nsmall line 2\nsmall line 3\n`;
}

/** The initial files of a spec, by name. */
export function initialFiles(spec: FilesSpec): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < spec.count; i++) {
    files[SMALL_NAMES[i]] = smallContent(SMALL_NAMES[i], spec.small[i]);
  }
  if (spec.big !== null) files["big.txt"] = bigContent(spec.big);
  if (spec.huge) files["huge.txt"] = hugeContent();
  return files;
}

function typedPath(name: string, form: number): string {
  switch (form) {
    case 6:
    case 9:
      return `./${name}`;
    case 7:
      return name.startsWith("sub/") ? `sub/./${name.slice(4)}` : `sub/../${name}`;
    case 8:
      return `@${name}`;
    default:
      return name;
  }
}

/**
 * A name as a shell command (or pi's grep tool) takes it: as it is, `./name`
 * (odd `form`), or `dir/./base` (`form` 2, for a name in a directory); `@`
 * and `..` forms are pi's read syntax or need a directory that may not exist.
 */
function shellPath(name: string, form: number): string {
  if (form % 2 === 1) return `./${name}`;
  if (form === 2 && name.includes("/")) return name.replace("/", "/./");
  return name;
}

const same = (a: Uint8Array, b: Uint8Array) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

class Compiler {
  readonly fs: FsModel;
  /** Regular files: the initial ones, then the ones write calls created, in order. */
  readonly regular: string[];
  readonly links: string[];
  readonly original = new Map<string, Uint8Array>();
  readonly history = new Map<string, Uint8Array[]>();
  readonly ranges = new Map<string, { offset?: number; limit?: number }[]>();
  /** Lines reads showed, per name (the newest stretches last). */
  readonly seen = new Map<string, [number, number][]>();
  /** The model's last successful edit call per file: content before and after, replacements. */
  readonly lastEdit = new Map<
    string,
    { before: Uint8Array; after: Uint8Array; edits: Replacement[] }
  >();
  readonly steps: ScenarioStep[] = [];

  constructor(
    files: Record<string, string>,
    symlinks: boolean,
    readonly inFlight: boolean,
  ) {
    this.fs = FsModel.fromFiles(files);
    this.regular = Object.keys(files);
    this.links = symlinks ? LINK_NAMES : [];
    for (const [k, v] of Object.entries(files)) {
      const b = contentBytes(v);
      this.original.set(k, b);
      this.history.set(k, [b]);
    }
  }

  /** Every name a step may use: regular files, then links. */
  get names(): string[] {
    return [...this.regular, ...this.links];
  }

  pick(list: string[], i: number): string {
    return list[i % list.length];
  }

  /**
   * A name to read: `i` < 100 any name, 100+k the k-th regular file, 200+k
   * the k-th link, 300+k the k-th name only a write call creates.
   */
  pickName(i: number): string {
    if (i >= 300) return this.pick(NEW_NAMES, i - 300);
    if (i >= 200 && this.links.length > 0) return this.pick(this.links, i - 200);
    if (i >= 100) return this.pick(this.regular, i % 100);
    return this.pick(this.names, i);
  }

  totalOf(name: string): number {
    return this.fs.text(name)?.lines.length ?? 10;
  }

  range(name: string, r: ARange): { offset?: number; limit?: number; suffix?: string } {
    const total = this.totalOf(name);
    const line = (a: number) => Math.min(total, 1 + Math.floor((a / 1000) * total));
    const prev = this.ranges.get(name) ?? [];
    switch (r.k) {
      case "full":
        return {};
      case "window":
        return { offset: line(r.at), limit: r.len };
      case "offset":
        return { offset: line(r.at) };
      case "limit":
        return { limit: r.len };
      case "past":
        return { offset: total + 1 + r.extra };
      case "again":
        return prev.length === 0 ? {} : { ...prev[prev.length - 1 - (r.i % prev.length)] };
      case "overlap": {
        if (prev.length === 0) return {};
        const p = prev[prev.length - 1 - (r.i % prev.length)];
        const offset = Math.max(1, (p.offset ?? 1) + r.shift);
        const limit = p.limit === undefined ? undefined : Math.max(1, p.limit + r.grow);
        return limit === undefined ? { offset } : { offset, limit };
      }
      case "trunc": {
        if (total < 1000) return { limit: 2000 + r.v * 100 };
        return [
          { offset: 1, limit: 2600 },
          { offset: 1990, limit: 30 },
          { offset: 1, limit: 2000 },
          { offset: 1500 },
          { offset: 2001 },
          { limit: 2001 },
        ][r.v % 6];
      }
      case "shorthand": {
        const s = line(r.at);
        return { suffix: r.len === 0 ? `:${s}` : `:${s}-${s + r.len - 1}` };
      }
    }
  }

  read(a: ARead): void {
    const name = this.pickName(a.f);
    const r = this.range(name, a.range);
    const path = typedPath(name, a.form) + (r.suffix ?? "");
    const step: ScenarioStep & { op: "read" } = { op: "read", path, expect: {} };
    if (r.offset !== undefined) step.offset = r.offset;
    if (r.limit !== undefined) step.limit = r.limit;
    if (!a.persist && this.inFlight) step.persist = false;
    if (a.bypass) step.bypass = true;
    this.steps.push(step);
    const resolved = resolveRead(this.fs, step);
    if (resolved.offset !== undefined || resolved.limit !== undefined) {
      const list = this.ranges.get(resolved.name) ?? [];
      list.push({ offset: resolved.offset, limit: resolved.limit });
      this.ranges.set(resolved.name, list);
    }
    const t = this.fs.text(resolved.name);
    if (t !== undefined) {
      const start = resolved.offset ?? 1;
      const total = t.lines.length;
      const limit = resolved.limit ?? total;
      const end = Math.min(total, start + limit - 1, start + 1999);
      if (start >= 1 && start <= end) {
        const list = this.seen.get(resolved.name) ?? [];
        list.push([start, end]);
        this.seen.set(resolved.name, list.slice(-4));
      }
    }
  }

  /** Remembers a content of a regular file (for reverts). */
  remember(name: string, bytes: Uint8Array): void {
    const h = this.history.get(name) ?? [];
    if (!h.some((x) => same(x, bytes))) h.push(bytes);
    this.history.set(name, h);
    if (!this.regular.includes(name) && !this.links.includes(name)) this.regular.push(name);
  }

  write(name: string, bytes: Uint8Array): void {
    if (this.fs.writeTarget(name) === undefined) return; // the write would fail
    const content: VectorContent = bytesContent(bytes);
    this.steps.push({ op: "write", path: name, content });
    this.fs.write(name, content);
    this.remember(name, bytes);
  }

  /** A change by someone else (a `write` step) of a regular file or of a file a write created. */
  edit(f: number, e: AEdit): void {
    const name = f >= 300 ? this.pickName(f) : this.pick(this.regular, f % 100);
    const bytes = this.edited(name, e);
    if (bytes !== undefined) this.write(name, bytes);
  }

  /**
   * The content of `name` after an edit, computed from its current content
   * (or its last one when it was removed); `undefined` when there is nothing
   * to edit (no content ever, no earlier content to revert to).
   */
  edited(name: string, e: AEdit): Uint8Array | undefined {
    const h = this.history.get(name) ?? [];
    const curBytes = this.fs.read(name) ?? h[h.length - 1];
    if (curBytes === undefined) return undefined;
    if (e.k === "revert") {
      const earlier = h.filter((x) => !same(x, curBytes)).reverse();
      return earlier.length > 0 ? earlier[e.i % earlier.length] : undefined;
    }
    if (e.k === "restore") return this.original.get(name) ?? h[0];
    if (e.k === "unedit" || e.k === "partial" || e.k === "further") {
      const last = this.lastEdit.get(this.fs.resolveFile(name) ?? name);
      if (last === undefined) return undefined;
      if (e.k === "unedit") return last.before;
      const first = (t: string) => t.split("\n")[0];
      if (e.k === "partial") {
        if (last.edits.length > 1) {
          // the same edit call without one of its replacements
          const m = FsModel.fromFiles({ f: bytesContent(last.before) });
          const keep = last.edits.filter((_, j) => j !== e.i % last.edits.length);
          return m.edit({ path: "f", edits: keep }).ok ? m.read("f") : last.before;
        }
        // one replacement: its first new line back to its first old line
        const after = fileText(last.after).text;
        const [n, o] = [first(last.edits[0].newText), first(last.edits[0].oldText)];
        const i = n === "" ? -1 : after.indexOf(n);
        if (i < 0 || n === o) return last.before;
        return new TextEncoder().encode(after.slice(0, i) + o + after.slice(i + n.length));
      }
      // more on the edit's first new line, else a change near the middle
      const now = fileText(curBytes).text;
      const n = first(last.edits[0].newText);
      const i = n === "" ? -1 : now.indexOf(n);
      if (i < 0) return this.edited(name, { k: "change", at: 500, w: e.w, boundary: false });
      const j = i + n.length;
      return new TextEncoder().encode(`${now.slice(0, j)} more ${WORDS[e.w]}${now.slice(j)}`);
    }
    const text = fileText(curBytes).text;
    const eol = text.endsWith("\n");
    const lines = text.split("\n");
    if (eol) lines.pop();
    const stem = name.replace(/^.*\//, "").replace(/\.txt$/, "");
    const pos = (a: number) => Math.min(lines.length - 1, Math.floor((a / 1000) * lines.length));
    const join = (ls: string[], withEol: boolean) => ls.join("\n") + (withEol ? "\n" : "");
    let out: string | Uint8Array;
    switch (e.k) {
      case "change": {
        const p = e.boundary && lines.length > 2005 ? 1995 + (e.at % 10) : pos(e.at);
        // a line of a CRLF file keeps its CR
        const cr = lines[p].endsWith("\r") ? "\r" : "";
        let next = `${stem}${p + 1} ${WORDS[e.w]}${cr}`;
        if (next === lines[p]) next = `${stem}${p + 1} ${WORDS[(e.w + 1) % WORDS.length]}${cr}`;
        lines[p] = next;
        out = join(lines, eol);
        break;
      }
      case "append":
        for (let i = 0; i < e.n; i++) lines.push(`${stem}+${lines.length + 1} ${WORDS[e.w]}`);
        out = join(lines, eol);
        break;
      case "insert":
        lines.splice(pos(e.at), 0, `${stem} inserted ${WORDS[e.w]}`);
        out = join(lines, eol);
        break;
      case "delete":
        if (lines.length > 1) lines.splice(pos(e.at), 1);
        out = join(lines, eol);
        break;
      case "eol":
        out = join(lines, !eol);
        break;
      case "uncurl": {
        const p = lines.findIndex((l) => l.includes("it\u2019s "));
        if (p < 0) return this.edited(name, { k: "change", at: 500, w: 0, boundary: false });
        lines[p] = lines[p].replace("it\u2019s ", "it\u2019s now ");
        out = join(lines, eol);
        break;
      }
      case "binary": {
        const p = pos(e.at);
        const before = new TextEncoder().encode(join(lines.slice(0, p), true));
        const rest = new TextEncoder().encode(join(lines.slice(p), eol));
        const b = new Uint8Array(before.length + 1 + rest.length);
        b.set(before);
        b[before.length] = 0xff;
        b.set(rest, before.length + 1);
        out = b;
        break;
      }
    }
    return typeof out === "string" ? new TextEncoder().encode(out) : out;
  }

  /**
   * A call of pi's `write` tool. The content is a fresh version of the file,
   * its current content, or its current content with an edit (text only: a
   * binary edit becomes a change; a revert to non-UTF-8 bytes writes their
   * text as pi would show it). Skipped when the links at the name loop.
   */
  writeTool(a: AWrite): void {
    const name = this.pickName(a.f);
    const target = this.fs.writeTarget(name);
    if (target === undefined) return;
    const cur = this.fs.read(name);
    const fresh = (n: number, shift: number, eol: boolean) => freshContent(target, n, shift, eol);
    let content: string;
    switch (a.c.k) {
      case "fresh":
        content = fresh(a.c.lines, a.c.shift, a.c.eol);
        break;
      case "same":
        content = cur === undefined ? fresh(8, 0, true) : fileText(cur).text;
        break;
      case "lone": {
        // not well-formed Unicode: pi writes U+FFFD for the lone surrogate
        const lines = (cur === undefined ? fresh(8, 0, true) : fileText(cur).text).split("\n");
        const p = Math.min(lines.length - 1, Math.floor((a.c.at / 1000) * lines.length));
        lines[p] = `${lines[p]} \uD800 lone`;
        content = lines.join("\n");
        break;
      }
      case "edit": {
        const e: AEdit = a.c.e.k === "binary"
          ? { k: "change", at: a.c.e.at, w: 0, boundary: false }
          : a.c.e;
        const b = this.edited(target, e);
        content = b === undefined
          ? (cur === undefined ? fresh(12, 1, true) : fileText(cur).text)
          : strictText(b) ?? fileText(b).text;
        break;
      }
    }
    const step: ScenarioStep & { op: "writeTool" } = {
      op: "writeTool",
      path: typedPath(name, a.form),
      content,
    };
    if (a.deferred && this.inFlight) step.persist = "deferred";
    else if (!a.persist && this.inFlight) step.persist = false;
    this.steps.push(step);
    this.fs.write(writeNameOf(step.path), content);
    this.remember(target, new TextEncoder().encode(content));
  }

  /**
   * A call of pi's `edit` tool: replacements taken from the current content
   * (see {@linkcode ARep}), sent in one of the argument shapes pi takes. A
   * missing file gets replacements of a fresh version (pi refuses the call).
   */
  editTool(a: AEditCall): void {
    const name = this.pickName(a.f);
    const target = this.fs.resolveFile(name);
    const before = target === undefined ? undefined : this.fs.read(target);
    const text = before === undefined ? freshContent(name, 8, 0, true) : fileText(before).text;
    // the lines as the model types them: no BOM, no CR ending
    const all = (text.startsWith("\uFEFF") ? text.slice(1) : text).split("\n")
      .map((l) => l.endsWith("\r") ? l.slice(0, -1) : l);
    const count = all.length > 1 && all[all.length - 1] === "" ? all.length - 1 : all.length;
    const reads = this.seen.get(name) ?? [];
    const seen = !a.seen
      ? []
      : a.inRead !== undefined && reads.length > a.inRead
      ? [reads[reads.length - 1 - a.inRead]]
      : reads;
    // replacements on lines apart (pi refuses overlapping ones), now and then where they fall
    const taken: [number, number][] = [];
    const edits = a.reps.map((r) => {
      let [p, q] = this.place(r, all, count, seen);
      if (r.at % 8 !== 0) {
        while (taken.some(([x, y]) => p <= y + 1 && x <= q + 1) && q + 1 < count) {
          p++;
          q = Math.min(q + 1, count - 1);
        }
      }
      taken.push([p, q]);
      return this.replacement(r, name, all, p, q);
    });
    const step: ScenarioStep & { op: "editTool" } = {
      op: "editTool",
      path: typedPath(name, a.form),
    };
    const legacy = edits[edits.length - 1];
    if (a.shape <= 6) step.edits = edits;
    else if (a.shape === 7) step.edits = JSON.stringify(edits);
    else {
      if (edits.length > 1) step.edits = edits.slice(0, -1);
      step.oldText = legacy.oldText;
      step.newText = legacy.newText;
    }
    if (a.deferred && this.inFlight) step.persist = "deferred";
    else if (!a.persist && this.inFlight) step.persist = false;
    this.steps.push(step);
    const out = this.fs.edit(editToolArgs(step));
    if (out.ok && target !== undefined && before !== undefined) {
      const after = this.fs.read(target)!;
      this.remember(target, after);
      this.lastEdit.set(target, { before, after, edits });
    }
  }

  /** The lines of `name` as line tools count them (a final line break ends the last line). */
  toolLines(name: string): string[] {
    const t = this.fs.text(name);
    if (t === undefined) return freshContent(name, 10, 0, true).split("\n").slice(0, -1);
    const l = t.lines.length > 1 && t.lines[t.lines.length - 1] === ""
      ? t.lines.slice(0, -1)
      : t.lines;
    return l.map((x) => x.endsWith("\r") ? x.slice(0, -1) : x);
  }

  /** A word for a search of `name`: one its text has (a word of the file, else a line's first). */
  wordIn(name: string, w: number, a: number): string {
    const lines = this.toolLines(name);
    const text = lines.join("\n");
    for (let k = 0; k < WORDS.length; k++) {
      const cand = WORDS[(w + k) % WORDS.length];
      if (text.includes(cand)) return cand;
    }
    const line = lines[Math.min(lines.length - 1, Math.floor((a / 1000) * lines.length))] ?? "";
    const m = /[A-Za-z0-9_]{1,12}/.exec(line);
    return m === null ? "zeta" : m[0];
  }

  /**
   * `sed -i 's/^X/Y/' P` on one line of `name`: a line a read showed
   * (`held`), else one no read showed; X is the line's first word (its first
   * two when the first has no digit) and the space after it, or the whole line.
   */
  sedCommand(name: string, path: string, b: ABash): string {
    const lines = this.toolLines(name);
    const total = lines.length;
    const seen = this.seen.get(name) ?? [];
    const inSeen = (i: number) => seen.some(([s, e]) => s <= i + 1 && i + 1 <= e);
    let i = Math.min(total - 1, Math.floor((b.a / 1000) * total));
    if (b.held && seen.length > 0) {
      const [s, e] = seen[seen.length - 1];
      i = Math.max(0, Math.min(total - 1, s - 1 + Math.floor((b.a / 1000) * (e - s + 1))));
    } else if (!b.held) {
      for (let k = 0; k < total && inSeen(i); k++) i = (i + 1) % total;
    }
    let line = lines[i] ?? "";
    if (i === 0 && line.startsWith("\uFEFF")) line = line.slice(1);
    const parts = line.split(" ");
    let x = parts.length === 1
      ? `${line}$`
      : /\d/.test(parts[0]) || parts.length < 3
      ? `${parts[0]} `
      : `${parts[0]} ${parts[1]} `;
    if (/['\/\\\n]/.test(x) || x.length > 60) {
      x = `${parts[0].slice(0, 12).replace(/[^A-Za-z0-9]/g, "")} `;
    }
    const esc = (t: string) => t.replace(/[.*[\]^$]/g, (c) => `\\${c}`);
    const pattern = x.endsWith("$") ? `${esc(x.slice(0, -1))}$` : esc(x);
    const keep = x.endsWith("$") ? x.slice(0, -1) : x.trimEnd();
    const repl = `${keep} sed ${WORDS[b.w]}${x.endsWith("$") ? "" : " "}`.replace(/&/g, "\\&");
    return `sed -i 's/^${pattern}/${repl}/' ${path}`;
  }

  /**
   * A call of pi's `bash` tool (see {@linkcode BASH_FORMS}): the command is
   * computed from the file's current length and content, run on the file
   * model, and what it changed remembered (for reverts).
   */
  bash(b: ABash): void {
    const form = BASH_FORMS[b.cmd % BASH_FORMS.length];
    const name = this.pickName(b.f);
    const command = CHAIN_PLANS[form] !== undefined
      ? this.chainCommand(CHAIN_PLANS[form]!, name, b)
      : this.commandOf(form, name, b);
    const step: ScenarioStep & { op: "bash" } = { op: "bash", command };
    if (b.deferred && this.inFlight) step.persist = "deferred";
    else if (!b.persist && this.inFlight) step.persist = false;
    if (b.noRecord) step.record = false;
    this.steps.push(step);
    this.fs.runBash(command);
    for (const n of [...this.regular, ...NEW_NAMES]) {
      const node = this.fs.nodes.get(n);
      if (node?.kind === "file") this.remember(n, node.bytes);
    }
  }

  /**
   * Where a chain (or a lone keep copy) keeps the file: the name `g` picks
   * (100+k: the k-th file the session started with, so that a keep copy and
   * the copy back later pick the same one), else (when that is the file
   * itself, or leads to it) the first regular file or new name that does not.
   */
  keepName(name: string, g: number): string {
    const real = this.fs.realName(name);
    const other = (n: string) => n !== name && this.fs.realName(n) !== real;
    const k = g >= 100 && g < 200
      ? this.pick([...this.original.keys()], g % 100)
      : this.pickName(g);
    return other(k) ? k : [...this.regular, ...NEW_NAMES].find(other) ?? NEW_NAMES[0];
  }

  /**
   * A chain of `plan` (`V` a view of the file, `C` a change of it, `K` its
   * keep copy `cp P K`, `R` the restore `cp K P`), the parts joined as
   * `b.join` says. Each part is computed from the files as they are when it
   * runs (the parts before it run on the file model, a `&&` part only after
   * one that succeeded), then the model is put back: the caller runs the
   * whole command.
   */
  chainCommand(plan: string, name: string, b: ABash): string {
    const p = shellPath(name, b.form);
    const keep = shellPath(this.keepName(name, b.g), b.form);
    const view = CHAIN_VIEWS[(b.v ?? 0) % CHAIN_VIEWS.length];
    const change = CHAIN_CHANGES[(b.c ?? 0) % CHAIN_CHANGES.length];
    // `cp G P`: G another regular file than the file and its keep copy (else `sed -i`)
    const others = this.regular.filter((n) =>
      this.fs.realName(n) !== this.fs.realName(name) && shellPath(n, b.form) !== keep
    );
    const part = (k: string): string => {
      switch (k) {
        case "V":
          return this.commandOf(view, name, b);
        case "K":
          return `cp ${p} ${keep}`;
        case "R":
          return `cp ${keep} ${p}`;
        default:
          return change === "cp" && others.length > 0
            ? `cp ${shellPath(this.pick(others, b.w), b.form)} ${p}`
            : this.commandOf(change === "cp" ? "sed -i" : change, name, b);
      }
    };
    const j = b.join ?? 0;
    const joinAt = (i: number): "&&" | ";" =>
      j < 3 ? "&&" : j === 3 ? ";" : (i === 1) === (j === 4) ? "&&" : ";";
    const saved = this.fs.clone();
    let command = "";
    let status = 0;
    [...plan].forEach((k, i) => {
      const cmd = part(k);
      const join = i === 0 ? ";" : joinAt(i);
      command += i === 0 ? cmd : join === ";" ? `; ${cmd}` : ` && ${cmd}`;
      if (join === ";" || status === 0) status = this.fs.run(cmd);
    });
    this.fs.assign(saved);
    return command;
  }

  /** The command of one form of {@linkcode BASH_FORMS} but a chain, on `name` as it is now. */
  commandOf(form: typeof BASH_FORMS[number], name: string, b: ABash): string {
    const path = (n: string) => shellPath(n, b.form);
    const p = path(name);
    const lines = this.toolLines(name);
    const total = Math.max(1, lines.length);
    const line = (a: number) => Math.min(total, 1 + Math.floor((a / 1000) * total));
    // a count: mostly part of the file, sometimes all of it or more
    const count = b.len > 10 ? total + b.len - 10 : b.held ? line(b.a) : b.len;
    const stem = name.replace(/^.*\//, "").replace(/\.txt$/, "");
    let command: string;
    switch (form) {
      case "cat":
        command = `cat ${p}`;
        break;
      case "cat -n":
        command = `cat -n ${p}`;
        break;
      case "sed -n": {
        const start = Math.max(1, line(b.a) - (b.len % 3));
        command = b.len === 1
          ? `sed -n '${start}p' ${p}`
          : `sed -n '${start},${start + b.len - 1}p' ${p}`;
        break;
      }
      case "head":
        command = `head -n ${count} ${p}`;
        break;
      case "tail":
        command = `tail -n ${count} ${p}`;
        break;
      case "cat | head":
        command = `cat ${p} | head -${count}`;
        break;
      case "grep -n":
        command = `grep -n ${b.held ? this.wordIn(name, b.w, b.a) : `zeta${b.w}`} ${p}`;
        break;
      case "sed -i":
        command = this.sedCommand(name, p, b);
        break;
      case "printf >>":
        command = `printf '${stem}+ appended ${WORDS[b.w]}\\n' >> ${p}`;
        break;
      case "echo >":
        command = `echo '${stem}1 echoed ${WORDS[b.w]}' > ${p}`;
        break;
      case "cp":
        command = `cp ${path(this.pickName(b.g))} ${p}`;
        break;
      case "rm":
        command = `rm ${p}`;
        break;
      case "true":
        command = "true";
        break;
      case "sed -i && nl":
        command = `${this.sedCommand(name, p, b)} && nl ${p}`;
        break;
      case "keep":
        command = `cp ${p} ${path(this.keepName(name, b.g))}`;
        break;
      default:
        command = `${this.sedCommand(name, p, b)} && cat ${p}`;
    }
    return command;
  }

  /** A call of pi's `grep` tool: a word of the file or of no file, in the cwd, the file or its directory. */
  grep(g: AGrep): void {
    const name = this.pickName(g.f);
    const step: ScenarioStep & { op: "grep" } = {
      op: "grep",
      pattern: g.wide || (g.present && g.form === 3 && g.w % 2 === 0)
        ? "[0-9]"
        : g.present
        ? this.wordIn(name, g.w, 500)
        : `zeta${g.w}`,
    };
    const dir = name.includes("/") ? name.slice(0, name.lastIndexOf("/")) : ".";
    // every numbered line is cut at 100 matches: over several files, which rows pi shows then
    // depends on the order ripgrep walks them in (pi does not sort), so that search is of the file
    if (g.where === 1 || step.pattern === "[0-9]") step.path = shellPath(name, g.form);
    else if (g.where === 2) step.path = g.form % 2 === 1 && dir !== "." ? `./${dir}` : dir;
    if (g.deferred && this.inFlight) step.persist = "deferred";
    else if (!g.persist && this.inFlight) step.persist = false;
    if (g.noRecord) step.record = false;
    this.steps.push(step);
  }

  /** The lines (0-based, first and last) a replacement takes: in lines a read showed, if any. */
  place(r: ARep, all: string[], count: number, seen: [number, number][]): [number, number] {
    let p = Math.min(count - 1, Math.floor((r.at / 1000) * count));
    if (seen.length > 0) {
      const [s, e] = seen[seen.length - 1 - (r.at % seen.length)];
      p = Math.max(0, Math.min(count - 1, s - 1 + Math.floor((r.at / 1000) * (e - s + 1))));
    }
    return [p, Math.min(p + r.n - 1, count - 1, all.length - 1)];
  }

  /** One replacement of an edit call of `name` on lines `p..q` (as the model types them). */
  replacement(r: ARep, name: string, all: string[], p: number, q: number): Replacement {
    const stem = name.replace(/^.*\//, "").replace(/\.txt$/, "");
    const lines = all.slice(p, q + 1);
    const nl = r.nl && q < all.length - 1 ? "\n" : "";
    const added = Array.from(
      { length: r.add },
      (_, j) => `${stem}${p + 1 + j} edited ${WORDS[(r.w + j) % WORDS.length]}`,
    );
    let oldText: string;
    let newText = added.join("\n") + (r.add > 0 ? nl : "");
    switch (r.k) {
      case "exact":
        oldText = lines.join("\n") + nl;
        // a line that is a number is in many others: take the line breaks around it too
        if (p > 0 && /^\d+$/.test(lines[0]) && nl === "" && q < all.length - 1) {
          oldText = `\n${oldText}\n`;
          newText = `\n${newText}\n`;
        }
        break;
      case "part": {
        const sp = lines[0].indexOf(" ");
        oldText = sp > 0 ? lines[0].slice(0, sp + 1) : lines[0];
        newText = `${stem}${p + 1}:${WORDS[r.w]} `;
        break;
      }
      case "fuzzy": {
        const typed = lines.map((l) =>
          l.replace(/[\u2018\u2019]/g, "'").replace(/[\u201C\u201D]/g, '"')
            .replace(/[\u2013\u2014]/g, "-").trimEnd()
        );
        oldText = typed.join("\n");
        // nothing to normalise in these lines: a trailing space too many
        if (oldText === lines.join("\n")) oldText = [`${typed[0]} `, ...typed.slice(1)].join("\n");
        oldText += nl;
        break;
      }
      case "missing":
        oldText = `${stem} ${WORDS[r.w]} is not in the file`;
        break;
      case "dup":
        oldText = ` ${WORDS[r.w]}`;
        newText = ` ${WORDS[(r.w + 1) % WORDS.length]}`;
        break;
      case "twin": {
        const line = all.find((l) => l.includes("it's "));
        oldText = line === undefined
          ? `${stem} twin ${WORDS[r.w]} is not in the file`
          : line.slice(line.indexOf("it's ")).replace(/\r$/, "");
        break;
      }
      case "stale": {
        const h = this.history.get(this.fs.resolveFile(name) ?? name) ?? [];
        const old = h.length === 0 ? undefined : fileText(h[r.at % h.length]).text.split("\n")[p];
        oldText = old === undefined || old === "" ? `${stem} stale ${WORDS[r.w]}` : old;
        if (oldText.endsWith("\r")) oldText = oldText.slice(0, -1);
        break;
      }
    }
    if (oldText === "") oldText = `${stem} empty ${WORDS[r.w]}`;
    if (newText === oldText) newText = `${newText} again`;
    return { oldText, newText };
  }

  step(s: AStep): void {
    switch (s.t) {
      case "read":
        return this.read(s);
      case "writeTool":
        return this.writeTool(s);
      case "editTool":
        return this.editTool(s);
      case "bash":
        return this.bash(s);
      case "grep":
        return this.grep(s);
      case "edit":
        return this.edit(s.f, s.e);
      case "remove": {
        const name = this.pick(this.names, s.f);
        this.steps.push({ op: "remove", path: name });
        this.fs.remove(name);
        return;
      }
      case "symlink": {
        if (this.links.length === 0) return;
        const link = this.pick(this.links, s.l);
        const targets = [...this.regular, "missing.txt", ...this.links.filter((l) => l !== link)];
        const to = s.target >= 100 ? this.pickName(s.target) : this.pick(targets, s.target);
        const target = relativeTarget(link, to);
        this.steps.push({ op: "symlink", path: link, target } as ScenarioStep);
        this.fs.symlink(link, target);
        return;
      }
      case "message":
      case "compact":
      case "fork":
      case "restart":
        this.steps.push({ op: s.t });
        return;
      case "label":
        this.steps.push({ op: "label", name: `L${s.n}` });
        return;
      case "navigate":
        this.steps.push({ op: "navigate", to: `L${s.n}` });
        return;
      case "invalidate": {
        const name = this.pickName(s.f);
        const r = s.range.k === "full" ? {} : this.range(name, s.range);
        const step: ScenarioStep & { op: "invalidate" } = {
          op: "invalidate",
          path: typedPath(name, s.form),
        };
        if (r.offset !== undefined) step.offset = r.offset;
        if (r.limit !== undefined) step.limit = r.limit;
        this.steps.push(step);
        return;
      }
      case "storeFault":
        this.steps.push({
          op: "storeFault",
          path: this.pick(this.names, s.f),
          fault: s.fault,
        });
        return;
    }
  }
}

/** Turns an abstract session into a valid scenario vector. */
export function compileSession(
  s: ASession,
  id = "oracle-session",
  options: GeneratorOptions = {},
): Scenario {
  const symlinks = options.symlinks ?? SCHEMA_HAS_SYMLINK;
  const files = initialFiles(s.files);
  const c = new Compiler(files, symlinks, options.inFlight ?? true);
  if (s.files.initialLink && c.links.length > 0) {
    c.step({ t: "symlink", l: 0, target: 0 });
  }
  for (const chunk of s.chunks) for (const step of chunk) c.step(step);
  const vector: Scenario = {
    id,
    title: "a random pi session generated by the safety oracle",
    refs: ["tests/pi/support/oracle"],
    files,
    steps: c.steps.length > 0 ? c.steps : [{ op: "message" }],
  };
  return sanitizeScenario(vector);
}

function byteLength(s: string): number {
  return new TextEncoder().encode(s).length;
}

/**
 * Drops the steps a runner cannot execute (see the module comment), keeping
 * everything else as it is. Used after generation and after every shrink.
 * Dropping a step can join two turns (a label between them, say), which
 * changes what the tree holds, so it runs until nothing more is dropped.
 */
export function sanitizeScenario(vector: Scenario): Scenario {
  let steps = vector.steps;
  for (;;) {
    // a pass may also rewrite steps (a range refresh of a missing file becomes a whole-file one):
    // keep its result, and pass again until nothing more is dropped
    const kept = sanitizePass(vector.files, steps);
    const done = kept.length === steps.length;
    steps = kept;
    if (done) break;
  }
  return ScenarioSchema.parse({
    ...vector,
    steps: steps.length > 0 ? steps : [{ op: "message" }],
  });
}

/** One pass of {@linkcode sanitizeScenario}: the steps that can run, given all of `input`. */
function sanitizePass(
  files: Record<string, VectorContent>,
  input: readonly ScenarioStep[],
): ScenarioStep[] {
  const fs = FsModel.fromFiles(files);
  const tree = new SessionTree<never>();
  const servedNames = new Set<string>();
  const servedReal = new Set<string>();
  const steps: ScenarioStep[] = [];
  /** The current turn has write calls: its assistant message is an entry of the tree. */
  let turnEntry = false;
  input.forEach((s, index) => {
    if (isCallStep(s) && startsTurn(input, index)) {
      turnEntry = turnCalls(input, index).some((i) =>
        input[i].op === "writeTool" || input[i].op === "editTool" || input[i].op === "bash"
      );
      if (turnEntry) tree.appendAll("turn", []);
    }
    switch (s.op) {
      case "read": {
        const req = resolveRead(fs, s);
        const t = fs.text(req.name);
        const start = req.offset ?? 1;
        if (
          t !== undefined && t.utf8 && start >= 1 && start <= t.lines.length &&
          byteLength(t.lines[start - 1]) <= 51_200
        ) {
          servedNames.add(req.name);
          servedReal.add(fs.realName(req.name));
        }
        if (resultLands(input, index)) tree.append(turnEntry ? "result" : "read");
        else if (!turnEntry) tree.unpersistedRead();
        break;
      }
      case "writeTool": {
        // a write through links that loop fails: pi's write tool cannot run it
        const name = writeNameOf(s.path);
        if (fs.writeTarget(name) === undefined) return;
        fs.write(name, s.content);
        if (resultLands(input, index)) tree.append("result");
        break;
      }
      case "editTool":
        // pi's edit refuses what it cannot do (its error is the result): it always runs
        fs.edit(editToolArgs(s));
        if (resultLands(input, index)) tree.append("result");
        break;
      case "bash":
      case "grep":
        // a command that fails, or a search of a path that does not exist, is an error result
        if (s.op === "bash") fs.runBash(s.command);
        if (resultLands(input, index)) tree.append(turnEntry ? "result" : "read");
        else if (!turnEntry) tree.unpersistedRead();
        break;
      case "write":
        // a write through a link into a directory that does not exist fails: drop it
        if (fs.writeTarget(s.path) === undefined) return;
        fs.write(s.path, s.content);
        break;
      case "remove":
        fs.remove(s.path);
        break;
      case "symlink":
        fs.symlink(s.path, s.target);
        break;
      case "message":
        tree.append("other");
        break;
      case "label":
        if (!tree.canLabel()) return;
        tree.label(s.name);
        break;
      case "navigate":
        if (!tree.canNavigate(s.to)) return;
        tree.navigate(s.to);
        break;
      case "compact":
        if (!tree.canCompact()) return;
        tree.append("compact");
        break;
      case "fork":
        if (!tree.canFork()) return;
        tree.fork();
        break;
      case "restart":
        if (!tree.canRestart()) return;
        break;
      case "invalidate": {
        if (s.offset !== undefined || s.limit !== undefined) {
          const t = fs.text(nameOf(s.path));
          const off = s.offset ?? 1;
          if (
            t === undefined || off < 1 || off > t.lines.length ||
            (s.limit !== undefined && s.limit < 1)
          ) {
            steps.push({ op: "invalidate", path: s.path });
            tree.append("other");
            return;
          }
        }
        tree.append("other");
        break;
      }
      case "storeFault": {
        const name = nameOf(s.path);
        if (!servedNames.has(name) || !servedReal.has(fs.realName(name))) return;
        break;
      }
    }
    steps.push(s);
  });
  return steps;
}
