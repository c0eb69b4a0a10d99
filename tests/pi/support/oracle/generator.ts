// Random pi sessions as scenario vectors. fast-check generates an abstract
// session (file shapes plus a list of chunks: single steps, whole turns, and
// patterns that tend to leave the model with a stale view); `compileSession`
// turns it into a concrete vector against the oracle's own file model
// (edits are computed from the current content, ranges from the current
// line count, reverts pick an earlier content), and `sanitizeScenario` drops
// the steps a runner could not execute (a label before the first entry, a
// navigation to a label outside the current session, a range refresh of a
// missing file, a storeFault before anything was served, ...).
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
  fileText,
  FsModel,
  nameOf,
  relativeTarget,
  resolveRead,
  type VectorContent,
} from "./fs_model.ts";
import { SessionTree } from "./session_model.ts";

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
}

const WORDS = ["alpha", "beta", "gamma", "delta", "omega"];
const SMALL_NAMES = ["a.txt", "b.txt", "sub/c.txt"];
const LINK_NAMES = ["link.txt", "sub/ln.txt"];

interface SmallSpec {
  lines: number;
  eol: boolean;
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
  | { k: "restore" };

/** One read. */
export interface ARead {
  f: number;
  form: number;
  range: ARange;
  persist: boolean;
  bypass: boolean;
}

/** One abstract step. */
export type AStep =
  | ({ t: "read" } & ARead)
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

const stepArb = (o: Required<GeneratorOptions>): fc.Arbitrary<AStep> =>
  fc.oneof(
    { weight: 10, arbitrary: readArb(persistMostly).map((r) => ({ t: "read" as const, ...r })) },
    { weight: 6, arbitrary: fc.record({ t: fc.constant("edit" as const), f: fileIx, e: editArb }) },
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

/** Patterns that tend to leave the model with a stale or missing view. */
const patternArb = (o: Required<GeneratorOptions>): fc.Arbitrary<AStep[]> =>
  fc.record({
    p: fc.nat({ max: o.symlinks ? 8 : 7 }),
    f: fileIx,
    g: fileIx,
    a: at,
    w: word,
    len: fc.integer({ min: 1, max: 6 }),
    shift: fc.integer({ min: -4, max: 4 }),
    form: fc.nat({ max: 9 }),
    n: fc.nat({ max: 2 }),
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
  { f: fi, g: gi, a, w, len, shift, form, n }: {
    f: number;
    g: number;
    a: number;
    w: number;
    len: number;
    shift: number;
    form: number;
    n: number;
  },
): AStep[] {
  // 100+i: the i-th regular file (same file for reads and edits); 200: the first link
  const f = 100 + fi;
  const g = 100 + gi;
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

/** A turn: several reads of one assistant message, all but the last unpersisted. */
const turnArb: fc.Arbitrary<AStep[]> = fc.record({
  reads: fc.array(readArb(fc.constant(false)), { minLength: 2, maxLength: 3 }),
  last: fc.boolean(),
  edit: fc.option(fc.record({ f: fileIx, e: editArb }), { freq: 3 }),
}).map(({ reads, last, edit }) => {
  const steps: AStep[] = reads.map((r) => ({ t: "read" as const, ...r }));
  if (last) (steps[steps.length - 1] as ARead).persist = true;
  if (edit !== null) steps.splice(1, 0, { t: "edit", ...edit });
  return steps;
});

const filesArb: fc.Arbitrary<FilesSpec> = fc.record({
  count: fc.integer({ min: 1, max: 3 }),
  small: fc.array(
    fc.record({
      lines: fc.integer({ min: 5, max: 120 }),
      eol: fc.nat({ max: 4 }).map((n) => n !== 0),
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
  };
  const chunk = fc.oneof(
    { weight: 10, arbitrary: stepArb(o).map((s) => [s]) },
    { weight: 5, arbitrary: patternArb(o) },
    { weight: 3, arbitrary: turnArb },
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
  for (let i = 1; i <= spec.lines; i++) lines.push(`${stem}${i} ${WORDS[i % WORDS.length]}`);
  return lines.join("\n") + (spec.eol ? "\n" : "");
}

function bigContent(spec: BigSpec): string {
  const lines: string[] = [];
  for (let i = 1; i <= spec.lines; i++) {
    lines.push(spec.wide ? `row ${i} ${"x".repeat(22)}` : `${i}`);
  }
  return lines.join("\n") + (spec.eol ? "\n" : "");
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

const same = (a: Uint8Array, b: Uint8Array) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

class Compiler {
  readonly fs: FsModel;
  readonly regular: string[];
  readonly names: string[];
  readonly links: string[];
  readonly original = new Map<string, Uint8Array>();
  readonly history = new Map<string, Uint8Array[]>();
  readonly ranges = new Map<string, { offset?: number; limit?: number }[]>();
  readonly steps: ScenarioStep[] = [];

  constructor(
    files: Record<string, string>,
    symlinks: boolean,
    readonly inFlight: boolean,
  ) {
    this.fs = FsModel.fromFiles(files);
    this.regular = Object.keys(files);
    this.links = symlinks ? LINK_NAMES : [];
    this.names = [...this.regular, ...this.links];
    for (const [k, v] of Object.entries(files)) {
      const b = contentBytes(v);
      this.original.set(k, b);
      this.history.set(k, [b]);
    }
  }

  pick(list: string[], i: number): string {
    return list[i % list.length];
  }

  /** A name to read: `i` < 100 any name, 100+k the k-th regular file, 200+k the k-th link. */
  pickName(i: number): string {
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
  }

  write(name: string, bytes: Uint8Array): void {
    const content: VectorContent = bytesContent(bytes);
    this.steps.push({ op: "write", path: name, content });
    this.fs.write(name, content);
    const h = this.history.get(name) ?? [];
    if (!h.some((x) => same(x, bytes))) h.push(bytes);
    this.history.set(name, h);
  }

  edit(f: number, e: AEdit): void {
    const name = this.pick(this.regular, f % 100);
    const h = this.history.get(name)!;
    const curBytes = this.fs.read(name) ?? h[h.length - 1];
    if (e.k === "revert") {
      const earlier = h.filter((x) => !same(x, curBytes)).reverse();
      if (earlier.length > 0) this.write(name, earlier[e.i % earlier.length]);
      return;
    }
    if (e.k === "restore") {
      this.write(name, this.original.get(name)!);
      return;
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
        let next = `${stem}${p + 1} ${WORDS[e.w]}`;
        if (next === lines[p]) next = `${stem}${p + 1} ${WORDS[(e.w + 1) % WORDS.length]}`;
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
    this.write(name, typeof out === "string" ? new TextEncoder().encode(out) : out);
  }

  step(s: AStep): void {
    switch (s.t) {
      case "read":
        return this.read(s);
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
 */
export function sanitizeScenario(vector: Scenario): Scenario {
  const fs = FsModel.fromFiles(vector.files);
  const tree = new SessionTree<never>();
  const servedNames = new Set<string>();
  const servedReal = new Set<string>();
  const steps: ScenarioStep[] = [];
  for (const s of vector.steps) {
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
        if (s.persist === false) tree.unpersistedRead();
        else tree.append("read");
        break;
      }
      case "write":
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
        if (!tree.canLabel()) continue;
        tree.label(s.name);
        break;
      case "navigate":
        if (!tree.canNavigate(s.to)) continue;
        tree.navigate(s.to);
        break;
      case "compact":
        if (!tree.canCompact()) continue;
        tree.append("compact");
        break;
      case "fork":
        if (!tree.canFork()) continue;
        tree.fork();
        break;
      case "restart":
        if (!tree.canRestart()) continue;
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
            continue;
          }
        }
        tree.append("other");
        break;
      }
      case "storeFault": {
        const name = nameOf(s.path);
        if (!servedNames.has(name) || !servedReal.has(fs.realName(name))) continue;
        break;
      }
    }
    steps.push(s);
  }
  return ScenarioSchema.parse({
    ...vector,
    steps: steps.length > 0 ? steps : [{ op: "message" }],
  });
}
