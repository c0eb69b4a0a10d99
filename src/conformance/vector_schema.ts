/**
 * Zod schemas of the conformance vectors. The JSON Schema files in
 * `vectors/schema/` are generated from these (`deno task schema`), never
 * written by hand.
 *
 * Layers 1-4 (`path`, `range`, `trust`, `replay`) are files of several cases;
 * each case is one unit a port is asked to run.
 *
 * Specified by SPEC.md §10.
 *
 * @module
 */
import { z } from "zod";
import { READ_MODES } from "../core/meta.ts";

const id = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, "lowercase words joined by '-'");
const common = {
  id,
  title: z.string().min(1),
  refs: z.array(z.string().min(1)).min(1),
};

const errorExpect = z.strictObject({
  code: z.string().min(1),
  message: z.string().min(1).describe("substring of the error message"),
});

const scopeTrust = z.strictObject({ hash: z.string().min(1), seq: z.number().int() });
const pathTrust = z.strictObject({
  full: scopeTrust.optional(),
  ranges: z.record(z.string(), scopeTrust),
});
const trustState = z.record(z.string(), pathTrust);

/** Layer 1: path normalisation. */
export const PathCaseSchema = z.strictObject({
  ...common,
  input: z.strictObject({
    path: z.string(),
    cwd: z.string().min(1),
    home: z.string().min(1),
    existing: z.array(z.string()).describe("absolute paths that exist"),
    realpaths: z.record(z.string(), z.string()).optional().describe(
      "realpath of existing paths that are links (others are their own realpath)",
    ),
  }),
  expected: z.strictObject({
    resolved: z.string(),
    pathKey: z.string(),
  }),
});

/** Layer 1: range parsing and normalisation. */
export const RangeCaseSchema = z.strictObject({
  ...common,
  input: z.strictObject({
    path: z.string(),
    offset: z.number().optional(),
    limit: z.number().optional(),
    cwd: z.string().min(1),
    home: z.string().min(1),
    existing: z.array(z.string()),
    totalLines: z.number().int().positive().optional().describe(
      "when given, the range is also normalised against a file of this many lines",
    ),
  }),
  expected: z.union([
    z.strictObject({
      displayPath: z.string(),
      resolved: z.string(),
      offset: z.number().int().positive().optional(),
      limit: z.number().int().positive().optional(),
      start: z.number().int().positive().optional(),
      end: z.number().int().positive().optional(),
      scopeKey: z.string().optional(),
    }),
    z.strictObject({ error: errorExpect }),
  ]),
});

const readMeta = z.record(z.string(), z.unknown()).describe("raw details.readcache value");
const rawData = z.record(z.string(), z.unknown()).describe("raw pi-readcache custom entry data");

const selectQuery = z.strictObject({
  pathKey: z.string(),
  scopeKey: z.string(),
  expected: scopeTrust.nullable(),
});

/** Layer 2: trust transitions. */
export const TrustCaseSchema = z.strictObject({
  ...common,
  initial: trustState,
  events: z.array(z.union([
    z.strictObject({ read: readMeta, seq: z.number().int().positive() }),
    z.strictObject({ invalidate: rawData }),
  ])),
  expected: z.strictObject({
    trust: trustState,
    outcomes: z.array(z.enum(["applied", "ignored", "invalid"])).optional().describe(
      "per event: applied, ignored by the guards, or invalid (failed validation; ignored)",
    ),
    select: z.array(selectQuery).optional(),
  }),
});

