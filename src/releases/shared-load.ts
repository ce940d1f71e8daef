import { TimeShares } from '../admission/time-shares.ts';
import type { Clock } from '../clock.ts';

/** What a caller asking for a release that is not loaded brings to its load (Releases.acquire). */
export interface LoadClaim {
  /** Ends the claim: the caller stops waiting, and the load stops once no claim is left. */
  readonly signal?: AbortSignal;
  /** Who asks (an API key's id): at most one release loads for each at a time. */
  readonly owner?: string;
  /** Told once, when the load ends, of the milliseconds of its running time that fall to this claim (TimeShares). */
  readonly charged?: (ms: number) => void;
}

interface Waiter<T> {
  readonly claim: LoadClaim;
  granted(make: () => T): void;
  failed(err: Error): void;
}

/**
 * One release load under way and the callers waiting for it. It runs only while one
 * of them waits: when the last gives up, `stop` aborts, and the load's work stops at
 * its next check (DuckDB's statement interrupted, a slice not started). Its running
 * time is split between them as they waited for it (TimeShares), and each is told its
 * share when the load ends, stopped or not: a request that left pays for the rest of
 * what it started, up to the stop.
 */
export class SharedLoad<T> {
  private readonly waiters = new Set<Waiter<T>>();
  private readonly shares: TimeShares<Waiter<T>>;
  readonly stop = new AbortController();
  /** The load's end, stopped or not (it never rejects); set by whoever starts it. */
  done: Promise<void> = Promise.resolve();

  constructor(clock: Clock) {
    this.shares = new TimeShares(clock);
  }

  /** Stopped, or being stopped: a caller waits for its end, then loads afresh. */
  get stopping(): boolean {
    return this.stop.signal.aborted;
  }

  /** Callers waiting now. */
  get waiting(): number {
    return this.waiters.size;
  }

  /** Whether `owner` waits for this load, or, as the last caller that left it, pays for it while it stops. */
  heldBy(owner: string): boolean {
    return this.shares.payers().some((waiter) => waiter.claim.owner === owner);
  }

  /** The load's work runs (its time is shared from now), or waits for its turn (it is not). */
  running(yes: boolean): void {
    if (yes) this.shares.start();
    else this.shares.pause();
  }

  /** Waits for the load: resolves with what `grant` makes for this caller, rejects with `fail`'s error or the claim's signal's reason. */
  join(claim: LoadClaim): Promise<T> {
    const { signal } = claim;
    return new Promise<T>((resolve, reject) => {
      const giveUp = () => {
        if (!this.waiters.delete(waiter)) return;
        this.shares.leave(waiter);
        // Nobody waits for it any longer: stopped now, rather than loaded for whoever might ask next.
        if (this.waiters.size === 0) this.stop.abort(signal?.reason);
        reject(signal?.reason);
      };
      const waiter: Waiter<T> = {
        claim,
        granted: (make) => {
          signal?.removeEventListener('abort', giveUp);
          resolve(make());
        },
        failed: (err) => {
          signal?.removeEventListener('abort', giveUp);
          reject(err);
        },
      };
      if (signal?.aborted) return reject(signal.reason);
      this.waiters.add(waiter);
      this.shares.join(waiter);
      signal?.addEventListener('abort', giveUp, { once: true });
    });
  }

  /** The load succeeded: each caller waiting gets what `make` makes for it. */
  grant(make: () => T): void {
    for (const waiter of this.waiters) waiter.granted(make);
  }

  fail(err: Error): void {
    for (const waiter of this.waiters) waiter.failed(err);
  }

  /** The load has ended: tells every claim, those that left included, its share of the running time. */
  settle(): void {
    for (const [waiter, ms] of this.shares.settle()) waiter.claim.charged?.(ms);
  }
}

/** `work`'s end, or the signal's reason as soon as it aborts. */
export function untilAborted(work: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return work;
  return new Promise((resolve, reject) => {
    const leave = () => reject(signal.reason);
    if (signal.aborted) return leave();
    signal.addEventListener('abort', leave, { once: true });
    void work.then(resolve, resolve).finally(() => signal.removeEventListener('abort', leave));
  });
}
