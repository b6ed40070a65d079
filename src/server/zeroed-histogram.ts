// Types only: `prom-client` is an optional peer, loaded when metrics are asked for.
import type * as promClient from "prom-client";

type Labels = Record<string, string>;

/**
 * A histogram whose label sets can be created at zero before their first observation. prom-client's
 * own `zero()` also resets a set that was already observed, so this remembers the sets it has made
 * and zeroes each once, only if nothing observed it first.
 */
export class ZeroedHistogram {
  private readonly made = new Set<string>();

  constructor(private readonly histogram: promClient.Histogram) {}

  observe(labels: Labels, value: number): void {
    this.made.add(key(labels));
    this.histogram.observe(labels, value);
  }

  zero(labels: Labels): void {
    const k = key(labels);
    if (this.made.has(k)) return;
    this.made.add(k);
    this.histogram.zero(labels);
  }
}

function key(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((name) => `${name}=${labels[name]}`)
    .join("\u0000");
}
