import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { Database } from '../../src/duckdb/database.ts';
import { quoteIdent, quoteLiteral } from '../../src/duckdb/sql-text.ts';

// The history scenario's ceiling: DuckDB alone, in the bench process with the
// service's DuckDB settings (its threads and memory limit), running the window query
// a history's `output=changes` is (docs/api.md "History"): every release's Parquet
// file in publication order, LAG and LEAD per observation over the release ordinal,
// written whole as CSV in the service's order (dimensions, then `valid_from`). It is
// written here by hand from the issue's definition, not taken from src/query/history.ts,
// and test/bench-history.test.ts checks it gives the service's rows.

export interface Vintage {
  readonly id: string;
  readonly file: string;
}

/**
 * The rows of `output=changes` over every release in `releases` (oldest first): one
 * per observation and release in which it was added, changed or removed, with
 * `valid_from`, `valid_to` (the next such release, or null) and its values (null when removed).
 */
export function historyCeilingSql(
  releases: readonly Vintage[],
  dataset: { dimensions: readonly string[]; metrics: readonly string[] },
): string {
  const dims = dataset.dimensions.map(quoteIdent);
  const metrics = dataset.metrics.map(quoteIdent);
  const ids = `[${releases.map((r) => quoteLiteral(r.id)).join(', ')}]`;
  const files = releases
    .map(
      (r, n) =>
        `SELECT ${dims.join(', ')}, ${metrics.map((m) => `${m}::DOUBLE AS ${m}`).join(', ')}, ${n} AS n FROM read_parquet(${quoteLiteral(r.file)})`,
    )
    .join(' UNION ALL ');
  const observation = `PARTITION BY ${dims.join(', ')}`;
  const before = dataset.metrics.map((m) => quoteIdent(`before_${m}`));
  const differs = metrics.map((m, i) => `${m} IS DISTINCT FROM ${before[i]}`).join(' OR ');
  return `WITH rows AS (
  SELECT *, lag(n) OVER w AS before_n, lead(n) OVER w AS after_n, ${metrics.map((m, i) => `lag(${m}) OVER w AS ${before[i]}`).join(', ')}
  FROM (${files}) WINDOW w AS (${observation} ORDER BY n)
), versions AS (
  SELECT ${dims.join(', ')}, n, CASE WHEN before_n = n - 1 THEN 'changed' ELSE 'added' END AS change, ${metrics.join(', ')}
  FROM rows WHERE before_n IS DISTINCT FROM n - 1 OR ${differs}
  UNION ALL
  SELECT ${dims.join(', ')}, n + 1, 'removed', ${metrics.map((m) => `NULL AS ${m}`).join(', ')}
  FROM rows WHERE n < ${releases.length - 1} AND after_n IS DISTINCT FROM n + 1
)
SELECT ${dims.join(', ')}, change, ${ids}[n + 1] AS valid_from, ${ids}[lead(n) OVER (${observation} ORDER BY n) + 1] AS valid_to, ${metrics.join(', ')}
FROM versions ORDER BY ${dims.join(', ')}, n`;
}

/** COPY's options for the service's CSV: a header line, and CRLF ends of lines (RFC 4180). */
export const CSV_COPY_OPTIONS = "FORMAT csv, HEADER, NEW_LINE '\\r\\n'";

export interface HistoryAlone {
  readonly rows: number;
  /** CPU seconds of this process while DuckDB ran it (its threads' included). */
  readonly cpuSeconds: number;
  readonly seconds: number;
  /** The CSV's bytes and their SHA-256, to check against the service's answer. */
  readonly bytes: number;
  readonly sha256: string;
}

/**
 * DuckDB alone writing the whole history as CSV to a scratch file, on a fresh in-memory
 * database opened as the service opens its own (src/server.ts: DUCKDB_THREADS and
 * DUCKDB_MEMORY_LIMIT at their defaults, spilling to a folder of its own) and run as
 * the service runs a history (Database.exclusive).
 */
export async function historyAlone(sql: string, work: string): Promise<HistoryAlone> {
  const { DUCKDB_THREADS, DUCKDB_MEMORY_LIMIT } = loadConfig({});
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'dqs-bench-history-'));
  const out = path.join(work, 'history-alone.csv');
  const db = await Database.open({ connections: 1, threads: DUCKDB_THREADS, memoryLimit: DUCKDB_MEMORY_LIMIT, tempDirectory: scratch });
  try {
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const result = await db.exclusive((connection) => connection.run(`COPY (${sql}) TO ${quoteLiteral(out)} (${CSV_COPY_OPTIONS})`));
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpuBefore);
    const hash = createHash('sha256');
    for await (const chunk of fs.createReadStream(out)) hash.update(chunk as Buffer);
    return {
      rows: Number(result.rowsChanged),
      cpuSeconds: (used.user + used.system) / 1e6,
      seconds,
      bytes: fs.statSync(out).size,
      sha256: hash.digest('hex'),
    };
  } finally {
    db.close();
    fs.rmSync(out, { force: true });
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
