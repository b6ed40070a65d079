import { existsSync, rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { demoLines, startDemo, startScript, type DemoProcess } from "./support/demo-process.js";

/**
 * A terminal's Ctrl-C signals the whole foreground process group: npm, its shell, and the demo all
 * get SIGINT, and npm forwards it once more. The demo must print `stopped` after its graceful stop,
 * remove its temporary folder, and exit 0 (a stop asked for is a success, as `tickwork start`
 * does). Each case runs the real demo in a process group of its own.
 */
describe("Ctrl-C on npm start", () => {
  let demo: DemoProcess | undefined;
  afterEach(() => {
    demo?.killGroup();
    // Only when the test failed: a demo killed above cannot remove its own folder.
    const folder = demo?.folder();
    if (folder !== undefined && folder.includes("tickwork-demo-")) rmSync(folder, { recursive: true, force: true });
    demo = undefined;
  });

  /** The demo stopped as promised: the stop line, then `stopped` last, and its folder gone. */
  function expectStoppedGracefully(run: DemoProcess): void {
    const said = demoLines(run.lines());
    expect(said.some((line) => line.includes("Ctrl-C: stopping gracefully"))).toBe(true);
    expect(said.at(-1)).toMatch(/\] stopped$/);
    expect(run.lines().join("\n")).not.toMatch(/^\s+at /m);
    const folder = run.folder();
    expect(folder).toMatch(/tickwork-demo-/);
    expect(existsSync(folder!)).toBe(false);
  }

  it("the start script runs node itself with tsx's loader: tsx's CLI would relay the Ctrl-C and SIGKILL a demo slow to acknowledge it", () => {
    // tsx's CLI waits 30 ms for its child to report a signal, sends it again, and after 30 ms more
    // kills the child with SIGKILL: a demo busy closing its engine dies before its cleanup.
    expect(startScript()).toBe("node --import tsx examples/demo/main.ts");
  });

  it("SIGINT to the process group of the start script's command: the demo stops gracefully, removes its folder and exits 0", async () => {
    const [command, ...args] = startScript().split(" ");
    demo = startDemo(command === "node" ? process.execPath : command!, args);
    await demo.ready;
    process.kill(-demo.child.pid!, "SIGINT");
    expect(await demo.exited).toEqual({ code: 0, signal: null });
    expectStoppedGracefully(demo);
  }, 90_000);

  it("SIGINT to the process group of `npm start`: the demo stops gracefully and removes its folder; npm ends as its shell reports", async () => {
    demo = startDemo("npm", ["start"]);
    await demo.ready;
    process.kill(-demo.child.pid!, "SIGINT");
    const exit = await demo.exited;
    expectStoppedGracefully(demo);
    // npm runs the script through sh. bash sees the demo exit 0 and exits 0; dash (Debian's sh) got
    // the SIGINT too and re-raises it once its child has exited, whatever the child's status, and
    // npm then ends by the same signal. Either way the demo itself exited 0 (the case above).
    expect([JSON.stringify({ code: 0, signal: null }), JSON.stringify({ code: null, signal: "SIGINT" })]).toContain(JSON.stringify(exit));
  }, 90_000);

  it("Ctrl-C typed into a pseudo-terminal running `npm start` (util-linux script): the demo stops gracefully and removes its folder", async () => {
    // script runs npm in a new session on a pty and copies our stdin to it: the 0x03 byte is the
    // Ctrl-C key, and the pty's line discipline turns it into SIGINT for the foreground group.
    demo = startDemo("script", ["-qfec", "npm start", "/dev/null"], { stdin: "pipe" });
    await demo.ready;
    demo.child.stdin!.write("\x03");
    const exit = await demo.exited;
    expectStoppedGracefully(demo);
    // script -e exits with npm's status: 0, or 130 when npm ended by SIGINT (dash as sh, above).
    expect(exit.signal).toBeNull();
    expect([0, 130]).toContain(exit.code);
  }, 90_000);
});
