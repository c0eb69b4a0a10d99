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