const replayEntry = z.discriminatedUnion("kind", [
  z.strictObject({
    id: z.string(),
    parentId: z.string().nullable(),
    kind: z.literal("read"),
    meta: z.unknown().optional().describe(
      "raw details.readcache; absent for a read result served without metadata",
    ),
    callId: z.string().optional(),
    call: z.strictObject({
      name: z.string().min(1),
      pathKey: z.string().min(1),
      offset: z.number().optional(),
      limit: z.number().optional(),
    }).optional().describe("the resolved call the result answers (SPEC §5.6)"),
  }),
  z.strictObject({
    id: z.string(),
    parentId: z.string().nullable(),
    kind: z.literal("wrote"),
    call: z.strictObject({
      name: z.string().min(1),
      pathKey: z.string().min(1),
    }).describe("the file a successful write tool call wrote (SPEC §5.8)"),
    hash: z.string().describe("SHA-256 of the UTF-8 bytes written; not a hash: ignored"),
    callId: z.string().optional(),
    totalLines: z.number().int().nonnegative().optional().describe(
      "lines of the content written (status reports only; replay ignores it)",
    ),
  }),
  z.strictObject({
    id: z.string(),
    parentId: z.string().nullable(),
    kind: z.literal("invalidate"),
    data: z.unknown(),
  }),
  z.strictObject({
    id: z.string(),
    parentId: z.string().nullable(),
    kind: z.literal("compaction"),
    firstKeptEntryId: z.string().optional(),
  }),
  z.strictObject({
    id: z.string(),
    parentId: z.string().nullable(),
    kind: z.literal("other"),
    toolResult: z.boolean().optional().describe(
      "true for the result of a tool call of any tool (keeps the in-flight overlay)",
    ),
    callId: z.string().optional().describe("for a tool result: the call it answers"),
    changes: z.array(z.strictObject({
      callId: z.string(),
      call: z.strictObject({ name: z.string().min(1), pathKey: z.string().min(1) }),
      tool: z.enum(["edit", "write"]).optional().describe(
        "the host's edit tool, or anything else (a write); several edits of one file in one message are one belief (SPEC §5.9)",
      ),
    })).optional().describe(
      "for an assistant message: its calls of file-changing tools and their files (SPEC §5.8)",
    ),
    opaque: z.array(z.string()).optional().describe(
      "for an assistant message: ids of its calls that may change any file (a shell command, an unknown tool; SPEC §5.10)",
    ),
    shows: z.array(z.string()).optional().describe(
      "for an assistant message: ids of its calls that may show file content but change no file (a search, a read-only shell command; SPEC §5.10): its writes and edits are no proof and no belief",
    ),
  }),
  z.strictObject({
    id: z.string(),
    parentId: z.string().nullable(),
    kind: z.literal("tool"),
    tool: z.string().describe("the tool's name (bash, grep, ...)"),
    meta: z.unknown().optional().describe(
      "raw details.readcache (SPEC §5.10): the identities that differed from the model's newest view; absent: every file",
    ),
    callId: z.string().optional(),
  }),
  z.strictObject({
    id: z.string(),
    parentId: z.string().nullable(),
    kind: z.literal("changed"),
    call: z.strictObject({
      name: z.string().min(1),
      pathKey: z.string().min(1),
    }).describe("the file an edit (or a write that is not proof of content) targets"),
    meta: z.unknown().optional().describe(
      "raw details.readcache of a successful edit (SPEC §5.9); absent otherwise",
    ),
    callId: z.string().optional(),
  }),
]);

/** Layer 2: branch replay. */
export const ReplayCaseSchema = z.strictObject({
  ...common,
  entries: z.array(replayEntry).describe("the session tree, in append order"),
  leaf: z.string().nullable(),
  overlay: z.array(z.strictObject({
    meta: readMeta,
    callId: z.string().optional(),
    anchor: z.string().nullable().describe("leaf the read was served at"),
  })).optional().describe("in-flight reads served at `anchor`, before moving to `leaf`"),
  expected: z.strictObject({
    startIndex: z.number().int().nonnegative(),
    compactionId: z.string().nullable(),
    seq: z.number().int().nonnegative(),
    windowSize: z.number().int().nonnegative().optional(),
    trust: trustState.describe("replayed trust with the overlay applied"),
    select: z.array(selectQuery).optional(),
  }),
});

const layerFile = <T extends z.ZodType>(layer: string, c: T) =>
  z.strictObject({
    $schema: z.string().optional(),
    layer: z.literal(layer),
    description: z.string().optional(),
    cases: z.array(c).min(1),
  });

/** A file of path cases. */
export const PathFileSchema = layerFile("path", PathCaseSchema);
/** A file of range cases. */
export const RangeFileSchema = layerFile("range", RangeCaseSchema);
/** A file of trust cases. */
export const TrustFileSchema = layerFile("trust", TrustCaseSchema);
/** A file of replay cases. */
export const ReplayFileSchema = layerFile("replay", ReplayCaseSchema);

/** A path case. */
export type PathCase = z.infer<typeof PathCaseSchema>;
/** A range case. */
export type RangeCase = z.infer<typeof RangeCaseSchema>;
/** A trust case. */
export type TrustCase = z.infer<typeof TrustCaseSchema>;
/** A replay case. */
export type ReplayCase = z.infer<typeof ReplayCaseSchema>;

/** Every mode name, for scenario expectations. */
export const ModeSchema = z.enum(READ_MODES);

const lineArg = z.number();
const fileContent = z.union([z.string(), z.strictObject({ base64: z.string() })]);

/** What a `read` step expects. */
export const ReadExpectSchema = z.strictObject({
  mode: ModeSchema.nullable().optional().describe(
    "the mode, or null for the plain read without readcache metadata; omit only with error",
  ),
  text: z.string().optional().describe("exact output text"),
  textIncludes: z.array(z.string()).optional(),
  scope: z.string().optional().describe("scope key recorded in the metadata"),
  error: z.string().optional().describe("substring of the error message"),
});

