import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TickworkError } from "../../src/core/errors.js";
import { MissingPeerError, requirePeer } from "../../src/store/peer.js";

// The consumer projects of .ci/consumer.sh show the same through the packed tarball, with pg,
// prom-client and @hono/node-server really absent; here the loader itself, in this repository.
describe("requirePeer", () => {
  it("loads an installed peer as its CommonJS exports", () => {
    const pg = requirePeer<{ Pool: unknown; Client: unknown }>("pg", "postgres()");
    expect(typeof pg.Pool).toBe("function");
    expect(typeof pg.Client).toBe("function");
  });

  it("throws TW_MISSING_PEER naming the package, who needs it and the install command", () => {
    let thrown: unknown;
    try {
      requirePeer("tickwork-peer-that-is-not-installed", "postgres() from tickwork/postgres");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(MissingPeerError);
    expect(thrown).toBeInstanceOf(TickworkError);
    const error = thrown as MissingPeerError;
    expect(error.code).toBe("TW_MISSING_PEER");
    expect(error.packageName).toBe("tickwork-peer-that-is-not-installed");
    expect(error.message).toBe(
      'postgres() from tickwork/postgres needs the package "tickwork-peer-that-is-not-installed": install it with `npm install tickwork-peer-that-is-not-installed`',
    );
    expect((error.cause as { code?: string }).code).toBe("MODULE_NOT_FOUND");
  });

  it("rethrows a missing dependency of an installed peer as it is, not as the peer missing", () => {
    // A peer that is there but whose own dependency is not (pg without pg-types): Node's message
    // names the dependency, and its require stack names the peer's path, unquoted.
    const dir = mkdtempSync(join(tmpdir(), "tickwork-peer-"));
    try {
      const peer = join(dir, "broken-peer");
      mkdirSync(peer);
      writeFileSync(join(peer, "index.js"), 'require("tickwork-dependency-that-is-not-installed");\n');
      let thrown: unknown;
      try {
        requirePeer(peer, "a test");
      } catch (error) {
        thrown = error;
      }
      expect(thrown).not.toBeInstanceOf(MissingPeerError);
      expect((thrown as { code?: string }).code).toBe("MODULE_NOT_FOUND");
      expect((thrown as Error).message).toContain("'tickwork-dependency-that-is-not-installed'");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
