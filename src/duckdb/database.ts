import fs from 'node:fs/promises';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance, type DuckDBPreparedStatement } from '@duckdb/node-api';
import { LRUCache } from 'lru-cache';

/**
 * One connection with its own prepared statements. A connection runs one query at
 * a time and a prepared statement holds its bindings, so neither is ever shared
 * between two requests in flight: the pool hands a lease to one caller at a time.
 */
export class Lease {
  private readonly statements: LRUCache<string, DuckDBPreparedStatement>;

  constructor(readonly connection: DuckDBConnection) {
    // Filter shapes (which dimensions, how many values each) bound the distinct SQL
    // texts; the cap keeps a client that tries every shape from growing memory.
    this.statements = new LRUCache({ max: 256, dispose: (statement) => statement.destroySync() });
  }

  /** Runs SQL whose parameters are all integers, reusing the prepared statement. */
  async queryInts(sql: string, params: readonly number[]) {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = await this.connection.prepare(sql);
      this.statements.set(sql, statement);
    }
    // Bound as INTEGER, not inferred as DOUBLE: a DOUBLE parameter would cast the
    // integer columns it meets and keep DuckDB from skipping row groups on `rid`.
    for (const [i, value] of params.entries()) statement.bindInteger(i + 1, value);
    // Materialized: its chunks are then read synchronously, without further trips
    // to the thread pool.
    return statement.run();
  }

  close(): void {
    this.statements.clear();
    this.connection.closeSync();
  }
}

/** Where the pool reports its timings (the service's metrics); tests and benches may omit it. */
export interface PoolTimings {
  waited(seconds: number): void;
  held(seconds: number): void;
}

const noTimings: PoolTimings = { waited() {}, held() {} };

export const SERVING_CATALOG = 'serving';

/**
 * `run` on `connection`, whose running statement is interrupted when `signal` aborts;
 * it then rejects with the signal's reason, not DuckDB's "Interrupted".
 */
