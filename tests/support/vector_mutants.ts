// Planted mutants of the reference implementation, one per SPEC rule with a judgment call or a
// MUST in §5-§8 (and §3, §4, §6 where a reading could go either way). Each is a textual edit of
// a copy of src/; tests/vector_mutants_test.ts runs the whole vector corpus on each copy and
// fails when a mutant passes every vector: then some rule is not pinned by any vector.
//
// Adding one is one entry: { name, rule: "SPEC §x.y: what the rule says", file, find, replace }
// (`find` must occur exactly once in `file`), or several `edits`.

/** One textual edit of a file of the copy (path relative to the repository root). */
export interface MutantEdit {
  file: string;
  find: string;
  replace: string;
}

/** A planted mutant: what rule it breaks, and how. */
export type VectorMutant =
  & { name: string; rule: string }
  & (MutantEdit | { edits: MutantEdit[] });

/** The mutants every vector run must kill. */
export const VECTOR_MUTANTS: VectorMutant[] = [
  // §4 ranges
  {
    name: "shorthand-n-is-one-line",
    rule: "SPEC §4.1: `path:N` reads from line N to the end",
    file: "src/core/range.ts",
    find: "  if (dash === -1) return { offset: parseLineNumber(suffix, suffix, path) };",
    replace:
      "  if (dash === -1) return { offset: parseLineNumber(suffix, suffix, path), limit: 1 };",
  },
  // §5.1 metadata
  {
    name: "derived-mode-without-basehash",
    rule: "SPEC §5.1: derived modes MUST carry a non-empty baseHash",
    file: "src/core/meta.ts",
    find: `const DERIVED_MODES: ReadonlySet<ReadMode> = new Set([
  "unchanged",
  "unchanged_range",
  "diff",
  "partial",
]);`,
    replace: `const DERIVED_MODES: ReadonlySet<ReadMode> = new Set([]);`,
  },
  {
    name: "partial-held-stretches-not-touching",
    rule:
      "SPEC §5.1: a partial answer's held stretches may touch (stretches of two contents), not overlap",
    file: "src/core/meta.ts",
    find: "    return i === 0 || (before.end !== undefined && s.start > before.end);",
    replace: "    return i === 0 || (before.end !== undefined && s.start > before.end + 1);",
  },
  // §5.2 transitions
  {
    name: "unchanged-served-may-differ",
    rule: "SPEC §5.2: `unchanged` applies only when servedHash = baseHash",
    file: "src/core/trust.ts",
    find: "full.hash === B && H === B",
    replace: "full.hash === B",
  },
  {
    name: "diff-without-anchor",
    rule: "SPEC §5.2: a full `diff` needs the full slot to hold its base",
    file: "src/core/trust.ts",
    find: "if (S === FULL_SCOPE) return full !== undefined && full.hash === B ? set() : ignore;",
    replace: "if (S === FULL_SCOPE) return set();",
  },
  {
    name: "unchanged-range-on-other-range",
    rule: "SPEC §5.2: `unchanged_range` needs its own range slot or the full slot to hold the base",
    edits: [{
      file: "src/core/trust.ts",
      find:
        '      if (S === FULL_SCOPE || B === undefined || B === "") return ignore;\n      const exact = getScope(current, S);\n      return (exact !== undefined && exact.hash === B) || (full !== undefined && full.hash === B)',
      replace:
        '      if (S === FULL_SCOPE || B === undefined || B === "") return ignore;\n      const exact = getScope(current, S);\n      return true',
    }],
  },
  {
    name: "trust-layer-applies-partial",
    rule:
      "SPEC §5.2: the trust layer alone ignores a `partial` event (its guard needs the model's views)",
    file: "src/core/trust.ts",
    find:
      "      // needs the model's views (SPEC §8.4): replay decides, the slots alone cannot\n      return ignore;",
    replace: "      return set();",
  },
  // §5.3 invalidation
  {
    name: "range-refresh-leaves-lines-known",
    rule: "SPEC §5.3: a range invalidation marks its lines unknown (the full slot stops vouching)",
    file: "src/core/replay.ts",
    find: "  sink.addKeyView(inv.pathKey, { seq: seq - 0.5, ...lines, hash: null });",
    replace: "",
  },
  {
    name: "full-refresh-keeps-ranges",
    rule: "SPEC §5.3: a full invalidation deletes every slot of the path",
    file: "src/core/trust.ts",
    find: "  if (!current || scope === FULL_SCOPE) return undefined;",
    replace:
      "  if (!current) return undefined;\n  if (scope === FULL_SCOPE) return Object.keys(current.ranges).length ? { ranges: current.ranges } : undefined;",
  },
  // §5.4 base selection
  {
    name: "range-tie-goes-to-full",
    rule: "SPEC §5.4: the fresher slot wins; the range slot wins a tie",
    file: "src/core/trust.ts",
    find: "if (exact && full) return full.seq > exact.seq ? full : exact;",
    replace: "if (exact && full) return full.seq >= exact.seq ? full : exact;",
  },
  {
    name: "range-ignores-fresher-full",
    rule: "SPEC §5.4: a fresher full slot beats a stale range slot",
    file: "src/core/trust.ts",
    find: "if (exact && full) return full.seq > exact.seq ? full : exact;",
    replace: "if (exact && full) return exact;",
  },
  // §5.5 the newest view
  {
    name: "newest-view-check-off",
    rule: "SPEC §5.5: a derived answer needs its base to be the newest view of every line",
    file: "src/core/decision.ts",
    find: "  const conflict = newestViewConflict(query, linesOf(base.hash)!, linesOf);",
    replace: "  const conflict = undefined;",
  },
  {
    name: "name-not-seen-ignored",
    rule: "SPEC §5.5(b): every line of the answer needs a view under the name the model used",
    file: "src/core/view.ts",
    find: `  if (overlapLines(uncoveredName, q.start, last).length > 0) return "name_not_seen";`,
    replace: "",
  },
  {
    name: "name-views-not-compared",
    rule: "SPEC §5.5(b): the newest view of each line under the name must have the base's text",
    file: "src/core/view.ts",
    find: "  for (let i = q.nameViews.length - 1; i >= 0 && open.length > 0; i--) {",
    replace: "  for (let i = -1; i >= 0 && open.length > 0; i--) {",
  },
  {
    name: "range-reaching-end-not-to-end",
    rule: "SPEC §5.5: a range that reaches the last line also showed where the file ends",
    file: "src/core/view.ts",
    find: "  const showsEnd = meta.rangeEnd === meta.totalLines &&",
    replace: "  const showsEnd = false &&",
  },
  {
    name: "changes-elsewhere-shows-end",
    rule:
      "SPEC §5.5: an `unchanged_range` 'changes exist outside' answer says nothing about the end",
    file: "src/core/view.ts",
    find: `    !(meta.mode === "unchanged_range" && meta.baseHash !== meta.servedHash);`,
    replace: "    true;",
  },
  {
    name: "derived-base-not-checked-at-replay",
    rule: "SPEC §5.5: a replayed derived read is held only if its base passes the rule",
    file: "src/core/replay.ts",
    find:
      "      (isAnchorMode(meta.mode) || covered || partial ||\n        derivedBaseHeld(sink, before, meta, name));",
    replace: "      true;",
  },
  {
    name: "plain-read-not-unknown",
    rule: "SPEC §5.5: a read without metadata makes its lines unknown",
    file: "src/core/replay.ts",
    find: "  const unknown: LineView = { seq: seq - 0.5, start: 1, end: TO_END, hash: null };",
    replace: "  const unknown: LineView = { seq: -1, start: 1, end: 0, hash: null };",
  },
  // §5.6 metadata and its call
  {
    name: "metadata-not-checked-against-call",
    rule: "SPEC §5.6: metadata counts only when it matches the call it answers",
    file: "src/core/replay.ts",
    find: "export function metaMatchesCall(meta: ReadCacheMetaV1, call: ReadCall): boolean {",
    replace:
      "export function metaMatchesCall(meta: ReadCacheMetaV1, call: ReadCall): boolean {\n  if (call) return true;",
  },
  // §5.7 interval coverage
  {
    name: "coverage-off",
    rule: "SPEC §5.7: a range every line of which the newest views show with this content",
    file: "src/core/decision.ts",
    find:
      '    (d.mode === "full" || d.mode === "baseline_fallback") && meta.scopeKey !== FULL_SCOPE &&',
    replace: "    false &&",
  },
  {
    name: "coverage-under-identity-only",
    rule: "SPEC §5.7: coverage needs the newest views under the pathKey AND the name",
    file: "src/core/view.ts",
    find: "  for (const views of [keyViews, nameViews]) {",
    replace: "  for (const views of [keyViews]) {",
  },
  {
    name: "coverage-for-whole-file",
    rule: "SPEC §5.7: coverage never answers a whole-file request",
    file: "src/core/decision.ts",
    find:
      '    (d.mode === "full" || d.mode === "baseline_fallback") && meta.scopeKey !== FULL_SCOPE &&',
    replace: '    (d.mode === "full" || d.mode === "baseline_fallback") &&',
  },
  {
    name: "coverage-despite-bypass",
    rule:
      "SPEC §5.7: coverage applies only where the plain decision serves an anchor: not for bypass_cache or a pending write",
    file: "src/core/decision.ts",
    find: '    state.prep.kind === "ok" && !plan.input.bypass && meta !== undefined &&',
    replace: '    state.prep.kind === "ok" && meta !== undefined &&',
  },
  // §5.8 writes
  {
    name: "write-changes-nothing",
    rule: "SPEC §5.8: a write that is proof of content sets the full slot and a whole-file view",
    file: "src/core/replay.ts",
    find: "        applyWriteEvent(sink, e.call, e.hash, e.seq);",
    replace: "",
  },
  {
    name: "write-after-read-in-turn-taken",
    rule:
      "SPEC §5.8: a write whose result follows a read of the file in the same turn is not proof",
    file: "src/core/replay.ts",
    find:
      "          this.#readInTurn(branch, i, e.call) ||\n          this.#otherChangeInTurn(e.callId, e.call)",
    replace: "          this.#otherChangeInTurn(e.callId, e.call)",
  },
  {
    name: "write-after-plain-read-taken",
    rule: "SPEC §5.8: any read result of the file earlier in the turn, with or without metadata",
    file: "src/core/replay.ts",
    find: '      if (typeof e === "string" || e.kind !== "read") continue;',
    replace:
      '      if (typeof e === "string" || e.kind !== "read" || e.meta === undefined) continue;',
  },
  {
    name: "malformed-write-hash-ignored",
    rule: "SPEC §5.8: a write event whose hash is not a content hash makes the file unknown",
    file: "src/core/replay.ts",
    find: "        if (\n          !isContentHash(e.hash) || this.#turnOpaque || viewed ||",
    replace:
      "        if (!isContentHash(e.hash)) continue;\n        if (\n          this.#turnOpaque || viewed ||",
  },
  {
    name: "write-of-lone-surrogate-is-proof",
    rule: "SPEC §5.8: content that is not well-formed Unicode is not proof",
    file: "src/shell/read_service.ts",
    find: `  if (typeof a.content !== "string" || !a.content.isWellFormed()) return undefined;`,
    replace: `  if (typeof a.content !== "string") return undefined;`,
  },
  {
    name: "pending-write-ignored",
    rule: "SPEC §5.8: a read of a file with a change pending in the same turn is served in full",
    file: "src/shell/read_service.ts",
    find:
      "  if (pending.length === 0) return false; // every read asks: the usual answer without a Set",
    replace: "  if (pending.length >= 0) return false;",
  },
  {
    name: "unanswered-write-ignored",
    rule: "SPEC §5.8: a change that never returned leaves its file unknown from its turn's start",
    file: "src/core/replay.ts",
    find: "    for (const call of this.#pending.values()) this.#unknownFromTurnStart(call);",
    replace: "",
  },
  // §5.9 the model's own edits
  {
    name: "edit-changes-nothing",
    rule: "SPEC §5.9: an edit result is the model's belief or makes the file unknown",
    file: "src/core/replay.ts",
    find:
      '      } else if (e.kind === "changed") {\n        if (e.callId !== undefined) this.#pending.delete(e.callId);',
    replace:
      '      } else if (e.kind === "changed") {\n        if (e.callId !== undefined) this.#pending.delete(e.callId);\n        continue;',
  },
  {
    name: "edit-belief-without-exact-match",
    rule: "SPEC §5.9(1): a belief needs pi's exact match, not its normalising fallback",
    file: "src/core/edit.ts",
    find: `  if ("error" in m || m.fuzzy) return undefined;`,
    replace: `  if ("error" in m) return undefined;`,
  },
  {
    name: "edit-belief-mixed-line-endings",
    rule: "SPEC §5.9(2): a belief needs uniform line endings",
    file: "src/core/edit.ts",
    find: "  if (back !== body) return undefined;",
    replace: "",
  },
  {
    name: "edit-text-once-in-base-only",
    rule: "SPEC §5.9(3): the edit's text must be once in everything the model holds, any content",
    file: "src/core/edit.ts",
    find: "(Number.isFinite(unseen) || places.some((p) => p.count !== 1)))",
    replace: "(Number.isFinite(unseen) || places.some((p) => p.count === 0)))",
  },
  {
    name: "edit-unlocated-makes-all-unknown",
    rule: "SPEC §5.9: lines before the earliest place an edit can start stay known",
    file: "src/core/edit.ts",
    find: "  if (!Number.isFinite(from) || from <= 1) return undefined;",
    replace: "  return undefined;",
  },
  {
    name: "edit-held-not-checked-at-replay",
    rule: "SPEC §5.9: replay takes edit metadata only when its held stretches are the newest views",
    file: "src/core/replay.ts",
    find: "  const held = meta.held.every((h) =>",
    replace: "  const held = true || meta.held.every((h) =>",
  },
  {
    name: "edit-count-skips-unloadable",
    rule: "SPEC §5.9(3): a content the model holds that cannot be loaded could hold the text",
    file: "src/core/edit.ts",
    find:
      "  if (belief !== undefined && (Number.isFinite(unseen) || places.some((p) => p.count !== 1))) {",
    replace: "  if (belief !== undefined && places.some((p) => p.count !== 1)) {",
  },
  {
    name: "edit-endings-of-base-only",
    rule: "SPEC §5.9(2): every line the model holds must end like the base's for a belief",
    file: "src/core/edit.ts",
    find: "    !endingsAgree(input.base.hash, baseLines, [...keyPieces, ...namePieces], views)",
    replace: "    false",
  },
  {
    name: "edit-crlf-endings-unseen-believed",
    rule: "SPEC §5.9(2): a CRLF file's belief needs a held line whose CR the model saw",
    file: "src/core/edit.ts",
    find: '    views.every((v) => [...v.values()].some((l) => l.endsWith("\\r")));',
    replace: "    true;",
  },
  {
    name: "edit-place-in-normalised-lines",
    rule: "SPEC §5.9: where an edit could start is a line of the model's view, not of pi's text",
    file: "src/core/edit.ts",
    find: "      return of[lo];\n",
    replace: "      return first + lo;\n",
  },
  {
    name: "edit-unknown-lines-cannot-hold-text",
    rule: "SPEC §5.9(3): lines the model holds whose content is unknown could hold the text",
    file: "src/core/edit.ts",
    find: "      p.hash === null ? p.vacant !== true : contents.get(p.hash) === undefined",
    replace: "      p.hash === null ? false : contents.get(p.hash) === undefined",
  },
  {
    name: "edit-chain-not-taken",
    rule: "SPEC §5.9(4): several edits of one file in one message are one belief, in call order",
    file: "src/core/replay.ts",
    find: "    if (at === -1) return this.#otherChangeInTurn(callId, call);\n",
    replace: "    if (at !== -2) return this.#otherChangeInTurn(callId, call);\n",
  },
  {
    name: "edit-chain-without-tool-taken",
    rule:
      "SPEC §5.9(4), §11.3: a message change without a tool is not an edit: any other change of the file in the message leaves it unknown",
    file: "src/core/replay.ts",
    find: '      (c.tool !== "edit" ||',
    replace: '      (c.tool === "write" ||',
  },
  {
    name: "edit-chain-later-result-first-taken",
    rule:
      "SPEC §5.9(4): an edit of a message is taken only while the later edits of the file have no result yet",
    file: "src/core/replay.ts",
    find: "(k < at ? !this.#takenEdits.has(c.callId) : !this.#pending.has(c.callId)))",
    replace: "(k < at ? !this.#takenEdits.has(c.callId) : false))",
  },
  {
    name: "edit-chain-failure-keeps-earlier-belief",
    rule:
      "SPEC §5.9(4): a failed change of a message leaves the file unknown from the turn start, undoing the beliefs of the message taken before it",
    file: "src/core/replay.ts",
    find: "    this.#file(event, call.pathKey, call.name, undefined, true);",
    replace: "    this.#file(event, call.pathKey, call.name, undefined, false);",
  },
  {
    name: "edit-not-taken-takes-seq",
    rule:
      "SPEC §6.2: edit metadata takes a seq only when valid, for the call's pathKey, and rule 4 holds",
    file: "src/core/replay.ts",
    find:
      "          this.#unknownFromTurnStart(call);\n          if (viewed) this.#unknownHere(call);\n",
    replace:
      "          if (meta !== undefined) this.#seq++;\n          this.#unknownFromTurnStart(call);\n          if (viewed) this.#unknownHere(call);\n",
  },
  {
    name: "edit-chain-planned-on-message-start",
    rule: "SPEC §5.9(4): a later edit of the message is planned on the earlier edits' belief",
    file: "src/shell/read_service.ts",
    find: "    out.push({ call: c.call, meta });\n",
    replace: "",
  },
  {
    name: "edit-removed-lines-stay-unknown",
    rule: "SPEC §5.9: lines an edit left holding no text the model saw are vacant, not unknown",
    file: "src/core/replay.ts",
    find:
      "  for (const [a, b] of stale) add({ seq: seq - 0.5, start: a, end: b, hash: null, vacant: true });",
    replace: "  for (const [a, b] of stale) add({ seq: seq - 0.5, start: a, end: b, hash: null });",
  },
  {
    name: "edit-unknown-to-end",
    rule: "SPEC §5.9: an edit leaves unknown only where the text of older views moved to",
    file: "src/core/replay.ts",
    find: "  const moved = meta.held.length === 0\n",
    replace: "  const moved = true\n",
  },
  {
    name: "edit-unmoved-gap-line-vacant",
    rule:
      "SPEC §5.9: a line between held stretches that an older view showed is unknown after the edit, even where it did not move",
    file: "src/core/replay.ts",
    find: "      if (x > y) continue;\n      out.push([x + g.shift,",
    replace: "      if (x > y || g.shift === 0) continue;\n      out.push([x + g.shift,",
  },
  {
    name: "edit-unmoved-gap-line-keeps-view",
    rule:
      "SPEC §5.9: a line between held stretches that did not move still loses its older view (unknown)",
    edits: [
      {
        file: "src/core/replay.ts",
        find: "      if (x > y) continue;\n      out.push([x + g.shift,",
        replace:
          "      if (x > y) continue;\n      if (g.shift === 0) {\n        unmovedGaps.push([x, y]);\n        continue;\n      }\n      out.push([x + g.shift,",
      },
      {
        file: "src/core/replay.ts",
        find: "function moveInto(\n",
        replace: "const unmovedGaps: Interval[] = [];\nfunction moveInto(\n",
      },
      {
        file: "src/core/replay.ts",
        find: "  let stale = viewed;\n",
        replace:
          "  let stale = viewed;\n  for (const [a, b] of unmovedGaps.splice(0)) stale = subtractLines(stale, a, b);\n",
      },
    ],
  },
  {
    name: "edit-gaps-do-not-move",
    rule: "SPEC §5.9: lines between held stretches move by the lines the edit added before them",
    file: "src/core/replay.ts",
    find: "    shift = (shown[k]?.end ?? h.end) - h.end;",
    replace: "    shift = 0;",
  },
  {
    name: "edit-held-only-as-base",
    rule: "SPEC §5.9(3): lines held as another content whose lines are the base's are held",
    file: "src/core/edit.ts",
    find:
      "    const lines = contents.get(p.hash);\n    if (lines === undefined) continue;\n    const last",
    replace:
      "    const lines = p.hash === baseHash ? contents.get(p.hash) : undefined;\n    if (lines === undefined) continue;\n    const last",
  },
  {
    name: "edit-fuzzy-quotes-narrowed",
    rule: "SPEC §5.9: pi's normalising match turns U+2018-U+201B into ' and U+201C-U+201F into \"",
    edits: [
      {
        file: "src/core/edit.ts",
        find: '    .replace(/[\\u2018\\u2019\\u201A\\u201B]/g, "\'")',
        replace: '    .replace(/[\\u2018\\u2019]/g, "\'")',
      },
      {
        file: "src/core/edit.ts",
        find: "    .replace(/[\\u201C\\u201D\\u201E\\u201F]/g, '\"')",
        replace: "    .replace(/[\\u201C\\u201D]/g, '\"')",
      },
    ],
  },
  {
    name: "edit-fuzzy-dashes-narrowed",
    rule: "SPEC §5.9: pi's normalising match turns U+2010-U+2015 and U+2212 into -",
    file: "src/core/edit.ts",
    find: '    .replace(/[\\u2010\\u2011\\u2012\\u2013\\u2014\\u2015\\u2212]/g, "-")',
    replace: '    .replace(/[\\u2013\\u2014]/g, "-")',
  },
  {
    name: "edit-fuzzy-without-nfkc",
    rule: "SPEC §5.9: pi's normalising match applies NFKC first",
    file: "src/core/edit.ts",
    find: '  return text.normalize("NFKC").split("\\n")',
    replace: '  return text.split("\\n")',
  },
  {
    name: "edit-fuzzy-keeps-trailing-whitespace",
    rule: "SPEC §5.9: pi's normalising match strips each line's trailing whitespace",
    file: "src/core/edit.ts",
    find: ".map((l) => l.trimEnd())",
    replace: ".map((l) => l)",
  },
  {
    name: "edit-base-only-from-store",
    rule:
      "SPEC §5.9: the base content is loaded from the store, or is the file itself when it still hashes to it",
    file: "src/shell/read_service.ts",
    find: "  if (bytes === undefined) {\n    const now = await readRegularFile",
    replace: "  if (bytes === undefined && false) {\n    const now = await readRegularFile",
  },
  {
    name: "edit-contents-unbounded",
    rule:
      "SPEC §5.9: an edit's belief loads at most 16 contents the model holds; when it would need more there is none",
    file: "src/shell/read_service.ts",
    find: "  if (hashes.size > 16) return undefined;",
    replace: "",
  },
  {
    name: "edit-contents-at-most-15",
    rule: "SPEC §5.9: an edit's belief loads up to 16 contents the model holds",
    file: "src/shell/read_service.ts",
    find: "  if (hashes.size > 16) return undefined;",
    replace: "  if (hashes.size > 15) return undefined;",
  },
  {
    name: "edit-mixed-endings-whole-file-unknown",
    rule:
      "SPEC §5.9(2): a base with mixed line endings gives no belief, but the lines before the first place the edit could start stay known",
    file: "src/core/edit.ts",
    find: "  if (belief === undefined) {\n",
    replace:
      '  if (belief === undefined) {\n    const b = input.base.text;\n    if (/\\r(?!\\n)/.test(b) || (b.includes("\\r\\n") && /(^|[^\\r])\\n/.test(b))) return undefined;\n',
  },
  {
    name: "edit-replacement-with-cr-believed",
    rule: "SPEC §5.9(1): a replacement holding a CR gives no belief",
    file: "src/core/edit.ts",
    find:
      '  if (edits.some((e) => e.oldText.includes("\\r") || e.newText.includes("\\r"))) return undefined;\n',
    replace: "",
  },
  {
    name: "edit-count-in-exact-text",
    rule:
      "SPEC §5.9: pi counts a replacement's occurrences in its normalised text (found twice there is an error)",
    file: "src/core/edit.ts",
    find: "    const count = fuzzyBase.split(fuzzyForm(es[i].oldText)).length - 1;",
    replace: "    const count = base.split(es[i].oldText).length - 1;",
  },
  {
    name: "belief-counts-exact-matches",
    rule:
      "SPEC §5.9: a belief counts the edit's text in pi's normalised form of the model's view (pi's own edit unchanged)",
    edits: [
      {
        file: "src/core/edit.ts",
        find: "    const count = fuzzyBase.split(fuzzyForm(es[i].oldText)).length - 1;",
        replace:
          '    const count = path === "\\0belief" ? base.split(es[i].oldText).length - 1 : fuzzyBase.split(fuzzyForm(es[i].oldText)).length - 1;',
      },
      {
        file: "src/core/edit.ts",
        find: '  const m = matchAll(normalized, edits, "");',
        replace: '  const m = matchAll(normalized, edits, "\\0belief");',
      },
    ],
  },
  {
    name: "edit-touched-ends-at-match-end",
    rule:
      "SPEC §5.9(3): the lines a replacement touches run to the line holding the first character after its match",
    file: "src/core/edit.ts",
    find: "    const end = lineAt(x.at + x.length);",
    replace: "    const end = lineAt(x.at + x.length - 1);",
  },
  {
    name: "edit-held-lists-every-stretch",
    rule:
      "SPEC §5.9: an edit's `held` lists the stretches from the one holding `from` on, not those before it",
    file: "src/core/edit.ts",
    find: "  const kept = heldBy.filter((h) => h.end >= from);",
    replace: "  const kept = heldBy;",
  },
  {
    name: "edit-held-clipped-at-from",
    rule: "SPEC §5.9: an edit's `held` lists the stretch holding `from` whole, from its own start",
    file: "src/core/edit.ts",
    find: "  const kept = heldBy.filter((h) => h.end >= from);",
    replace:
      "  const kept = heldBy.filter((h) => h.end >= from).map((h) => ({ ...h, start: Math.max(h.start, from) }));",
  },
  {
    name: "edit-read-in-flight-blocks-belief",
    rule:
      "SPEC §5.9(4), §6.3: only read results on the branch block a belief; a read of the message that never returned does not",
    file: "src/shell/read_service.ts",
    find: "  if (pending === undefined) return undefined;\n",
    replace:
      "  if (pending === undefined) return undefined;\n  if (knowledge.inFlight.some((r) => r.call !== undefined && sameFile(r.call, call))) return undefined;\n",
  },
  {
    name: "edit-held-other-content-to-end-any-length",
    rule:
      "SPEC §5.9(3): a stretch held as another content runs to the end of the file only when that content has the base's line count",
    file: "src/core/edit.ts",
    find:
      "        if (p.end === TO_END && run.end === last && lines.length === base.length) run.end = TO_END;",
    replace: "        if (p.end === TO_END && run.end === last) run.end = TO_END;",
  },
  {
    name: "edit-held-by-position",
    rule: "SPEC §5.9(3): a line held as another content is held only when it reads as the base's",
    file: "src/core/edit.ts",
    find: "      const same = n <= last && lines[n - 1] === base[n - 1];",
    replace: "      const same = n <= last;",
  },
  {
    name: "edit-held-hash-ignored-at-replay",
    rule: "SPEC §5.9: replay checks each held stretch against the content it names",
    file: "src/core/replay.ts",
    find: "    viewsCoverWith(h.hash ?? meta.baseHash, h.start,",
    replace: "    viewsCoverWith(meta.baseHash, h.start,",
  },
  {
    name: "edit-same-turn-read-taken",
    rule: "SPEC §5.9(4): no belief when a read of the file is earlier in the same turn",
    file: "src/core/replay.ts",
    find:
      "          meta === undefined || meta.pathKey !== call.pathKey || this.#turnOpaque || viewed ||\n          this.#readInTurn(branch, i, call) || this.#editChainBroken(e.callId, call)",
    replace:
      "          meta === undefined || meta.pathKey !== call.pathKey || this.#turnOpaque || viewed",
  },
  // §6 replay
  {
    name: "compaction-keeps-trust",
    rule: "SPEC §6.1: replay starts after the latest compaction",
    file: "src/core/replay.ts",
    find: "        this.#reset({ startIndex: i + 1, compactionId: e.id });",
    replace: "        this.#boundary = { startIndex: i + 1, compactionId: e.id };",
  },
  {
    name: "invalidation-takes-seq",
    rule: "SPEC §6.2: invalidations take no seq",
    file: "src/core/replay.ts",
    find: '            { ord: this.#ord++, kind: "invalidate", inv, seq: this.#seq + 1 },',
    replace: '            { ord: this.#ord++, kind: "invalidate", inv, seq: ++this.#seq },',
  },
  {
    name: "overlay-never-dropped",
    rule: "SPEC §6.3: an in-flight read ends when anything but a tool result follows its anchor",
    file: "src/core/knowledge.ts",
    find:
      "if (!anchored || o.anchorIndex < barrier || o.anchorIndex >= branch.length) return false;",
    replace: "if (o.anchorIndex >= branch.length) return false;",
  },
  {
    name: "overlay-never-overtaken",
    rule:
      "SPEC §6.3: an in-flight read overtaken by a later-served persisted read of the file contributes no trust",
    file: "src/core/knowledge.ts",
    find: "      o.overtaken = persisted.some((p) =>",
    replace: "      o.overtaken = false && persisted.some((p) =>",
  },
  // §7 the decision
  {
    name: "sensitive-cached",
    rule: "SPEC §7.1: sensitive paths are served plainly, never cached",
    file: "src/core/decision.ts",
    find:
      "    isSensitivePath(input.pathKey, cfg.sensitivePatterns) ||\n    isSensitivePath(input.displayPath, cfg.sensitivePatterns)",
    replace: "    false",
  },
  {
    name: "requested-instead-of-shown-scope",
    rule: "SPEC §7.3: trust covers the lines the baseline showed, not the lines requested",
    file: "src/core/decision.ts",
    find: "  const end = shown.shownEnd;",
    replace:
      "  const end = Math.min(totalLines, input.limit ? start + input.limit - 1 : totalLines);",
  },
  {
    name: "bypass-is-fallback",
    rule: "SPEC §7.5: bypass serves the baseline as mode `full` (it re-anchors)",
    file: "src/core/decision.ts",
    find: `  if (input.bypass) return baseline("full", "bypass");`,
    replace: `  if (input.bypass) return baseline("baseline_fallback", "bypass");`,
  },
  {
    name: "missing-base-is-full",
    rule: "SPEC §7.4(3): a base that cannot be loaded gives `baseline_fallback`",
    file: "src/core/decision.ts",
    find:
      `  if (baseText === undefined) return baseline("baseline_fallback", "base_missing", base.hash);`,
    replace: `  if (baseText === undefined) return baseline("full", "base_missing");`,
  },
  {
    name: "diff-bytes-ratio-ignored",
    rule: "SPEC §7.4(7): a diff is served only below maxDiffBytesRatio of the file's bytes",
    file: "src/core/decision.ts",
    find: "    payloadBytes >= cfg.maxDiffBytesRatio * input.bytes.length ||",
    replace: "",
  },
  {
    name: "diff-lines-ratio-ignored",
    rule: "SPEC §7.4(7): a diff is served only within maxDiffLinesRatio of the file's lines",
    file: "src/core/decision.ts",
    find: "    payloadLines > cfg.maxDiffLinesRatio * p.totalLines",
    replace: "    false",
  },
  {
    name: "diff-file-bytes-limit-ignored",
    rule: "SPEC §7.4(7): no diff for files over maxDiffFileBytes",
    file: "src/core/decision.ts",
    find: "    input.bytes.length > cfg.maxDiffFileBytes || baseBytes > cfg.maxDiffFileBytes ||",
    replace: "    false ||",
  },
  {
    name: "diff-file-lines-limit-ignored",
    rule: "SPEC §7.4(7): no diff for files over maxDiffFileLines",
    file: "src/core/decision.ts",
    find: "    p.totalLines > cfg.maxDiffFileLines || countLines(baseText) > cfg.maxDiffFileLines",
    replace: "    false",
  },
  {
    name: "range-slice-equal-is-unchanged",
    rule: "SPEC §8.1: an unchanged slice of a changed file says 'changes exist outside this range'",
    file: "src/core/decision.ts",
    find: "        unchangedRangeElsewhereMarker(p.start, p.end),",
    replace: "        unchangedRangeMarker(p.start, p.end, p.totalLines),",
  },
  // §8.4 partial answers
  {
    name: "partial-not-checked-at-replay",
    rule: "SPEC §8.4: replay takes a partial answer only when its held stretches are newest views",
    file: "src/core/replay.ts",
    find: '    const partial = meta.mode === "partial" && meta.held !== undefined &&',
    replace: '    const partial = meta.mode === "partial" && meta.held !== undefined || false &&',
  },
  {
    name: "partial-checked-against-served-hash",
    rule:
      "SPEC §5.2, §8.4: replay checks each held stretch of a partial answer against its own content, not the served one",
    file: "src/core/replay.ts",
    find: "        viewsCoverWith(\n          h.hash,\n          h.start,\n          h.end,",
    replace:
      "        viewsCoverWith(\n          meta.servedHash,\n          h.start,\n          h.end,",
  },
  {
    name: "partial-under-identity-only",
    rule: "SPEC §8.4: held lines need the newest view under the identity AND the name",
    file: "src/core/decision.ts",
    find: "    const ok = h !== null && h === hashAt(name, n) &&",
    replace: "    const ok = h !== null &&",
  },
  {
    name: "partial-held-by-hash-only",
    rule:
      "SPEC §8.4: a line is held when its newest view's text is the current line (not only by hash)",
    file: "src/core/decision.ts",
    find: "    const ok = h !== null && h === hashAt(name, n) &&",
    replace: "    const ok = h === p.hash && h === hashAt(name, n) &&",
  },
  {
    name: "partial-when-not-smaller",
    rule: "SPEC §8.4: a partial answer only under maxDiffBytesRatio of the plain answer's bytes",
    file: "src/core/decision.ts",
    find:
      "  if (bytes >= state.cfg.maxDiffBytesRatio * encoder.encode(p.baseline.text).length) return d;",
    replace: "",
  },
  {
    name: "partial-despite-bypass",
    rule: "SPEC §8.4: no partial answer for bypass_cache or a pending change",
    file: "src/core/decision.ts",
    find: '    state.prep.kind !== "ok" || plan.input.bypass || meta === undefined ||',
    replace: '    state.prep.kind !== "ok" || meta === undefined ||',
  },
  {
    name: "partial-without-notice",
    rule: "SPEC §8.4: a partial answer keeps pi's continuation notice",
    file: "src/core/decision.ts",
    find: "    : partialAnswer(lines, held, shown, p.totalLines) + notice;",
    replace: "    : partialAnswer(lines, held, shown, p.totalLines);",
  },
  {
    name: "partial-whole-file-fully-held",
    rule:
      "SPEC §8.4: a whole file every line of which is held from several contents is sent in full",
    file: "src/core/decision.ts",
    find: "  if (shown.length === 0 && p.scope === FULL_SCOPE) return d;",
    replace: "",
  },
  {
    name: "partial-contents-unbounded",
    rule:
      "SPEC §8.4: a partial answer loads at most 16 contents besides the file's own (none when it needs more)",
    file: "src/core/decision.ts",
    find: "  return out.size > MAX_PARTIAL_VIEWS ? [] : [...out];",
    replace: "  return [...out];",
  },
  {
    name: "partial-contents-at-most-15",
    rule: "SPEC §8.4: a partial answer loads up to 16 contents besides the file's own",
    file: "src/core/decision.ts",
    find: "const MAX_PARTIAL_VIEWS = 16;",
    replace: "const MAX_PARTIAL_VIEWS = 15;",
  },
  {
    name: "marker-one-lines",
    rule: "SPEC §8.1: a count of one is written `1 line` (vector empty-file)",
    file: "src/core/markers.ts",
    find: 'return n === 1 ? "1 line" : `${n} lines`;',
    replace: "return `${n} lines`;",
  },
  {
    name: "partial-marker-touching-apart",
    rule: "SPEC §8.4: held stretches that touch are listed as one in the marker",
    file: "src/core/markers.ts",
    find: "    if (last !== undefined && h.start === last.end + 1) last.end = h.end;",
    replace: "    if (false) last.end = h.end;",
  },
  // thresholds: what is at a limit (§7.4, §8.3, §8.4, §13.1)
  {
    name: "diff-bytes-ratio-inclusive",
    rule:
      "SPEC §7.4(7): a diff's bytes must be below (not at) maxDiffBytesRatio of the file's bytes",
    file: "src/core/decision.ts",
    find: "    payloadBytes >= cfg.maxDiffBytesRatio * input.bytes.length ||",
    replace: "    payloadBytes > cfg.maxDiffBytesRatio * input.bytes.length ||",
  },
  {
    name: "diff-lines-ratio-strict",
    rule:
      "SPEC §7.4(7): a diff's lines may be at most (equal to) maxDiffLinesRatio of the file's lines",
    file: "src/core/decision.ts",
    find: "    payloadLines > cfg.maxDiffLinesRatio * p.totalLines\n",
    replace: "    payloadLines >= cfg.maxDiffLinesRatio * p.totalLines\n",
  },
  {
    name: "diff-file-bytes-limit-strict",
    rule: "SPEC §7.4(7): a file of exactly maxDiffFileBytes may be diffed",
    file: "src/core/decision.ts",
    find: "    input.bytes.length > cfg.maxDiffFileBytes || baseBytes > cfg.maxDiffFileBytes ||",
    replace:
      "    input.bytes.length >= cfg.maxDiffFileBytes || baseBytes >= cfg.maxDiffFileBytes ||",
  },
  {
    name: "diff-file-lines-limit-strict",
    rule: "SPEC §7.4(7): a file of exactly maxDiffFileLines may be diffed",
    file: "src/core/decision.ts",
    find: "    p.totalLines > cfg.maxDiffFileLines || countLines(baseText) > cfg.maxDiffFileLines",
    replace:
      "    p.totalLines >= cfg.maxDiffFileLines || countLines(baseText) >= cfg.maxDiffFileLines",
  },
  {
    name: "diff-base-bytes-unchecked",
    rule: "SPEC §7.4(7): the base too must be at most maxDiffFileBytes",
    file: "src/core/decision.ts",
    find: "    input.bytes.length > cfg.maxDiffFileBytes || baseBytes > cfg.maxDiffFileBytes ||",
    replace: "    input.bytes.length > cfg.maxDiffFileBytes ||",
  },
  {
    name: "diff-base-lines-unchecked",
    rule: "SPEC §7.4(7): the base too must be at most maxDiffFileLines",
    file: "src/core/decision.ts",
    find: "    p.totalLines > cfg.maxDiffFileLines || countLines(baseText) > cfg.maxDiffFileLines",
    replace: "    p.totalLines > cfg.maxDiffFileLines",
  },
  {
    name: "partial-ratio-inclusive",
    rule:
      "SPEC §8.4: a partial answer's bytes must be below (not at) maxDiffBytesRatio of the plain answer's",
    file: "src/core/decision.ts",
    find:
      "  if (bytes >= state.cfg.maxDiffBytesRatio * encoder.encode(p.baseline.text).length) return d;",
    replace:
      "  if (bytes > state.cfg.maxDiffBytesRatio * encoder.encode(p.baseline.text).length) return d;",
  },
  {
    name: "range-diff-bytes-inclusive",
    rule:
      "SPEC §8.3: a range diff's bytes must be below (not at) maxDiffBytesRatio of the plain answer's",
    file: "src/core/decision.ts",
    find: "        encoder.encode(payload).length <\n          cfg.maxDiffBytesRatio",
    replace: "        encoder.encode(payload).length <=\n          cfg.maxDiffBytesRatio",
  },
  {
    name: "range-diff-lines-strict",
    rule: "SPEC §8.3: a range diff's lines may equal maxDiffLinesRatio of the range's lines",
    file: "src/core/decision.ts",
    find: "        countLines(payload) <= cfg.maxDiffLinesRatio * (p.end - p.start + 1) &&",
    replace: "        countLines(payload) < cfg.maxDiffLinesRatio * (p.end - p.start + 1) &&",
  },
  {
    name: "diff-truncated-served",
    rule: "SPEC §7.4(7): a diff must fit pi's truncation limits untruncated",
    file: "src/core/decision.ts",
    find: "  if (truncateHead(payload).truncated) {",
    replace: "  if (false) {",
  },
  {
    name: "range-diff-truncated-served",
    rule: "SPEC §8.3: a range diff must fit pi's truncation limits",
    file: "src/core/decision.ts",
    find: "        !truncateHead(payload).truncated\n",
    replace: "        true\n",
  },
  {
    name: "file-at-size-cap-too-large",
    rule: "SPEC §13.1: a file of exactly maxFileBytes is cached",
    file: "src/shell/read_service.ts",
    find: '    else if (st.size > cap) this.#outcome = { kind: "too_large" };',
    replace: '    else if (st.size >= cap) this.#outcome = { kind: "too_large" };',
  },
  // §5.10 what other tools showed or changed
  {
    name: "tool-record-ignored",
    rule:
      "SPEC §5.10: a file that differed from the model's newest view when a tool's result came back is unknown from there on",
    file: "src/core/replay.ts",
    find:
      '            this.#file({ ord: this.#ord++, kind: "unknown", call, seq: this.#seq + 0.5 }, id);',
    replace: "            void call;",
  },
  {
    name: "tool-without-record-ignored",
    rule: "SPEC §5.10: a tool result without a valid record leaves every file unknown",
    file: "src/core/replay.ts",
    find: "        if (meta === undefined) this.#everyFileUnknown();",
    replace: "        if (meta === undefined) void 0;",
  },
  {
    name: "tool-names-not-checked",
    rule:
      "SPEC §5.10: a tool result is checked against every identity the model holds, under its names too",
    file: "src/shell/tool_result.ts",
    find: "      ...(isName.has(id) ? [nameViews] : []),",
    replace: "",
  },
  {
    name: "read-while-opaque-call-runs-cached",
    rule: "SPEC §5.10: while a call that may change any file runs, every read is served in full",
    file: "src/shell/read_service.ts",
    find: "bypass: req.bypass_cache === true || knowledge.opaqueInFlight() ||",
    replace: "bypass: req.bypass_cache === true ||",
  },
  {
    name: "read-in-opaque-message-trusted",
    rule:
      "SPEC §5.10: a read in the same message as a call that may change any file gives no trust",
    file: "src/core/replay.ts",
    find: "        const meta = e.meta === undefined || this.#turnOpaque\n",
    replace: "        const meta = e.meta === undefined\n",
  },
  {
    name: "change-in-opaque-message-trusted",
    rule:
      "SPEC §5.10: a write or edit in the same message as a call that may change any file is no proof and no belief",
    edits: [
      {
        file: "src/core/replay.ts",
        find: "!isContentHash(e.hash) || this.#turnOpaque ||",
        replace: "!isContentHash(e.hash) ||",
      },
      {
        file: "src/core/replay.ts",
        find: "meta.pathKey !== call.pathKey || this.#turnOpaque ||",
        replace: "meta.pathKey !== call.pathKey ||",
      },
    ],
  },
  {
    name: "unanswered-opaque-call-ignored",
    rule:
      "SPEC §5.10: a call that may change any file and never returned leaves every file unknown",
    file: "src/core/replay.ts",
    find: "      this.#everyFileUnknown();\n      this.#opaquePending.clear();",
    replace: "      this.#opaquePending.clear();",
  },
  {
    name: "tool-views-compared-by-hash-only",
    rule: "SPEC §5.10: a view of another content whose lines the file still has is not a change",
    file: "src/shell/tool_result.ts",
    find:
      "  return viewLists.every((views) => viewsShowContent(views, hash, lines, (h) => contents.get(h)));",
    replace: "  return false;",
  },
  {
    name: "tool-shown-ignored",
    rule:
      "SPEC §5.10: lines a tool result showed as the file held them are the model's newest view",
    file: "src/core/replay.ts",
    find: "          for (const shown of meta.shown ?? []) {",
    replace: "          for (const shown of [] as ToolShownV1[]) {",
  },
  {
    name: "shell-range-view-claims-end",
    rule:
      "SPEC §5.10: `sed -n`/`head` show the end of the file only when they printed fewer lines than asked",
    file: "src/core/shell_view.ts",
    find: "        ? [{ start: shape.start, end: shape.end > total ? TO_END : last }]",
    replace: "        ? [{ start: shape.start, end: TO_END }]",
  },
  {
    name: "shell-head-view-claims-end",
    rule:
      "SPEC §5.10: `head -n N` shows the end of the file only when it printed fewer lines than asked",
    file: "src/core/shell_view.ts",
    find:
      "      return same(slice(1, last)) ? [{ start: 1, end: shape.count > total ? TO_END : last }] : [];",
    replace: "      return same(slice(1, last)) ? [{ start: 1, end: TO_END }] : [];",
  },
  {
    name: "shell-output-not-compared",
    rule: "SPEC §5.10: a command's output is a view only when it is exactly the file's lines",
    file: "src/core/shell_view.ts",
    find:
      '  const same = (expected: string) => output === expected || output + "\\n" === expected;',
    replace: "  const same = (_expected: string) => true;",
  },
  {
    name: "shell-tail-lines-are-views",
    rule:
      "SPEC §5.10: `tail -n N` prints lines without their numbers: a view only of the whole file",
    file: "src/core/shell_view.ts",
    find: "      return shape.count >= total - 1 && same(text) ? [{ start: 1, end: TO_END }] : [];",
    replace:
      "      return same(slice(Math.max(1, total - shape.count), total)) ? [{ start: Math.max(1, total - shape.count), end: TO_END }] : [];",
  },
  {
    name: "refresh-missing-path-recorded",
    rule: "SPEC §11.2: a refresh of a path that does not exist is an error and records nothing",
    file: "src/shell/read_service.ts",
    find: '    if (code !== "ENOENT" && code !== "ENOTDIR") return undefined;',
    replace: "    return undefined;",
  },
  {
    name: "grep-tool-file-searched-as-directory",
    rule: "SPEC §5.10: pi's grep of one file prints the file's name, which names that file",
    file: "src/shell/tool_result.ts",
    find:
      "      name: searchedFile ? searched : isAbsolute(r.path) ? r.path : resolve(searched, r.path),",
    replace: "      name: isAbsolute(r.path) ? r.path : resolve(deps.cwd, r.path),",
  },
  {
    name: "grep-tool-cut-output-shows-nothing",
    rule:
      "SPEC §5.10: pi's grep output cut at its match limit still shows the rows it printed (each checked)",
    file: "src/shell/tool_result.ts",
    find: "  const rows = grepToolLines(out.output);",
    replace:
      "  const rows = /matches limit reached/.test(out.output) ? [] : grepToolLines(out.output);",
  },
  {
    name: "edit-text-in-view-unheld-from-first-touched",
    rule:
      "SPEC §5.9: a replacement whose text is in V only where the model does not hold it whole is placed as a text not in V (from the earliest place it can be), not from its first touched line",
    file: "src/core/edit.ts",
    find: `    return unlocated(input, Math.min(unseen, ...places.map((p) => p.earliest)));
  }
  // SPEC §5.9 rule 2 over everything`,
    replace:
      `    return unlocated(input, places.every((p) => p.count === 0) && !Number.isFinite(unseen) ? belief.touched[0].start : Math.min(unseen, ...places.map((p) => p.earliest)));
  }
  // SPEC §5.9 rule 2 over everything`,
  },
  {
    name: "edit-held-from-line-1-without-line-break",
    rule:
      "SPEC §5.9: the lines held from line 1 on end with the line break after the last of them when placing a text not in the view: a text that starts with a line break can begin at that last line",
    file: "src/core/edit.ts",
    find: '      const tail = text + "\\n";',
    replace: "      const tail = text;",
  },
  {
    name: "edit-whitespace-only-text-refused",
    rule:
      "SPEC §5.9: pi refuses only an old text that is empty as typed; one of whitespace only is found by the normalising match at the start",
    file: "src/core/edit.ts",
    find: "    if (es[i].oldText.length === 0) {",
    replace: "    if (fuzzyForm(es[i].oldText).length === 0) {",
  },
  {
    name: "edit-whitespace-only-text-found-once",
    rule:
      "SPEC §5.9: a whitespace-only old text is counted as pi counts it (the normalised text split at an empty text: one occurrence per UTF-16 unit, less one)",
    file: "src/core/edit.ts",
    find: "    const count = fuzzyBase.split(fuzzyForm(es[i].oldText)).length - 1;",
    replace:
      '    const count = fuzzyForm(es[i].oldText) === "" ? 1 : fuzzyBase.split(fuzzyForm(es[i].oldText)).length - 1;',
  },
  {
    name: "overlay-keeps-only-the-request-name",
    rule:
      "SPEC §6.3: the reads in flight are applied as replay applies them: each checked against the views of its own name, also when the request names the file otherwise",
    file: "src/core/knowledge.ts",
    find: "      addNameView: (n, v) => void names.set(n, addView(sink.nameViews(n), v)),",
    replace:
      "      addNameView: (n, v) => {\n        if (n === name) names.set(n, addView(sink.nameViews(n), v));\n      },",
  },
  {
    name: "refresh-recorded-range-of-missing-file",
    rule:
      "SPEC §11.2: a refresh of a missing path is an error and records nothing, also for a range whose scope a read recorded",
    file: "src/shell/read_service.ts",
    find:
      "  const file = refreshable(resolvedPath, typedPath);\n  if (shown !== undefined) return shown;",
    replace:
      "  if (shown !== undefined) return shown;\n  const file = refreshable(resolvedPath, typedPath);",
  },
  {
    name: "bash-grep-n-rows-apart",
    rule: "SPEC §5.10: touching rows of `grep -n P F` are one shown stretch",
    file: "src/core/shell_view.ts",
    find: "        shown.push(n);\n      }\n      return stretches(shown);",
    replace:
      "        shown.push(n);\n      }\n      return shown.map((n) => ({ start: n, end: n }));",
  },
  {
    name: "search-filter-chain-followed",
    rule:
      "SPEC §5.10: a search is followed by at most one filter; the rows a chain of filters kept show nothing",
    file: "src/core/shell_view.ts",
    find: "  if (rest.length === 0 || rest.length > 2) return undefined;",
    replace:
      '  if (rest.length > 2 && searchOf(rest[0].words[0]?.word ?? "", rest[0].words.slice(1).map((w) => w.word)) !== undefined && rest.slice(1).every((c) => rowFilter(c.words.map((w) => w.word)))) rest.length = 2;\n  if (rest.length === 0 || rest.length > 2) return undefined;',
  },
  {
    name: "edit-meta-overlapping-stretches-valid",
    rule:
      "SPEC §5.9: edit metadata whose held or shown stretches are out of order or overlap is not valid",
    file: "src/core/meta.ts",
    find: "}).refine((m) => inOrderApart(m.held) && inOrderApart(m.shown), {",
    replace: "}).refine((m) => m !== undefined, {",
  },
  {
    name: "tail-count-includes-empty-last-line",
    rule:
      "SPEC §5.10: `tail -n N` printed the whole file when N reaches its lines as tail counts them (without the empty line after a final line break)",
    file: "src/core/shell_view.ts",
    find: "      return shape.count >= total - 1 && same(text)",
    replace: "      return shape.count >= total && same(text)",
  },
  {
    name: "head-empty-last-line-not-printed",
    rule:
      "SPEC §5.10: the empty line after a final line break counts as printed: `head -n N` with N one past the file's last line of text printed as many lines as asked",
    file: "src/core/shell_view.ts",
    find:
      "      return same(slice(1, last)) ? [{ start: 1, end: shape.count > total ? TO_END : last }] : [];",
    replace:
      '      return same(slice(1, last)) ? [{ start: 1, end: shape.count > (lines.at(-1) === "" ? total - 1 : total) ? TO_END : last }] : [];',
  },
  {
    name: "head-every-line-shows-whole",
    rule:
      "SPEC §5.10: `head -n N` that printed every line of text of a file ending with a line break printed as many lines as asked: it does not show where the file ends",
    file: "src/core/shell_view.ts",
    find:
      "      return same(slice(1, last)) ? [{ start: 1, end: shape.count > total ? TO_END : last }] : [];",
    replace:
      '      return same(slice(1, last)) ? [{ start: 1, end: shape.count >= (lines.at(-1) === "" ? total - 1 : total) ? TO_END : last }] : [];',
  },
  {
    name: "grep-step-keeps-bom",
    rule:
      "SPEC §10: a grep step drops a byte order mark that starts a file, as ripgrep does (the first row is not the file's first line)",
    file: "src/conformance/session_simulator.ts",
    find: '.replace(/^\\uFEFF/, "")',
    replace: "",
  },
  {
    name: "edit-fuzzy-normalises-only-fuzzy-texts",
    rule:
      "SPEC §5.9: once pi normalises the file, a replacement not in it as typed is normalised too, also one that matched the file exactly before",
    file: "src/core/edit.ts",
    find: "    const m = find(base, es[i].oldText);",
    replace:
      "    const exactBefore = fuzzy && normalized.includes(es[i].oldText);\n    const m = exactBefore\n      ? (base.includes(es[i].oldText) ? find(base, es[i].oldText) : undefined)\n      : find(base, es[i].oldText);",
  },
  {
    name: "grep-walk-skips-hidden-files",
    rule:
      "SPEC §10: a grep step searches hidden files and directories (pi's grep runs ripgrep with --hidden)",
    file: "src/conformance/session_simulator.ts",
    find:
      "      if (p !== skip) { for (const n of readdirSync(p).sort()) visit(join(p, n), false); }",
    replace:
      '      if (p !== skip) {\n        for (const n of readdirSync(p).sort()) if (!n.startsWith(".")) visit(join(p, n), false);\n      }',
  },
  {
    name: "grep-tool-rows-apart",
    rule: "SPEC §5.10: touching rows of pi's grep are one shown stretch",
    file: "src/core/shell_view.ts",
    find: "    .map((r) => r.line);\n  return stretches(shown);",
    replace: "    .map((r) => r.line);\n  return shown.map((n) => ({ start: n, end: n }));",
  },
  {
    name: "grep-tool-cut-row-shows",
    rule:
      "SPEC §5.10: a row of pi's grep over 500 characters is a line pi cut and shows nothing, even where it equals the line",
    file: "src/core/shell_view.ts",
    find: "    if (m === null || m[4].length > GREP_TOOL_LINE_CHARS) continue;",
    replace: "    if (m === null) continue;",
  },
  {
    name: "read-only-commands-opaque",
    rule:
      "SPEC §5.10: a command that only reads files changes none: reads of its message are trusted",
    file: "src/core/shell_view.ts",
    find: "  if (!readOnly) return { readOnly: false };\n  const shown",
    replace: "  if (readOnly) return { readOnly: false };\n  const shown",
  },
  {
    name: "shown-in-turn-not-checked",
    rule:
      "SPEC §5.10: lines a tool result of the same message showed before a write or edit result make it no proof and no belief",
    file: "src/core/replay.ts",
    find: "      if (shown.some((s) => sameFile(s, call))) return true;\n",
    replace: "",
  },
  {
    name: "partial-contents-in-one-step",
    rule:
      "SPEC §8.4: a partial answer decided with the contents loaded first is served; the other contents are loaded only for a plain answer",
    file: "src/shell/read_service.ts",
    find:
      '  if (decision.mode !== "full" && decision.mode !== "baseline_fallback") return decision;',
    replace:
      '  if (decision.mode !== "full" && decision.mode !== "baseline_fallback" && decision.mode !== "partial") return decision;',
  },
  {
    name: "partial-first-step-loads-only-base",
    rule:
      "SPEC §8.4: the first loading step loads every content the newest-view check compares, not only the base",
    file: "src/core/decision.ts",
    find: "      for (const h of newestViewNeeds(query)) if (h !== p.hash) needs.add(h);",
    replace: "",
  },
  {
    name: "viewing-call-keeps-belief",
    rule:
      "SPEC §5.10: a write or edit in the same message as a call that may show file content (a search, a read-only command) is no proof and no belief",
    file: "src/core/replay.ts",
    find: "        this.#turnShows = this.#showsPending.size > 0;",
    replace: "        this.#turnShows = false;",
  },
  {
    name: "viewing-call-in-flight-not-bypassed",
    rule:
      "SPEC §5.10: while a call that may show file content has no result, every read is served in full",
    file: "src/core/replay.ts",
    find: "    return this.#opaquePending.size > 0 || this.#showsPending.size > 0;",
    replace: "    return this.#opaquePending.size > 0;",
  },
  {
    name: "listing-commands-show-content",
    rule: "SPEC §5.10: `ls`, `find`, `wc` and the like print no file content",
    file: "src/core/shell_view.ts",
    find: "    if (!NO_CONTENT.has(name)) showsContent = true;",
    replace: "    showsContent = true;",
  },
  {
    name: "viewed-change-unknown-from-turn-start-only",
    rule:
      "SPEC §5.10: after a write or edit in a message with a call that may show files, the file is unknown from the change's result on",
    edits: [
      {
        file: "src/core/replay.ts",
        find: "          if (viewed) this.#unknownHere(e.call);\n",
        replace: "",
      },
      {
        file: "src/core/replay.ts",
        find: "          if (viewed) this.#unknownHere(call);\n",
        replace: "",
      },
    ],
  },
  {
    name: "every-command-read-only",
    rule: "SPEC §5.10: a command that may change files (`sed -i`, a redirection) is not read-only",
    file: "src/core/shell_view.ts",
    find: "    if (check === undefined || !check(rest)) readOnly = false;",
    replace: "",
  },
  // §10 scenario semantics
  {
    name: "tool-result-checked-with-in-flight-reads-only",
    rule:
      "SPEC §5.10: a tool result is checked against the model's views with and without the reads of its message still in flight",
    file: "src/shell/tool_result.ts",
    find: "  const inFlight = knowledge.inFlight.length > 0;\n",
    replace: "  const inFlight = false;\n",
  },
  {
    name: "printed-while-changing-ignored",
    rule:
      "SPEC §5.10: a file a command may have printed while it changed files is unknown at its result",
    file: "src/shell/tool_result.ts",
    find: "    if (printed(id) && (call.snapshot",
    replace: "    if (false && printed(id) && (call.snapshot",
  },
  {
    name: "program-prints-nothing-of-held-files",
    rule:
      "SPEC §5.10: a program the cache cannot see into may print any file while it changes files",
    file: "src/core/shell_view.ts",
    find: '    if (effect === "opaque") return { kind: "all" };\n',
    replace: '    if (effect === "opaque") continue;\n',
  },
  {
    name: "print-after-changes-counts",
    rule:
      "SPEC §5.10: a print that starts after every change of its command shows the file as at the result",
    file: "src/core/shell_view.ts",
    find: "    if (!changedLater) continue;\n",
    replace: "",
  },
  {
    name: "empty-output-counts-as-printed",
    rule: "SPEC §5.10: a command that printed nothing showed nothing while it changed files",
    file: "src/shell/tool_result.ts",
    find: "output === undefined || NOTHING_PRINTED.test(output.output.trim())",
    replace: "output === undefined",
  },
  {
    name: "printed-while-changing-without-snapshot",
    rule:
      "SPEC §5.10: a file whose statuses are the same at the result as at the call's start was not printed otherwise",
    file: "src/shell/tool_result.ts",
    find: "(call.snapshot === undefined || await touchedSince(call.snapshot, id))",
    replace: "true",
  },
  {
    name: "nl-plain-numbers-every-line",
    rule: "SPEC §5.10: plain `nl` leaves empty lines unnumbered; only `nl -ba` prints as `cat -n`",
    file: "src/core/shell_view.ts",
    find: 'if (args.length === 2 && args[0] === "-ba") return file(args[1], { kind: "numbered" });',
    replace:
      'if (args.length === 2 && args[0] === "-ba") return file(args[1], { kind: "numbered" });\n    if (args.length === 1) return file(args[0], { kind: "numbered" });',
  },
  {
    name: "cut-message-calls-counted",
    rule:
      "SPEC §11.3: the host runs no call of an aborted or failed message; it leaves no file unknown",
    file: "src/conformance/session_simulator.ts",
    find: '        // and ends the turn before it (SPEC §11.3)\n        append({ kind: "other" });',
    replace:
      '        // and ends the turn before it (SPEC §11.3)\n        append({ kind: "other", opaque: ["cut"] });',
  },
  {
    name: "grep-step-follows-walked-links",
    rule:
      "SPEC §10: a grep step, like pi's grep (ripgrep without --follow), skips a symbolic link met while walking a directory",
    file: "src/conformance/session_simulator.ts",
    find: "      st = named ? statSync(p) : lstatSync(p);\n",
    replace: "      st = statSync(p);\n",
  },
  {
    name: "grep-step-searches-store",
    rule:
      "SPEC §10: a grep step leaves out the cache's store under the cwd (ripgrep honours its .ignore)",
    file: "src/conformance/session_simulator.ts",
    find: "  for (const p of searchedFiles(at, storeRoot)) {",
    replace: "  for (const p of searchedFiles(at)) {",
  },
  {
    name: "bash-output-keeps-leading-bom",
    rule:
      "SPEC §10: a bash step's output is decoded as pi's: a byte order mark that starts it is dropped",
    file: "src/conformance/session_simulator.ts",
    find: "  const decoder = new TextDecoder();\n",
    replace: '  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });\n',
  },
  {
    name: "deferred-result-appended-at-once",
    rule:
      "SPEC §10: a deferred result is appended just before the next returning call's result of its turn, not at its own step",
    file: "src/conformance/session_simulator.ts",
    find: '    if (persist === "deferred") deferred.push(e);',
    replace: '    if (persist === "deferred") append(e);',
  },
  {
    name: "deferred-result-appended-at-turn-end",
    rule:
      "SPEC §10: deferred results whose turn ends without a call that returns at once are never appended",
    file: "src/conformance/session_simulator.ts",
    find:
      "      (isCall(step) && startsTurn(vector.steps, index)) || (!isCall(step) && !FILE_OPS.has(step.op))\n    ) {\n      deferred = [];",
    replace:
      "      (isCall(step) && startsTurn(vector.steps, index)) || (!isCall(step) && !FILE_OPS.has(step.op))\n    ) {\n      for (const d of deferred) append(d);\n      deferred = [];",
  },
  // §8 output
  {
    name: "range-diff-slice-line-numbers",
    rule: "SPEC §8.3: range diff hunks are numbered as in the file",
    file: "src/core/decision.ts",
    find: "        p.start - 1,\n",
    replace: "        0,\n",
  },
  {
    name: "range-diff-ratio-ignored",
    rule: "SPEC §8.3: a range diff only below maxDiffBytesRatio of the plain answer's bytes",
    file: "src/core/decision.ts",
    find:
      "          cfg.maxDiffBytesRatio * encoder.encode(p.baseline.text).length &&\n        countLines(payload) <= cfg.maxDiffLinesRatio * (p.end - p.start + 1) &&",
    replace: "          Infinity &&",
  },
];
