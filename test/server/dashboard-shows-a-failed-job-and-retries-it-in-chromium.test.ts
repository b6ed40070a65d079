import { mkdirSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { schedule } from "../../src/core/backoff.js";
import { serve, type Serving } from "../../src/server/index.js";
import { sqlite } from "../../src/store/sqlite.js";
import { realEngines } from "../support/real-time.js";
import { chromiumForFile } from "./support/chromium.js";
import { TOKEN } from "./support/admin.js";

/** Screenshots and measurements land here; test-results/ is not committed. */
const ARTEFACTS = "test-results/server";

describe("the dashboard in headless Chromium", () => {
  const browser = chromiumForFile();
  const engines = realEngines();
  let serving: Serving | undefined;
  afterEach(async () => {
    await serving?.close();
    serving = undefined;
  });

  async function dashboard() {
    const { tw } = await engines({ store: sqlite(":memory:"), logLevel: "info" });
    serving = await serve(tw, { port: 0, token: TOKEN, refreshInterval: "250ms" });
    const context = await browser().newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    page.on("pageerror", (e) => problems.push(e.message));
    const origins = new Set<string>();
    page.on("request", (r) => origins.add(new URL(r.url()).origin));
    return { tw, url: serving.url, page, problems, origins };
  }

  it("loads, shows a failed job with its error, and the retry button makes it succeed", async () => {
    const { tw, url, page, problems, origins } = await dashboard();
    let smtpDown = true;
    const mail = tw.queue<{ to: string }>("mail", {
      retry: { maxAttempts: 1 },
      handler: () => {
        if (smtpDown) throw new Error("SMTP connection refused");
      },
    });
    await tw.start();
    const job = await mail.enqueue({ to: "ada@example.com" });

    let transferred = 0;
    page.on("requestfinished", async (request) => {
      const sizes = await request.sizes();
      transferred += sizes.responseHeadersSize + sizes.responseBodySize;
    });
    await page.goto(`${url}#token=${TOKEN}`);
    const row = page.locator(`section[aria-label="Failed jobs"] tr[data-job="${job.id}"]`);
    await row.waitFor({ timeout: 10_000 });
    const timing = await page.evaluate(() => ({
      firstContentfulPaint: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null,
      firstData: performance.getEntriesByName("tickwork:first-data")[0]?.startTime ?? null,
    }));
    // Resource Timing in the page (this file is typed for Node, hence the shape spelled out).
    type Entry = { name: string; transferSize: number; decodedBodySize: number };
    const weight = await page.evaluate(() =>
      ["navigation", "resource"]
        .flatMap((type) => performance.getEntriesByType(type as "resource") as unknown as Entry[])
        .map((e) => ({ name: new URL(e.name).pathname, transferred: e.transferSize, decoded: e.decodedBodySize })),
    );

    await expect.poll(() => row.textContent()).toContain("SMTP connection refused");
    expect(await row.textContent()).toContain("1/1");
    const queue = page.locator('section[aria-label="Queues"] tr[data-queue="mail"]');
    expect(await queue.locator('[data-status="failed"]').textContent()).toBe("1");
    expect(page.url()).toBe(url);

    smtpDown = false;
    await page.getByRole("button", { name: `Retry job ${job.id}` }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toBe(`Job ${job.id} is pending again.`);
    await expect.poll(() => queue.locator('[data-status="succeeded"]').textContent(), { timeout: 10_000 }).toBe("1");
    expect(await queue.locator('[data-status="failed"]').textContent()).toBe("0");
    await expect.poll(() => row.count()).toBe(0);
    expect(await page.locator('section[aria-label="Failed jobs"]').textContent()).toContain("No failed jobs.");
    expect((await tw.jobs.get(job.id))?.status).toBe("succeeded");
    await expect.poll(() => page.locator('section[aria-label="Throughput"] canvas').count()).toBeGreaterThan(0);

    mkdirSync(ARTEFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTEFACTS}/dashboard.png`, fullPage: true });
    const shell = weight.filter((w) => !w.name.includes("/api/"));
    const measurements = { timing, bytesTransferredShell: shell.reduce((n, w) => n + w.transferred, 0), bytesTransferredTotal: transferred, resources: weight };
    writeFileSync(`${ARTEFACTS}/dashboard-measurements.json`, `${JSON.stringify(measurements, null, 2)}\n`);
    console.log(`dashboard: ${JSON.stringify({ ...measurements, resources: undefined })}`);

    // Offline by construction: every request went to the server itself; nothing was refused by the CSP.
    expect([...origins]).toEqual([new URL(url).origin]);
    expect(problems, problems.join("\n")).toEqual([]);
    // The page, its bundle and stylesheet, compressed; a budget that fails loudly if a dependency balloons.
    expect(measurements.bytesTransferredShell).toBeLessThan(60_000);
  });

  it("asks for the token when it has none, then shows the dashboard", async () => {
    const { tw, url, page } = await dashboard();
    tw.queue("mail", { handler: () => {} });
    await page.goto(url);
    await page.getByLabel("Admin token").fill(TOKEN);
    await page.getByRole("button", { name: "Open" }).click();
    await page.locator('section[aria-label="Queues"] tr[data-queue="mail"]').waitFor({ timeout: 10_000 });
  });

  it("runs a task now, pauses it and resumes it", async () => {
    const { tw, url, page } = await dashboard();
    let runs = 0;
    tw.task("prices", { every: "1h", run: () => ++runs });
    await page.goto(`${url}#token=${TOKEN}`);
    const row = page.locator('section[aria-label="Tasks"] tr[data-task="prices"]');
    await row.waitFor({ timeout: 10_000 });
    expect(await row.textContent()).toContain("never");

    await page.getByRole("button", { name: "Run prices now" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("prices: succeeded");
    expect(runs).toBe(1);
    await expect.poll(() => row.textContent()).toContain("succeeded");

    await page.getByRole("button", { name: "Pause prices" }).click();
    await expect.poll(() => row.textContent()).toContain("paused until");
    expect((await tw.scheduler.status()).tasks[0]?.paused).toBe(true);

    await page.getByRole("button", { name: "Resume prices" }).click();
    await expect.poll(() => row.textContent()).toContain("scheduled");
    expect((await tw.scheduler.status()).tasks[0]?.paused).toBe(false);
  });

  it("shows a queue's flow control, pauses the queue and a group of it, and resumes them", async () => {
    const { tw, url, page, problems } = await dashboard();
    const ran: string[] = [];
    const work = tw.queue<string>("work", { concurrency: 2, globalConcurrency: 4, group: (tenant) => tenant, handler: (job) => void ran.push(job.payload) });
    await tw.start();
    await page.goto(`${url}#token=${TOKEN}`);
    const row = page.locator('section[aria-label="Queues"] tr[data-queue="work"]');
    const state = row.locator("[data-flow-state]");
    await expect.poll(() => state.textContent(), { timeout: 10_000 }).toBe("running");
    expect(await row.locator("[data-flow-running]").textContent()).toBe("0 of 4 running in every process");

    await page.getByRole("button", { name: "Pause queue work" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("Work paused in every process.");
    await expect.poll(() => state.textContent()).toBe("paused");
    expect((await tw.queues.status("work"))[0]!.paused).toBe(true);
    await work.enqueueMany([{ payload: "acme" }, { payload: "acme" }, { payload: "globex" }]);
    // The busiest groups show while the queue is paused: acme's 2 pending first.
    await expect.poll(() => row.locator('[data-group="acme"]').textContent(), { timeout: 10_000 }).toContain("2 pending, 0 running");
    expect(ran).toEqual([]);

    await page.getByRole("button", { name: "Pause group acme of work" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("Group acme of work paused in every process.");
    await page.getByRole("button", { name: "Resume queue work" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("Work resumed in every process.");
    await expect.poll(() => ran, { timeout: 10_000 }).toEqual(["globex"]);
    // The group read "paused" before the queue was resumed, so wait for the row's next refresh.
    await expect.poll(() => state.textContent()).not.toBe("paused");
    expect(await row.locator('[data-group="acme"]').textContent()).toContain("paused");
    mkdirSync(ARTEFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTEFACTS}/dashboard-flow.png`, fullPage: true });

    await page.getByRole("button", { name: "Resume group acme of work" }).click();
    await expect.poll(() => ran, { timeout: 10_000 }).toEqual(["globex", "acme", "acme"]);
    await expect.poll(() => state.textContent()).toBe("running");
    expect((await tw.queues.status("work"))[0]).toMatchObject({ paused: false, pausedGroups: [] });
    expect(problems).toEqual([]);
  });

  it("shows a delivery's dropped item and replays it, and a fan-out's target behind and reconciles it", async () => {
    const { tw, url, page, problems } = await dashboard();
    let down = true;
    const daily = tw.delivery<{ user: string }>("daily", {
      retry: schedule(["50ms"]),
      send: (m) => {
        if (down) throw new Error(`portfolio ${m.payload.user} unavailable`);
      },
    });
    const offline = new Set(["alert-2"]);
    const symbols = tw.fanout<string[]>("symbols", {
      groups: { collectors: { targets: ["collector-1"] }, alerts: { targets: ["alert-1", "alert-2"] } },
      send: (target) => {
        if (offline.has(target as string)) throw new Error(`${String(target)} unreachable`);
      },
    });
    await tw.start();
    await daily.emit([{ key: "daily:u-1", payload: { user: "u-1" } }]);
    await symbols.push(["BTC", "ETH"]);

    await page.goto(`${url}#token=${TOKEN}`);
    const delivery = page.locator('section[aria-label="Deliveries"] tr[data-delivery="daily"]');
    await expect.poll(() => delivery.locator('[data-state="dropped"]').textContent(), { timeout: 10_000 }).toBe("1");
    const fanout = page.locator('section[aria-label="Fan-outs"] tr[data-fanout="symbols"]');
    await expect.poll(() => fanout.textContent(), { timeout: 10_000 }).toContain("1 of 3 behind");
    expect(await fanout.textContent()).toContain("alert-2 unreachable");
    mkdirSync(ARTEFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTEFACTS}/dashboard-outbound.png`, fullPage: true });

    down = false;
    await page.getByRole("button", { name: "Replay 1 dropped" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("1 dropped item of daily sent again.");
    await expect.poll(() => delivery.locator('[data-state="dropped"]').textContent()).toBe("0");
    expect(await daily.status()).toMatchObject({ pending: 0, retrying: 0, dropped: 0 });

    // Dropped again, then deleted for good from the dead-letter table, after a confirmation.
    down = true;
    await daily.emit([{ key: "daily:u-2", payload: { user: "u-2" } }]);
    await expect.poll(() => delivery.locator('[data-state="dropped"]').textContent(), { timeout: 10_000 }).toBe("1");
    await page.getByRole("button", { name: "Purge 1 dropped" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete 1 item" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("1 dropped item of daily deleted.");
    await expect.poll(() => delivery.locator('[data-state="dropped"]').textContent()).toBe("0");
    expect(await daily.status()).toMatchObject({ pending: 0, retrying: 0, dropped: 0 });
    expect(await daily.replay({ since: 0 })).toEqual([]);

    offline.clear();
    await page.getByRole("button", { name: "Reconcile symbols now" }).click();
    await expect.poll(() => fanout.textContent(), { timeout: 10_000 }).toContain("all 3 current");
    expect((await symbols.status()).converged).toBe(true);
    expect(problems).toEqual([]);
  });
});
