import type { SqlDb } from "../../db/sql-db.js";
import type { QueueDialect } from "./dialect.js";
import { FlowSql } from "./flow-sql.js";
import type { RetryStatement } from "./flow-retry.js";
import { JobAdmin, type AdminNotices } from "./job-admin.js";
import { KeyedSql } from "./keyed-sql.js";
import type { Job } from "../job.js";
import type { ClaimParams, ClaimResult, QueueAdmin, QueueFlowControl, QueueStore } from "./store.js";

/**
 * What both dialects' queue stores do with one SQL text (see QueueDialect): flow control, keyed
 * enqueues with a mode, and the admin operations on one job. Each dialect's store extends it with its
 * hot path (insert, its plain claim `claimDue`, settle, heartbeat, rescue), which a queue without
 * shared limits keeps using unchanged.
 */
export abstract class SharedQueueStore implements QueueFlowControl, QueueAdmin {
  protected readonly flow: FlowSql;
  private readonly keyed: KeyedSql;
  private readonly admin: JobAdmin;

  constructor(db: SqlDb, dialect: QueueDialect, retry: RetryStatement, notices?: AdminNotices) {
    this.flow = new FlowSql(db, dialect);
    this.keyed = new KeyedSql(db, dialect);
    this.admin = new JobAdmin(db, dialect, retry, notices);
  }

  countHeld(params: Parameters<QueueStore["countHeld"]>[0]) {
    return this.admin.countHeld(params);
  }

  get(params: Parameters<QueueStore["get"]>[0]) {
    return this.admin.get(params);
  }

  watch(params: Parameters<QueueStore["watch"]>[0]) {
    return this.admin.watch(params);
  }

  promote(params: Parameters<QueueStore["promote"]>[0]) {
    return this.admin.promote(params);
  }

  deleteFinished(params: Parameters<QueueStore["deleteFinished"]>[0]) {
    return this.admin.deleteFinished(params);
  }

  list(params: Parameters<QueueStore["list"]>[0]) {
    return this.admin.list(params);
  }

  setProgress(params: Parameters<QueueStore["setProgress"]>[0]) {
    return this.admin.setProgress(params);
  }

  childResults(params: Parameters<QueueStore["childResults"]>[0]) {
    return this.admin.childResults(params);
  }

  retry(params: Parameters<QueueStore["retry"]>[0]) {
    return this.admin.retry(params);
  }

  cancel(params: Parameters<QueueStore["cancel"]>[0]) {
    return this.admin.cancel(params);
  }

  insertKeyed(params: Parameters<QueueStore["insertKeyed"]>[0]) {
    return this.keyed.insertKeyed(params);
  }

  pruneKeys(params: Parameters<QueueStore["pruneKeys"]>[0]) {
    return this.keyed.pruneKeys(params);
  }

  abstract claimDue(params: Parameters<QueueStore["claimDue"]>[0]): Promise<Job[]>;

  async claim(params: ClaimParams): Promise<ClaimResult> {
    const { limits } = params;
    if (limits) return this.flow.claim({ ...params, limits });
    const jobs = await this.claimDue(params);
    // The plain claim skips a paused queue; only an empty answer needs telling apart from an empty queue.
    const paused = jobs.length === 0 && (await this.flow.isPaused(params.queue));
    return { jobs, paused, held: paused ? "paused" : null, retryAt: null, cursor: null };
  }

  takeTokens(params: Parameters<QueueStore["takeTokens"]>[0]) {
    return this.flow.takeTokens(params);
  }

  pauseBucket(params: Parameters<QueueStore["pauseBucket"]>[0]) {
    return this.flow.pauseBucket(params);
  }

  resumeBucket(params: Parameters<QueueStore["resumeBucket"]>[0]) {
    return this.flow.resumeBucket(params);
  }

  pruneBuckets(params: Parameters<QueueStore["pruneBuckets"]>[0]) {
    return this.flow.pruneBuckets(params);
  }

  bucketStates(params: Parameters<QueueStore["bucketStates"]>[0]) {
    return this.flow.bucketStates(params);
  }

  setPaused(params: Parameters<QueueStore["setPaused"]>[0]) {
    return this.flow.setPaused(params);
  }

  pauses(params: Parameters<QueueStore["pauses"]>[0]) {
    return this.flow.pauses(params);
  }

  holdSlots(params: Parameters<QueueStore["holdSlots"]>[0]) {
    return this.flow.holdSlots(params);
  }

  groupCounts(params: Parameters<QueueStore["groupCounts"]>[0]) {
    return this.flow.groupCounts(params);
  }
}
