// What `deno publish` ships: the library, SPEC, README, LICENSE and the vectors (ports fetch them
// from the package), and nothing else (no tests, scripts, bench, lockfile or CI files).
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { GUIDES } from "../scripts/npm_package.ts";

const root = fileURLToPath(new URL("..", import.meta.url));

Deno.test("the publish dry run ships exactly the library, docs and vectors, without warnings", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["publish", "--dry-run", "--allow-dirty"],
    cwd: root,
    env: { NO_COLOR: "1" },
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.ok(out.success, text);
  const list = [...text.matchAll(/^\s+file:\/\/(\S+) \(/gm)].map((m) => m[1].slice(root.length));
  assert.ok(list.length > 0, text);
  const top = new Set(list.map((f) => f.split("/")[0]));
  assert.deepEqual(
    [...top].sort(),
    [
      "LICENSE",
      "README.md",
      "SPEC.md",
      "deno.json",
      "docs",
      "mod.ts",
      "replay.ts",
      "rules.ts",
      "service.ts",
      "src",
      "vectors",
    ],
  );
  for (
    const needed of [
      "src/adapters/pi/extension.ts",
      "vectors/schema/scenario.schema.json",
      "SPEC.md",
      ...GUIDES.map((g) => `docs/${g}`),
    ]
  ) {
    assert.ok(list.includes(needed), `${needed} is shipped`);
  }
  assert.doesNotMatch(text, /^warning/m, "no publish warnings");
});
