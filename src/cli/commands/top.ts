import { toMs } from "../../core/duration.js";
import type { Tickwork } from "../../tickwork.js";
import { CONFIG_OPTION, DATABASE_OPTIONS, LOG_LEVEL_OPTION, noPositionals, stringOption, type Parsed } from "../args.js";
import type { Command } from "../command.js";
import { describeDatabase } from "../database.js";
import { EXIT_OK, UsageError, messageOf } from "../errors.js";
import { eventLine } from "../output.js";
import { configOf, openSession } from "../session.js";
import { Screen } from "../terminal.js";
import { Rates, renderTop, type TopFrame, type TopSnapshot } from "../top-view.js";

const MIN_INTERVAL_MS = 200;
const MAX_INTERVAL_MS = 3_600_000;

export const topCommand: Command = {
  name: "top",
  summary: "a live view of the queues and tasks in the terminal, as htop for jobs",
  args: "[options]",
  description: [
    "Shows every queue (state, pending, running, failed and succeeded jobs, jobs finished per second over the",
    "last 10 s) and the config's tasks (next run, last run and outcome, state), read from the database every",
    "second, whichever processes run the work. q or Ctrl-C quits and gives the terminal back. Reads only, like",
    "status: the config's setup cannot write to the database here. Needs a terminal: for a snapshot in a",
    "script, use `tickwork status --json`.",
  ].join("\n"),
  options: {
    interval: { type: "string", value: "<duration>", description: "how often to read the database, 200ms to 1h (default 1s)" },
    ...DATABASE_OPTIONS,
    ...CONFIG_OPTION,
    ...LOG_LEVEL_OPTION,
  },
  async run(parsed) {
    const command = "top";
    noPositionals(parsed, command);
    const intervalMs = intervalOf(parsed, command);
    if (!process.stdout.isTTY || !process.stdin.isTTY) {
      throw new UsageError("top draws on a terminal, and its input or output is not one: for a snapshot, run tickwork status (--json)", command);
    }
    const frame: Omit<TopFrame, "database" | "config"> = { intervalMs, snapshot: undefined, rates: new Map(), problem: null, event: null };
    const session = await openSession(parsed, {
      command,
      config: await configOf(parsed, command, "optional"),
      purpose: "inspect",
      // Written to the terminal, an event would tear the frame: the frame shows the last one instead.
      events: (event) => {
        if (event.event !== "engine.started") frame.event = eventLine(event);
      },
    });
    const screen = new Screen(process.stdin, process.stdout);
    const view = { ...frame, database: describeDatabase(session.database), config: session.config?.file };
    const rates = new Rates();
    try {
      const quit = screen.open();
      let quitting = false;
      void quit.then(() => (quitting = true));
      screen.show((width, height) => renderTop(view, width, height));
      while (!quitting) {
        const read = readSnapshot(session.tw).then(
          (snapshot) => Object.assign(view, { snapshot, rates: rates.record(snapshot), problem: null }),
          (error: unknown) => Object.assign(view, { problem: messageOf(error) }),
        );
        // A database that does not answer must not keep q from quitting.
        await Promise.race([read, quit]);
        if (quitting) break;
        screen.show((width, height) => renderTop(view, width, height));
        await Promise.race([pause(intervalMs, quit), quit]);
      }
    } finally {
      screen.close();
      await session.close();
    }
    return EXIT_OK;
  },
};

async function readSnapshot(tw: Tickwork): Promise<TopSnapshot> {
  const counts = await tw.jobs.counts();
  // A queue that got its first job since the last reading: declared here (in memory only) to be shown.
  const declared = new Set(tw.status().queues.map((q) => q.name));
  for (const { queue } of counts) if (!declared.has(queue)) tw.queue(queue);
  const [queues, scheduler] = await Promise.all([tw.queues.status(undefined, { groups: 0 }), tw.scheduler.status()]);
  return { at: Date.now(), queues, counts, scheduler };
}

/** Waits `ms`, or less if `quit` settles first; the timer never holds the process. */
function pause(ms: number, quit: Promise<unknown>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void quit.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function intervalOf(parsed: Parsed, command: string): number {
  const text = stringOption(parsed, "interval");
  if (text === undefined) return 1_000;
  let ms: number | undefined;
  try {
    ms = toMs(text);
  } catch {
    ms = undefined;
  }
  if (ms === undefined || !(ms >= MIN_INTERVAL_MS && ms <= MAX_INTERVAL_MS)) throw new UsageError(`--interval must be a duration from 200ms to 1h, e.g. 2s, got "${text}"`, command);
  return ms;
}