const readStepInput = z.strictObject({
  op: z.literal("read"),
  path: z.string(),
  offset: lineArg.optional(),
  limit: lineArg.optional(),
  persist: z.boolean().optional().describe(
    "false: served in the current turn, not yet persisted (in-flight overlay)",
  ),
  bypass: z.boolean().optional().describe("bypass_cache: serve the baseline and re-anchor"),
});

/** When a write or edit call's result reaches the session (SPEC §10). */
const changePersist = z.union([z.boolean(), z.literal("deferred")]).optional().describe(
  "false: a call of the current turn that has not returned yet (still in flight); " +
    '"deferred": it has run, and its result is appended just before the result of the next ' +
    "call of its turn that returns at once (pi appends a message's results in call order)",
);

/** The steps other than `read`: the same in a vector and in a port's input. */
const otherSteps = [
  z.strictObject({ op: z.literal("write"), path: z.string(), content: fileContent }).describe(
    "a change the model did not make (another process, the user): files only",
  ),
  z.strictObject({
    op: z.literal("writeTool"),
    path: z.string(),
    content: z.string(),
    persist: changePersist,
  }).describe("the model writes a file with the host's write tool (SPEC §5.8)"),
  z.strictObject({
    op: z.literal("editTool"),
    path: z.string(),
    edits: z.union([
      z.array(z.strictObject({ oldText: z.string(), newText: z.string() })),
      z.string().describe("the list sent as a JSON string, as some models send it"),
    ]).optional(),
    oldText: z.string().optional().describe("legacy shape: one replacement at the top level"),
    newText: z.string().optional(),
    persist: changePersist,
  }).describe(
    "the model edits a file with the host's edit tool (SPEC §5.9); it succeeds or fails as pi's edit does",
  ),
  z.strictObject({
    op: z.literal("bash"),
    command: z.string().min(1),
    persist: changePersist,
    record: z.literal(false).optional().describe(
      "false: the result carries no readcache record (made while the cache was off): every file the model held is unknown after it",
    ),
  }).describe(
    "the model runs a shell command with the host's bash tool, in the scenario's cwd (SPEC §5.10): it may show and change any file",
  ),
  z.strictObject({
    op: z.literal("grep"),
    pattern: z.string().min(1),
    path: z.string().optional().describe("file or directory to search (default: the cwd)"),
    persist: changePersist,
    record: z.literal(false).optional().describe(
      "false: the result carries no readcache record (made while the cache was off): every file the model held is unknown after it",
    ),
  }).describe(
    "the model searches with the host's grep tool (SPEC §5.10): it shows matching lines, changes nothing",
  ),
  z.strictObject({ op: z.literal("remove"), path: z.string() }),
  z.strictObject({
    op: z.literal("symlink"),
    path: z.string(),
    target: z.string().describe("link target as stored in the link, relative to its directory"),
  }).describe("creates or replaces `path` as a symbolic link (like `ln -sfn target path`)"),
  z.strictObject({ op: z.literal("message") }),
  z.strictObject({
    op: z.literal("cutMessage"),
    stopReason: z.enum(["aborted", "error"]),
    calls: z.array(z.strictObject({
      tool: z.enum(["read", "write", "edit", "bash"]),
      path: z.string().optional(),
      content: z.string().optional(),
      command: z.string().optional(),
    })).min(1),
  }).describe(
    "an assistant message with tool calls that was aborted or ended in an error: the host runs none of its calls and leaves it out of the model's context (SPEC §11.3)",
  ),
  z.strictObject({ op: z.literal("label"), name: z.string() }),
  z.strictObject({ op: z.literal("navigate"), to: z.string() }),
  z.strictObject({ op: z.literal("compact"), firstKept: z.string().optional() }),
  z.strictObject({ op: z.literal("fork") }),
  z.strictObject({ op: z.literal("restart") }),
  z.strictObject({
    op: z.literal("invalidate"),
    path: z.string(),
    offset: lineArg.optional(),
    limit: lineArg.optional(),
  }),
  z.strictObject({
    op: z.literal("storeFault"),
    path: z.string(),
    fault: z.enum(["delete", "corrupt"]),
  }),
] as const;

/** One scenario step. */
export const ScenarioStepSchema = z.discriminatedUnion("op", [
  readStepInput.extend({ expect: ReadExpectSchema }),
  ...otherSteps,
]);

/** One scenario step as a port is given it: a `read` step carries no expectation (SPEC §10). */
export const ScenarioInputStepSchema = z.discriminatedUnion("op", [readStepInput, ...otherSteps]);

/** Layer 3: a whole session scenario. */
export const ScenarioSchema = z.strictObject({
  $schema: z.string().optional(),
  ...common,
  config: z.strictObject({
    maxDiffFileBytes: z.number().positive().optional(),
    maxDiffFileLines: z.number().positive().optional(),
    maxDiffBytesRatio: z.number().positive().optional(),
    maxDiffLinesRatio: z.number().positive().optional(),
    sensitivePatterns: z.array(z.string()).optional(),
    maxFileBytes: z.number().positive().optional(),
    partialAnswers: z.boolean().optional(),
  }).optional(),
  files: z.record(z.string(), fileContent).describe("relative to a fresh temporary cwd"),
  steps: z.array(ScenarioStepSchema).min(1),
});

