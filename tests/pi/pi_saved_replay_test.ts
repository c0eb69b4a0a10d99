// Saved replays (SPEC §6.5): the extension saves a file-backed session's replay in the project's
// store at a quiet read, and a cold start (a new instance, the session reopened) continues from
// it, walking up from the leaf only to the saved entry. Its answers are the answers of a full
// replay, after file changes, /tree moves and compactions; a damaged or foreign saved replay is
// never used; a session kept in memory saves nothing.
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { createReadcacheExtension } from "../../src/adapters/pi/extension.ts";
import { loadSavedReplay } from "../../src/adapters/pi/saved_replay.ts";
import { FsObjectStore } from "../../src/store/fs_object_store.ts";
import { FakePiHost } from "../../scripts/pi/pi_host.ts";
import { counted, withProject } from "./support/session_calls.ts";

const FILES = 6;
const body = (f: number, edited = 0) =>
  Array.from(
    { length: 20 },
    (_, i) => `file ${f} line ${i + 1}${i === 4 && edited > 0 ? ` v${edited}` : ""}`,
  )
    .join("\n") + "\n";

function withCwd(fn: (cwd: string) => Promise<void>): () => Promise<void> {
  return withProject(
    "readcache-saved-replay-",
    Object.fromEntries(Array.from({ length: FILES }, (_, f) => [`f${f}.txt`, body(f)])),
    fn,
  );
}

function newHost(
  session: SessionManager,
  cwd: string,
  saveReplayEvery?: number,
  compactAfterSave?: boolean,
): FakePiHost {
  const host = new FakePiHost(session, cwd);
  createReadcacheExtension({ home: () => cwd, saveReplayEvery, compactAfterSave })(host);
  return host;
}

async function modeOf(host: FakePiHost, path: string): Promise<string> {
  host.userMessage(`read ${path}`);
  const out = await host.callTool("read", { path });
  assert.ok(out.ok, out.ok ? "" : out.error);
  const d = out.result.details as { readcache?: { mode?: string } } | undefined;
  return d?.readcache?.mode ?? "none";
}

const stateFiles = (cwd: string) => {
  const dir = join(cwd, ".pi", "readcache", "state");
  return existsSync(dir) ? readdirSync(dir).map((n) => join(dir, n)) : [];
};

Deno.test(
  "a cold start continues from the saved replay: it walks up only to the saved entry",
  withCwd(async (cwd) => {
    const sessions = join(cwd, ".sessions");
    const file = SessionManager.create(cwd, sessions);
    const host = newHost(file, cwd, 100);
    for (let i = 0; i < 200; i++) await modeOf(host, `f${i % FILES}.txt`); // 600 entries
    assert.equal(stateFiles(cwd).length, 1, "one saved replay for the session");
    writeFileSync(join(cwd, "f2.txt"), body(2, 1));
    for (
      const [what, session] of [
        ["new instance", file],
        ["reopened", SessionManager.open(file.getSessionFile()!, sessions)],
      ] as const
    ) {
      const { session: watched, calls } = counted(session);
      const cold = newHost(watched, cwd, 100);
      calls.clear();
      assert.equal(await modeOf(cold, "f1.txt"), "unchanged", what);
      const asked = calls.get("getEntry") ?? 0;
      assert.ok(
        asked <= 100 + 3,
        `${what}: ${asked} getEntry calls (saved at most 100 entries up)`,
      );
      assert.equal(calls.get("getBranch") ?? 0, 0);
      assert.equal(await modeOf(cold, "f2.txt"), "diff", what);
    }
  }),
);

/**
 * One script of reads, file changes, restarts, /tree moves and a compaction; the read modes
 * with saved replays (every quiet read) and without.
 */
async function script(
  cwd: string,
  saveReplayEvery: number,
  compactAfterSave?: boolean,
): Promise<string[]> {
  for (let f = 0; f < FILES; f++) writeFileSync(join(cwd, `f${f}.txt`), body(f));
  rmSync(join(cwd, ".pi"), { recursive: true, force: true });
  const sessions = join(cwd, `.sessions-${saveReplayEvery}`);
  let session = SessionManager.create(cwd, sessions);
  let host = newHost(session, cwd, saveReplayEvery, compactAfterSave);
  const modes: string[] = [];
  const read = async (f: number) => modes.push(`f${f}:${await modeOf(host, `f${f}.txt`)}`);
  const restart = (reopen: boolean) => {
    if (reopen) session = SessionManager.open(session.getSessionFile()!, sessions);
    host = newHost(session, cwd, saveReplayEvery, compactAfterSave);
  };
  for (let f = 0; f < FILES; f++) await read(f);
  const middle = session.getLeafId()!;
  for (let f = 0; f < FILES; f++) await read(f);
  writeFileSync(join(cwd, "f1.txt"), body(1, 1));
  restart(false);
  await read(1);
  await read(3);
  // /tree back to the middle: the saved replay is not on the new branch
  session.branch(middle);
  restart(false);
  await read(1);
  await read(4);
  writeFileSync(join(cwd, "f4.txt"), body(4, 2));
  restart(true);
  await read(4);
  await read(0);
  session.appendCompaction("summary", session.getLeafId()!, 100);
  restart(true);
  await read(0);
  await read(0);
  writeFileSync(join(cwd, "f0.txt"), body(0, 3));
  restart(true);
  await read(0);
  await read(5);
  return modes;
}

