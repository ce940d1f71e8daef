import { LRUCache } from 'lru-cache';
import { DeadlineError } from '../admission/queue.ts';
import { TimeShares } from '../admission/time-shares.ts';
import type { Clock } from '../clock.ts';

/** A caller waiting for a computation: each keeps its own deadline and pays its own share. */
export interface KeptCaller {
  /** Its own: it stops waiting when this aborts (its client gone). */
  readonly signal: AbortSignal;
  /**
   * Longest it waits once the computation runs, counted from the computation's turn,
   * or from its own arrival when it came later; past it, it stops waiting with a
   * DeadlineError of this many milliseconds.
   */
  readonly deadlineMs?: number;
  /** Told once, when the computation ends, of the milliseconds of its running time that fall to this caller (TimeShares). */
  readonly charged?: (ms: number) => void;
}

/** Computes a result: `stop` aborts when it is to stop; `running` is called at its turn, when its time starts to count. */
export type Compute<T> = (stop: AbortSignal, running: () => void) => Promise<T>;

interface Entry<T> {
  readonly releases: readonly string[];
  /** Settles once: the computation every caller of this key shares. */
  result: Promise<T>;
  settled: boolean;
  /** Whether the computation has had its turn: callers' deadlines count from then. */
  running: boolean;
  /** Starts the deadlines of the callers waiting for the computation's turn. */
  readonly onTurn: Set<() => void>;
  readonly shares: TimeShares<KeptCaller>;
  /** Stops the computation: aborted when every caller waiting for it has gone. */
  readonly stop: AbortController;
  /** Callers waiting for the computation now. */
  waiting: number;
  /** Callers using the result now; an entry evicted meanwhile is disposed by the last of them. */
  users: number;
  evicted: boolean;
  /** The settled result's size, for the LRU's accounting. */
  size: number;
  /** Settles once what the result holds outside the heap is released. */
  released?: Promise<void>;
}

/**
 * Query results kept whole, so every page of one walk slices the same result:
 * walking all the pages of an aggregate (or of a revisions diff) computes it once
 * per release, not once per page. Identical requests arriving together share one
 * computation. Bounded in bytes; a result evicted mid-walk is computed again, to the
 * same rows in the same order, so its cursors stay good.
 *
 * A caller holds a result explicitly while it reads it (`read`): a result that owns
 * something outside the heap (a revisions diff's DuckDB table) is disposed only
 * when it has been evicted and no caller is reading it.
 *
 * A caller that is cancelled while the result is computed, or whose own deadline
 * passes, stops waiting at once; when the last one waiting has gone, the computation
 * is stopped through its signal, and nothing is kept of it. So a computation runs
 * until the last deadline of those waiting for it, and each caller's time out is its
 * own. Its running time is split between the callers as they waited for it.
 */
export class KeptResults<T> {
  private readonly kept: LRUCache<string, Entry<T>>;
  private readonly running = new Map<string, Entry<T>>();

  constructor(
    private readonly options: {
      maxBytes: number;
      sizeOf: (result: T) => number;
      /** Called once per computation actually run (the metric that proves the above). */
      counted: () => void;
      clock: Clock;
      /** Releases what a result holds outside the heap, once it is neither kept nor read; settles once it is released. */
      dispose?: (result: T) => Promise<void>;
      /**
       * Whether what the results hold outside the heap is over the bound on its own
       * (DuckDB's spill folder on disk, which the sizes above cannot see): after each
       * computation, the least recently used result is dropped until it is not.
       */
      overBound?: () => Promise<boolean>;
    },
  ) {
    this.kept = new LRUCache({
      maxSize: Math.max(1, options.maxBytes),
      sizeCalculation: (entry) => Math.max(1, entry.size),
      dispose: (entry) => {
        entry.evicted = true;
        if (entry.users === 0) this.disposeEntry(entry);
      },
    });
  }

  /** Whether the result under `key` is kept: reading it computes nothing. */
  has(key: string): boolean {
    return this.kept.has(key);
  }

