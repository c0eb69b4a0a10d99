// Parity with the host: pi's own resolveReadPath (read tool path rules) and
// ours give the same result on real files, including the macOS variants.
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalPathKey, resolveReadPath } from "../../rules.ts";
// pi does not export its path utils from the package entry; load the file.
import * as pi from "../../pi-suite/node_modules/@mariozechner/pi-coding-agent/dist/core/tools/path-utils.js";

const piResolve = (pi as { resolveReadPath(path: string, cwd: string): string }).resolveReadPath;

const files = [
  "plain.txt",
  "my file.txt",
  "Screenshot 2024-05-01 at 10.11.12\u202FAM.png",
  "shot 9.00.00\u202Fpm.png",
  "cafe\u0301.txt",
  "it\u2019s.txt",
  "Capture d\u2019e\u0301cran.png",
  "both 1.00 PM.png",
  "both 1.00\u202FPM.png",
  "sub/dir/deep.ts",
  "@literal.txt",
];

const inputs = [
  "plain.txt",
  "./plain.txt",
  "sub/../plain.txt",
  "@plain.txt",
  "@@literal.txt",
  "my\u00A0file.txt",
  "my\u2007file.txt",
  "my\u3000file.txt",
  "my\u202Ffile.txt",
  "Screenshot 2024-05-01 at 10.11.12 AM.png",
  "shot 9.00.00 pm.png",
  "caf\u00E9.txt",
  "it's.txt",
  "Capture d'\u00E9cran.png",
  "both 1.00 PM.png",
  "missing.txt",
  "missing 1.00 PM.png",
  "sub/dir/deep.ts",
  "~",
  "~/",
  "~/definitely-not-here-readcache.txt",
  "@~/definitely-not-here-readcache.txt",
  "~other/x",
  "/etc/hostname",
];

Deno.test("resolveReadPath matches pi's resolveReadPath on real files", () => {
  const cwd = mkdtempSync(join(tmpdir(), "readcache-path-"));
  try {
    for (const f of files) {
      mkdirSync(join(cwd, f, ".."), { recursive: true });
      writeFileSync(join(cwd, f), "x");
    }
    const env = { cwd, home: homedir(), exists: (p: string) => existsSync(p) };
    for (const input of inputs) {
      assert.equal(
        resolveReadPath(input, env),
        piResolve(input, cwd),
        `input ${JSON.stringify(input)}`,
      );
    }
    // the absolute form of every input resolves identically too
    for (const f of files) {
      const abs = join(cwd, f.normalize("NFC").replace(/\u2019/g, "'").replace(/\u202F/g, " "));
      assert.equal(resolveReadPath(abs, env), piResolve(abs, cwd), `input ${JSON.stringify(abs)}`);
    }
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});

Deno.test("pathKey: a symlink and its target share one key; display path stays as typed", () => {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "readcache-key-")));
  try {
    writeFileSync(join(cwd, "real.ts"), "x");
    symlinkSync(join(cwd, "real.ts"), join(cwd, "link.ts"));
    const env = { cwd, home: homedir(), exists: (p: string) => existsSync(p) };
    const real = (p: string) => {
      try {
        return realpathSync(p);
      } catch {
        return undefined;
      }
    };
    const viaLink = resolveReadPath("link.ts", env);
    const viaTarget = resolveReadPath("real.ts", env);
    assert.equal(viaLink, join(cwd, "link.ts"));
    assert.equal(canonicalPathKey(viaLink, real), join(cwd, "real.ts"));
    assert.equal(canonicalPathKey(viaTarget, real), join(cwd, "real.ts"));
    assert.equal(canonicalPathKey(join(cwd, "gone.ts"), real), join(cwd, "gone.ts"));
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});
