import { mkdirSync } from "node:fs";
import type { FailureDecider } from "./failures.js";
import { startReceiver, type ReceiverService, type ReceiverStats, type ReceiverView } from "./receiver.js";
import type { SymbolFanoutTargets } from "./push.js";

/**
 * Seed 001's downstream fleet: in each of 7 geo-locations one PriceCollector and 10 PriceAlerts, 77
 * receivers in all, each a real HTTP server on 127.0.0.1 in this process. The locations are
 * Cloudflare's Durable Object location hints.
 */
export const LOCATIONS = ["wnam", "enam", "sam", "weur", "eeur", "apac", "oc"] as const;
export const ALERTS_PER_LOCATION = 10;

export interface FleetOptions {
  /** Where each receiver keeps its JSON state file. */
  storageDir: string;
  locations?: readonly string[];
  alertsPerLocation?: number;
  /** Which pushes fail on purpose; changeable later with `setFailure`. */
  failure?: FailureDecider | null;
  /** How long a hung push is held before its connection is dropped (real ms); default 200. */
  hangMs?: number;
}

export interface Fleet {
  readonly receivers: readonly ReceiverService[];
  /** The fan-out's groups: every collector, every alert receiver. */
  readonly targets: SymbolFanoutTargets;
  get(id: string): ReceiverService;
  setFailure(decider: FailureDecider | null): void;
  /** `GET /state` of one receiver, over HTTP. */
  view(id: string): Promise<ReceiverView>;
  /** `GET /state` of every receiver that is up, in parallel. */
  views(): Promise<ReceiverView[]>;
  /** Every receiver's counters, summed. */
  totals(): ReceiverStats;
  close(): Promise<void>;
}

export const collectorId = (location: string) => `collector-${location}`;
export const alertId = (location: string, n: number) => `alert-${location}-${String(n).padStart(2, "0")}`;

export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const locations = options.locations ?? LOCATIONS;
  const perLocation = options.alertsPerLocation ?? ALERTS_PER_LOCATION;
  if (locations.length === 0 || new Set(locations).size !== locations.length) throw new RangeError("startFleet: locations must be a non-empty list of distinct names");
  if (!Number.isInteger(perLocation) || perLocation < 0) throw new RangeError(`startFleet: alertsPerLocation must be an integer >= 0, got ${String(perLocation)}`);
  mkdirSync(options.storageDir, { recursive: true });
  let failure = options.failure ?? null;
  const common = { storageDir: options.storageDir, failure: () => failure, ...(options.hangMs !== undefined ? { hangMs: options.hangMs } : {}) };
  const specs = locations.flatMap((location) => [
    { id: collectorId(location), kind: "collector" as const, location },
    ...Array.from({ length: perLocation }, (_, i) => ({ id: alertId(location, i + 1), kind: "alert" as const, location })),
  ]);
  const started = await Promise.allSettled(specs.map((spec) => startReceiver({ ...spec, ...common })));
  const receivers = started.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const failed = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) {
    await Promise.allSettled(receivers.map((r) => r.close()));
    throw failed.reason;
  }
  const byId = new Map(receivers.map((r) => [r.id, r]));
  const get = (id: string) => {
    const receiver = byId.get(id);
    if (!receiver) throw new RangeError(`no receiver "${id}" in the fleet`);
    return receiver;
  };
  const view = async (id: string): Promise<ReceiverView> => {
    const res = await fetch(`${get(id).url}/state`);
    if (!res.ok) throw new Error(`GET ${id}/state answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as ReceiverView;
  };
  const target = (r: ReceiverService) => ({ id: r.id, url: r.url });
  return {
    receivers,
    targets: {
      collectors: receivers.filter((r) => r.kind === "collector").map(target),
      alerts: receivers.filter((r) => r.kind === "alert").map(target),
    },
    get,
    setFailure: (decider) => void (failure = decider),
    view,
    views: () => Promise.all(receivers.filter((r) => r.up).map((r) => view(r.id))),
    totals() {
      const sum: ReceiverStats = { pushes: 0, accepted: 0, refused: 0, errors: 0, hung: 0, restarts: 0 };
      for (const r of receivers) for (const key of Object.keys(sum) as (keyof ReceiverStats)[]) sum[key] += r.stats[key];
      return sum;
    },
    close: async () => void (await Promise.allSettled(receivers.map((r) => r.close()))),
  };
}
