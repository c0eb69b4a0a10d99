// Replay cost: a read late in a long session extends the memoised replay by
// the new entries only, instead of replaying the whole branch.
import { ReplayCursor, type ReplayEntry } from "../replay.ts";

const N = 20_000;
const branch: ReplayEntry[] = [];
for (let i = 0; i < N; i++) {
  branch.push({
    id: `e${i}`,
    parentId: i === 0 ? null : `e${i - 1}`,
    kind: i % 3 === 0 ? "read" : "other",
    ...(i % 3 === 0
      ? {
        meta: {
          v: 1,
          pathKey: `/w/f${i % 200}.ts`,
          scopeKey: "full",
          servedHash: `h${i}`,
          mode: "full",
          totalLines: 10,
          rangeStart: 1,
          rangeEnd: 10,
          bytes: 100,
        },
      }
      : {}),
  } as ReplayEntry);
}
const warm = new ReplayCursor();
warm.advance(branch.slice(0, N - 2));

Deno.bench("replay 20k-entry branch from scratch", { group: "replay", baseline: true }, () => {
  new ReplayCursor().advance(branch);
});

const prefix = branch.slice(0, N - 2);
Deno.bench("extend memoised replay by 2 entries", { group: "replay" }, (b) => {
  const c = new ReplayCursor();
  c.advance(prefix);
  b.start();
  c.advance(branch);
  b.end();
});

Deno.bench("advance an up-to-date cursor (no new entries)", { group: "replay" }, () => {
  warm.advance(prefix);
});
