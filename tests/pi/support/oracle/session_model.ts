// The oracle's model of a pi session tree: entries with parents, a leaf,
// labels, compaction barriers, forks (a new session holding the current
// branch) and restarts (same session, nothing in it changes). It carries a
// payload per entry (the oracle stores what a read output told the model).
// It also answers which tree steps the runners can execute (a label needs a
// leaf, a navigation needs its label in the current session, ...), which the
// generator uses to keep vectors valid.

/** Kinds of entries that matter to the model's context. */
export type EntryKind = "read" | "other" | "compact";

/** One session entry. */
export interface TreeEntry<T> {
  id: number;
  parent: number | null;
  kind: EntryKind;
  /** For reads: what the output told the model (absent for errors). */
  payload?: T;
}

/** A session tree with a leaf, as pi's SessionManager keeps it. */
export class SessionTree<T> {
  readonly #entries = new Map<number, TreeEntry<T>>();
  /** Entries of the current session (a fork starts a new one holding the branch). */
  #session = new Set<number>();
  #sessionHasRead = false;
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
    const id = this.#next++;
    this.#entries.set(id, { id, parent: this.leaf, kind, payload });
    this.#session.add(id);
    if (kind === "read") this.#sessionHasRead = true;
    this.leaf = id;
    this.#leafIsLast = true;
    this.#piLeafAhead = false;
    return id;
  }

  /** Records a read served but not persisted (pi appends its tool call only). */
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
    for (const e of b.slice(from)) if (e.payload !== undefined) out.push(e.payload);
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
    this.#sessionHasRead = this.branch().some((e) => e.kind === "read");
    this.#leafIsLast = true;
    this.#piLeafAhead = false;
  }

  /**
   * Whether `restart` keeps the leaf where this model has it: pi reopens the
   * session file at its last entry and writes the file only once it holds an
   * assistant message (any persisted read).
   */
  canRestart(): boolean {
    return this.leaf !== null && this.#leafIsLast && this.#sessionHasRead;
  }

  /** Number of entries ever appended. */
  get size(): number {
    return this.#entries.size;
  }
}
