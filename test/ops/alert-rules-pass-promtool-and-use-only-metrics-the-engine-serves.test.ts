import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { adminFor } from "../server/support/admin.js";
import { sqliteMemoryCase } from "../support/stores.js";
import { metricNames } from "./support/promql.js";
import { promtool } from "./support/promtool.js";
import { scrapedNames } from "./support/scrape.js";

const DIR = fileURLToPath(new URL("../../ops/prometheus/", import.meta.url));
const RULES = "tickwork-alerts.yml";

/** The `expr:` lines of the rules file: each rule's expression is one line there. */
function expressions(): string[] {
  return [...readFileSync(DIR + RULES, "utf8").matchAll(/^\s+expr: (.+)$/gm)].map((m) => m[1]!);
}

describe("ops/prometheus/tickwork-alerts.yml", () => {
  const admin = adminFor(sqliteMemoryCase());

  it("passes promtool check rules", () => {
    const check = promtool(["check", "rules", RULES], DIR);
    expect(check.status, check.output).toBe(0);
    expect(check.output).toMatch(/SUCCESS: 8 rules found/);
  });

  it("a scrape of /metrics, the process's default metrics included, passes promtool check metrics", async () => {
    const a = await admin();
    await scrapedNames(a);
    const check = promtool(["check", "metrics"], undefined, (await a.get("/metrics")).text);
    expect(check.output).toBe("");
    expect(check.status).toBe(0);
  });

  it("fires each alert where its unit tests say, and not elsewhere (promtool test rules)", () => {
    const test = promtool(["test", "rules", "tickwork-alerts.test.yml"], DIR);
    expect(test.status, test.output).toBe(0);
    expect(test.output).toMatch(/SUCCESS/);
  });

  it("names only metrics that a running engine's /metrics serves, or Prometheus's own `up`", async () => {
    const exprs = expressions();
    expect(exprs).toHaveLength(8);
    // `up` is the one series Prometheus writes itself for each target it scrapes.
    const served = new Set([...(await scrapedNames(await admin())), "up"]);
    for (const expr of exprs) {
      const names = metricNames(expr);
      expect(names.length, expr).toBeGreaterThan(0);
      for (const name of names) expect(served.has(name), `${name} (in ${expr}) is not in a scrape of /metrics`).toBe(true);
    }
  });
});
