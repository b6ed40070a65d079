import { createServer, connect, type Server, type Socket } from "node:net";
import { DATABASE_URL } from "./stores.js";

/** A TCP proxy to the test database that a test can take down (the server "goes away") and bring back. */
export class DatabaseProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;
  private readonly target = new URL(DATABASE_URL);

  /** The test database's URL, through the proxy. */
  get url(): string {
    const url = new URL(DATABASE_URL);
    url.hostname = "127.0.0.1";
    url.port = String(this.port);
    return url.toString();
  }

  async open(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(Number(this.target.port || 5432), this.target.hostname);
      for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
        this.sockets.add(a);
        a.on("error", () => b.destroy());
        a.on("close", () => (this.sockets.delete(a), b.destroy()));
        a.pipe(b);
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.server = server;
    const address = server.address();
    if (address && typeof address === "object") this.port = address.port;
  }

  /** Refuses new connections and cuts the open ones, as a database that went down would. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