Deno.test(
  "answers with saved replays are the answers without them (changes, restarts, /tree, compaction)",
  withCwd(async (cwd) => {
    const without = await script(cwd, 0);
    assert.equal(stateFiles(cwd).length, 0, "0 never saves");
    const withSaved = await script(cwd, 1);
    assert.equal(stateFiles(cwd).length, 1);
    assert.deepEqual(withSaved, without);
    // the live instance kept every entry it synced instead of continuing from what it saved
    const live = await script(cwd, 1, false);
    assert.deepEqual(live, without);
    // the script answers from the cache after restarts (not all plain)
    assert.ok(without.filter((m) => m.endsWith(":unchanged")).length >= 8, without.join(" "));
    assert.ok(without.some((m) => m.endsWith(":diff")), without.join(" "));
  }),
);

Deno.test(
  "a damaged saved replay, or one of another session file or home, is never used",
  withCwd(async (cwd) => {
    const sessions = join(cwd, ".sessions");
    const file = SessionManager.create(cwd, sessions);
    const host = newHost(file, cwd, 10);
    for (let i = 0; i < 40; i++) await modeOf(host, `f${i % FILES}.txt`);
    const [state] = stateFiles(cwd);
    const store = FsObjectStore.forCwd(cwd);
    const owner = { session: file.getSessionId(), file: file.getSessionFile()!, home: cwd };
    assert.ok(await loadSavedReplay(store, owner) !== undefined);
    assert.equal(await loadSavedReplay(store, { ...owner, home: "/elsewhere" }), undefined);
    assert.equal(await loadSavedReplay(store, { ...owner, file: `${owner.file}.copy` }), undefined);

    const bytes = readFileSync(state);
    bytes[bytes.length - 5] ^= 1; // one flipped bit after the checksum line
    writeFileSync(state, bytes);
    assert.equal(await loadSavedReplay(store, owner), undefined);
    const { session: watched, calls } = counted(file);
    const cold = newHost(watched, cwd, 10);
    calls.clear();
    assert.equal(await modeOf(cold, "f1.txt"), "unchanged");
    assert.ok((calls.get("getEntry") ?? 0) >= 120, "the whole branch is walked instead");
  }),
);

Deno.test(
  "a session kept in memory saves nothing",
  withCwd(async (cwd) => {
    const host = newHost(SessionManager.inMemory(cwd), cwd, 1);
    for (let i = 0; i < 12; i++) await modeOf(host, `f${i % FILES}.txt`);
    assert.deepEqual(stateFiles(cwd), []);
  }),
);

Deno.test(
  "a state directory that is a link, or a state that is a named pipe, is never used",
  withCwd(async (cwd) => {
    const outside = join(cwd, "outside");
    mkdirSync(outside);
    mkdirSync(join(cwd, ".pi", "readcache"), { recursive: true });
    symlinkSync(outside, join(cwd, ".pi", "readcache", "state"));
    const file = SessionManager.create(cwd, join(cwd, ".sessions"));
    const host = newHost(file, cwd, 1);
    for (let i = 0; i < 12; i++) await modeOf(host, `f${i % FILES}.txt`);
    assert.deepEqual(readdirSync(outside), [], "nothing written through the link");
    rmSync(join(cwd, ".pi", "readcache", "state"));
    const owner = { session: file.getSessionId(), file: file.getSessionFile()!, home: cwd };
    await modeOf(host, "f0.txt");
    const [state] = stateFiles(cwd);
    rmSync(state);
    new Deno.Command("mkfifo", { args: [state] }).outputSync();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const loaded = await Promise.race([
      loadSavedReplay(FsObjectStore.forCwd(cwd), owner),
      new Promise((r) => timer = setTimeout(() => r("hung"), 5000)),
    ]);
    clearTimeout(timer);
    assert.equal(loaded, undefined);
    const cold = newHost(file, cwd, 1);
    assert.equal(await modeOf(cold, "f1.txt"), "unchanged");
  }),
);
