import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { adminFor } from "../server/support/admin.js";
import { sqliteMemoryCase } from "../support/stores.js";
import { grafanaDashboard, type GrafanaDashboard, type GrafanaPanel } from "./support/grafana-dashboard-schema.js";
import { metricNames } from "./support/promql.js";
import { promtool } from "./support/promtool.js";
import { scrapedNames } from "./support/scrape.js";

const FILE = fileURLToPath(new URL("../../ops/grafana/tickwork-dashboard.json", import.meta.url));
/** Variables Grafana defines itself. */
const BUILT_IN = new Set(["__rate_interval", "__interval", "__range"]);

function dashboard(): GrafanaDashboard {
  return grafanaDashboard.parse(JSON.parse(readFileSync(FILE, "utf8")));
}

function queryPanels(d: GrafanaDashboard): GrafanaPanel[] {
  return d.panels.filter((p): p is GrafanaPanel => p.type !== "row");
}

/** `$name` and `${name}` in a text. */
function variablesIn(text: string): string[] {
  return [...text.matchAll(/\$\{?(\w+)\}?/g)].map((m) => m[1]!);
}

describe("ops/grafana/tickwork-dashboard.json", () => {
  const admin = adminFor(sqliteMemoryCase());

  it("fits the dashboard schema, with unique panel ids, panels that do not overlap, and every variable defined", () => {
    const d = dashboard();
    const ids = d.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Map<string, string>();
    for (const p of d.panels) {
      const { x, y, w, h } = p.gridPos;
      for (let row = y; row < y + h; row++) {
        for (let col = x; col < x + w; col++) {
          const other = cells.get(`${col},${row}`);
          expect(other, `"${p.title}" overlaps "${other}" at column ${col}, row ${row}`).toBeUndefined();
          cells.set(`${col},${row}`, p.title);
        }
      }
    }
    const defined = new Set(d.templating.list.map((v) => v.name));
    const used = [
      ...queryPanels(d).flatMap((p) => [p.datasource.uid, ...p.targets.flatMap((t) => [t.expr, t.datasource.uid])]),
      ...d.templating.list.flatMap((v) => (v.type === "query" ? [v.definition, v.query.query, v.datasource.uid] : [])),
    ].flatMap(variablesIn);
    for (const name of used) expect(defined.has(name) || BUILT_IN.has(name), `$${name} is not a variable of the dashboard`).toBe(true);
    for (const p of queryPanels(d)) expect(p.datasource).toEqual({ type: "prometheus", uid: "${datasource}" });
  });

  it("has only queries that promtool parses as PromQL", () => {
    const d = dashboard();
    // Each query as a recording rule, its variables given values, so promtool parses it.
    const rules = queryPanels(d).flatMap((p) =>
      p.targets.map((t) => ({ record: `dashboard:panel_${p.id}:${t.refId}`, expr: t.expr.replace(/\$__\w+/g, "5m").replace(/\$\{?\w+\}?/g, ".*") })),
    );
    const dir = mkdtempSync(join(tmpdir(), "tickwork-dashboard-"));
    try {
      // JSON is YAML: promtool reads it as a rules file.
      writeFileSync(join(dir, "queries.yml"), JSON.stringify({ groups: [{ name: "dashboard", rules }] }));
      const check = promtool(["check", "rules", "queries.yml"], dir);
      expect(check.status, check.output).toBe(0);
      expect(check.output).toContain(`SUCCESS: ${rules.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("queries only metrics that a running engine's /metrics serves, the process's default metrics included", async () => {
    const served = await scrapedNames(await admin());
    const d = dashboard();
    const queries = [...queryPanels(d).flatMap((p) => p.targets.map((t) => t.expr)), ...d.templating.list.flatMap((v) => (v.type === "query" ? [v.query.query] : []))];
    const named = new Set<string>();
    for (const expr of queries) {
      const names = metricNames(expr.replace(/^label_values\((.*), \w+\)$/, "$1"));
      expect(names.length, expr).toBeGreaterThan(0);
      for (const name of names) {
        named.add(name);
        expect(served.has(name), `${name} (in ${expr}) is not in a scrape of /metrics`).toBe(true);
      }
    }
    expect([...named].filter((n) => !n.startsWith("tickwork_"))).toEqual(["process_cpu_seconds_total", "process_resident_memory_bytes", "nodejs_eventloop_lag_p99_seconds"]);
  });
});
