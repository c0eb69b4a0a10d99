// The tree shows the architecture (SPEC §0): the pure core imports nothing from the shell, the
// store, the adapters or the conformance harness, and does no IO; each layer imports only the
// layers below it.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

function tsFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  return [
    ...text.matchAll(
      /(?:^|\n)\s*(?:import|export)[^"';]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g,
    ),
  ]
    .map((m) => m[1] ?? m[2]);
}

/** The layer a repository path belongs to. */
function layerOf(path: string): string {
  const m = /^src\/([a-z]+)\//.exec(path);
  return m ? m[1] : path === "mod.ts" ? "mod" : "outside";
}

const ALLOWED: Record<string, { layers: string[]; external: RegExp }> = {
  core: { layers: ["core"], external: /^(zod|diff|node:path|node:crypto)$/ },
  store: { layers: ["core", "store"], external: /^node:/ },
  shell: { layers: ["core", "store", "shell"], external: /^node:/ },
  adapters: {
    layers: ["core", "store", "shell", "adapters"],
    // zod: OpenCode's plugin tools declare their arguments as zod schemas
    external: /^(node:.*|zod|@mariozechner\/pi-coding-agent)$/,
  },
  conformance: {
    layers: ["core", "store", "shell", "conformance"],
    external: /^(node:.*|zod|diff)$/,
  },
};

for (const layer of Object.keys(ALLOWED)) {
  Deno.test(`src/${layer} imports only ${ALLOWED[layer].layers.join(", ")}`, () => {
    const problems: string[] = [];
    for (const file of tsFiles(`src/${layer}`)) {
      for (const spec of importsOf(file)) {
        if (spec.startsWith(".")) {
          const target = relative(root, resolve(dirname(join(root, file)), spec));
          if (!ALLOWED[layer].layers.includes(layerOf(target))) {
            problems.push(`${file} imports ${target}`);
          }
        } else if (!ALLOWED[layer].external.test(spec)) {
          problems.push(`${file} imports ${spec}`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });
}

Deno.test("every file under src/ is in a known layer", () => {
  const stray = tsFiles("src").filter((f) => !(layerOf(f) in ALLOWED));
  assert.deepEqual(stray, []);
});

Deno.test("the checker can fail: a core file importing node:fs is reported", () => {
  const fake =
    'import { readFileSync } from "node:fs";\nimport { x } from "../shell/read_service.ts";';
  const specs = [...fake.matchAll(/from\s*["']([^"']+)["']/g)].map((m) => m[1]);
  assert.ok(!ALLOWED.core.external.test(specs[0]));
  assert.equal(layerOf(relative(root, resolve(join(root, "src/core"), specs[1]))), "shell");
});

/** The relative imports of `file` (repository-relative), resolved. */
function relativeImports(file: string): string[] {
  return importsOf(file).filter((s) => s.startsWith(".")).map((s) =>
    relative(root, resolve(dirname(join(root, file)), s))
  );
}

/** The cycles among `files` (each as a list of files), by following their relative imports. */
function importCycles(
  files: readonly string[],
  importsFrom: (file: string) => string[] = relativeImports,
): string[][] {
  const set = new Set(files);
  const cycles: string[][] = [];
  const visit = (f: string, path: string[]) => {
    for (const t of importsFrom(f).filter((t) => set.has(t))) {
      const at = path.indexOf(t);
      if (at >= 0) cycles.push([...path.slice(at), t]);
      else visit(t, [...path, t]);
    }
  };
  for (const f of files) visit(f, [f]);
  return cycles;
}

Deno.test("one savings pipeline: the host readers and the figures import no circle", () => {
  const files = tsFiles("cli").filter((f) => /savings/.test(f));
  assert.ok(files.includes("cli/savings_figures.ts"), files.join(" "));
  assert.deepEqual(importCycles(files), []);
  // the host-neutral figures and the check import no host's reader
  for (const neutral of ["cli/savings_figures.ts", "cli/savings_model.ts"]) {
    assert.deepEqual(relativeImports(neutral).filter((t) => /_savings|savings\.ts/.test(t)), []);
  }
});

Deno.test("the command line imports no circle, and nothing of bench/ (bench imports the CLI's check)", () => {
  const files = tsFiles("cli");
  assert.deepEqual(importCycles(files), []);
  const fromBench = files.flatMap((f) =>
    relativeImports(f).filter((t) => t.startsWith("bench/")).map((t) => `${f} imports ${t}`)
  );
  assert.deepEqual(fromBench, []);
});

Deno.test("the cycle check can fail: a reader importing savings.ts back is a cycle", () => {
  const files = ["cli/savings.ts", "cli/claude_savings.ts"];
  const fake = (f: string) => f === files[0] ? [files[1]] : [files[0]];
  assert.ok(importCycles(files, fake).length > 0);
});
