import type { Database } from '../duckdb/database.ts';

/**
 * A result computed once into a DuckDB table whose row ids are its page order (a
 * revisions diff, a history): pages read it while it is kept, and when it is dropped
 * from the kept results, the table goes once the pages reading it now have been
 * read, never under one.
 */
export abstract class KeptTable {
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
  protected async whileReading<T>(read: () => Promise<T>): Promise<T> {
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
