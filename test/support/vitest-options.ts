/**
 * The options every vitest run of this repository shares: `npm test` (vitest.config.ts) and the runs
 * on Node 22 and 24, Bun and Deno (vitest.{runtimes,bun,deno}.config.ts).
 */
export const TEST_OPTIONS = {
  testTimeout: 30_000,
  hookTimeout: 30_000,
  // expect.poll waits on a condition: 1 s (vitest's default) is a fixed delay in disguise on a loaded
  // machine, where a PostgreSQL round trip behind a busy claim can take longer. Tests that assert
  // something does NOT happen in time say so with their own bound.
  expect: { poll: { timeout: 10_000 } },
  // PostgreSQL suites share one database; each suite uses its own schema, so files may run in parallel.
  pool: "forks",
  // Vitest's default is one worker per core less one: a single worker on two cores, although most
  // files spend their time waiting on child processes, timers and the database. Four files at once
  // keep both cores busy; every test waits on conditions with deadlines, so it holds on a loaded host.
  maxWorkers: 4,
} as const;

/** The other runtimes' runs: the Durable Object store cases need workerd, which the Node 20 run starts. */
export const RUNTIME_TEST_OPTIONS = { ...TEST_OPTIONS, testNamePattern: "^(?!.*durable-object)" } as const;
