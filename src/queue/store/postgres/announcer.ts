/**
 * Announces a queue's new jobs to the workers of every process once the jobs committed, with at most
 * one announcement of a queue on its way: enqueues that commit while one is out are covered by one
 * more, sent when it is back. So a busy queue costs one notification per round trip rather than one
 * per enqueue, and a quiet queue's job is announced right after its commit, with no window to wait.
 */
export class QueueAnnouncer {
  private readonly sending = new Set<string>();
  private readonly again = new Set<string>();

  constructor(private readonly send: (queue: string) => Promise<void>) {}

  announce(queue: string): void {
    if (this.sending.has(queue)) {
      this.again.add(queue);
      return;
    }
    this.sending.add(queue);
    void this.run(queue);
  }

  private async run(queue: string): Promise<void> {
    try {
      do {
        this.again.delete(queue);
        // A lost announcement delays other processes until their poll: never worth an enqueue's error.
        await this.send(queue).catch(() => {});
      } while (this.again.has(queue));
    } finally {
      this.sending.delete(queue);
    }
  }
}
