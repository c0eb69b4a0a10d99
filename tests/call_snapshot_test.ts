// What a tool call may have touched while it ran (SPEC §5.10, printed while changing): the
// statuses of a held file, its directories and its real path at the call's start and result.
import assert from "node:assert/strict";
import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  COARSE_RACY_WINDOW_MS,
  RACY_WINDOW_MS,
  snapshotCall,
  touchedSince,
} from "../src/shell/call_snapshot.ts";
import { toolCallSnapshot, toolResultMeta } from "../src/shell/tool_result.ts";
import { BranchKnowledge } from "../src/core/knowledge.ts";
import { sha256Hex } from "../src/core/hash.ts";
import { countLines } from "../src/core/range.ts";
import { MemoryObjectStore } from "../src/core/object_store.ts";

/** Long enough for any change before it to be out of the racy window (file times may be whole seconds). */
function settle(): Promise<void> {
  const probe = join(tmpdir(), `readcache-snap-probe-${crypto.randomUUID()}`);
  writeFileSync(probe, "");
  const fine = Deno.lstatSync(probe).ctime!.getTime() % 1000 !== 0;
  unlinkSync(probe);
  const ms = (fine ? RACY_WINDOW_MS : COARSE_RACY_WINDOW_MS) + 100;
  return new Promise((r) => setTimeout(r, ms));
}

/** A project whose files and directories all changed more than the racy window ago. */
async function oldProject(): Promise<string> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "readcache-snap-")));
  mkdirSync(join(root, "src"));
  writeFileSync(join(root, "src", "a.txt"), "A\n");
  writeFileSync(join(root, "src", "b.txt"), "B\n");
  writeFileSync(join(root, "other.txt"), "O\n");
  // change times cannot be set: wait until they are out of the racy window
  await settle();
  return root;
}

Deno.test("a file nothing wrote, moved or replaced is not touched", async () => {
  const root = await oldProject();
  try {
    const a = join(root, "src", "a.txt");
    const snap = await snapshotCall([a], root);
    // reading it, or changing files elsewhere in the tree, touches nothing on its way
    Deno.readTextFileSync(a);
    writeFileSync(join(root, "other.txt"), "O2\n");
    assert.equal(await touchedSince(snap, a), false);
  } finally {
    rmSync(root, { recursive: true });
  }
});

Deno.test("a file written and put back while the call ran is touched", async () => {
  const root = await oldProject();
  try {
    const a = join(root, "src", "a.txt");
    const snap = await snapshotCall([a], root);
    writeFileSync(a, "changed\n");
    writeFileSync(a, "A\n");
    // even with its modification time put back (only the change time cannot be)
    utimesSync(a, new Date(0), new Date(0));
    assert.equal(await touchedSince(snap, a), true);
  } finally {
    rmSync(root, { recursive: true });
  }
});

Deno.test("a directory on the way moved away and back, or an entry beside it, touches", async () => {
  const root = await oldProject();
  try {
    const a = join(root, "src", "a.txt");
    let snap = await snapshotCall([a], root);
    renameSync(join(root, "src"), join(root, "src.keep"));
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src", "a.txt"), "other\n");
    rmSync(join(root, "src"), { recursive: true });
    renameSync(join(root, "src.keep"), join(root, "src"));
    assert.equal(await touchedSince(snap, a), true);
    await settle();
    snap = await snapshotCall([a], root);
    writeFileSync(join(root, "src", "new.txt"), "n\n");
    unlinkSync(join(root, "src", "new.txt"));
    assert.equal(await touchedSince(snap, a), true);
  } finally {
    rmSync(root, { recursive: true });
  }
});

