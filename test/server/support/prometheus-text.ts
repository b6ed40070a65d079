/**
 * A strict reader of the Prometheus text exposition format 0.0.4, for tests: it throws on anything a
 * Prometheus server would refuse (a malformed line, a sample before its TYPE, a family declared
 * twice, a histogram whose buckets are not cumulative or lack le="+Inf" equal to _count).
 */

export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string;
  samples: Sample[];
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: (-?\\d+))?$`);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\["\\n])*)"(,|$)/y;

export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const helps = new Map<string, string>();
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a newline");
  text.split("\n").forEach((line, i) => {
    const where = `line ${i + 1} (${JSON.stringify(line)})`;
    if (line === "") return;
    if (line.startsWith("#")) {
      const meta = new RegExp(`^# (HELP|TYPE) (${NAME}) (.*)$`).exec(line);
      if (!meta) {
        if (/^# (HELP|TYPE)/.test(line)) throw new Error(`malformed ${where}`);
        return;
      }
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      if (kind === "HELP") helps.set(name, rest);
      else {
        if (families.has(name)) throw new Error(`TYPE of ${name} given twice, ${where}`);
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest)) throw new Error(`unknown type at ${where}`);
        families.set(name, { name, type: rest as MetricType, help: helps.get(name) ?? "", samples: [] });
      }
      return;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`malformed sample at ${where}`);
    const [, name, labelText, valueText] = match as unknown as [string, string, string | undefined, string];
    const family = familyOf(name, families);
    if (!family) throw new Error(`sample ${name} has no TYPE before it, ${where}`);
    const value = parseValue(valueText, where);
    family.samples.push({ name, labels: parseLabels(labelText ?? "", where), value });
  });
  for (const family of families.values()) {
    family.help = helps.get(family.name) ?? family.help;
    if (family.type === "histogram") checkHistogram(family);
  }
  return families;
}

/** The value of the one sample of `name` whose labels include `labels`; throws if none or several. */
export function value(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const family = familyOf(name, families);
  const found = family?.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) ?? [];
  if (found.length !== 1) throw new Error(`${found.length} samples of ${name} with ${JSON.stringify(labels)}`);
  return found[0]!.value;
}

function familyOf(sample: string, families: Map<string, Family>): Family | undefined {
  if (families.has(sample)) return families.get(sample);
  const base = sample.replace(/_(bucket|sum|count)$/, "");
  const family = families.get(base);
  return family && (family.type === "histogram" || family.type === "summary") ? family : undefined;
}

function parseValue(text: string, where: string): number {
  // Prometheus reads values with Go's strconv.ParseFloat, which takes these in any case (prom-client
  // writes NaN as "Nan", e.g. the event-loop lag's mean before its first sample).
  if (/^\+?inf$/i.test(text)) return Infinity;
  if (/^-inf$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  const n = Number(text);
  if (text.trim() === "" || Number.isNaN(n)) throw new Error(`bad value at ${where}`);
  return n;
}

function parseLabels(text: string, where: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const start = LABEL.lastIndex;
    const m = LABEL.exec(text);
    if (!m || m.index !== start) throw new Error(`bad labels at ${where}`);
    if (m[1]! in labels) throw new Error(`label ${m[1]} given twice at ${where}`);
    labels[m[1]!] = m[2]!.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c));
  }
  return labels;
}

function checkHistogram(family: Family): void {
  const series = new Map<string, Sample[]>();
  for (const s of family.samples) {
    const { le: _le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    series.set(key, [...(series.get(key) ?? []), s]);
  }
  for (const [key, samples] of series) {
    const buckets = samples.filter((s) => s.name === `${family.name}_bucket`);
    const count = samples.find((s) => s.name === `${family.name}_count`);
    if (!samples.some((s) => s.name === `${family.name}_sum`) || !count) throw new Error(`${family.name} ${key}: _sum or _count missing`);
    const inf = buckets.find((b) => b.labels.le === "+Inf");
    if (!inf || inf.value !== count.value) throw new Error(`${family.name} ${key}: le="+Inf" missing or not equal to _count`);
    const ordered = buckets.map((b) => [parseValue(b.labels.le ?? "", family.name), b.value] as const).sort((x, y) => x[0] - y[0]);
    ordered.reduce((previous, [, v]) => {
      if (v < previous) throw new Error(`${family.name} ${key}: buckets are not cumulative`);
      return v;
    }, 0);
  }
}
