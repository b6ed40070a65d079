import type pg from "pg";

/** A node of `EXPLAIN (FORMAT JSON)` output, as far as the plan tests read it. */
export interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan, as "Node Type(index or relation)", e.g. "Index Scan(tickwork_jobs_claim)". */
export function planSteps(plan: PlanNode): string[] {
  return [`${plan["Node Type"]}(${plan["Index Name"] ?? plan["Relation Name"] ?? ""})`, ...(plan.Plans ?? []).flatMap(planSteps)];
}

function literal(client: pg.Client, value: unknown): string {
  if (Array.isArray(value)) return `ARRAY[${value.map((v) => (v === null ? "NULL" : client.escapeLiteral(String(v)))).join(", ")}]`;
  return typeof value === "string" ? client.escapeLiteral(value) : String(value);
}

/**
 * The plan PostgreSQL runs a prepared statement with under `mode` (`force_custom_plan`, built for the
 * values, or `force_generic_plan`, built once for any values, which named statements switch to after
 * a few executions). `types` casts the literals where the statement leaves a parameter's type open.
 */
export async function preparedPlan(client: pg.Client, sql: string, params: unknown[], mode: string, types: string[] = []): Promise<string[]> {
  const name = `plan_${Math.random().toString(36).slice(2, 10)}`;
  await client.query(`SET plan_cache_mode = ${mode}`);
  try {
    await client.query(`PREPARE ${name} AS ${sql}`);
    const values = params.map((p, i) => `${literal(client, p)}${types[i] ?? ""}`);
    const { rows } = await client.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) EXECUTE ${name}(${values.join(", ")})`);
    return planSteps(rows[0]!["QUERY PLAN"][0].Plan);
  } finally {
    await client.query(`DEALLOCATE ${name}`).catch(() => {});
    await client.query(`RESET plan_cache_mode`);
  }
}
