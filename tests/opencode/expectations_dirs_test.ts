// The OpenCode port's applicability rule follows a shell command on a model of the project's files:
// a directory whose last file was removed is still there (`rm sub/c.txt` leaves `sub/`), so a
// command that copies into it works as it does on disk. Found by the oracle (seed 70308, session
// 2387): without the directory the rule thought `cp` failed and let through a read of a file the
// command had put back with CR line ends and a BOM, which OpenCode shows without them.
import assert from "node:assert/strict";
import { openCodeVector } from "../../scripts/opencode/opencode_expectations.ts";

Deno.test("the OpenCode rule keeps an emptied directory: a command can copy into it", () => {
  const crlf = "\uFEFFa1 beta\r\na2 gamma\r\na3 delta";
  const v = openCodeVector({
    id: "rule-emptied-directory",
    title: "an emptied directory is still a directory",
    refs: ["SPEC §10"],
    files: { "a.txt": crlf, "sub/c.txt": "c1\n" },
    steps: [
      { op: "remove", path: "sub/c.txt" },
      {
        op: "bash",
        command:
          "cp ./a.txt ./sub/c.txt; echo x > ./a.txt && cat ./a.txt && cp ./sub/c.txt ./a.txt",
      },
      { op: "read", path: "a.txt", expect: { mode: "full" } },
    ],
  });
  assert.deepEqual(v.applies ? "applies" : v.reasons, { "line-model": [2] });
});
