// A sleep that a signal cuts short, for the workers' loops (the delivery engine's, the automation executor's).

/**
 * Resolves after `ms`, or at once when `signal` aborts. The listener goes when the time is up: a loop's wake signal
 * lives until its next notify, and a listener left on it by every idle poll would pile up.
 */
export const sleepFor = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const onAbort = () => (clearTimeout(timer), resolve());
    const timer = setTimeout(() => (signal?.removeEventListener('abort', onAbort), resolve()), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
