// The sample CLI outputs of docs/cli.md (the four ```text blocks of "What it prints") are what the
// CLI prints today on the demo the page describes: scripts/readme_cli_outputs.ts sets the demo up
// in a fresh directory, runs the four commands and gives the blocks; any difference fails here,
// so the page cannot drift from the CLI or the fixtures again, and neither can the lines of
// `savings` README.md quotes. In the pi suite: `savings` replays the demo's session without
// readcache through pi.
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  CLI_PAGE,
  OUTPUTS_SECTION,
  README_COMMANDS,
  readmeBlocks,
  readmeOutputs,
  withBlocks,
} from "../../scripts/readme_cli_outputs.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

Deno.test("docs/cli.md: the four CLI outputs are what the CLI prints now; README quotes savings' own lines", async () => {
  const readme = await Deno.readTextFile(join(ROOT, CLI_PAGE));
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
      `${CLI_PAGE}'s output of 'readcache ${README_COMMANDS[i].join(" ")}' is not what the CLI ` +
        `prints now (first difference at line ${at + 1} of the block:\n  page: ${
          JSON.stringify(lines[at])
        }\n  CLI:    ${JSON.stringify(want[at])}).\n` +
        "Run: deno run -A scripts/readme_cli_outputs.ts",
    );
  }
  // the script touches nothing but the blocks
  assert.equal(withBlocks(readme, current.map((b) => b.text)), readme);
  // README.md's "What it saved" quotes lines of the savings output: each is one of them, in order
  const guide = await Deno.readTextFile(join(ROOT, "README.md"));
  const section = guide.slice(guide.indexOf("\n## What it saved\n"));
  const quoted = /```text\n([\s\S]*?)\n```/.exec(section)?.[1];
  assert.ok(quoted !== undefined, "README.md quotes the savings output under 'What it saved'");
  const savings = fresh[README_COMMANDS.findIndex((c) => c[0] === "savings")].split("\n");
  let from = 0;
  for (const line of quoted.split("\n")) {
    const at = savings.indexOf(line, from);
    assert.ok(at >= 0, `README.md quotes a line readcache savings does not print: ${line}`);
    from = at + 1;
  }
});

Deno.test("CLI page outputs: the four blocks are found in order, and only they are replaced", () => {
  const readme = [
    "# x",
    "",
    OUTPUTS_SECTION,
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
