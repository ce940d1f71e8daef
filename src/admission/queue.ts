import type { Clock } from '../clock.ts';

/** What a queued job is, for its metrics' label. */
export type HeavyKind = 'aggregate' | 'revisions' | 'history' | 'export' | 'facets' | 'release_load';

export interface AdmissionOptions {
  /** Heavy jobs running at once, across every key (ADMISSION_CONCURRENCY). */
  readonly concurrency: number;
  /** Heavy jobs one key may have running at once (ADMISSION_PER_KEY); its others wait. */
  readonly perKey: number;
  /** Longest a job waits for its turn before it is refused (ADMISSION_WAIT_MS). */
  readonly maxWaitMs: number;
  readonly clock: Clock;
  /** Told of every admitted job's wait. */
  readonly observe?: { waited(kind: HeavyKind, seconds: number): void };
}

/** A job that waited longer than the bound for its turn: the caller answers 503 busy. */
export class QueueFullError extends Error {
  constructor(readonly waitedMs: number) {
    super(`waited ${waitedMs} ms for a turn`);
  }
}

/** A job that ran past its deadline: its signal aborted with this, and its turn was let go. */
export class DeadlineError extends Error {
  constructor(readonly deadlineMs: number) {
    super(`ran past its deadline of ${deadlineMs} ms`);
  }
}

export interface RunOptions {
  /** Cancels the job: dropped while it waits; while it runs, its own signal aborts with this one's reason. */
  readonly signal?: AbortSignal;
  /** Longest the job may run once started; past it, its signal aborts with a DeadlineError. */
  readonly deadlineMs?: number;
  /** False: the job waits as long as its turn takes and is never refused (the rest of a response already started). */
  readonly refusable?: boolean;
}

interface Job {
  readonly key: string;
  readonly kind: HeavyKind;
  readonly queuedAt: number;
  start(): void;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Admission for heavy work (an aggregate computed, a revisions diff, a filtered export,
 * a release loaded on demand), as Cube's query queue admits queries: at most
 * `concurrency` jobs run at once, at most `perKey` of one key's, and waiting jobs are
 * started round-robin between keys, so one key's backlog never delays another key's
 * first job by more than one job's turn. A job that waits longer than `maxWaitMs` is
 * refused (QueueFullError) without running.
 *
 * A job is cancelled by its caller's signal, or by its deadline once it runs. Either
 * way its caller is answered and its turn let go at once; the work is told through
 * the signal it was given, and stops at its next check (a DuckDB statement
 * interrupted, a slice not started).
 */
export class Admission {
  private readonly waiting = new Map<string, Job[]>();
  /** Keys with jobs waiting, in the order they take turns; the first is next. */
  private readonly turns: string[] = [];
  private readonly running = new Map<string, number>();
  private runningTotal = 0;

  constructor(private readonly options: AdmissionOptions) {}

  /** The wait bound (ADMISSION_WAIT_MS). */
  get maxWaitMs(): number {
    return this.options.maxWaitMs;
  }

  /** Heavy jobs one key may have running at once (ADMISSION_PER_KEY). */
  get perKey(): number {
    return this.options.perKey;
  }

  /** Jobs of `key` running now (GET /v1/usage). */
  runningFor(key: string): number {
    return this.running.get(key) ?? 0;
  }

  /** Jobs waiting for a turn, across keys. */
  get queued(): number {
    let n = 0;
    for (const jobs of this.waiting.values()) n += jobs.length;
    return n;
  }

  /** Jobs running now. */
  get active(): number {
    return this.runningTotal;
  }

  /**
   * Runs `work` for `key` in its turn, with a signal that aborts when the job is
   * cancelled; rejects with QueueFullError when the turn does not come within the
   * wait bound, with the caller's signal's reason when it cancels the job, and with a
   * DeadlineError past the deadline.
   */
  run<T>(key: string, kind: HeavyKind, work: (signal: AbortSignal) => Promise<T>, options: RunOptions = {}): Promise<T> {
    const { signal, deadlineMs, refusable = true } = options;
    return new Promise<T>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const dropWaiting = () => {
        if (!this.remove(job)) return;
        clearTimeout(job.timer);
        reject(signal!.reason);
      };
      const job: Job = {
        key,
        kind,
        queuedAt: this.options.clock(),
        start: () => {
          clearTimeout(job.timer);
          signal?.removeEventListener('abort', dropWaiting);
          this.options.observe?.waited(kind, (this.options.clock() - job.queuedAt) / 1000);
          this.started(key, work, { signal, deadlineMs }).then(resolve, reject);
        },
        timer: refusable
          ? setTimeout(() => {
              if (!this.remove(job)) return;
              signal?.removeEventListener('abort', dropWaiting);
              reject(new QueueFullError(this.options.clock() - job.queuedAt));
            }, this.options.maxWaitMs)
          : undefined,
      };
      signal?.addEventListener('abort', dropWaiting, { once: true });
      const jobs = this.waiting.get(key);
      if (jobs) jobs.push(job);
      else {
        this.waiting.set(key, [job]);
        this.turns.push(key);
      }
      this.dispatch();
    });
  }

  /** Runs a job given its turn; the turn is let go when the work settles or the job is cancelled, whichever is first. */
  private started<T>(key: string, work: (signal: AbortSignal) => Promise<T>, { signal, deadlineMs }: RunOptions): Promise<T> {
    const own = new AbortController();
    const cancel = () => own.abort(signal!.reason);
    signal?.addEventListener('abort', cancel, { once: true });
    const deadline = deadlineMs === undefined ? undefined : setTimeout(() => own.abort(new DeadlineError(deadlineMs)), deadlineMs);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      signal?.removeEventListener('abort', cancel);
      this.finished(key);
    };
    return new Promise<T>((resolve, reject) => {
      own.signal.addEventListener(
        'abort',
        () => {
          finish();
          reject(own.signal.reason);
        },
        { once: true },
      );
      if (signal?.aborted) return cancel();
      // Started a microtask later, so that work throwing before its first await still lets go of the turn.
      Promise.resolve()
        .then(() => work(own.signal))
        .then(resolve, reject)
        .finally(finish);
    });
  }

  private finished(key: string): void {
    this.runningTotal--;
    const left = this.running.get(key)! - 1;
    if (left > 0) this.running.set(key, left);
    else this.running.delete(key);
    this.dispatch();
  }

  /** Starts waiting jobs while there is room: each key in turn gets one, then goes to the back. */
  private dispatch(): void {
    let skipped = 0;
    while (this.runningTotal < this.options.concurrency && skipped < this.turns.length) {
      const key = this.turns.shift()!;
      if ((this.running.get(key) ?? 0) >= this.options.perKey) {
        this.turns.push(key);
        skipped++;
        continue;
      }
      skipped = 0;
      const jobs = this.waiting.get(key)!;
      const job = jobs.shift()!;
      if (jobs.length > 0) this.turns.push(key);
      else this.waiting.delete(key);
      this.runningTotal++;
      this.running.set(key, (this.running.get(key) ?? 0) + 1);
      job.start();
    }
  }

  private remove(job: Job): boolean {
    const jobs = this.waiting.get(job.key);
    const at = jobs?.indexOf(job) ?? -1;
    if (!jobs || at < 0) return false;
    jobs.splice(at, 1);
    if (jobs.length === 0) {
      this.waiting.delete(job.key);
      this.turns.splice(this.turns.indexOf(job.key), 1);
    }
    return true;
  }
}
