/**
 * SIGTERM and SIGINT of a bridge process, caught from the moment `start` begins. A process that has
 * no listener for a signal is ended by it at once (exit by signal, no cleanup): a signal that
 * arrives while the process is still starting, or the instant after it said it started, must
 * instead stop it like any other, with exit 0.
 */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT"];

export interface StopSignals {
  /** The first stop signal, once one arrived. */
  readonly received: NodeJS.Signals | undefined;
  /** Resolves with the first stop signal (at once if it arrived already). */
  readonly next: Promise<NodeJS.Signals>;
}

/**
 * Listens for SIGTERM and SIGINT until the first of them arrives. Only the first is caught: a second
 * signal, during the shutdown the first began, gets the default action (the process ends at once),
 * which is how an operator stops a shutdown that hangs. The listeners do not keep the process alive.
 */
export function catchStopSignals(): StopSignals {
  let received: NodeJS.Signals | undefined;
  let resolveNext: (signal: NodeJS.Signals) => void = () => {};
  const next = new Promise<NodeJS.Signals>((resolve) => {
    resolveNext = resolve;
  });
  const onSignal = (signal: NodeJS.Signals) => {
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
    received = signal;
    resolveNext(signal);
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  return {
    get received() {
      return received;
    },
    next,
  };
}
