import { mkdirSync } from "node:fs";
import type { Page } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { schedule } from "../../src/core/backoff.js";
import { serve, type Serving } from "../../src/server/index.js";
import { sqlite } from "../../src/store/sqlite.js";
import { fakeClock } from "../../src/testing/fake-clock.js";
import { realEngines } from "../support/real-time.js";
import { START } from "../support/queue-fixtures.js";
import { chromiumForFile } from "./support/chromium.js";
import { TOKEN } from "./support/admin.js";

/** Screenshots land here; test-results/ is not committed. */
const ARTEFACTS = "test-results/server";

describe("the dashboard's overview for an on-call engineer, in headless Chromium", () => {
  const browser = chromiumForFile();
  const engines = realEngines();
  let serving: Serving | undefined;
  afterEach(async () => {
    await serving?.close();
    serving = undefined;
  });

  /**
   * The engine on a fake clock (the page shows times relative to the engine's, so "3m ago" is exact)
   * and never started: the test runs its work with `tw.tick()`. The page polls every 250 ms.
   */
  async function dashboard() {
    const clock = fakeClock(START);
    const { tw } = await engines({ store: sqlite(":memory:"), logLevel: "info", clock });
    serving = await serve(tw, { port: 0, token: TOKEN, refreshInterval: "250ms" });
    const context = await browser().newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    page.on("pageerror", (e) => problems.push(e.message));
    return { tw, clock, url: serving.url, page, problems };
  }

  const queueRow = (page: Page, queue: string) => page.locator(`section[aria-label="Queues"] tr[data-queue="${queue}"]`);
  async function shot(page: Page, name: string) {
    mkdirSync(ARTEFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTEFACTS}/${name}.png`, fullPage: true });
  }

  it("splits a queue's pending jobs into due now and scheduled later, with the oldest due job's age", async () => {
    const { tw, clock, url, page, problems } = await dashboard();
    const reports = tw.queue<number>("reports"); // no handler here: its jobs wait
    await reports.enqueue(1);
    await clock.advance("3m");
    await reports.enqueueMany([{ payload: 2 }, { payload: 3, delay: "1h" }, { payload: 4, delay: "2h" }, { payload: 5, delay: "1d" }]);

    await page.goto(`${url}#token=${TOKEN}`);
    const row = queueRow(page, "reports");
    await expect.poll(() => row.locator('[data-status="due"] a').textContent(), { timeout: 10_000 }).toBe("2");
    expect(await row.locator('[data-status="scheduled"] a').textContent()).toBe("3");
    expect(await row.locator("[data-oldest-due]").textContent()).toBe("oldest due 3m ago");
    expect(await row.locator('[data-status="running"]').textContent()).toBe("0");
    // Each side opens its own tab of the job browser.
    expect(await row.locator('[data-status="due"] a').getAttribute("href")).toBe("#/jobs?state=due&queue=reports");
    expect(await row.locator('[data-status="scheduled"] a').getAttribute("href")).toBe("#/jobs?state=scheduled&queue=reports");

    // An hour on, the first delayed job is due too; the oldest due one has waited 63 minutes.
    await clock.advance("1h");
    await expect.poll(() => row.locator('[data-status="due"] a').textContent()).toBe("3");
    expect(await row.locator('[data-status="scheduled"] a').textContent()).toBe("2");
    expect(await row.locator("[data-oldest-due]").textContent()).toBe("oldest due 1h ago");
    // Nothing ran in this process: no failure rate to show.
    expect(await row.locator("[data-failure-rate]").textContent()).toBe("no attempts");
    expect(problems).toEqual([]);
  });

  it("cancels a queue's pending jobs, due and scheduled, only after a confirmation", async () => {
    const { tw, url, page, problems } = await dashboard();
    const reports = tw.queue<number>("reports"); // no handler here: its jobs wait
    await reports.enqueueMany([{ payload: 1 }, { payload: 2 }, { payload: 3, delay: "1h" }]);
    await page.goto(`${url}#token=${TOKEN}`);
    const row = queueRow(page, "reports");

    const bulk = row.getByRole("button", { name: "Cancel 3 pending" });
    await bulk.click();
    const dialog = page.getByRole("dialog", { name: "Cancel all 3 pending jobs of reports?" });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain("Due and scheduled jobs alike will not run; running jobs go on.");
    // Opened from the row's actions cell, its text wraps inside it rather than run past its edge.
    expect(await dialog.evaluate((d) => d.scrollWidth <= d.clientWidth)).toBe(true);
    await shot(page, "queues-cancel-pending-confirmation");
    // The dialog's own Cancel keeps the jobs.
    await dialog.getByRole("button", { name: "Cancel", exact: true }).click();
    await dialog.waitFor({ state: "detached" });
    expect((await tw.jobs.counts("reports"))[0]!.counts.pending).toBe(3);

    await bulk.click();
    await dialog.getByRole("button", { name: "Cancel 3 jobs" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("3 pending jobs of reports cancelled.");
    expect((await tw.jobs.counts("reports"))[0]!.counts).toMatchObject({ pending: 0, cancelled: 3 });
    await expect.poll(() => row.locator('[data-status="cancelled"]').textContent()).toBe("3");
    expect(await row.getByRole("button", { name: /pending$/ }).count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it("shows a queue's failure rate over the last 10 minutes once attempts fail, and retries its failed jobs", async () => {
    const { tw, clock, url, page, problems } = await dashboard();
    let smtpDown = true;
    const mail = tw.queue<{ to: string; bounce?: boolean }>("mail", {
      retry: { maxAttempts: 2, backoff: schedule(["1s"]) },
      handler: (job) => {
        if (smtpDown && job.payload.bounce) throw new Error("SMTP connection refused");
      },
    });
    await page.goto(`${url}#token=${TOKEN}`);
    const row = queueRow(page, "mail");
    await expect.poll(() => row.locator("[data-failure-rate]").textContent(), { timeout: 10_000 }).toBe("no attempts");

    await mail.enqueueMany([{ payload: { to: "ada@example.com" } }, { payload: { to: "bob@example.com", bounce: true } }]);
    await tw.tick(); // ada's succeeds; bob's fails, retried in 1s
    await clock.advance("1s");
    await tw.tick(); // bob's fails for good
    const rate = row.locator("[data-failure-rate]");
    await expect.poll(() => rate.textContent()).toBe("67%2 of 3 attempts failed");
    expect(await rate.getAttribute("class")).toContain("bad");
    expect(await row.locator('[data-status="failed"]').textContent()).toBe("1");
    expect(await page.locator('section[aria-label="Queues"] thead').textContent()).toContain("Failed attempts (10m)");

    smtpDown = false;
    await row.getByRole("button", { name: "Retry 1 failed" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Retry 1 jobs" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("1 failed job of mail pending again.");
    await tw.tick();
    await expect.poll(() => rate.textContent()).toBe("50%2 of 4 attempts failed");
    expect(await row.locator('[data-status="failed"]').textContent()).toBe("0");

    // Ten minutes on, those attempts have left the window.
    await clock.advance("11m");
    await expect.poll(() => rate.textContent()).toBe("no attempts");
    expect(problems).toEqual([]);
  });

  it("gives a paused task's next run as the end of its pause, and a backing-off task's as its backoff's end", async () => {
    const { tw, clock, url, page, problems } = await dashboard();
    tw.task("prices", { every: "5m", run: (ctx) => ctx.backoffUntil("30m") });
    tw.task("rates", { every: "5m", run: () => 1 });
    tw.task("steady", { every: "5m", run: () => 1 });
    await clock.advance("5m");
    await tw.tick();
    await tw.scheduler.pauseUntil(Date.parse(START) + 65 * 60_000, "rates");

    await page.goto(`${url}#token=${TOKEN}`);
    const task = (name: string) => page.locator(`section[aria-label="Tasks"] tr[data-task="${name}"]`);
    // Backing off for 30 minutes: its slot in 5 minutes does not run.
    await expect.poll(() => task("prices").locator("[data-next-run]").textContent(), { timeout: 10_000 }).toBe("in 30mafter its backoff");
    expect(await task("prices").textContent()).toContain("backing off, runs in 30m");
    // Paused: never "now" nor its skipped slot, but when the pause ends.
    expect(await task("rates").locator("[data-next-run]").textContent()).toBe("paused until 2026-01-01 01:05:00 UTC");
    expect(await task("steady").locator("[data-next-run]").textContent()).toBe("in 5m");

    // The backoff ends: its slots fell due meanwhile, so it runs at once.
    await clock.advance("30m");
    await expect.poll(() => task("prices").locator("[data-next-run]").textContent()).toBe("now");
    await shot(page, "dashboard-overview-tasks");
    expect(problems).toEqual([]);
  });

  it("shows a delivery whose items wait past their due time as due now, with how many wait", async () => {
    const { tw, clock, url, page, problems } = await dashboard();
    const daily = tw.delivery<{ user: string }>("daily", { send: () => {} });
    await daily.emit(Array.from({ length: 2_105 }, (_, i) => ({ key: `daily:u-${i}`, payload: { user: `u-${i}` } })));
    await clock.advance("9s");

    await page.goto(`${url}#token=${TOKEN}`);
    const next = page.locator('section[aria-label="Deliveries"] tr[data-delivery="daily"] [data-next-send]');
    await expect.poll(() => next.textContent(), { timeout: 10_000 }).toBe("due now (2,105 waiting)oldest due 9s ago");

    // Passes send them (a budget's worth each): then nothing waits, nothing is due.
    while ((await daily.status()).pending > 0) await tw.tick();
    await expect.poll(() => next.textContent()).toBe("—");
    expect(problems).toEqual([]);
  });

  it("says a wrong token was refused, from the form and from a link, and opens with the right one", async () => {
    const { tw, url, page } = await dashboard();
    tw.queue("mail", { handler: () => {} });
    await page.goto(url);
    await page.getByLabel("Admin token").waitFor({ timeout: 10_000 });
    // No token yet: the form asks, and says nothing was refused.
    expect(await page.getByRole("alert").count()).toBe(0);

    await page.getByLabel("Admin token").fill("not-the-admin-token-0000");
    await page.getByRole("button", { name: "Open" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("That token was refused");

    await page.goto(`${url}#token=another-wrong-token-1111`);
    await page.reload();
    await expect.poll(() => page.getByRole("alert").textContent(), { timeout: 10_000 }).toContain("That token was refused");

    await page.getByLabel("Admin token").fill(TOKEN);
    await page.getByRole("button", { name: "Open" }).click();
    await queueRow(page, "mail").waitFor({ timeout: 10_000 });
    expect(await page.getByText("That token was refused").count()).toBe(0);
  });

  it("shows the whole overview: due and scheduled, oldest due, failure rate, tasks and a delivery's backlog (screenshot)", async () => {
    const { tw, clock, url, page, problems } = await dashboard();
    const reports = tw.queue<number>("reports");
    const mail = tw.queue<{ bounce: boolean }>("mail", {
      retry: { maxAttempts: 1 },
      handler: (job) => {
        if (job.payload.bounce) throw new Error("SMTP connection refused");
      },
    });
    tw.task("prices", { every: "5m", run: (ctx) => ctx.backoffUntil("30m") });
    tw.task("rates", { every: "5m", run: () => 1 });
    const daily = tw.delivery<{ user: string }>("daily", { send: () => {} });
    await reports.enqueueMany([{ payload: 1 }, { payload: 2 }, { payload: 3, delay: "1h" }]);
    await mail.enqueueMany([{ payload: { bounce: true } }, { payload: { bounce: false } }, { payload: { bounce: false } }, { payload: { bounce: false } }]);
    await clock.advance("5m");
    await tw.tick();
    await tw.scheduler.pauseUntil(Date.parse(START) + 65 * 60_000, "rates");
    await daily.emit(Array.from({ length: 40 }, (_, i) => ({ key: `u-${i}`, payload: { user: `u-${i}` } })));
    await clock.advance("9s");

    await page.goto(`${url}#token=${TOKEN}`);
    await expect.poll(() => queueRow(page, "mail").locator("[data-failure-rate]").textContent(), { timeout: 10_000 }).toBe("25%1 of 4 attempts failed");
    expect(await queueRow(page, "reports").locator("[data-oldest-due]").textContent()).toBe("oldest due 5m ago");
    await expect.poll(() => page.locator('[data-delivery="daily"] [data-next-send]').textContent()).toBe("due now (40 waiting)oldest due 9s ago");
    await shot(page, "dashboard-overview");
    expect(problems).toEqual([]);
  });

  it("shows a queue's running jobs as those a handler started, with the ones claimed and not started apart", async () => {
    const { tw, url, page, problems } = await dashboard();
    const work = tw.queue<number>("work", {});
    await work.enqueueMany([0, 1, 2, 3].map((n) => ({ payload: n })));
    const now = tw.clock.now();
    // A worker elsewhere claimed three, started one and holds two to start as its slots free.
    await tw.store.queue.claimDue({ queue: "work", limit: 3, start: 1, now, leaseUntil: now + 30_000, workerId: "elsewhere/work" });

    await page.goto(`${url}#token=${TOKEN}`);
    const running = queueRow(page, "work").locator('[data-status="running"]');
    await expect.poll(() => running.locator("a").textContent(), { timeout: 10_000 }).toBe("1");
    expect(await running.locator("[data-held]").textContent()).toBe("2 held to start");
    expect(problems, problems.join("\n")).toEqual([]);
  });

  it("fits a 400 px wide screen: the overview's tables stack their cells and the page scrolls down, never sideways", async () => {
    const { tw, url, page, problems } = await dashboard();
    await page.setViewportSize({ width: 400, height: 900 });
    tw.queue("notifications-for-every-customer-of-the-eu-west-region", { globalConcurrency: 3, group: true, rateLimit: { max: 10, per: "1m", scope: "global" } });
    const mail = tw.queue<string>("mail", { retry: { maxAttempts: 1 }, handler: () => {
      throw new Error(`SMTP 550 mailbox unavailable: ${"a-very-long-unbroken-diagnostic-".repeat(8)}`);
    } });
    tw.task("nightly-report-of-every-customer-account", { every: "1d", run: () => "ok" });
    tw.delivery("webhooks-to-the-partner-endpoints", { send: () => {} });
    tw.fanout("symbols-to-every-collector", { groups: { collectors: { targets: ["collector-1"] } }, send: () => {} });
    await mail.enqueue("ada@example.com");
    await tw.tick();

    await page.goto(`${url}#token=${TOKEN}`);
    await expect.poll(() => page.locator('section[aria-label="Failed jobs"] tbody tr').count(), { timeout: 10_000 }).toBe(1);
    for (const section of ["Queues", "Tasks", "Deliveries", "Fan-outs", "Failed jobs"]) {
      expect(await page.locator(`table[aria-label="${section}"]`).count(), section).toBe(1);
    }
    // How far the page scrolls sideways (an expression: this file is typed for Node, not the DOM).
    expect(await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth")).toBe(0);
    // A stacked cell names its column.
    expect(await queueRow(page, "mail").locator('[data-status="failed"]').getAttribute("data-label")).toBe("Failed");
    // Off the chart, its legend shows the newest bucket's values, not "--" until hovered.
    const legend = await page.locator('[aria-label="Throughput per queue"] .u-legend').textContent();
    expect(legend).not.toContain("--");
    expect(legend).toMatch(/mail\s*1$/);
    await shot(page, "overview-400px");
    expect(problems, problems.join("\n")).toEqual([]);
  });
});
