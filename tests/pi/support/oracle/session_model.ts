// The oracle's model of a pi session tree: entries with parents, a leaf,
// labels, compaction barriers, forks (a new session holding the current
// branch) and restarts (same session, nothing in it changes). It carries
// payloads per entry (the oracle stores what a read output, or a write or edit call,
// told the model). It also answers which tree steps the runners can execute
// (a label needs a leaf, a navigation needs its label in the current
// session, ...), which the generator uses to keep vectors valid. And it
// splits a vector's steps into turns the way pi makes them (one assistant
// message per turn carrying every tool call of it).

/**
 * Kinds of entries that matter to the model's context: `read` a persisted
 * read (for a turn without writes or edits it stands for the assistant
 * message and the result), `turn` the assistant message of a turn with
 * `write` or `edit` calls (their content or replacements, or their unknown
 * outcome, is in the context from there), `result` the persisted result of a
 * call whose message is a `turn` entry.
 */
export type EntryKind = "read" | "turn" | "result" | "other" | "compact";

/** The parts of a scenario step the turn rule looks at. */
export interface TurnStep {
  op: string;
  persist?: boolean | "deferred";
}

/**
 * Whether a call step's result reaches the session at its own step: not
 * `persist: false` (it has not returned) nor `"deferred"` (it comes with the
 * next call of its turn that returns at once).
 */
export function returnsAtOnce(s: TurnStep): boolean {
  return s.persist !== false && s.persist !== "deferred";
}

/** Steps that only change files: they may sit between the calls of one turn. */
const FILE_OPS: ReadonlySet<string> = new Set(["write", "remove", "symlink", "storeFault"]);

/** A tool call of the model: a `read`, `writeTool`, `editTool`, `bash` or `grep` step. */
export function isCallStep(s: TurnStep): boolean {
  return s.op === "read" || s.op === "writeTool" || s.op === "editTool" || s.op === "bash" ||
    s.op === "grep";
}

/**
 * Whether the call step at `index` starts a turn (a new assistant message):
 * it does unless the previous call step, with only file changes in between,
 * had `persist: false` or `"deferred"` (it has not returned, so the model is
 * still in the same message).
 */
export function startsTurn(steps: readonly TurnStep[], index: number): boolean {
  for (let i = index - 1; i >= 0; i--) {
    const s = steps[i];
    if (isCallStep(s)) return returnsAtOnce(s);
    if (!FILE_OPS.has(s.op)) return true;
  }
  return true;
}

/**
 * The indices of the call steps of the turn the call step at `index` starts:
 * it and the next call steps until one starts a new turn; file changes are
 * skipped, any other step ends the turn.
 */
export function turnCalls(steps: readonly TurnStep[], index: number): number[] {
  const out: number[] = [];
  for (let i = index; i < steps.length; i++) {
    const s = steps[i];
    if (isCallStep(s)) {
      if (i !== index && startsTurn(steps, i)) break;
      out.push(i);
    } else if (!FILE_OPS.has(s.op)) break;
  }
  return out;
}

/**
 * Whether the result of the call step at `index` reaches the session: not
 * `persist: false`, and a `"deferred"` one only when a later call of its turn
 * returns at once (a step that ends the turn first leaves it unanswered;
 * the checker applies the same rule per turn, as `lastReturns`).
 */
export function resultLands(steps: readonly TurnStep[], index: number): boolean {
  const s = steps[index];
  if (s.persist !== "deferred") return s.persist !== false;
  // the calls from this one to the end of its turn: the last returns at once, or none does
  const calls = turnCalls(steps, index);
  return returnsAtOnce(steps[calls[calls.length - 1]]);
}

/** One session entry. */
export interface TreeEntry<T> {
  id: number;
  parent: number | null;
  kind: EntryKind;
  /** What the entry told the model: a read's output, a `turn`'s write and edit calls. */
  payloads: T[];
}

