/** Every scenario: the stores it applies to, what it needs, and how it runs. */
import type { ScenarioName, StoreKind } from "../options.js";
import type { ScenarioReport } from "../report.js";
import type { Environment } from "./environment.js";
import { runFlows } from "./flows.js";
import { runIdempotency } from "./idempotency.js";
import { runPeriodic } from "./periodic.js";
import { pgRestart, pgStop } from "./pg-outage.js";
import { pgTerminate } from "./pg-terminate.js";
import { pool } from "./pool.js";
import { runQueueScenario } from "./queue-run.js";
import { sigkill } from "./sigkill.js";
import { sigstop } from "./sigstop.js";

export interface Scenario {
  stores: StoreKind[];
  /** It restarts or stops the server, so it needs the run's own cluster. */
  ownCluster?: boolean;
  run(env: Environment): Promise<ScenarioReport>;
}

export const scenarios: Record<ScenarioName, Scenario> = {
  sigkill: { stores: ["postgres", "sqlite"], run: (env) => runQueueScenario(env, sigkill) },
  sigstop: { stores: ["postgres", "sqlite"], run: (env) => runQueueScenario(env, sigstop) },
  "pg-restart": { stores: ["postgres"], ownCluster: true, run: (env) => runQueueScenario(env, pgRestart) },
  "pg-stop": { stores: ["postgres"], ownCluster: true, run: (env) => runQueueScenario(env, pgStop) },
  "pg-terminate": { stores: ["postgres"], run: (env) => runQueueScenario(env, pgTerminate) },
  pool: { stores: ["postgres"], run: (env) => runQueueScenario(env, pool) },
  periodic: { stores: ["postgres", "sqlite"], run: runPeriodic },
  idempotency: { stores: ["postgres", "sqlite"], run: runIdempotency },
  flows: { stores: ["postgres", "sqlite"], run: runFlows },
};
