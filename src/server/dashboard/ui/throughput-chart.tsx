import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import type { ThroughputSnapshot } from "../../api/types.js";

const COLORS = ["#2563eb", "#16a34a", "#d97706", "#dc2626", "#7c3aed", "#0891b2", "#db2777", "#65a30d"];
const HEIGHT = 200;
/** Whole numbers on the count axis. */
const COUNT_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000];
/** Grey reads on both the light and the dark theme. */
const AXIS = { stroke: "#8d96a0", grid: { stroke: "rgba(128, 128, 128, 0.2)" }, ticks: { stroke: "rgba(128, 128, 128, 0.3)" } };

/** "13:04:05" from epoch seconds: the header shows the engine's time in UTC too. */
const utc = (seconds: number) => new Date(seconds * 1_000).toISOString().slice(11, 19);

/** Attempts finished per bucket, one line per queue. uPlot draws on a canvas: cheap to redraw at every poll. */
export function ThroughputChart(props: { throughput: ThroughputSnapshot }) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<{ plot: uPlot; queues: string } | null>(null);
  const { bucketMs, start, queues } = props.throughput;
  const names = Object.keys(queues).sort();

  useEffect(() => {
    const target = box.current;
    if (!target || names.length === 0) return;
    const times = queues[names[0]!]!.map((_, i) => (start + i * bucketMs) / 1_000);
    const data: uPlot.AlignedData = [times, ...names.map((n) => queues[n]!)];
    const key = names.join("\n");
    if (chart.current?.queues === key) {
      chart.current.plot.setData(data);
      return;
    }
    chart.current?.plot.destroy();
    const plot = new uPlot(
      {
        width: Math.max(300, target.clientWidth),
        height: HEIGHT,
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [{ ...AXIS, space: 80, values: (_u, splits) => splits.map((s) => utc(s).slice(0, 5)) }, { ...AXIS, label: `attempts per ${bucketMs / 1_000}s`, size: 60, incrs: COUNT_STEPS }],
        // Off the chart the legend shows the latest bucket (the one filling now), not "--" until hovered.
        series: [
          { label: "UTC", value: (u, v) => utc(v ?? latest(u, 0)) },
          ...names.map((label, i) => ({ label, stroke: COLORS[i % COLORS.length], width: 2, points: { show: false }, value: (u: uPlot, v: number | null, s: number) => String(v ?? latest(u, s)) })),
        ],
      },
      data,
      target,
    );
    chart.current = { plot, queues: key };
  });

  useEffect(() => {
    const target = box.current!;
    const resize = new ResizeObserver(() => chart.current?.plot.setSize({ width: Math.max(300, target.clientWidth), height: HEIGHT }));
    resize.observe(target);
    return () => {
      resize.disconnect();
      chart.current?.plot.destroy();
      chart.current = null;
    };
  }, []);

  // The chart's box is always rendered, so the observer above has it from the first render.
  return (
    <div>
      {names.length === 0 ? <p class="empty">No job attempt has finished in this process in the last 10 minutes.</p> : null}
      <div class="chart" ref={box} hidden={names.length === 0} aria-label="Throughput per queue" />
    </div>
  );
}

/** The last value of series `s` (its newest bucket); 0 when it has none. */
function latest(u: uPlot, s: number): number {
  const values = u.data[s] ?? [];
  return values[values.length - 1] ?? 0;
}
