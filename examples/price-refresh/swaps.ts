import type { AppDatabase } from "./database.js";
import { GET_CURSOR, INSERT_REPORTED_SWAP, LIST_SWAPS } from "./sql.js";
import { SWEEP_ID } from "./tasks.js";

/** The swaps table and the sweep's cursor as the rest of the app (and the tests) see them. */

export interface ReportedSwap {
  txId: string;
  agent: string;
  tokenIn: string;
  tokenOut: string;
  amountIn: number;
  /** Default "agent". */
  source?: "agent" | "manual";
}

export interface SwapRow {
  txId: string;
  agent: string;
  tokenIn: string;
  tokenOut: string;
  amountIn: number;
  source: "agent" | "manual";
  status: "pending" | "confirmed" | "rejected";
  blockHeight: number | null;
  recordedAt: number;
}

/** The request path: an agent reports a swap it just sent; the sweep confirms or rejects it once it is in a block. */
export async function reportSwaps(db: AppDatabase, swaps: readonly ReportedSwap[], now: number): Promise<void> {
  await db.transaction(swaps.map((s) => ({ sql: INSERT_REPORTED_SWAP, params: [s.txId, s.agent, s.tokenIn, s.tokenOut, s.amountIn, s.source ?? "agent", now] })));
}

export async function listSwaps(db: AppDatabase): Promise<SwapRow[]> {
  const rows = await db.query<{
    tx_id: string; agent: string; token_in: string; token_out: string; amount_in: number | string;
    source: SwapRow["source"]; status: SwapRow["status"]; block_height: number | string | null; recorded_at: number | string;
  }>(LIST_SWAPS);
  return rows.map((r) => ({
    txId: r.tx_id,
    agent: r.agent,
    tokenIn: r.token_in,
    tokenOut: r.token_out,
    amountIn: Number(r.amount_in),
    source: r.source,
    status: r.status,
    blockHeight: r.block_height === null ? null : Number(r.block_height),
    recordedAt: Number(r.recorded_at),
  }));
}

/** The sweep's cursor in `competition_state`, or null before its first run. */
export async function sweepCursor(db: AppDatabase): Promise<number | null> {
  const [row] = await db.query<{ last_block_height: number | string }>(GET_CURSOR, [SWEEP_ID]);
  return row ? Number(row.last_block_height) : null;
}
