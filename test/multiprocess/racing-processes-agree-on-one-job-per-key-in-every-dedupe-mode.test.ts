import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { FixtureProcess, spawnFixture } from "../crash/fixtures/child-process.js";
import { newTarget, openCrashDb, openStore, type Target } from "../crash/fixtures/target.js";
import type { KeyRacerConfig } from "./fixtures/key-racer.js";
import { RACED } from "./fixtures/raced-keys.js";

const RACER = fileURLToPath(new URL("./fixtures/key-racer.ts", import.meta.url));
const RACERS = 4;
const ROUNDS = 25;

let teardown: (() => Promise<void>)[] = [];
afterEach(async () => {
  const steps = teardown.reverse();
  teardown = [];
  for (const step of steps) await step().catch(() => {});
});

class Racer extends FixtureProcess {
  constructor(readonly process: ChildProcess) {
    super(process, "key racer", 30_000);
  }
  go(): void {
    this.process.send("go");
  }
}

describe.each(["postgres", "sqlite"] as const)("racing processes agree on one job per key, in every dedupe mode (%s)", (kind: Target["kind"]) => {
  it(`${RACERS} processes enqueue the same keys ${ROUNDS} times each, at once: every key has one job, and every racer got its id`, async () => {
    const { target, cleanup } = newTarget(kind);
    teardown.push(cleanup);
    // The schema exists before the racers start, so none of them races to create it.
    const setup = openStore(target);
    await setup.migrate();
    await setup.close();
    const racers = Array.from({ length: RACERS }, (_, racer) => {
      const config: KeyRacerConfig = { target, racer, rounds: ROUNDS };
      const r = new Racer(spawnFixture(RACER, config));
      teardown.push(() => r.kill());
      return r;
    });
    await Promise.all(racers.map((r) => r.ready));
    for (const r of racers) r.go();
    const done = await Promise.all(racers.map((r) => r.waitFor((l) => l.event === "racer.done", "racer.done", 60_000)));

    const db = openCrashDb(target);
    teardown.push(() => db.close());
    for (const key of Object.keys(RACED)) {
      const rows = await db.query<{ id: number | string; status: string }>(`SELECT id, status FROM tickwork_jobs WHERE queue = 'races' AND key = ?`, [key]);
      expect(rows, key).toHaveLength(1);
      const seen = new Set(done.flatMap((line) => (line.ids as Record<string, string[]>)[key]!));
      expect([...seen], key).toEqual([String(rows[0]!.id)]);
    }
    // Past the spawns' 30 s and the race's 60 s: the test's bound must not cut them short.
  }, 30_000 + 60_000 + 30_000);
});
