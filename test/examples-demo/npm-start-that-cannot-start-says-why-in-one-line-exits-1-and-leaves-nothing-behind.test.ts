import { createServer, type Server } from "node:http";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startDemo, type DemoProcess } from "./support/demo-process.js";

/**
 * `npm start` that cannot start: one line saying why, exit code 1, and nothing left running or on
 * disk. A port in use is found before anything starts (no fake upstream, no engine, no temporary
 * folder), instead of a stack trace after every upstream had started.
 */
describe("npm start that cannot start", () => {
  let holder: Server | undefined;
  let demo: DemoProcess | undefined;
  let temp: string | undefined;
  afterEach(async () => {
    demo?.killGroup();
    demo = undefined;
    await new Promise<void>((resolve) => (holder ? holder.close(() => resolve()) : resolve()));
    holder = undefined;
    if (temp) rmSync(temp, { recursive: true, force: true });
    temp = undefined;
  });

  it("on a port that is taken: one line naming the port, exit 1, and no folder made", async () => {
    holder = createServer((_req, res) => res.end("someone else's server"));
    await new Promise<void>((resolve) => holder!.listen(0, "127.0.0.1", resolve));
    const port = (holder.address() as AddressInfo).port;
    // The demo's temporary folder would be made under TMPDIR: a folder of this test's own.
    temp = mkdtempSync(join(tmpdir(), "tickwork-demo-port-test-"));

    demo = startDemo("npm", ["start"], { env: { PORT: String(port), TMPDIR: temp } });
    const exit = await demo.exited;
    const lines = demo.lines();

    expect(exit).toEqual({ code: 1, signal: null });
    const ours = lines.filter((line) => line.startsWith("tickwork demo:"));
    expect(ours).toEqual([`tickwork demo: port ${port} on 127.0.0.1 is in use; stop what holds it, or run with PORT=<another port> (PORT=0 picks a free one)`]);
    expect(lines.join("\n")).not.toMatch(/^\s+at /m);
    expect(lines.join("\n")).not.toMatch(/dashboard|payment provider|engine started/);
    expect(readdirSync(temp).filter((name) => name.startsWith("tickwork-demo-"))).toEqual([]);
    // The holder was left alone.
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe("someone else's server");
  }, 90_000);

  it("a start that fails after the folder was made (a database it cannot open) is one line and exit 1, and removes the folder", async () => {
    temp = mkdtempSync(join(tmpdir(), "tickwork-demo-port-test-"));
    demo = startDemo(process.execPath, ["--import", "tsx", "examples/demo/main.ts", "--db", join(temp, "no-such-dir", "demo.db")], { env: { TMPDIR: temp } });
    expect(await demo.exited).toEqual({ code: 1, signal: null });
    const lines = demo.lines().filter((line) => line !== "");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^tickwork demo: could not start: .*director/);
    expect(readdirSync(temp).filter((name) => name.startsWith("tickwork-demo-"))).toEqual([]);
  }, 60_000);

  it("a PORT that is not a port number is one line and exit 1 too", async () => {
    demo = startDemo(process.execPath, ["--import", "tsx", "examples/demo/main.ts"], { env: { PORT: "80a" } });
    expect(await demo.exited).toEqual({ code: 1, signal: null });
    expect(demo.lines().filter((line) => line !== "")).toEqual(['tickwork demo: PORT must be a port number from 0 to 65535, got "80a"']);
  }, 60_000);
});