Deno.test("a link pointed elsewhere and back touches its name", async () => {
  const root = await oldProject();
  try {
    const link = join(root, "link.txt");
    symlinkSync(join(root, "src", "a.txt"), link);
    await settle();
    const snap = await snapshotCall([link], root);
    unlinkSync(link);
    symlinkSync(join(root, "src", "b.txt"), link);
    unlinkSync(link);
    symlinkSync(join(root, "src", "a.txt"), link);
    assert.equal(await touchedSince(snap, link), true);
  } finally {
    rmSync(root, { recursive: true });
  }
});

Deno.test("a file changed just before the call started is racy: always touched", async () => {
  const root = await oldProject();
  try {
    const a = join(root, "src", "a.txt");
    writeFileSync(a, "A\n");
    const snap = await snapshotCall([a], root);
    assert.equal(await touchedSince(snap, a), true);
    // and an identity the snapshot does not know
    assert.equal(await touchedSince(snap, join(root, "src", "b.txt")), true);
  } finally {
    rmSync(root, { recursive: true });
  }
});

/** The model read `a.txt` whole; the current turn's message has the given calls. */
function knowledgeOf(
  a: string,
  text: string,
  turn: { opaque?: string[]; shows?: string[] },
): BranchKnowledge {
  const k = new BranchKnowledge();
  k.sync([
    { id: "m1", parentId: null, kind: "other" },
    {
      id: "r1",
      parentId: "m1",
      kind: "read",
      callId: "read-1",
      call: { name: a, pathKey: a },
      meta: {
        v: 1,
        pathKey: a,
        scopeKey: "full",
        servedHash: sha256Hex(new TextEncoder().encode(text)),
        mode: "full",
        totalLines: countLines(text),
        rangeStart: 1,
        rangeEnd: countLines(text),
        bytes: text.length,
      },
    },
    { id: "m2", parentId: "r1", kind: "other", ...turn },
  ]);
  return k;
}

Deno.test("a print beside another call of its message that changed the file and put it back", async () => {
  const root = await oldProject();
  try {
    const a = join(root, "src", "a.txt");
    const deps = { cwd: root, home: root, store: new MemoryObjectStore() };
    const output = { kind: "shell" as const, command: "cat src/a.txt", output: "changed\n" };
    // `cat` (c2) beside `sh flip.sh` (c1), which wrote other bytes and put "A\n" back meanwhile
    const k = knowledgeOf(a, "A\n", { opaque: ["c1"], shows: ["c2"] });
    const snapshot = await toolCallSnapshot(k, deps);
    writeFileSync(a, "changed\n");
    writeFileSync(a, "A\n");
    const meta = await toolResultMeta(k, deps, output, { callId: "c2", snapshot });
    assert.deepEqual(meta.changed, [a]);
    // alone in its message, a read-only print is checked at its result only
    const alone = knowledgeOf(a, "A\n", { shows: ["c2"] });
    const quiet = await toolResultMeta(alone, deps, output, { callId: "c2", snapshot });
    assert.deepEqual(quiet.changed, []);
  } finally {
    rmSync(root, { recursive: true });
  }
});

Deno.test("a program that printed, with nothing touched since the call started, keeps the file", async () => {
  const root = await oldProject();
  try {
    const a = join(root, "src", "a.txt");
    const deps = { cwd: root, home: root, store: new MemoryObjectStore() };
    const output = { kind: "shell" as const, command: "npm test", output: "A\n" };
    const k = knowledgeOf(a, "A\n", { opaque: ["c1"] });
    const snapshot = await toolCallSnapshot(k, deps);
    assert.deepEqual(
      (await toolResultMeta(k, deps, output, { callId: "c1", snapshot })).changed,
      [],
    );
    // without a snapshot (a host with no call hook): every file it may have printed
    assert.deepEqual((await toolResultMeta(k, deps, output, { callId: "c1" })).changed, [a]);
    // printed nothing: nothing shown
    const none = { ...output, output: "(no output)" };
    assert.deepEqual((await toolResultMeta(k, deps, none, { callId: "c1" })).changed, []);
  } finally {
    rmSync(root, { recursive: true });
  }
});
