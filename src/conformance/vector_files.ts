/**
 * Loading and validating the vector corpus, and generating its JSON Schema
 * from the zod schemas.
 *
 * Specified by SPEC.md §10.
 *
 * @module
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { z } from "zod";
import type { TaggedLayerCase } from "./vector_schema.ts";
import { PortOutputSchema } from "./port_output.ts";
import {
  PathFileSchema,
  PortInputSchema,
  RangeFileSchema,
  ReplayFileSchema,
  ScenarioSchema,
  TrustFileSchema,
} from "./vector_schema.ts";

/** Vector layers whose files hold several cases. */
export const LAYERS = ["path", "range", "trust", "replay"] as const;
/** A layer name. */
export type Layer = typeof LAYERS[number];

const FILE_SCHEMAS: Record<Layer, z.ZodType> = {
  path: PathFileSchema,
  range: RangeFileSchema,
  trust: TrustFileSchema,
  replay: ReplayFileSchema,
};

/** JSON Schema documents generated from the zod schemas, by file name. */
export function generateJsonSchemas(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // the version of the package in every $id: a schema changes with the vectors it describes
  const id = (name: string) =>
    `https://jsr.io/@readcache/core/${VECTORS_VERSION}/vectors/schema/${name}`;
  for (const layer of LAYERS) {
    out[`${layer}.schema.json`] = {
      ...z.toJSONSchema(FILE_SCHEMAS[layer], { io: "input" }),
      $id: id(`${layer}.schema.json`),
      title: `@readcache/core ${layer} vectors`,
    };
  }
  out["scenario.schema.json"] = {
    ...z.toJSONSchema(ScenarioSchema, { io: "input" }),
    $id: id("scenario.schema.json"),
    title: "@readcache/core scenario vector",
  };
  out["port-input.schema.json"] = {
    ...z.toJSONSchema(PortInputSchema, { io: "input" }),
    $id: id("port-input.schema.json"),
    title: "@readcache/core port input (a vector without its expectations, SPEC §10)",
  };
  out["port-output.schema.json"] = {
    ...z.toJSONSchema(PortOutputSchema, { io: "input" }),
    $id: id("port-output.schema.json"),
    title: "@readcache/core port output (SPEC §10)",
  };
  return out;
}

/** The version of the vectors and their schemas: the package's version. */
export const VECTORS_VERSION = "0.1.0";

/**
 * The index of the vector files below `root` (paths relative to it, `/`-separated), which
 * `vectors/index.json` holds so the runner can find the files where it cannot list a folder
 * (the package served over HTTP). `deno task schema` writes it; a test checks it is current.
 */
export function vectorIndex(root: string): { version: string; files: string[] } {
  return {
    version: VECTORS_VERSION,
    files: listJsonFiles(root).map((f) => relative(root, f).split(/[\\/]/).join("/")),
  };
}

/** All `*.json` files below `dir`, sorted, skipping `schema/` and the index. */
export function listJsonFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) {
        if (name !== "schema") walk(p);
      } else if (name.endsWith(".json") && !(d === dir && name === "index.json")) out.push(p);
    }
  };
  if (statSync(dir).isFile()) return [dir];
  walk(dir);
  return out;
}

/** A vector file that failed validation. */
export interface VectorFileProblem {
  /** File path. */
  file: string;
  /** What is wrong. */
  message: string;
}

/** One loaded layer case with the file it came from. */
export interface LoadedLayerCase {
  /** File path relative to the vectors root. */
  file: string;
  /** The case, tagged with its layer. */
  input: TaggedLayerCase;
}

/** Loads and validates a layer vector file. Throws nothing: problems are returned. */
export function loadLayerFile(
  file: string,
  root: string,
): { cases: LoadedLayerCase[]; problems: VectorFileProblem[] } {
  return parseLayerFile(readFileSync(file, "utf8"), relative(root, file));
}

/**
 * Parses and validates the text of a layer vector file (`rel` names it in
 * problems). Throws nothing: problems are returned.
 */
export function parseLayerFile(
  text: string,
  rel: string,
): { cases: LoadedLayerCase[]; problems: VectorFileProblem[] } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { cases: [], problems: [{ file: rel, message: `not valid JSON: ${String(e)}` }] };
  }
  const layer = (raw as { layer?: unknown })?.layer;
  if (typeof layer !== "string" || !(LAYERS as readonly string[]).includes(layer)) {
    return { cases: [], problems: [{ file: rel, message: `unknown layer ${String(layer)}` }] };
  }
  const parsed = FILE_SCHEMAS[layer as Layer].safeParse(raw);
  if (!parsed.success) {
    return {
      cases: [],
      problems: [{ file: rel, message: z.prettifyError(parsed.error) }],
    };
  }
  const data = parsed.data as { cases: Record<string, unknown>[] };
  return {
    cases: data.cases.map((c) => ({ file: rel, input: { layer, ...c } as TaggedLayerCase })),
    problems: [],
  };
}
