// The `tickwork` process: runs the command line, then exits with its code once the output is written.
import { runCli } from "./cli.js";

// A reader that closed stdout early (`tickwork jobs list | head -2`) has what it wanted: a one-shot
// command ends quietly with 0, as Unix tools do, and `start` (which listens for SIGTERM) is sent one
// and stops gracefully, instead of a stack trace. Later writes fail the same way and are ignored.
let readerGone = false;
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  if (readerGone) return;
  readerGone = true;
  if (process.listenerCount("SIGTERM") > 0) process.kill(process.pid, "SIGTERM");
  else process.exit(0);
});

const code = await runCli(process.argv.slice(2));
// Exit explicitly: a config's setup may leave a connection open without a teardown, and a one-shot
// command must not hang on it. Pending output is flushed first (stdout may be a pipe).
// A stdout whose reader is gone has nothing left to flush.
const streams = readerGone ? [process.stderr] : [process.stdout, process.stderr];
await Promise.all(streams.map((stream) => new Promise((resolve) => stream.write("", resolve))));
process.exit(code);
