// Runs the cloudflare shape's worker in workerd: bundled from the consumer project (its
// node_modules, the conditions wrangler uses), served by this repository's miniflare, so the
// consumer's own node_modules stay what a Worker's project installs.
import { argv, stdout } from "node:process";
import { join } from "node:path";
import { build } from "esbuild";
import { Miniflare } from "miniflare";

const project = argv[2];
const bundled = await build({
  entryPoints: [join(project, "worker.ts")],
  absWorkingDir: project,
  bundle: true,
  platform: "neutral",
  format: "esm",
  target: "es2022",
  conditions: ["workerd", "worker", "browser"],
  mainFields: ["module", "main"],
  external: ["cloudflare:*"],
  write: false,
  logLevel: "warning",
});
const mf = new Miniflare({
  modules: true,
  script: bundled.outputFiles[0].text,
  compatibilityDate: "2026-04-01",
  durableObjects: { JOBS: { className: "Jobs", useSQLite: true } },
});
try {
  const response = await mf.dispatchFetch("http://consumer.test/");
  const body = await response.text();
  if (response.status !== 200) throw new Error(`worker answered ${response.status}: ${body}`);
  const { job, payload, queues } = JSON.parse(body);
  if (typeof job !== "string" || payload?.name !== "ada" || !queues.includes("greet")) throw new Error(`unexpected answer: ${body}`);
  stdout.write(`  cloudflare shape: enqueued job ${job} in a Durable Object under workerd\n`);
} finally {
  await mf.dispose();
}
