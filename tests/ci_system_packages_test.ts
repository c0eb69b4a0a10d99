// .ci/run for a contributor who is not root (issue 40 item 8): the system packages some tests use
// are installed only where apt-get may run (root, or sudo without a password); anyone else is told
// what is missing, and CI does not count it as a failed step.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("../.ci/system_packages.sh", import.meta.url));

/** Runs the script with PATH holding only stubs of `id` (this uid) and `apt-get` (logs calls). */
async function runAs(uid: number): Promise<{ code: number; out: string; aptCalls: string }> {
  const bin = await Deno.makeTempDir({ prefix: "readcache-ci-stub-" });
  const log = `${bin}/apt.log`;
  await Deno.writeTextFile(`${bin}/id`, `#!/bin/bash\necho ${uid}\n`, { mode: 0o755 });
  await Deno.writeTextFile(
    `${bin}/apt-get`,
    `#!/bin/bash\necho "apt-get $*" >> ${log}\nexit 0\n`,
    { mode: 0o755 },
  );
  try {
    const o = await new Deno.Command("/bin/bash", {
      args: [SCRIPT],
      env: { PATH: bin },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const td = new TextDecoder();
    let aptCalls = "";
    try {
      aptCalls = await Deno.readTextFile(log);
    } catch {
      // never called
    }
    return { code: o.code, out: td.decode(o.stdout) + td.decode(o.stderr), aptCalls };
  } finally {
    await Deno.remove(bin, { recursive: true });
  }
}

Deno.test("CI's system packages: not root, no sudo: says what is missing, runs no apt-get, exit 0", async () => {
  const r = await runAs(1000);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /not installed \(apt-get needs root, and sudo asks a password\):.*ripgrep/);
  assert.match(r.out, /without ripgrep pi's grep tool cannot run/);
  assert.equal(r.aptCalls, "", "apt-get was run");
});

Deno.test("CI's system packages: as root: apt-get installs what is missing", async () => {
  const r = await runAs(0);
  assert.equal(r.code, 0, r.out);
  assert.match(r.aptCalls, /apt-get update/);
  assert.match(r.aptCalls, /apt-get install -y -qq .*ripgrep/);
});
