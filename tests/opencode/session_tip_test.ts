// The newest messages of a session read from OpenCode's database (session_tip.ts): ids, part ids
// and the revert point, as OpenCode 1.18 stores them; unavailable rather than wrong.
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import {
  openCodeDatabaseFile,
  openCodeTipReader,
} from "../../src/adapters/opencode/session_tip.ts";

/** A database with OpenCode's three tables (the columns the reader and the CLI use). */
function makeDb(file: string): DatabaseSync {
  const db = new DatabaseSync(file);
  db.exec(`
    CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT, revert TEXT);
    CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER,
      time_updated INTEGER, data TEXT);
    CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT,
      time_created INTEGER, time_updated INTEGER, data TEXT);
  `);
  return db;
}

Deno.test("the newest messages with their parts' ids, oldest first, and the revert point", async () => {
  const dir = await Deno.makeTempDir({ prefix: "readcache-tip-" });
  try {
    const file = join(dir, "opencode.db");
    const db = makeDb(file);
    db.prepare("INSERT INTO session (id, directory, revert) VALUES (?, ?, ?)").run(
      "ses_1",
      "/w",
      null,
    );
    const msg = db.prepare("INSERT INTO message VALUES (?, 'ses_1', ?, ?, '{}')");
    const part = db.prepare("INSERT INTO part VALUES (?, ?, 'ses_1', 0, 0, '{}')");
    for (let i = 1; i <= 5; i++) {
      // the same creation time for 4 and 5: then by id
      msg.run(`msg_${i}`, Math.min(i, 4), 0);
      part.run(`prt_${i}b`, `msg_${i}`);
      part.run(`prt_${i}a`, `msg_${i}`);
    }
    const reader = await openCodeTipReader(file);
    assert.ok(reader !== undefined);
    const tip = reader.tip("ses_1", 3)!;
    assert.deepEqual(tip.messages.map((m) => m.info.id), ["msg_3", "msg_4", "msg_5"]);
    assert.deepEqual(tip.messages[0].parts.map((p) => p.id), ["prt_3a", "prt_3b"]);
    assert.equal(tip.complete, false);
    assert.equal(tip.revert, undefined);
    assert.equal(reader.tip("ses_1", 8)!.complete, true);
    // written after it opened: seen (no snapshot kept between reads)
    db.prepare("UPDATE session SET revert = ? WHERE id = 'ses_1'")
      .run(JSON.stringify({ messageID: "msg_4", partID: "prt_4a" }));
    msg.run("msg_6", 9, 0);
    assert.deepEqual(reader.tip("ses_1", 1), {
      messages: [{ info: { id: "msg_6", role: "" }, parts: [] }],
      complete: false,
      revert: { messageID: "msg_4", partID: "prt_4a" },
    });
    // a session it does not hold: it cannot say
    assert.equal(reader.tip("ses_other", 8), undefined);
    db.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("no database, or not OpenCode's: unavailable", async () => {
  const dir = await Deno.makeTempDir({ prefix: "readcache-tip-" });
  try {
    assert.equal(await openCodeTipReader(join(dir, "none.db")), undefined);
    const other = new DatabaseSync(join(dir, "other.db"));
    other.exec("CREATE TABLE t (x)");
    other.close();
    assert.equal(await openCodeTipReader(join(dir, "other.db")), undefined);
    assert.equal(await openCodeTipReader(undefined), undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the database's path as OpenCode's released builds name it", () => {
  assert.equal(openCodeDatabaseFile({ XDG_DATA_HOME: "/d" }), "/d/opencode/opencode.db");
  assert.equal(
    openCodeDatabaseFile({ XDG_DATA_HOME: "/d", OPENCODE_DB: "x.db" }),
    "/d/opencode/x.db",
  );
  assert.equal(openCodeDatabaseFile({ OPENCODE_DB: "/e/y.db" }), "/e/y.db");
  assert.equal(openCodeDatabaseFile({ OPENCODE_DB: ":memory:" }), undefined);
});
