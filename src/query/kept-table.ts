import type { Database } from '../duckdb/database.ts';
import { quoteIdent } from '../duckdb/sql-text.ts';
import { Turns } from '../store/slices.ts';

/** Rows read from DuckDB per batch of a whole answer: a few MB of text, so memory stays flat whatever the result's size. */
const BATCH = 16_384;

/**
 * A result computed once into a DuckDB table whose row ids are its page order (a
 * revisions diff, a history): pages read it while it is kept, and when it is dropped
 * from the kept results, the table goes once the pages reading it now have been
 * read, never under one.
 */
export abstract class KeptTable<Rows> {
  private reading = 0;
  private retired = false;
  private dropped = false;

  protected constructor(
    protected readonly db: Database,
    protected readonly table: string,
    readonly count: number,
  ) {}

  /** About the bytes its table holds, in DuckDB's memory or spilled: what the kept results' bound counts. */
  abstract get bytes(): number;

  /** Rows [start, end) in page order. */
  abstract rows(start: number, end: number): Promise<Rows>;

  /** Rows `start` to the end, BATCH rows at a time: a whole CSV or Arrow answer. */
  async *batches(start: number): AsyncGenerator<Rows> {
    for (let at = start; at < this.count; at += BATCH) yield await this.rows(at, Math.min(at + BATCH, this.count));
  }

  /**
   * Reads `columns` of rows [start, end) into `targets` (one each), while the table is
   * kept: the table holds numbers only (codes, and NaN for no value), so what crosses
   * into JavaScript is numbers straight into typed arrays, and no string per value.
   */
  protected read(columns: readonly string[], start: number, end: number, targets: ReadonlyArray<{ [i: number]: number }>): Promise<void> {
    return this.whileReading(async () => {
      // Rows were inserted in page order (preserve_insertion_order), so a row's id is its position.
      const sql = `SELECT ${columns.map(quoteIdent).join(', ')} FROM ${this.table} WHERE rowid >= $1::BIGINT AND rowid < $2::BIGINT ORDER BY rowid`;
      const result = await this.db.use(({ connection }) => connection.run(sql, [start, end]));
      // A chunk (2,048 rows) at a time, taking turns with the event loop: a whole batch in one step held it for tens of ms on a busy machine.
      const turns = new Turns();
      let at = 0;
      for (let k = 0; k < result.chunkCount; k++) {
        await turns.turn();
        const chunk = result.getChunk(k);
        const n = chunk.rowCount;
        targets.forEach((target, c) => {
          const vector = chunk.getColumnVector(c);
          for (let i = 0; i < n; i++) target[at + i] = vector.getItem(i) as number;
        });
        at += n;
      }
    });
  }

  /**
   * Keeps the table for a reader of many pages (a whole answer streamed as CSV or
   * Arrow) until the returned function is called, however long the client takes: a
   * result dropped from the kept results meanwhile is dropped after it.
   */
  hold(): () => void {
    this.reading++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.letGo();
    };
  }

  /** Runs `read` on the table, which is not dropped under it. */
  private async whileReading<T>(read: () => Promise<T>): Promise<T> {
    this.reading++;
    try {
      return await read();
    } finally {
      this.letGo();
    }
  }

  private letGo(): void {
    this.reading--;
    if (this.retired && this.reading === 0) void this.drop();
  }

  /** Drops the table now if no page is reading it (settling once it is dropped), else after the last one. */
  retire(): Promise<void> {
    this.retired = true;
    return this.reading === 0 ? this.drop() : Promise.resolve();
  }

  private async drop(): Promise<void> {
    if (this.dropped) return;
    this.dropped = true;
    // A failure here (the database closing at shutdown) leaves nothing to clean: the catalog is in memory.
    await this.db.use(({ connection }) => connection.run(`DROP TABLE IF EXISTS ${this.table}`)).catch(() => {});
  }
}
