import { mkdirSync, writeFileSync } from "node:fs";
import type { Page } from "playwright-core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { serve, type Serving } from "../../src/server/index.js";
import { sqlite } from "../../src/store/sqlite.js";
import type { Tickwork } from "../../src/tickwork.js";
import { deferred, eventually, realEngines } from "../support/real-time.js";
import { chromiumForFile } from "./support/chromium.js";
import { TOKEN } from "./support/admin.js";

/** Screenshots for CI to keep; test-results/ is not committed. */
const ARTEFACTS = "test-results/server/job-browser";
/** The browser's page size (src/server/dashboard/ui/job-browser.tsx). */
const PAGE_SIZE = 25;

describe("the job browser in headless Chromium", () => {
  const browser = chromiumForFile();
  // Handlers held by a test wait on this gate; it opens before the engines stop.
  let gate = deferred();
  beforeEach(() => {
    gate = deferred();
  });
  const engines = realEngines({ beforeStop: () => gate.resolve() });
  let serving: Serving | undefined;
  afterEach(async () => {
    await serving?.close();
    serving = undefined;
  });

  async function open(width = 1280) {
    const { tw } = await engines({ store: sqlite(":memory:"), logLevel: "info" });
    serving = await serve(tw, { port: 0, token: TOKEN, refreshInterval: "250ms" });
    const context = await browser().newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    page.on("pageerror", (e) => problems.push(e.message));
    const url = serving.url;
    await page.goto(`${url}#token=${TOKEN}`);
    await page.locator('section[aria-label="Queues"]').waitFor({ timeout: 10_000 });
    return { tw, page, problems, url };
  }

  const rows = (page: Page) => page.locator('table[aria-label="Jobs"] tbody tr');
  const shownIds = (page: Page) => rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-job")!));
  const notice = (page: Page) => page.getByRole("alert").textContent();
  async function shot(page: Page, name: string) {
    mkdirSync(ARTEFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTEFACTS}/${name}.png`, fullPage: true });
  }
  async function statusOf(tw: Tickwork, id: string, status: string) {
    await eventually(async () => (await tw.jobs.get(id))?.status === status, `job ${id} ${status}`, 10_000);
  }
  const newestFirst = (ids: string[]) => [...ids].sort((x, y) => Number(y) - Number(x));

  it("browses jobs by state, due now and scheduled apart, in keyset pages newest first", async () => {
    const { tw, page, problems } = await open();
    const reports = tw.queue<number>("reports"); // declared without a handler: its jobs wait
    const mail = tw.queue<string>("mail", {
      retry: { maxAttempts: 1 },
      handler: async (job) => {
        if (job.payload === "bounce") throw new Error("mailbox full");
        if (job.payload === "slow") await gate.promise;
      },
    });
    const due = (await reports.enqueueMany(Array.from({ length: 60 }, (_, n) => ({ payload: n })))).map((j) => j.id);
    const scheduled = await reports.enqueue(-1, { delay: "1h" });
    const cancelled = await reports.enqueue(-2);
    await tw.jobs.cancel(cancelled.id);
    await tw.start();
    const sent = await mail.enqueue("ok");
    const bounced = await mail.enqueue("bounce");
    const slow = await mail.enqueue("slow");
    await statusOf(tw, sent.id, "succeeded");
    await statusOf(tw, bounced.id, "failed");
    await statusOf(tw, slow.id, "running");

    await page.getByRole("link", { name: "Jobs", exact: true }).click();
    const tabs = page.getByRole("navigation", { name: "Job states" });
    await expect.poll(() => shownIds(page), { timeout: 10_000 }).toEqual(newestFirst([...due, scheduled.id, cancelled.id, sent.id, bounced.id, slow.id]).slice(0, PAGE_SIZE));

    // Each state's tab shows its jobs, and says so on each row.
    const expected: [string, string[], string][] = [
      ["Scheduled", [scheduled.id], "scheduled"],
      ["Running", [slow.id], "running"],
      ["Succeeded", [sent.id], "succeeded"],
      ["Failed", [bounced.id], "failed"],
      ["Cancelled", [cancelled.id], "cancelled"],
    ];
    for (const [tab, ids, state] of expected) {
      await tabs.getByRole("link", { name: new RegExp(`^${tab}`) }).click();
      await expect.poll(() => shownIds(page), { timeout: 10_000 }).toEqual(ids);
      expect(await rows(page).first().locator("[data-job-state]").getAttribute("data-job-state")).toBe(state);
      // A failed job's row shows its error; the others their payload's start.
      expect(await rows(page).first().locator(".preview").textContent()).toBe(state === "failed" ? "Error: mailbox full" : JSON.stringify(state === "cancelled" ? -2 : state === "scheduled" ? -1 : state === "running" ? "slow" : "ok"));
    }
    expect(await tabs.getByRole("link", { name: /^Failed/ }).textContent()).toBe("Failed1");

    // Due now, for one queue: 60 jobs in pages of 25, 25 and 10, with no gap and no overlap.
    const listAnswers: { body: number; transferred: number }[] = [];
    page.on("requestfinished", async (request) => {
      if (!new URL(request.url()).search.includes("limit=")) return;
      const sizes = await request.sizes();
      listAnswers.push({ body: sizes.responseBodySize, transferred: sizes.responseHeadersSize + sizes.responseBodySize });
    });
    await page.getByLabel("Queue").selectOption("reports");
    await tabs.getByRole("link", { name: "Due now" }).click();
    expect(new URL(page.url()).hash).toBe("#/jobs?state=due&queue=reports");
    const pages: string[][] = [];
    const older = page.getByRole("button", { name: "Older" });
    await expect.poll(() => shownIds(page), { timeout: 10_000 }).toEqual(newestFirst(due).slice(0, PAGE_SIZE));
    pages.push(await shownIds(page));
    await shot(page, "browser-due-page-1");
    for (const n of [2, 3]) {
      await older.click();
      await page.locator(`[data-page="${n}"]`).waitFor();
      await expect.poll(() => shownIds(page)).toEqual(newestFirst(due).slice((n - 1) * PAGE_SIZE, n * PAGE_SIZE));
      pages.push(await shownIds(page));
    }
    expect(pages.map((p) => p.length)).toEqual([25, 25, 10]);
    expect(pages.flat()).toEqual(newestFirst(due));
    expect(await older.isDisabled()).toBe(true);
    // What a page of 25 jobs costs at each refresh, compressed (the small payloads of this test).
    const largest = Math.max(...listAnswers.map((a) => a.transferred));
    writeFileSync(`${ARTEFACTS}/browser-measurements.json`, `${JSON.stringify({ listAnswersOf25Jobs: listAnswers.slice(0, 10) }, null, 2)}\n`);
    console.log(`job browser: a page of ${PAGE_SIZE} jobs is ${largest} bytes transferred at most`);
    expect(largest).toBeLessThan(4_000);
    expect(await rows(page).first().locator("[data-job-state]").getAttribute("data-job-state")).toBe("due");

    // Newer goes back the way Older came; Newest to the first page.
    await page.getByRole("button", { name: "Newer" }).click();
    await expect.poll(() => shownIds(page)).toEqual(pages[1]);
    await page.getByRole("button", { name: "Newest" }).click();
    await expect.poll(() => shownIds(page)).toEqual(pages[0]);
    expect(problems, problems.join("\n")).toEqual([]);
  });

  it("pages oldest first when asked, forward to newer jobs and back, and starts again at a change of order", async () => {
    const { tw, page, problems, url } = await open();
    const reports = tw.queue<number>("reports"); // no handler: its jobs wait
    const ids = (await reports.enqueueMany(Array.from({ length: 60 }, (_, n) => ({ payload: n })))).map((j) => j.id);
    const oldestFirst = [...ids].sort((x, y) => Number(x) - Number(y));
    await page.goto(`${url}#/jobs?queue=reports`);
    await expect.poll(() => shownIds(page), { timeout: 10_000 }).toEqual(newestFirst(ids).slice(0, PAGE_SIZE));
    await page.getByRole("button", { name: "Older" }).click();
    await page.locator('[data-page="2"]').waitFor();

    // The order applies at once, is in the address (a link or a reload keeps it) and starts at page 1.
    await page.getByLabel("Order").selectOption("oldest");
    expect(new URL(page.url()).hash).toBe("#/jobs?queue=reports&order=oldest");
    await page.locator('[data-page="1"]').waitFor();
    await expect.poll(() => shownIds(page), { timeout: 10_000 }).toEqual(oldestFirst.slice(0, PAGE_SIZE));
    // Oldest first, the buttons say where they lead: Newer goes on, Older back, Oldest to the start.
    const newer = page.getByRole("button", { name: "Newer" });
    const pages: string[][] = [await shownIds(page)];
    for (const n of [2, 3]) {
      await newer.click();
      await page.locator(`[data-page="${n}"]`).waitFor();
      await expect.poll(() => shownIds(page)).toEqual(oldestFirst.slice((n - 1) * PAGE_SIZE, n * PAGE_SIZE));
      pages.push(await shownIds(page));
    }
    expect(pages.map((p) => p.length)).toEqual([25, 25, 10]);
    expect(pages.flat()).toEqual(oldestFirst);
    expect(await newer.isDisabled()).toBe(true);
    await shot(page, "browser-oldest-first-page-3");
    await page.getByRole("button", { name: "Older" }).click();
    await expect.poll(() => shownIds(page)).toEqual(pages[1]);
    await page.getByRole("button", { name: "Oldest" }).click();
    await expect.poll(() => shownIds(page)).toEqual(pages[0]);

    // The order stays across the state tabs and a Clear of the filters.
    await page.getByRole("navigation", { name: "Job states" }).getByRole("link", { name: "Due now" }).click();
    expect(new URL(page.url()).hash).toBe("#/jobs?state=due&queue=reports&order=oldest");
    await expect.poll(() => shownIds(page), { timeout: 10_000 }).toEqual(oldestFirst.slice(0, PAGE_SIZE));
    await page.getByRole("button", { name: "Clear" }).click();
    expect(new URL(page.url()).hash).toBe("#/jobs?state=due&order=oldest");
    expect(await page.getByLabel("Order").inputValue()).toBe("oldest");
    // Back to newest first, from its first page.
    await page.getByLabel("Order").selectOption("newest");
    expect(new URL(page.url()).hash).toBe("#/jobs?state=due");
    await expect.poll(() => shownIds(page), { timeout: 10_000 }).toEqual(newestFirst(ids).slice(0, PAGE_SIZE));
    expect(problems, problems.join("\n")).toEqual([]);
  });

  it("deletes a finished job from its page after a confirmation, and goes back to its queue's jobs", async () => {
    const { tw, page, problems, url } = await open();
    const mail = tw.queue<string>("mail", { handler: () => {} });
    await tw.start();
    const done = await mail.enqueue("welcome");
    const other = await mail.enqueue("digest");
    await statusOf(tw, done.id, "succeeded");
    await statusOf(tw, other.id, "succeeded");

    await page.goto(`${url}#/jobs/${done.id}`);
    const detail = page.locator(`[data-job-detail="${done.id}"]`);
    await detail.waitFor({ timeout: 10_000 });
    const remove = page.getByRole("button", { name: `Delete job ${done.id}` });
    const dialog = page.getByRole("dialog", { name: `Delete job ${done.id}?` });

    // Cancel keeps it: the dialog closes, the page stays, the job is there.
    await remove.click();
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain("gone for good: this cannot be undone");
    await shot(page, "job-delete-confirmation");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    expect(new URL(page.url()).hash).toBe(`#/jobs/${done.id}`);
    expect((await tw.jobs.get(done.id))?.status).toBe("succeeded");
    expect(await detail.count()).toBe(1);

    // Confirm deletes it, and the browser shows its queue's jobs with the notice.
    await remove.click();
    await dialog.getByRole("button", { name: "Delete the job" }).click();
    await expect.poll(() => notice(page), { timeout: 10_000 }).toBe(`Job ${done.id} (succeeded) is deleted.`);
    expect(new URL(page.url()).hash).toBe("#/jobs?queue=mail");
    await expect.poll(() => shownIds(page), { timeout: 10_000 }).toEqual([other.id]);
    expect(await tw.jobs.get(done.id)).toBeNull();
    await shot(page, "browser-after-delete");
    // The notice belongs to the list: opening another view drops it.
    await page.getByRole("link", { name: `Job ${other.id}`, exact: true }).click();
    await page.locator(`[data-job-detail="${other.id}"]`).waitFor({ timeout: 10_000 });
    expect(await page.getByRole("alert").count()).toBe(0);
    expect(problems, problems.join("\n")).toEqual([]);
  });

  it("shows who holds a running job and until when, at 400 px, and no Delete until it has finished", async () => {
    const { tw, page, problems, url } = await open(400);
    const started = deferred();
    const reports = tw.queue<string>("reports", {
      lease: "1m",
      handler: async () => {
        started.resolve();
        await gate.promise;
        return { rows: 3 };
      },
    });
    await tw.start();
    const job = await reports.enqueue("nightly");
    await started.promise;
    const leaseAtStart = (await tw.jobs.get(job.id))!.lease!;

    await page.goto(`${url}#/jobs/${job.id}`);
    const detail = page.locator(`[data-job-detail="${job.id}"]`);
    await detail.waitFor({ timeout: 10_000 });
    expect(await detail.locator("h2 [data-job-state]").textContent()).toBe("running");
    const lease = detail.locator('[data-fact="Lease"] dd');
    const workerId = `${tw.instanceId}/reports`;
    expect(leaseAtStart.workerId).toBe(workerId);
    expect(await lease.locator("[data-lease]").getAttribute("data-lease")).toBe(workerId);
    const text = (await lease.textContent())!;
    const shown = /^held by (.+) until (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d) UTC \(in \d+[sm]\)$/.exec(text);
    expect(shown, text).not.toBeNull();
    expect(shown![1]).toBe(workerId);
    // The lease as it was at the page's last refresh: heartbeats may have renewed it since the start.
    const shownUntil = Date.parse(`${shown![2]}T${shown![3]}Z`);
    expect(shownUntil).toBeGreaterThanOrEqual(Math.floor(leaseAtStart.until / 1_000) * 1_000);
    expect(shownUntil).toBeLessThanOrEqual((await tw.jobs.get(job.id))!.lease!.until);
    expect(await page.getByRole("button", { name: `Delete job ${job.id}` }).count()).toBe(0);
    expect(await page.getByRole("button", { name: `Cancel job ${job.id}` }).count()).toBe(1);
    expect(await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth")).toBe(0);
    await shot(page, "job-detail-running-lease-400px");

    // Once it has finished it is held by no one, and can be deleted.
    gate.resolve();
    await expect.poll(() => detail.locator("h2 [data-job-state]").textContent(), { timeout: 10_000 }).toBe("succeeded");
    expect(await detail.locator('[data-fact="Lease"]').count()).toBe(0);
    expect(await page.getByRole("button", { name: `Delete job ${job.id}` }).count()).toBe(1);
    expect(problems, problems.join("\n")).toEqual([]);
  });

  it("searches by id and by key, and says when nothing matches or the id is not one", async () => {
    const { tw, page, problems, url } = await open();
    const orders = tw.queue<number>("orders");
    const ada = await orders.enqueue(1, { key: "customer:ada" });
    await orders.enqueue(2, { key: "customer:bob" });
    const other = await orders.enqueue(3);
    await page.goto(`${url}#/jobs`);
    await expect.poll(() => rows(page).count(), { timeout: 10_000 }).toBe(3);

    await page.getByLabel("Key").fill("customer:ada");
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => shownIds(page)).toEqual([ada.id]);
    expect(await rows(page).first().textContent()).toContain("customer:ada");

    await page.getByRole("button", { name: "Clear" }).click();
    await expect.poll(() => rows(page).count()).toBe(3);
    await page.getByLabel("Job id").fill(other.id);
    await page.getByLabel("Job id").press("Enter");
    await expect.poll(() => shownIds(page)).toEqual([other.id]);
    expect(new URL(page.url()).hash).toBe(`#/jobs?id=${other.id}`);

    // An id and a key that do not go together: no job.
    await page.getByLabel("Key").fill("customer:ada");
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => page.locator('section[aria-label="Jobs"] .empty').textContent()).toBe("No job matches.");

    await page.getByLabel("Key").fill("");
    await page.getByLabel("Job id").fill("abc");
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => page.locator('section[aria-label="Jobs"] .problem').textContent()).toBe('Cannot list jobs: id: a job id is a positive integer such as "42"');
    await shot(page, "browser-search");
    // The 400 is the API's answer to a bad filter, shown in the page: nothing else went wrong.
    expect(problems.filter((p) => !p.includes("400"))).toEqual([]);
  });

  it("opens a job's page with its result, progress, every attempt and a cut payload it can load whole", async () => {
    const { tw, page, problems } = await open();
    const big = { rows: Array.from({ length: 4_000 }, (_, n) => ({ n, symbol: `SYM${n}`, note: "x".repeat(20) })) };
    const imports = tw.queue<typeof big>("imports", {
      retry: { maxAttempts: 3, backoff: () => 20 },
      handler: (job, ctx) => {
        if (ctx.attempt === 1) throw new Error("upstream timed out");
        ctx.progress({ done: job.payload.rows.length, of: job.payload.rows.length });
        return { imported: job.payload.rows.length };
      },
    });
    await tw.start();
    const job = await imports.enqueue(big, { key: "import:2026-01" });
    await statusOf(tw, job.id, "succeeded");

    await page.getByRole("link", { name: "Jobs", exact: true }).click();
    await page.getByRole("link", { name: `Job ${job.id}`, exact: true }).click();
    const detail = page.locator(`[data-job-detail="${job.id}"]`);
    await detail.waitFor({ timeout: 10_000 });
    expect(new URL(page.url()).hash).toBe(`#/jobs/${job.id}`);
    expect(await detail.locator("[data-job-state]").textContent()).toBe("succeeded");
    expect(await detail.locator('[data-fact="Key"] dd').textContent()).toBe("import:2026-01");
    expect(await detail.locator('[data-fact="Attempts"] dd').textContent()).toBe("2 of 3");
    expect(JSON.parse((await detail.locator('section[aria-label="Result"] pre').textContent())!)).toEqual({ imported: 4_000 });
    expect(await detail.locator('section[aria-label="Progress"] pre').textContent()).toBe(JSON.stringify({ done: 4_000, of: 4_000 }, null, 2));

    // Every attempt, newest first, with its outcome and error.
    const attempts = detail.locator('table[aria-label="Attempts"] tbody tr');
    expect(await attempts.evaluateAll((trs) => trs.map((tr) => `${tr.getAttribute("data-attempt")} ${tr.getAttribute("data-outcome")}`))).toEqual(["2 succeeded", "1 failed"]);
    expect(await attempts.nth(1).textContent()).toContain("upstream timed out");
    expect(await detail.locator('section[aria-label="Last error"]').textContent()).toContain("upstream timed out");

    // The payload is over 64 Ki characters: the page has its start, and loads the rest on demand.
    const payload = detail.locator('section[aria-label="Payload"]');
    const whole = JSON.stringify(big);
    expect(await payload.locator("pre").textContent()).toBe(whole.slice(0, 64 * 1024));
    expect(await payload.textContent()).toContain(`The first 65,536 characters of ${whole.length.toLocaleString("en-US")}.`);
    await shot(page, "job-detail");
    await payload.getByRole("button", { name: "Load the whole payload" }).click();
    await expect.poll(async () => (await payload.locator("pre").textContent())?.length, { timeout: 10_000 }).toBe(JSON.stringify(big, null, 2).length);
    expect(JSON.parse((await payload.locator("pre").textContent())!)).toEqual(big);
    // Of the actions, only Delete applies to a succeeded job.
    expect(await detail.getByRole("button", { name: /^(Retry|Cancel|Run) job/ }).count()).toBe(0);
    expect(await detail.getByRole("button", { name: `Delete job ${job.id}` }).count()).toBe(1);
    expect(problems, problems.join("\n")).toEqual([]);
  });

  it("shows a flow parent's children with their states and results, and leads to the browser listing exactly those", async () => {
    const { tw, page, problems, url } = await open();
    const fetch = tw.queue<{ n: number; fail?: boolean }>("fetch", {
      retry: { maxAttempts: 1 },
      handler: (job) => {
        if (job.payload.fail) throw new Error(`quote ${job.payload.n} refused`);
        return { value: job.payload.n * 10 };
      },
    });
    tw.queue<{ chart: string }>("render", { handler: (job) => ({ rendered: job.payload.chart }) });
    const report = tw.queue<{ name: string }>("report", { handler: () => ({ sent: true }) });
    const flow = await report.enqueueFlow({
      payload: { name: "daily" },
      onChildFailure: "continue",
      children: [
        { queue: "fetch", payload: { n: 1 } },
        { queue: "render", payload: { chart: "prices" } },
        { queue: "fetch", payload: { n: 3, fail: true } },
      ],
    });
    // Another flow's child, and a job of no flow: neither is one of this parent's children.
    const other = await report.enqueueFlow({ payload: { name: "other" }, children: [{ queue: "fetch", payload: { n: 4 } }] });
    await fetch.enqueue({ n: 5 });
    await tw.start();
    await statusOf(tw, flow.id, "succeeded");
    await statusOf(tw, other.id, "succeeded");
    const [fetched, rendered, refused] = flow.children.map((c) => c.id) as [string, string, string];

    await page.goto(`${url}#/jobs/${flow.id}`);
    const detail = page.locator(`[data-job-detail="${flow.id}"]`);
    await detail.waitFor({ timeout: 10_000 });
    const children = detail.locator('section[aria-label="Children"]');
    const childRows = children.locator("tbody tr");
    const shownChildren = () => childRows.evaluateAll((trs) => trs.map((tr) => [tr.getAttribute("data-child"), tr.querySelector("[data-job-state]")?.getAttribute("data-job-state")]));
    await expect.poll(shownChildren, { timeout: 10_000 }).toEqual([
      [fetched, "succeeded"],
      [rendered, "succeeded"],
      [refused, "failed"],
    ]);
    expect(await childRows.evaluateAll((trs) => trs.map((tr) => tr.children[1]!.textContent))).toEqual(["fetch", "render", "fetch"]);
    const renderMax = (await tw.jobs.get(rendered))!.maxAttempts;
    expect(await childRows.evaluateAll((trs) => trs.map((tr) => tr.children[3]!.textContent))).toEqual(["1/1", `1/${renderMax}`, "1/1"]);
    // A succeeded child shows the start of its result, a failed one its error.
    await expect.poll(() => childRows.nth(0).locator(".preview").textContent(), { timeout: 10_000 }).toBe(JSON.stringify({ value: 10 }));
    await expect.poll(() => childRows.nth(1).locator(".preview").textContent(), { timeout: 10_000 }).toBe(JSON.stringify({ rendered: "prices" }));
    expect(await childRows.nth(2).locator(".preview").textContent()).toBe("Error: quote 3 refused");
    await shot(page, "job-detail-children");

    // The link leads to the browser listing exactly this parent's children, oldest first.
    await children.getByRole("link", { name: "All 3 children" }).click();
    expect(new URL(page.url()).hash).toBe(`#/jobs?parent=${flow.id}&order=oldest`);
    await expect.poll(() => shownIds(page), { timeout: 10_000 }).toEqual([fetched, rendered, refused]);
    expect(await page.locator("[data-parent]").textContent()).toBe(`Children of #${flow.id}`);
    expect(await rows(page).evaluateAll((trs) => trs.map((tr) => tr.querySelector("[data-job-state]")?.getAttribute("data-job-state")))).toEqual(["succeeded", "succeeded", "failed"]);
    // The state tabs narrow the children; the parent stays in the filter.
    await page.getByRole("navigation", { name: "Job states" }).getByRole("link", { name: "Failed" }).click();
    expect(new URL(page.url()).hash).toBe(`#/jobs?state=failed&parent=${flow.id}&order=oldest`);
    await expect.poll(() => shownIds(page), { timeout: 10_000 }).toEqual([refused]);
    await shot(page, "browser-children-of-a-parent");
    // Back to the parent's page from the browser's line.
    await page.locator("[data-parent]").getByRole("link").click();
    await page.locator(`[data-job-detail="${flow.id}"]`).waitFor({ timeout: 10_000 });
    expect(problems, problems.join("\n")).toEqual([]);
  });

  it("a batch's completion job shows its first 20 children, and the browser pages through all of them", async () => {
    const { tw, page, problems, url } = await open();
    tw.queue<number>("charge"); // no handler: the items wait, and so does the completion job
    tw.queue("summary");
    const batch = await tw.batch(Array.from({ length: 23 }, (_, n) => n), { queue: "charge", onComplete: { queue: "summary", payload: {} } });

    // In the browser, the completion job waits for its children (its run time is the end of time
    // until the last one ends): it says so and links to them, rather than "scheduled" in eight
    // million years.
    await page.goto(`${url}#/jobs?queue=summary`);
    const waiting = rows(page).filter({ has: page.locator(`[aria-label="Job ${batch.id}"]`) });
    await expect.poll(() => waiting.locator("[data-job-state]").getAttribute("data-job-state"), { timeout: 10_000 }).toBe("waiting");
    expect(await waiting.getByRole("link", { name: "waiting for 23 of 23 children" }).getAttribute("href")).toBe(`#/jobs?parent=${batch.id}&order=oldest`);

    await page.goto(`${url}#/jobs/${batch.id}`);
    const detail = page.locator(`[data-job-detail="${batch.id}"]`);
    await detail.waitFor({ timeout: 10_000 });
    expect(await detail.locator("h2 [data-job-state]").getAttribute("data-job-state")).toBe("waiting");
    expect(await detail.locator('[data-fact="Runs"] dd').textContent()).toBe("once its children have ended");
    // The library would refuse to run it now: no Run now button.
    expect(await detail.getByRole("button", { name: `Run job ${batch.id} now` }).count()).toBe(0);
    expect(await detail.getByRole("button", { name: `Cancel job ${batch.id}` }).count()).toBe(1);
    const children = page.locator(`[data-job-detail="${batch.id}"] section[aria-label="Children"]`);
    const childIds = () => children.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-child")!));
    await expect.poll(childIds, { timeout: 10_000 }).toEqual(batch.jobs.slice(0, 20));
    expect(await children.locator("h3").textContent()).toBe("Children 20 of 23 shown");
    await children.getByRole("link", { name: "All 23 children" }).click();
    await expect.poll(() => shownIds(page), { timeout: 10_000 }).toEqual(batch.jobs);
    expect(await page.getByRole("button", { name: "Newer" }).isDisabled()).toBe(true);
    expect(problems, problems.join("\n")).toEqual([]);
  });

  it("retries a failed job, cancels a pending one and runs a delayed one now, from their pages", async () => {
    const { tw, page, problems, url } = await open();
    let smtpDown = true;
    const ran: string[] = [];
    const mail = tw.queue<string>("mail", {
      retry: { maxAttempts: 1 },
      handler: (job) => {
        if (job.payload === "welcome" && smtpDown) throw new Error("SMTP connection refused");
        ran.push(job.payload);
      },
    });
    const exports = tw.queue<string>("exports"); // no handler: its jobs stay pending
    await tw.start();
    const failed = await mail.enqueue("welcome");
    const delayed = await mail.enqueue("digest", { delay: "1h" });
    const waiting = await exports.enqueue("csv");
    await statusOf(tw, failed.id, "failed");

    // Retry a failed job.
    await page.goto(`${url}#/jobs/${failed.id}`);
    const state = (id: string) => page.locator(`[data-job-detail="${id}"] h2 [data-job-state]`);
    await expect.poll(() => state(failed.id).textContent(), { timeout: 10_000 }).toBe("failed");
    smtpDown = false;
    await page.getByRole("button", { name: `Retry job ${failed.id}` }).click();
    await expect.poll(() => notice(page)).toBe(`Job ${failed.id} is pending again.`);
    await expect.poll(() => state(failed.id).textContent(), { timeout: 10_000 }).toBe("succeeded");
    expect(ran).toEqual(["welcome"]);
    expect(await page.locator('table[aria-label="Attempts"] tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-outcome")))).toEqual(["succeeded", "failed"]);

    // Cancel a pending one.
    await page.goto(`${url}#/jobs/${waiting.id}`);
    await expect.poll(() => state(waiting.id).textContent(), { timeout: 10_000 }).toBe("due");
    await page.getByRole("button", { name: `Cancel job ${waiting.id}` }).click();
    await expect.poll(() => notice(page)).toBe(`Job ${waiting.id} is cancelled.`);
    await expect.poll(() => state(waiting.id).textContent()).toBe("cancelled");
    expect((await tw.jobs.get(waiting.id))?.status).toBe("cancelled");
    expect(await page.getByRole("button", { name: `Cancel job ${waiting.id}` }).count()).toBe(0);
    expect(await page.getByRole("button", { name: `Retry job ${waiting.id}` }).count()).toBe(1);

    // Run a delayed one now.
    await page.goto(`${url}#/jobs/${delayed.id}`);
    await expect.poll(() => state(delayed.id).textContent(), { timeout: 10_000 }).toBe("scheduled");
    await shot(page, "job-detail-scheduled");
    await page.getByRole("button", { name: `Run job ${delayed.id} now` }).click();
    await expect.poll(() => notice(page)).toBe(`Job ${delayed.id} is due now.`);
    await expect.poll(() => state(delayed.id).textContent(), { timeout: 10_000 }).toBe("succeeded");
    expect(ran).toEqual(["welcome", "digest"]);
    expect(problems, problems.join("\n")).toEqual([]);
  });

  it("pages past the overview's latest 20 failed jobs, and asks before retrying all of a queue's", async () => {
    const { tw, page, problems } = await open();
    let down = true;
    const mail = tw.queue<number>("mail", {
      retry: { maxAttempts: 1 },
      handler: () => {
        if (down) throw new Error("relay down");
      },
    });
    const ids = (await mail.enqueueMany(Array.from({ length: 30 }, (_, n) => ({ payload: n })))).map((j) => j.id);
    await tw.start();
    await eventually(async () => (await tw.jobs.counts("mail"))[0]?.counts.failed === 30, "30 failed jobs", 10_000);

    // The overview shows the latest 20, and leads to all of them.
    const more = page.locator('section[aria-label="Failed jobs"] .more');
    await expect.poll(() => more.textContent(), { timeout: 10_000 }).toBe("The latest 20 of 30: browse every failed job");
    await more.getByRole("link").click();
    await expect.poll(() => shownIds(page), { timeout: 10_000 }).toEqual(newestFirst(ids).slice(0, PAGE_SIZE));
    await page.getByRole("button", { name: "Older" }).click();
    await expect.poll(() => shownIds(page)).toEqual(newestFirst(ids).slice(PAGE_SIZE));
    expect(await page.locator('section[aria-label="Jobs"] .sub', { hasText: "Choose a queue" }).count()).toBe(1);

    // Retrying all of a queue's failed jobs asks first; Cancel leaves them failed.
    await page.getByLabel("Queue").selectOption("mail");
    const bulk = page.getByRole("button", { name: "Retry all 30 failed" });
    await bulk.click();
    const dialog = page.getByRole("dialog", { name: "Retry all 30 failed jobs of mail?" });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain("Each runs again with a fresh set of attempts");
    await shot(page, "browser-bulk-retry-confirmation");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    expect((await tw.jobs.counts("mail"))[0]?.counts.failed).toBe(30);

    down = false;
    await bulk.click();
    await dialog.getByRole("button", { name: "Retry 30 jobs" }).click();
    await expect.poll(() => notice(page)).toBe("30 failed jobs of mail pending again.");
    await eventually(async () => (await tw.jobs.counts("mail"))[0]?.counts.succeeded === 30, "30 succeeded jobs", 10_000);
    await expect.poll(() => page.locator('section[aria-label="Jobs"] .empty').textContent(), { timeout: 10_000 }).toBe("No job matches.");
    await expect.poll(() => bulk.count()).toBe(0);
    expect(problems, problems.join("\n")).toEqual([]);
  });

  it("fits a 400 px wide screen: the browser and a job's page scroll down, never sideways", async () => {
    const { tw, page, problems, url } = await open(400);
    const mail = tw.queue<object>("mail", {
      retry: { maxAttempts: 1 },
      handler: () => {
        throw new Error(`SMTP 550 mailbox unavailable: ${"a-very-long-unbroken-diagnostic-".repeat(8)}`);
      },
    });
    await tw.start();
    const job = await mail.enqueue({ to: "ada@example.com", body: "y".repeat(600) }, { key: `welcome:${"k".repeat(120)}` });
    await statusOf(tw, job.id, "failed");
    // How far the page scrolls sideways (an expression: this file is typed for Node, not the DOM).
    const sideways = () => page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");

    await page.goto(`${url}#/jobs?state=failed`);
    await expect.poll(() => shownIds(page), { timeout: 10_000 }).toEqual([job.id]);
    expect(await sideways()).toBe(0);
    await shot(page, "browser-400px");

    await page.getByRole("link", { name: `Job ${job.id}`, exact: true }).click();
    await page.locator(`[data-job-detail="${job.id}"]`).waitFor({ timeout: 10_000 });
    expect(await sideways()).toBe(0);
    await shot(page, "job-detail-400px");
    expect(problems, problems.join("\n")).toEqual([]);
  });
});
