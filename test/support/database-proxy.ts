import { createServer, connect, type Server, type Socket } from "node:net";
import { DATABASE_URL } from "./stores.js";

/** One connection through the proxy: the server's bytes, written to the client at once unless held. */
interface Link {
  client: Socket;
  held: Buffer[];
  /** The server ended the connection while its bytes were held: the client is ended after them. */
  serverEnded: boolean;
}

/**
 * A TCP proxy to the test database that a test can take down (the server "goes away") and bring back,
 * and whose server-to-client bytes it can hold and then deliver in one write, as a loaded client
 * reads whatever piled up in its socket in one go.
 */
export class DatabaseProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly links = new Set<Link>();
  private holding = false;
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
      const link: Link = { client, held: [], serverEnded: false };
      this.links.add(link);
      this.sockets.add(client).add(upstream);
      client.on("error", () => upstream.destroy());
      client.on("close", () => (this.sockets.delete(client), this.links.delete(link), upstream.destroy()));
      upstream.on("error", () => (this.holding ? (link.serverEnded = true) : client.destroy()));
      // While held, the server's end waits behind its bytes, as it would in the client's socket.
      upstream.on("close", () => (this.sockets.delete(upstream), this.holding ? (link.serverEnded = true) : client.end()));
      client.pipe(upstream);
      upstream.on("data", (bytes: Buffer) => (this.holding ? link.held.push(bytes) : client.write(bytes)));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    this.server = server;
    const address = server.address();
    if (address && typeof address === "object") this.port = address.port;
  }

  /** From now on the server's bytes wait in the proxy, until `deliver`. */
  hold(): void {
    this.holding = true;
  }

  /** The bytes held so far, of every connection. */
  held(): { bytes: Buffer; serverEnded: boolean }[] {
    return [...this.links].map((link) => ({ bytes: Buffer.concat(link.held), serverEnded: link.serverEnded }));
  }

  /** Writes each connection's held bytes in one write (and ends it if the server did); stops holding. */
  deliver(): void {
    this.holding = false;
    for (const link of this.links) {
      if (link.held.length) link.client.write(Buffer.concat(link.held));
      link.held = [];
      if (link.serverEnded) link.client.end();
    }
  }

  /** Refuses new connections and cuts the open ones, as a database that went down would. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.holding = false;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
