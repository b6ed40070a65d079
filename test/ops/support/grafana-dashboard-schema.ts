import * as z from "zod";

/**
 * The structural parts of Grafana's dashboard JSON model (schemaVersion 36 and later, where a
 * datasource is a `{ type, uid }` reference) that an import depends on. No JSON schema of the model is
 * published to npm (@grafana/schema ships TypeScript types only), so this one is written after
 * Grafana's documented model and kept strict where a mistake would break the import or a panel.
 */
const datasourceRef = z.object({ type: z.string().min(1), uid: z.string().min(1) }).strict();
const gridPos = z
  .object({ x: z.number().int().min(0).max(23), y: z.number().int().min(0), w: z.number().int().min(1).max(24), h: z.number().int().min(1) })
  .strict()
  .refine((g) => g.x + g.w <= 24, "a panel must fit the 24 columns of the grid (x + w <= 24)");

const target = z
  .object({
    refId: z.string().regex(/^[A-Z]$/),
    datasource: datasourceRef,
    expr: z.string().min(1),
    legendFormat: z.string().min(1),
    range: z.boolean(),
    instant: z.boolean(),
  })
  .strict();

const PANEL_TYPES = ["timeseries", "stat", "gauge", "bargauge", "table", "text", "state-timeline", "heatmap"] as const;

const rowPanel = z
  .object({ id: z.number().int().positive(), type: z.literal("row"), title: z.string().min(1), collapsed: z.boolean(), gridPos, panels: z.array(z.unknown()) })
  .strict();

const panel = z
  .object({
    id: z.number().int().positive(),
    type: z.enum(PANEL_TYPES),
    title: z.string().min(1),
    description: z.string().min(1),
    datasource: datasourceRef,
    gridPos,
    targets: z
      .array(target)
      .min(1)
      .refine((ts) => new Set(ts.map((t) => t.refId)).size === ts.length, "refIds must be unique within a panel"),
    fieldConfig: z.object({ defaults: z.object({ unit: z.string().min(1) }).passthrough(), overrides: z.array(z.unknown()) }).strict(),
    options: z.record(z.string(), z.unknown()),
  })
  .strict();

const variableBase = { name: z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/), label: z.string().min(1), hide: z.union([z.literal(0), z.literal(1), z.literal(2)]) };

const variable = z.discriminatedUnion("type", [
  z.object({ ...variableBase, type: z.literal("datasource"), query: z.string().min(1) }).passthrough(),
  z
    .object({
      ...variableBase,
      type: z.literal("query"),
      datasource: datasourceRef,
      definition: z.string().min(1),
      query: z.object({ query: z.string().min(1), refId: z.string().min(1) }).strict(),
      refresh: z.union([z.literal(1), z.literal(2)]),
    })
    .passthrough(),
]);

export const grafanaDashboard = z
  .object({
    uid: z.string().regex(/^[a-zA-Z0-9_-]{1,40}$/, "a uid is 1 to 40 letters, digits, - or _"),
    title: z.string().min(1),
    description: z.string().min(1),
    tags: z.array(z.string()),
    editable: z.boolean(),
    graphTooltip: z.union([z.literal(0), z.literal(1), z.literal(2)]),
    schemaVersion: z.number().int().min(36),
    version: z.number().int().min(1),
    refresh: z.string(),
    time: z.object({ from: z.string().min(1), to: z.string().min(1) }).strict(),
    timepicker: z.record(z.string(), z.unknown()),
    timezone: z.string(),
    fiscalYearStartMonth: z.number().int().min(0).max(11),
    liveNow: z.boolean(),
    weekStart: z.string(),
    links: z.array(z.unknown()),
    annotations: z.object({ list: z.array(z.object({ builtIn: z.number().optional(), datasource: datasourceRef, enable: z.boolean(), name: z.string().min(1), type: z.string() }).passthrough()) }).strict(),
    templating: z.object({ list: z.array(variable) }).strict(),
    panels: z.array(z.union([rowPanel, panel])).min(1),
  })
  .strict();

export type GrafanaDashboard = z.infer<typeof grafanaDashboard>;
export type GrafanaPanel = z.infer<typeof panel>;
