// Runs one documentation block against a local upstream (see check-docs.ts): loads the runner, which
// sets up the upstream and the block's free names, and hands it a function that loads the block.
// Prints the runner's one-line account and exits 0, or prints the error and exits 1.
//   node --import tsx scripts/docs-run-block.ts <runner.ts> <block.ts>   (TSX_TSCONFIG_PATH=tsconfig.docs.json)
import { pathToFileURL } from "node:url";

type Runner = (load: () => Promise<unknown>) => Promise<string>;

const [runnerPath, blockPath] = process.argv.slice(2);
if (!runnerPath || !blockPath) {
  console.error("usage: docs-run-block.ts <runner.ts> <block.ts>");
  process.exit(2);
}
try {
  const runner = ((await import(pathToFileURL(runnerPath).href)) as { default: Runner }).default;
  console.log(await runner(() => import(pathToFileURL(blockPath).href)));
  process.exit(0);
} catch (error) {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
}
