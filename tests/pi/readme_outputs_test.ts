// README.md's sample CLI outputs (the four ```text blocks of "Command line") are what the CLI
// prints today on the demo the README describes: scripts/readme_cli_outputs.ts sets the demo up
// in a fresh directory, runs the four commands and gives the blocks; any difference fails here,
// so the README cannot drift from the CLI or the fixtures again. In the pi suite: `savings`
// replays the demo's session without readcache through pi.
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  README_COMMANDS,
  readmeBlocks,
  readmeOutputs,
  withBlocks,
} from "../../scripts/readme_cli_outputs.ts";

const README = join(fileURLToPath(new URL("../..", import.meta.url)), "README.md");

Deno.test("README: the four CLI outputs of 'Command line' are what the CLI prints now", async () => {
  const readme = await Deno.readTextFile(README);
  const current = readmeBlocks(readme);
  assert.equal(current.length, README_COMMANDS.length);
  const fresh = await readmeOutputs();
  for (const [i, block] of current.entries()) {
    const lines = block.text.split("\n");
    const want = fresh[i].split("\n");
    const at = want.findIndex((l, j) => l !== lines[j]);
    assert.equal(
      block.text,
      fresh[i],
      `README.md's output of 'readcache ${README_COMMANDS[i].join(" ")}' is not what the CLI ` +
        `prints now (first difference at line ${at + 1} of the block:\n  README: ${
          JSON.stringify(lines[at])
        }\n  CLI:    ${JSON.stringify(want[at])}).\n` +
        "Run: deno run -A scripts/readme_cli_outputs.ts",
    );
  }
  // the script touches nothing but the blocks
  assert.equal(withBlocks(readme, current.map((b) => b.text)), readme);
});

Deno.test("README outputs: the four blocks are found in order, and only they are replaced", () => {
  const readme = [
    "# x",
    "",
    "## Command line",
    "",
    "```sh",
    "deno task cli status --latest",
    "```",
    "",
    ...README_COMMANDS.flatMap((c) => ["```text", `$ readcache ${c.join(" ")}`, "old", "```", ""]),
    "## Next",
    "",
    "```text",
    "$ readcache gc",
    "```",
    "",
  ].join("\n");
  const blocks = README_COMMANDS.map((c) => `$ readcache ${c.join(" ")}\nnew`);
  const out = withBlocks(readme, blocks);
  assert.equal(out, readme.replaceAll("\nold\n", "\nnew\n"));
  assert.ok(out.endsWith("## Next\n\n```text\n$ readcache gc\n```\n"), "outside the section");
  assert.throws(
    () => readmeBlocks(readme.replace("$ readcache doctor", "$ readcache doctor --json")),
    /should have 4 ```text blocks starting \$ readcache status --latest/,
  );
});
