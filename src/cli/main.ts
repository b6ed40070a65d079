// The `tickwork` process: runs the command line, then exits with its code once the output is written.
import { runCli } from "./cli.js";

const code = await runCli(process.argv.slice(2));
// Exit explicitly: a config's setup may leave a connection open without a teardown, and a one-shot
// command must not hang on it. Pending output is flushed first (stdout may be a pipe).
await Promise.all([process.stdout, process.stderr].map((stream) => new Promise((resolve) => stream.write("", resolve))));
process.exit(code);