/** A scenario vector. */
export type Scenario = z.infer<typeof ScenarioSchema>;
/** A scenario step. */
export type ScenarioStep = z.infer<typeof ScenarioStepSchema>;

const selectInput = z.strictObject({ pathKey: z.string(), scopeKey: z.string() });

/** What a port is given for a path case (SPEC §10): the case without its expectation. */
export const PathInputSchema = z.strictObject({
  layer: z.literal("path"),
  id,
  input: PathCaseSchema.shape.input,
});
/** What a port is given for a range case. */
export const RangeInputSchema = z.strictObject({
  layer: z.literal("range"),
  id,
  input: RangeCaseSchema.shape.input,
});
/** What a port is given for a trust case: the events and the base selections to answer. */
export const TrustInputSchema = z.strictObject({
  layer: z.literal("trust"),
  id,
  initial: trustState,
  events: TrustCaseSchema.shape.events,
  select: z.array(selectInput).optional().describe("base selections to answer after the events"),
});
/** What a port is given for a replay case. */
export const ReplayInputSchema = z.strictObject({
  layer: z.literal("replay"),
  id,
  entries: ReplayCaseSchema.shape.entries,
  leaf: ReplayCaseSchema.shape.leaf,
  overlay: ReplayCaseSchema.shape.overlay,
  select: z.array(selectInput).optional().describe("base selections to answer after replay"),
});
/** What a port is given for a scenario vector: no title, refs or expectations. */
export const ScenarioInputSchema = z.strictObject({
  id,
  config: ScenarioSchema.shape.config,
  files: ScenarioSchema.shape.files,
  steps: z.array(ScenarioInputStepSchema).min(1),
});
/** Everything a port may be given on stdin (SPEC §10). */
export const PortInputSchema = z.union([
  PathInputSchema,
  RangeInputSchema,
  TrustInputSchema,
  ReplayInputSchema,
  ScenarioInputSchema,
]);

/** One layer case of a vector file, tagged with its layer (the runner's side: with expectations). */
export type TaggedLayerCase =
  | ({ layer: "path" } & PathCase)
  | ({ layer: "range" } & RangeCase)
  | ({ layer: "trust" } & TrustCase)
  | ({ layer: "replay" } & ReplayCase);

/** A layer case as a port is given it. */
export type LayerPortInput =
  | z.infer<typeof PathInputSchema>
  | z.infer<typeof RangeInputSchema>
  | z.infer<typeof TrustInputSchema>
  | z.infer<typeof ReplayInputSchema>;
/** A scenario as a port is given it. */
export type ScenarioInput = z.infer<typeof ScenarioInputSchema>;
/** A scenario step as a port is given it. */
export type ScenarioInputStep = z.infer<typeof ScenarioInputStepSchema>;

/**
 * What a port is given for a scenario vector: its id, config, files and
 * steps, every expectation removed (SPEC §10). The runner keeps the vector.
 */
export function scenarioInput(v: Scenario): ScenarioInput {
  const out: ScenarioInput = {
    id: v.id,
    files: v.files,
    steps: v.steps.map((s) => {
      if (s.op !== "read") return s;
      const { expect: _expect, ...rest } = s;
      return rest;
    }),
  };
  if (v.config !== undefined) out.config = v.config;
  return out;
}

/** The base selections a trust or replay case asks for, without their expected answers. */
function selectsOf(
  expected: { select?: { pathKey: string; scopeKey: string }[] },
): { select?: { pathKey: string; scopeKey: string }[] } {
  return expected.select === undefined
    ? {}
    : { select: expected.select.map(({ pathKey, scopeKey }) => ({ pathKey, scopeKey })) };
}

/**
 * What a port is given for one layer case: its id and inputs (and, for trust
 * and replay, the base selections to answer), every expectation removed.
 */
export function layerInput(c: TaggedLayerCase): LayerPortInput {
  switch (c.layer) {
    case "path":
      return { layer: "path", id: c.id, input: c.input };
    case "range":
      return { layer: "range", id: c.id, input: c.input };
    case "trust":
      return {
        layer: "trust",
        id: c.id,
        initial: c.initial,
        events: c.events,
        ...selectsOf(c.expected),
      };
    case "replay": {
      const out: LayerPortInput = {
        layer: "replay",
        id: c.id,
        entries: c.entries,
        leaf: c.leaf,
        ...selectsOf(c.expected),
      };
      if (c.overlay !== undefined) out.overlay = c.overlay;
      return out;
    }
  }
}
