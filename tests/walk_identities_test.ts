// The identities one walk takes directory by directory (WalkIdentities) are the realpaths of the
// files, whatever the directory holds: regular files, links to files and to directories, a linked
// directory, names that do not exist, a directory too large to list, a file created after the
// listing, and however many files of a directory are asked for.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realpathOrUndefined } from "../src/shell/read_service.ts";
import { WalkIdentities } from "../src/shell/walk_identities.ts";

Deno.test("a walk's identities, directory by directory, are the files' realpaths", () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "readcache-walk-ids-")));
  try {
    const src = join(root, "src");
    mkdirSync(join(src, "sub"), { recursive: true });
    for (let i = 0; i < 20; i++) writeFileSync(join(src, `f${i}.ts`), `${i}\n`);
    writeFileSync(join(root, "elsewhere.ts"), "x\n");
    symlinkSync(join(root, "elsewhere.ts"), join(src, "link.ts"));
    symlinkSync(join(src, "sub"), join(src, "linkdir"));
    symlinkSync(join(root, "nowhere.ts"), join(src, "dangling.ts"));
    symlinkSync(src, join(root, "alias")); // a linked directory: its files' realpaths are in src
    const big = join(root, "big");
    mkdirSync(big);
    for (let i = 0; i < 4100; i++) writeFileSync(join(big, `b${i}`), "");
    const names = [
      ...Array.from({ length: 20 }, (_, i) => join(src, `f${i}.ts`)),
      join(src, "link.ts"),
      join(src, "linkdir"),
      join(src, "sub"),
      join(src, "dangling.ts"),
      join(src, "missing.ts"),
      ...Array.from({ length: 6 }, (_, i) => join(root, "alias", `f${i}.ts`)),
      join(root, "alias", "link.ts"),
      join(root, "alias", "missing.ts"),
      ...Array.from({ length: 5 }, (_, i) => join(big, `b${i}`)),
      join(root, "gone", "a.ts"),
      join(root, "gone", "b.ts"),
      join(root, "gone", "c.ts"),
      join(root, "gone", "d.ts"),
      "/",
      root,
    ];
    let listed = 0;
    let asked = 0;
    const counting = (p: string) => (asked++, realpathOrUndefined(p));
    const ids = new WalkIdentities(counting);
    for (const round of [1, 2]) {
      for (const p of names) {
        assert.equal(ids.realpath(p), realpathOrUndefined(p), `${round}: ${p}`);
      }
    }
    // a file created after its directory was listed: still its realpath
    writeFileSync(join(src, "late.ts"), "late\n");
    assert.equal(ids.realpath(join(src, "late.ts")), join(src, "late.ts"));
    listed = names.length * 2 + 1 - asked;
    assert.ok(listed > 40, `${listed} of ${names.length * 2 + 1} answered from listings`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
