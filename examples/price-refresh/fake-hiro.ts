import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A tiny chain API for the competition sweep, over real HTTP on 127.0.0.1. Shaped for this example
 * (Hiro's real API pages differently): `GET /extended/v2/blocks?after_height=H&limit=N` answers the
 * blocks above `H`, oldest first, with their transactions, and the chain's tip. Blocks are added by
 * the test or the demo. A failure switch answers 5xx or 429 instead.
 */

export interface ChainSwap {
  token_in: string;
  token_out: string;
  amount_in: number;
}

export interface ChainTx {
  tx_id: string;
  sender_address: string;
  /** As Hiro reports it: "success", or why the transaction failed on chain. */
  tx_status: "success" | "abort_by_response" | "abort_by_post_condition";
  /** The swap a DEX contract call made; null for any other transaction. */
  swap: ChainSwap | null;
}

export interface ChainBlock {
  height: number;
  txs: ChainTx[];
}

export interface FakeHiro {
  readonly url: string;
  readonly tip: number;
  /** Query strings of the block requests, in order (`after_height=3&limit=20`). */
  readonly requests: readonly string[];
  /**
   * The chain already has `height` blocks that are not served: the next block added is `height + 1`.
   * For a demo on a database whose sweep scanned an earlier run's chain. Only before the first block.
   */
  startAbove(height: number): void;
  /** Appends a block with these transactions; returns its height. */
  addBlock(txs: ChainTx[]): number;
  /** Answers `status` (503, or 429 with `Retry-After: retryAfter` seconds); `null` turns it off. */
  setFailure(failure: { status: number; retryAfter?: number } | null): void;
  close(): Promise<void>;
}

/** A transaction id as Stacks writes them: 0x and 64 hex digits. */
export function txId(): string {
  return `0x${randomBytes(32).toString("hex")}`;
}

export function swapTx(sender: string, swap: ChainSwap, status: ChainTx["tx_status"] = "success", id = txId()): ChainTx {
  return { tx_id: id, sender_address: sender, tx_status: status, swap };
}

export function transferTx(sender: string): ChainTx {
  return { tx_id: txId(), sender_address: sender, tx_status: "success", swap: null };
}

export async function startFakeHiro(): Promise<FakeHiro> {
  let startHeight = 0;
  const blocks: ChainBlock[] = [];
  const requests: string[] = [];
  let failure: { status: number; retryAfter?: number } | null = null;

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    res.setHeader("x-request-id", randomBytes(8).toString("hex"));
    if (req.method !== "GET" || url.pathname !== "/extended/v2/blocks") {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not found" }));
      return;
    }
    requests.push(url.search.slice(1));
    if (failure) {
      if (failure.retryAfter !== undefined) res.setHeader("retry-after", String(failure.retryAfter));
      res.writeHead(failure.status, { "content-type": "application/json" }).end(JSON.stringify({ error: `failing with ${failure.status}` }));
      return;
    }
    const after = Number(url.searchParams.get("after_height") ?? 0);
    const limit = Math.min(50, Math.max(1, Number(url.searchParams.get("limit") ?? 20)));
    const results = blocks.filter((b) => b.height > after).slice(0, limit);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ tip_height: startHeight + blocks.length, limit, results }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    get tip() {
      return startHeight + blocks.length;
    },
    requests,
    addBlock(txs) {
      const height = startHeight + blocks.length + 1;
      blocks.push({ height, txs });
      return height;
    },
    startAbove(height) {
      if (blocks.length > 0) throw new Error("startAbove: the chain already has blocks");
      startHeight = height;
    },
    setFailure: (f) => void (failure = f),
    close() {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
