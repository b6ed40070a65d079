import { useCallback, useEffect, useRef, useState } from "preact/hooks";

export interface Live<T> {
  /** The latest answer for the current key; null until the first one. */
  data: T | null;
  /** Why the last load failed; null when it succeeded. */
  error: unknown;
  /** Loads again now (after an action); resolves once the answer is shown. */
  reload: () => Promise<void>;
}

/**
 * What `load` answers for `key`, loaded at once, then again every `refreshMs` while the tab is
 * visible, as the overview is. A new key (another filter, another page) drops the old answer; an
 * answer that comes back after a newer one, or for a key no longer shown, is dropped too.
 */
export function useLive<T>(key: string, load: () => Promise<T>, refreshMs: number): Live<T> {
  const [state, setState] = useState<{ key: string; data: T | null; error: unknown }>({ key, data: null, error: null });
  const loadRef = useRef(load);
  loadRef.current = load;
  const keyRef = useRef(key);
  keyRef.current = key;
  const asked = useRef(0);
  const shown = useRef(0);

  const reload = useCallback(async () => {
    const forKey = keyRef.current;
    const seq = ++asked.current;
    const current = () => keyRef.current === forKey && seq > shown.current;
    try {
      const data = await loadRef.current();
      if (!current()) return;
      shown.current = seq;
      setState({ key: forKey, data, error: null });
    } catch (error) {
      if (!current()) return;
      shown.current = seq;
      setState((s) => ({ key: forKey, data: s.key === forKey ? s.data : null, error }));
    }
  }, []);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const loop = async () => {
      if (document.visibilityState === "visible") await reload();
      if (!stopped) timer = setTimeout(loop, refreshMs);
    };
    const onVisible = () => {
      if (document.visibilityState === "visible") void reload();
    };
    void loop();
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, [key, refreshMs, reload]);

  return state.key === key ? { data: state.data, error: state.error, reload } : { data: null, error: null, reload };
}
