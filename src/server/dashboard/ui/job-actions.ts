import type { JobAnswer } from "../../api/types.js";
import type { AdminApi } from "./api.js";
import { browserHref } from "./route.js";

/**
 * What an action that succeeded shows: a notice in the current view, or one in the view at `goTo`
 * (a fragment), where the dashboard then goes (a deleted job's page has nothing left to show).
 */
export type Outcome = string | { text: string; goTo: string };

/**
 * Runs an action and shows its outcome in the page's notice: `action` resolves to what is shown on
 * success; a failure is shown after `failure`. Resolves once the notice is up.
 */
export type Act = (failure: string, action: () => Promise<Outcome>) => Promise<void>;

export interface JobActions {
  retry(id: string): Promise<void>;
  cancel(id: string): Promise<void>;
  /** A pending job scheduled for later runs now. */
  promote(id: string): Promise<void>;
  /** Every failed job of the queue runs again (asked for with a confirmation). */
  retryFailed(queue: string): Promise<void>;
  /** Every pending job of the queue, due or scheduled, is cancelled (asked for with a confirmation). */
  cancelPending(queue: string): Promise<void>;
  /**
   * A finished job is deleted (asked for with a confirmation); the dashboard goes back to its
   * queue's jobs, with the notice there. Resolves to whether it was deleted.
   */
  delete(id: string, queue: string): Promise<boolean>;
}

const path = encodeURIComponent;

export function jobActions(api: AdminApi, act: Act): JobActions {
  const post = (id: string, action: "retry" | "cancel" | "promote" | "delete") => api.call<JobAnswer>("POST", `api/jobs/${path(id)}/${action}`);
  return {
    retry: (id) =>
      act(`Retrying job ${id} failed`, async () => {
        await post(id, "retry");
        return `Job ${id} is pending again.`;
      }),
    cancel: (id) =>
      act(`Cancelling job ${id} failed`, async () => {
        const { job } = await post(id, "cancel");
        return job.status === "cancelled" ? `Job ${id} is cancelled.` : `Job ${id} is ${job.status}.`;
      }),
    promote: (id) =>
      act(`Running job ${id} now failed`, async () => {
        await post(id, "promote");
        return `Job ${id} is due now.`;
      }),
    retryFailed: (queue) =>
      act(`Retrying the failed jobs of ${queue} failed`, async () => {
        const { retried } = await api.call<{ retried: number }>("POST", `api/queues/${path(queue)}/retry-failed`);
        return `${retried} failed job${retried === 1 ? "" : "s"} of ${queue} pending again.`;
      }),
    cancelPending: (queue) =>
      act(`Cancelling the pending jobs of ${queue} failed`, async () => {
        const { cancelled } = await api.call<{ cancelled: number }>("POST", `api/queues/${path(queue)}/cancel-pending`);
        return `${cancelled} pending job${cancelled === 1 ? "" : "s"} of ${queue} cancelled.`;
      }),
    delete: async (id, queue) => {
      let deleted = false;
      await act(`Deleting job ${id} failed`, async () => {
        const { job } = await post(id, "delete");
        deleted = true;
        return { text: `Job ${id} (${job.status}) is deleted.`, goTo: browserHref({ state: "all", queue }) };
      });
      return deleted;
    },
  };
}