/** A session tree with a leaf, as pi's SessionManager keeps it. */
export class SessionTree<T> {
  readonly #entries = new Map<number, TreeEntry<T>>();
  /** Entries of the current session (a fork starts a new one holding the branch). */
  #session = new Set<number>();
  /** The session holds an assistant message (pi writes its file only then). */
  #sessionHasAssistant = false;
  #labels = new Map<string, number>();
  #next = 1;
  /** Current leaf, `null` before the first entry. */
  leaf: number | null = null;
  /** The leaf is the entry appended last (pi reopens a session file at its last entry). */
  #leafIsLast = true;
  /**
   * pi's leaf is one entry past ours: an unpersisted read appended its
   * assistant message (tool call) in pi, which this model does not record.
   */
  #piLeafAhead = false;

  /** Appends an entry at the leaf and moves the leaf to it. */
  append(kind: EntryKind, payload?: T): number {
    return this.appendAll(kind, payload === undefined ? [] : [payload]);
  }

  /** Appends an entry with several payloads (a `turn`: one per write or edit call, in call order). */
  appendAll(kind: EntryKind, payloads: T[]): number {
    const id = this.#next++;
    this.#entries.set(id, { id, parent: this.leaf, kind, payloads });
    this.#session.add(id);
    if (kind === "read" || kind === "turn") this.#sessionHasAssistant = true;
    this.leaf = id;
    this.#leafIsLast = true;
    this.#piLeafAhead = false;
    return id;
  }

  /**
   * Records a read served but not persisted in a turn without a `turn` entry
   * (pi appends its assistant message, which this model does not record).
   */
  unpersistedRead(): void {
    this.#leafIsLast = true;
    this.#piLeafAhead = true;
  }

  /** Root-to-leaf entries. */
  branch(): TreeEntry<T>[] {
    const out: TreeEntry<T>[] = [];
    let cur = this.leaf === null ? undefined : this.#entries.get(this.leaf);
    while (cur !== undefined) {
      out.push(cur);
      cur = cur.parent === null ? undefined : this.#entries.get(cur.parent);
    }
    return out.reverse();
  }

  /** Payloads of the reads in the model's context: the branch after its latest compaction. */
  contextPayloads(): T[] {
    const b = this.branch();
    let from = 0;
    for (let i = b.length - 1; i >= 0; i--) {
      if (b[i].kind === "compact") {
        from = i + 1;
        break;
      }
    }
    const out: T[] = [];
    for (const e of b.slice(from)) out.push(...e.payloads);
    return out;
  }

  /** Whether `label` can run: there is a leaf (and pi's leaf is the same entry). */
  canLabel(): boolean {
    return this.leaf !== null && !this.#piLeafAhead;
  }

  /** The `label` step. */
  label(name: string): void {
    if (this.leaf === null) throw new Error("label: nothing to label yet");
    this.#labels.set(name, this.leaf);
  }

  /** Whether `navigate` to `name` can run: the label exists in the current session. */
  canNavigate(name: string): boolean {
    const to = this.#labels.get(name);
    return to !== undefined && this.#session.has(to);
  }

  /** The `navigate` step (pi /tree). */
  navigate(name: string): void {
    const to = this.#labels.get(name);
    if (to === undefined || !this.#session.has(to)) {
      throw new Error(`navigate: no label '${name}' in this session`);
    }
    this.leaf = to;
    this.#leafIsLast = false;
    this.#piLeafAhead = false;
  }

  /** Whether `compact` can run (pi needs a non-empty branch). */
  canCompact(): boolean {
    return this.leaf !== null;
  }

  /** Whether `fork` can run (pi forks at a leaf). */
  canFork(): boolean {
    return this.leaf !== null;
  }

  /** The `fork` step: a new session holding the current branch. */
  fork(): void {
    const ids = this.branch().map((e) => e.id);
    this.#session = new Set(ids);
    this.#sessionHasAssistant = this.branch().some((e) => e.kind === "read" || e.kind === "turn");
    this.#leafIsLast = true;
    this.#piLeafAhead = false;
  }

  /**
   * Whether `restart` keeps the leaf where this model has it: pi reopens the
   * session file at its last entry and writes the file only once it holds an
   * assistant message (any persisted read, any turn with a write call).
   */
  canRestart(): boolean {
    return this.leaf !== null && this.#leafIsLast && this.#sessionHasAssistant;
  }

  /** Number of entries ever appended. */
  get size(): number {
    return this.#entries.size;
  }
}
