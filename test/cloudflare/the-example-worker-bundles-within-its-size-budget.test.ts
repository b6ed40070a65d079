import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { WORKER_BUILD } from "./support/workerd.js";

/** What docs/runtimes/cloudflare.md promises for the example Worker, minified, with a margin for growth. */
const BUDGET = { minifiedKiB: 450, gzipKiB: 140, zodKiB: 120 };

describe("the Cloudflare example Worker's bundle", () => {
  it(`stays within ${BUDGET.minifiedKiB} KiB minified (${BUDGET.gzipKiB} KiB gzip), zod within ${BUDGET.zodKiB} KiB of it`, async () => {
    // As wrangler bundles it: esbuild, the workerd conditions, minified as `wrangler deploy --minify`.
    const result = await build({
      ...WORKER_BUILD,
      entryPoints: ["examples/cloudflare/worker.ts"],
      minify: true,
      external: ["cloudflare:*", "node:*"],
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    const bytes = result.outputFiles[0]!.contents;
    const inputs = Object.entries(Object.values(result.metafile.outputs)[0]!.inputs);
    const zod = inputs.filter(([path]) => path.includes("node_modules/zod/")).reduce((n, [, input]) => n + input.bytesInOutput, 0);
    const kib = (n: number) => Math.round(n / 1024);
    const sizes = { minifiedKiB: kib(bytes.length), gzipKiB: kib(gzipSync(bytes).length), zodKiB: kib(zod) };
    expect(sizes.minifiedKiB, JSON.stringify(sizes)).toBeLessThanOrEqual(BUDGET.minifiedKiB);
    expect(sizes.gzipKiB, JSON.stringify(sizes)).toBeLessThanOrEqual(BUDGET.gzipKiB);
    expect(sizes.zodKiB, JSON.stringify(sizes)).toBeLessThanOrEqual(BUDGET.zodKiB);
  });
});
