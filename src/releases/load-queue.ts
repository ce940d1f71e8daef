import type { Database } from '../duckdb/database.ts';

type Connection = Parameters<Parameters<Database['exclusive']>[0]>[0];

/**
 * Runs release loads and drops one at a time, each on a connection of its own (a
 * load must not hold a serving connection for seconds). One at a time because the
 * loader replaces a schema of the same id and loads are memory-heavy: a drop queued
 * behind a load of the same id checks that its release is still unloaded.
 */
export class LoadQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private running = 0;

  constructor(private readonly db: Database) {}

  /** Whether work is queued or running (the pointer poll skips a beat then). */
  get busy(): boolean {
    return this.running > 0;
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    this.running++;
    const run = this.tail.then(work).finally(() => this.running--);
    this.tail = run.catch(() => {});
    return run;
  }

  /** `work` on a connection of its own, closed after, taking its turn among DuckDB's memory-heavy work (Database.exclusive); call inside `run`. */
  withConnection<T>(work: (connection: Connection) => Promise<T>): Promise<T> {
    return this.db.exclusive(work);
  }

  /** Settles when everything queued so far has run. */
  drained(): Promise<void> {
    return this.tail.then(() => {});
  }
}
