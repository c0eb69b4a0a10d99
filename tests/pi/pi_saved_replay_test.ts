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
import { cheaperThanWalk, loadSavedReplay } from "../../src/adapters/pi/saved_replay.ts";
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
  weighSavedReplay = false,
): FakePiHost {
  const host = new FakePiHost(session, cwd);
  // saved at every quiet point these short sessions reach, as a long session's would be
  createReadcacheExtension({
    home: () => cwd,
    saveReplayEvery,
    compactAfterSave,
    weighSavedReplay,
  })(
    host,
  );
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
      // twice up to the saved entry: to see that the branch reaches it, then the walk itself
      const asked = calls.get("getEntry") ?? 0;
      assert.ok(
        asked <= 2 * (100 + 3),
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
    const all = { weigh: false };
    assert.ok(await loadSavedReplay(store, owner, all) !== undefined);
    assert.equal(await loadSavedReplay(store, { ...owner, home: "/elsewhere" }, all), undefined);
    assert.equal(
      await loadSavedReplay(store, { ...owner, file: `${owner.file}.copy` }, all),
      undefined,
    );

    const bytes = readFileSync(state);
    bytes[bytes.length - 5] ^= 1; // one flipped bit after the checksum line
    writeFileSync(state, bytes);
    assert.equal(await loadSavedReplay(store, owner, all), undefined);
    const { session: watched, calls } = counted(file);
    const cold = newHost(watched, cwd, 10);
    calls.clear();
    assert.equal(await modeOf(cold, "f1.txt"), "unchanged");
    assert.ok((calls.get("getEntry") ?? 0) >= 120, "the whole branch is walked instead");
  }),
);

Deno.test(
  "a saved replay is written and read only where loading it costs less than the walk it replaces",
  withCwd(async (cwd) => {
    // what the walk costs grows with its entries and the files its reads name; loading, with
    // the bytes of the state
    assert.equal(cheaperThanWalk(1000, 200, 42_000), true);
    assert.equal(cheaperThanWalk(1000, 6, 2_000), true);
    assert.equal(cheaperThanWalk(40, 6, 2_000), false);
    assert.equal(cheaperThanWalk(100_000, 1, 10_000_000), false);
    const sessions = join(cwd, ".sessions");
    const file = SessionManager.create(cwd, sessions);
    const weighed = newHost(file, cwd, 10, true, true);
    for (let i = 0; i < 12; i++) await modeOf(weighed, `f${i % FILES}.txt`); // 36 entries
    assert.deepEqual(stateFiles(cwd), [], "a short session walks faster than a state loads");
    for (let i = 0; i < 400; i++) await modeOf(weighed, `f${i % FILES}.txt`);
    assert.equal(stateFiles(cwd).length, 1, "a longer one saves");
    const store = FsObjectStore.forCwd(cwd);
    const owner = { session: file.getSessionId(), file: file.getSessionFile()!, home: cwd };
    assert.ok(await loadSavedReplay(store, owner) !== undefined);
    // a branch that meets a compaction before the saved entry replays from the compaction: the
    // state is not even parsed
    assert.equal(await loadSavedReplay(store, owner, { reaches: () => false }), undefined);
    file.appendCompaction("summary", file.getLeafId()!, 100);
    const { session: watched, calls } = counted(file);
    const cold = newHost(watched, cwd, 10, true, true);
    calls.clear();
    assert.equal(await modeOf(cold, "f1.txt"), "full", "nothing before the compaction counts");
    assert.ok((calls.get("getEntry") ?? 0) <= 2 * 4, "stopped at the compaction");
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
