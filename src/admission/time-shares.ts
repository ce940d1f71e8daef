import type { Clock } from '../clock.ts';

/**
 * The running time of heavy work that several requests wait for together (a release
 * loaded for them, a result identical requests compute once), split between those
 * requests, so that each key pays for what it waited for and no more (docs/api.md
 * "Heavy requests"): each stretch of time goes in equal parts to the requests waiting
 * during it. What runs after the last one left, until the work has actually stopped
 * (a DuckDB statement interrupted, a slice finished), goes to that last one: it is
 * what its leaving cost. Time counts while the work runs (`start`), not while it waits its turn (`pause`).
 */
export class TimeShares<W> {
  private readonly shares = new Map<W, number>();
  private readonly present = new Set<W>();
  private last: W | undefined;
  private since: number | undefined;

  constructor(private readonly clock: Clock) {}

  /** The work starts running: time counts from now. */
  start(): void {
    this.since = this.clock();
  }

  /** The work waits (for a turn): time stops counting until it starts again. */
  pause(): void {
    this.accrue();
    this.since = undefined;
  }

  join(waiter: W): void {
    this.accrue();
    this.present.add(waiter);
    if (!this.shares.has(waiter)) this.shares.set(waiter, 0);
  }

  leave(waiter: W): void {
    this.accrue();
    this.present.delete(waiter);
    if (this.present.size === 0) this.last = waiter;
  }

  /** Who the time counts for now: the requests waiting, else the last one that left. */
  payers(): W[] {
    if (this.present.size > 0) return [...this.present];
    return this.last === undefined ? [] : [this.last];
  }

  /** The work has ended: every request's share of it, in milliseconds, those that left included. */
  settle(): ReadonlyMap<W, number> {
    this.pause();
    return this.shares;
  }

  private accrue(): void {
    if (this.since === undefined) return;
    const now = this.clock();
    const payers = this.payers();
    for (const waiter of payers) this.shares.set(waiter, this.shares.get(waiter)! + (now - this.since) / payers.length);
    this.since = now;
  }
}