  /**
   * Runs `use` on the result kept under `key` (canonical: releases, dataset, filters,
   * shape), computed now if there is none, holding it until `use` settles. Rejects
   * as `caller` stops waiting: with its signal's reason, or a DeadlineError.
   */
  async read<R>(
    key: string,
    releases: readonly string[],
    compute: Compute<T>,
    use: (result: T) => R | Promise<R>,
    caller: KeptCaller,
  ): Promise<R> {
    const entry = this.kept.get(key) ?? this.running.get(key) ?? this.start(key, releases, compute);
    // Counted before any await: nothing can dispose the result between here and `use`.
    entry.users++;
    try {
      return await use(await this.waitFor(key, entry, caller));
    } finally {
      entry.users--;
      if (entry.evicted && entry.users === 0) this.disposeEntry(entry);
    }
  }

  private async waitFor(key: string, entry: Entry<T>, caller: KeptCaller): Promise<T> {
    if (entry.settled) return entry.result;
    const { signal, deadlineMs } = caller;
    let left: unknown;
    entry.waiting++;
    entry.shares.join(caller);
    try {
      return await new Promise<T>((resolve, reject) => {
        let timer: NodeJS.Timeout | undefined;
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', gone);
          entry.onTurn.delete(startDeadline);
        };
        const leave = (reason: unknown) => {
          done();
          left = reason;
          reject(reason);
        };
        const gone = () => leave(signal.reason);
        const startDeadline = () => {
          if (deadlineMs !== undefined) timer = setTimeout(() => leave(new DeadlineError(deadlineMs)), deadlineMs);
        };
        if (signal.aborted) return gone();
        signal.addEventListener('abort', gone, { once: true });
        if (entry.running) startDeadline();
        else entry.onTurn.add(startDeadline);
        entry.result.then(resolve, reject).finally(done);
      });
    } finally {
      entry.waiting--;
      entry.shares.leave(caller);
      if (entry.waiting === 0 && !entry.settled) {
        // Nobody waits for it any more: a later caller starts afresh.
        if (this.running.get(key) === entry) this.running.delete(key);
        entry.stop.abort(left);
      }
    }
  }

  private start(key: string, releases: readonly string[], compute: Compute<T>): Entry<T> {
    this.options.counted();
    const stop = new AbortController();
    const entry: Entry<T> = {
      releases,
      result: Promise.resolve(undefined as T),
      settled: false,
      running: false,
      onTurn: new Set(),
      shares: new TimeShares(this.options.clock),
      stop,
      waiting: 0,
      users: 0,
      evicted: false,
      size: 1,
    };
    const running = () => {
      entry.running = true;
      entry.shares.start();
      for (const startDeadline of entry.onTurn) startDeadline();
      entry.onTurn.clear();
    };
    entry.result = compute(stop.signal, running);
    this.running.set(key, entry);
    const settle = () => {
      entry.settled = true;
      for (const [caller, ms] of entry.shares.settle()) caller.charged?.(ms);
    };
    entry.result.then(
      (result) => {
        settle();
        if (stop.signal.aborted) {
          // Finished as it was stopped: nobody asked for it, so it is not kept.
          void this.options.dispose?.(result);
          return;
        }
        this.running.delete(key);
        entry.size = this.options.sizeOf(result);
        this.kept.set(key, entry);
        // Too large to keep at all: the LRU refuses it without disposing it; its readers (one at least) do.
        if (this.kept.peek(key) !== entry) entry.evicted = true;
      },
      () => {
        settle();
        if (this.running.get(key) === entry) this.running.delete(key);
      },
    );
    void entry.result.then(
      () => this.trim(),
      () => this.trim(),
    );
    return entry;
  }

  private disposeEntry(entry: Entry<T>): Promise<void> {
    const { dispose } = this.options;
    if (!dispose) return Promise.resolve();
    // Disposed once: only a settled result owns anything.
    entry.evicted = false;
    entry.released = entry.result.then(dispose, () => {});
    return entry.released;
  }

  private trimming = false;

  /** Drops the least recently used results while `overBound` says so, each released before the bound is read again. */
  private async trim(): Promise<void> {
    const { overBound } = this.options;
    if (!overBound || this.trimming) return;
    this.trimming = true;
    try {
      while (this.kept.size > 0 && (await overBound())) {
        // Disposed by the LRU as it goes, unless it is being read: then its last reader releases it.
        await this.kept.pop()!.released;
      }
    } finally {
      this.trimming = false;
    }
  }

  /** Forgets the results read from a release that can no longer be asked for (`readable` false). */
  forgetUnless(readable: (release: string) => boolean): void {
    for (const [key, { releases }] of [...this.kept.entries()]) if (!releases.every(readable)) this.kept.delete(key);
  }
}
