/** The little of Node's `process` that graceful shutdown needs, read from the global so the core imports nothing. */
interface ProcessLike {
  pid: number;
  once(signal: string, listener: () => void): unknown;
  off(signal: string, listener: () => void): unknown;
  listenerCount(signal: string): number;
  kill(pid: number, signal: string): unknown;
}

const SIGNALS = ["SIGTERM", "SIGINT"] as const;

/**
 * Runs `shutdown` on SIGTERM or SIGINT, then re-raises the signal if nobody else listens for it, so
 * the process ends as it would have without tickwork. Where there is no `process` (workerd), does
 * nothing: that runtime ends work its own way.
 */
export function onShutdownSignal(shutdown: () => Promise<void>): () => void {
  const proc = (globalThis as { process?: Partial<ProcessLike> }).process;
  if (!proc || typeof proc.once !== "function" || typeof proc.off !== "function") return () => {};
  const p = proc as ProcessLike;
  const listeners = SIGNALS.map((signal) => {
    const listener = () => {
      remove();
      void shutdown().finally(() => {
        if (p.listenerCount(signal) === 0) p.kill(p.pid, signal);
      });
    };
    p.once(signal, listener);
    return [signal, listener] as const;
  });
  const remove = () => listeners.forEach(([signal, listener]) => p.off(signal, listener));
  return remove;
}
