import { afterAll, beforeAll, expect, it } from "vitest";
import { postgres } from "../../src/store/postgres.js";
import type { Store } from "../../src/store/store.js";
import type { NewJobRow } from "../../src/queue/store/store.js";
import { dropSchema, uniqueSchema, DATABASE_URL } from "../support/stores.js";
import { eventually } from "../support/real-time.js";

/**
 * Three stores on one schema, as three processes would have. A listens (a started engine) and
 * enqueues; C listens too and witnesses every announcement; B only enqueues (a web process).
 */
const schema = uniqueSchema();
const stores: Store[] = [];
const open = () => {
  const store = postgres({ url: DATABASE_URL, schema });
  stores.push(store);
  return store;
};

beforeAll(async () => {
  await open().migrate();
});
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await dropSchema(schema);
});

const row = (n: number): NewJobRow => ({ payload: JSON.stringify({ n }), key: null, priority: 0, runAt: Date.now(), maxAttempts: 3, maxAttemptsFromQueue: false, waited: false });

it("wakes the other processes for an enqueue of a started engine, and not that engine, whose enqueue woke its worker", async () => {
  const [a, b, c] = [open(), open(), open()];
  const heardByA: string[] = [];
  const heardByC: string[] = [];
  const stops = [await a.subscribe!((queue) => heardByA.push(queue)), await c.subscribe!((queue) => heardByC.push(queue))];

  await a.queue.insertMany({ queue: "from-a", rows: [row(1)], now: Date.now() });
  // C heard it: A's announcement has been committed, so A's own listener, had it kept it, would
  // hear it before anything notified after this point.
  await eventually(() => heardByC.includes("from-a"), "the other listening process to hear A's enqueue");
  await b.queue.insertMany({ queue: "from-b", rows: [row(2)], now: Date.now() });
  await eventually(() => heardByA.includes("from-b"), "A to hear B's enqueue");
  await eventually(() => heardByC.includes("from-b"), "C to hear B's enqueue");

  expect(heardByA).toEqual(["from-b"]);
  expect(heardByC).toEqual(["from-a", "from-b"]);
  await Promise.all(stops.map((stop) => stop()));
});

it("announces on the pool once the engine stopped listening, and while two engines listen on one store", async () => {
  const [a, witness] = [open(), open()];
  const heard: string[] = [];
  const stopWitness = await witness.subscribe!((queue) => heard.push(queue));

  // Two engines on one store object: the one whose listener sent an announcement would drop it,
  // though only the other may run the queue, so both hear every enqueue.
  const heardByFirst: string[] = [];
  const heardBySecond: string[] = [];
  const stopFirst = await a.subscribe!((queue) => heardByFirst.push(queue));
  const stopSecond = await a.subscribe!((queue) => heardBySecond.push(queue));
  await a.queue.insertMany({ queue: "shared", rows: [row(3)], now: Date.now() });
  await eventually(() => heardByFirst.includes("shared") && heardBySecond.includes("shared"), "both engines on the store to hear its enqueue");
  await Promise.all([stopFirst(), stopSecond()]);

  await a.queue.insertMany({ queue: "after-stop", rows: [row(4)], now: Date.now() });
  await eventually(() => heard.includes("after-stop"), "the enqueue after the listener stopped to be announced");
  expect(heard).toEqual(["shared", "after-stop"]);
  await stopWitness();
});

it("hears only its own schema's enqueues, though every schema of the database notifies on the same channel", async () => {
  const otherSchema = uniqueSchema();
  const other = postgres({ url: DATABASE_URL, schema: otherSchema });
  try {
    await other.migrate();
    const [mine, b] = [open(), open()];
    const heard: string[] = [];
    const stop = await mine.subscribe!((queue) => heard.push(queue));
    // The same queue name in both schemas: the other schema's enqueue first, then this one's.
    await other.queue.insertMany({ queue: "same-name", rows: [row(5)], now: Date.now() });
    await b.queue.insertMany({ queue: "same-name", rows: [row(6)], now: Date.now() });
    await eventually(() => heard.includes("same-name"), "this schema's enqueue to be heard");
    // Notifications of one database reach its listeners in commit order: the other schema's came first.
    await b.queue.insertMany({ queue: "marker", rows: [row(7)], now: Date.now() });
    await eventually(() => heard.includes("marker"), "the marker enqueue to be heard");
    expect(heard).toEqual(["same-name", "marker"]);
    await stop();
  } finally {
    await other.close();
    await dropSchema(otherSchema);
  }
});