async function interruptible<T>(connection: DuckDBConnection, signal: AbortSignal | undefined, run: () => Promise<T>): Promise<T> {
  if (!signal) return run();
  const stop = () => connection.interrupt();
  signal.addEventListener('abort', stop, { once: true });
  try {
    return await run();
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    throw err;
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

/** `work`'s outcome, or the signal's reason as soon as it aborts (the work settles on its own). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const leave = () => reject(signal.reason);
    if (signal.aborted) leave();
    else signal.addEventListener('abort', leave, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', leave));
  });
}

/** DuckDB refused a query past its memory limit (DUCKDB_MEMORY_LIMIT): a matter of load, not of the query. */
export const isOutOfMemory = (err: unknown): boolean => err instanceof Error && err.message.startsWith('Out of Memory Error');
const ROW_GROUP_SIZE = 16_384;

export class Database {
  private readonly idle: Lease[] = [];
  /** Work units run on the pool since start: how tests see that a request never reached DuckDB. */
  private used = 0;
  private readonly waiting: Array<(lease: Lease) => void> = [];

  private constructor(
    readonly instance: DuckDBInstance,
    private readonly leases: Lease[],
    private readonly timings: PoolTimings,
    private readonly tempDirectory: string | undefined,
  ) {
    this.idle.push(...leases);
  }

  /**
   * `memoryLimit` bounds DuckDB's own memory (loading sorts whole datasets; past the
   * limit a sort spills to `tempDirectory`). Each process needs its own folder: two
   * instances must not share spill files.
   */
  static async open(options: {
    connections: number;
    threads: number;
    memoryLimit?: string;
    tempDirectory?: string;
    timings?: PoolTimings;
  }): Promise<Database> {
    const instance = await DuckDBInstance.create(':memory:', {
      threads: String(options.threads),
      ...(options.memoryLimit ? { memory_limit: options.memoryLimit } : {}),
      ...(options.tempDirectory ? { temp_directory: options.tempDirectory } : {}),
      // Serving depends on scans returning rows in insertion (= serving) order, so
      // a LIMIT stops at the first matching rows instead of sorting all of them.
      preserve_insertion_order: 'true',
      // DuckDB's allocator keeps what a task freed for the next one: after a release
      // loads, memory that serving never asks for again. Returned to the system after
      // any task that peaked above 1 MB, by DuckDB's own background threads.
      allocator_flush_threshold: '1MB',
      allocator_background_threads: 'true',
    });
    const setup = await instance.connect();
    // Served tables live in their own in-memory catalog with small row groups: a
    // keyset page skips whole row groups before the cursor, so the smaller they
    // are, the less a late page scans that an early one does not. COMPRESS lets a
    // checkpoint compress them (the loader runs one), to a small part of their size.
    await setup.run(`ATTACH ':memory:' AS ${SERVING_CATALOG} (ROW_GROUP_SIZE ${ROW_GROUP_SIZE}, COMPRESS)`);
    setup.closeSync();
    const leases: Lease[] = [];
    for (let i = 0; i < options.connections; i++) leases.push(new Lease(await instance.connect()));
    return new Database(instance, leases, options.timings ?? noTimings, options.tempDirectory);
  }

  /**
   * Runs `work` on a free connection, queueing the caller only when all are busy.
   * `signal` cancels it: dropped from the queue, or its statement interrupted.
   */
  async use<T>(work: (lease: Lease) => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    this.used++;
    const asked = performance.now();
    const lease = this.idle.pop() ?? (await this.nextLease(signal));
    const got = performance.now();
    this.timings.waited((got - asked) / 1000);
    try {
      return await interruptible(lease.connection, signal, () => work(lease));
    } finally {
      this.timings.held((performance.now() - got) / 1000);
      const next = this.waiting.shift();
      if (next) next(lease);
      else this.idle.push(lease);
    }
  }

  private nextLease(signal: AbortSignal | undefined): Promise<Lease> {
    return new Promise<Lease>((resolve, reject) => {
      const leave = () => {
        const at = this.waiting.indexOf(take);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal!.reason);
      };
      const take = (lease: Lease) => {
        signal?.removeEventListener('abort', leave);
        resolve(lease);
      };
      signal?.addEventListener('abort', leave, { once: true });
      this.waiting.push(take);
    });
  }

  private exclusiveTail: Promise<unknown> = Promise.resolve();

  /**
   * Runs `work` on a connection of its own (closed after), one such work at a time:
   * statements that may need all of DUCKDB_MEMORY_LIMIT and spill past it (a release
   * loaded, a revisions diff built, a filtered Parquet file sorted). DuckDB spills one
   * of them within the limit, but two or three at once ran out of memory before any
   * spilled. Queries on the pool go on meanwhile. `signal` cancels it: the caller is
   * answered at once; queued work never starts, and running work's statement is
   * interrupted.
   */
  exclusive<T>(work: (connection: DuckDBConnection) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const run = this.exclusiveTail.then(async () => {
      signal?.throwIfAborted();
      const connection = await this.instance.connect();
      try {
        return await interruptible(connection, signal, () => work(connection));
      } finally {
        connection.closeSync();
      }
    });
    this.exclusiveTail = run.catch(() => {});
    return signal ? untilAborted(run, signal) : run;
  }

  /** A connection of its own for reading DuckDB's state (metrics), so a scrape neither waits for nor counts as a query. */
  private inspector: DuckDBConnection | undefined;

  /** DuckDB's own accounting of its memory, by tag (duckdb_memory()). */
  async memory(): Promise<Array<{ tag: string; bytes: number }>> {
    this.inspector ??= await this.instance.connect();
    const connection = this.inspector;
    const rows = (await connection.runAndReadAll('SELECT tag, memory_usage_bytes FROM duckdb_memory()')).getRows();
    return rows.map(([tag, bytes]) => ({ tag: String(tag), bytes: Number(bytes) }));
  }

  /**
   * Bytes DuckDB's spill folder takes on disk now. Its files' blocks, not
   * duckdb_temporary_files(): that counts the blocks in use, and a file keeps the room
   * of blocks freed before its end (a diff's join spilled 122 MB where 36 MB were in use).
   */
  async tempBytes(): Promise<number> {
    const dir = this.tempDirectory;
    if (dir === undefined) return 0;
    const names = await fs.readdir(dir).catch(() => []);
    const sizes = await Promise.all(
      names.map((name) =>
        fs.stat(path.join(dir, name)).then(
          (s) => s.blocks * 512,
          () => 0,
        ),
      ),
    );
    return sizes.reduce((sum, n) => sum + n, 0);
  }

  /** A connection outside the pool (the bench's ceilings read the same tables through one). */
  connect(): Promise<DuckDBConnection> {
    return this.instance.connect();
  }

  get queriesRun(): number {
    return this.used;
  }

  private closed = false;

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const lease of this.leases) lease.close();
    this.inspector?.closeSync();
    this.instance.closeSync();
  }
}
