import type { Clock } from '../clock.ts';

/** What a queued job is, for its metrics' label. */
export type HeavyKind = 'aggregate' | 'revisions' | 'export' | 'release_load';

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

interface Job {
  readonly key: string;
  readonly kind: HeavyKind;
  readonly queuedAt: number;
  start(): void;
  timer: NodeJS.Timeout;
}

/**
 * Admission for heavy work (an aggregate computed, a revisions diff, a filtered export,
 * a release loaded on demand), as Cube's query queue admits queries: at most
 * `concurrency` jobs run at once, at most `perKey` of one key's, and waiting jobs are
 * started round-robin between keys, so one key's backlog never delays another key's
 * first job by more than one job's turn. A job that waits longer than `maxWaitMs` is
 * refused (QueueFullError) without running.
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

  /** Runs `work` for `key` in its turn; rejects with QueueFullError when the turn does not come within the wait bound. */
  run<T>(key: string, kind: HeavyKind, work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const job: Job = {
        key,
        kind,
        queuedAt: this.options.clock(),
        start: () => {
          clearTimeout(job.timer);
          this.options.observe?.waited(kind, (this.options.clock() - job.queuedAt) / 1000);
          work()
            .then(resolve, reject)
            .finally(() => this.finished(key));
        },
        timer: setTimeout(() => {
          if (!this.remove(job)) return;
          reject(new QueueFullError(this.options.clock() - job.queuedAt));
        }, this.options.maxWaitMs),
      };
      const jobs = this.waiting.get(key);
      if (jobs) jobs.push(job);
      else {
        this.waiting.set(key, [job]);
        this.turns.push(key);
      }
      this.dispatch();
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
