import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { ETL_MEMORY_DEFAULT } from '../src/config.ts';
import { quoteIdent, quoteLiteral } from '../src/duckdb/sql-text.ts';
import { DATASETS, type DatasetDef } from '../src/registry.ts';
import type { ReleaseOnDisk } from '../src/releases/on-disk.ts';

// `etl diff A B`: what an analyst checks before (or after) publishing a month. Rows
// match by their dimension values; a matched row changed when any metric differs.

export interface ValueChange {
  readonly key: Record<string, string | number>;
  readonly metric: string;
  readonly from: number;
  readonly to: number;
  readonly change: number;
}

export interface DatasetDiff {
  readonly rows_a: number;
  readonly rows_b: number;
  readonly added: number;
  readonly removed: number;
  readonly changed: number;
  /** The largest absolute metric changes among matched rows, largest first. */
  readonly largest_changes: readonly ValueChange[];
}

export interface ReleaseDiff {
  readonly a: string;
  readonly b: string;
  readonly datasets: Record<string, DatasetDiff>;
}

/** Compares two releases, dataset by dataset; DuckDB works within `memoryLimit` (ETL_MEMORY_LIMIT), spilling past it. */
export async function diffReleases(
  a: ReleaseOnDisk,
  b: ReleaseOnDisk,
  top = 5,
  options: { memoryLimit?: string; tempDir?: string } = {},
): Promise<ReleaseDiff> {
  const tempDir = options.tempDir ?? path.join(os.tmpdir(), `dqs-etl-diff-${process.pid}`);
  const instance = await DuckDBInstance.create(':memory:', {
    threads: '2',
    memory_limit: options.memoryLimit ?? ETL_MEMORY_DEFAULT,
    temp_directory: tempDir,
  });
  const connection = await instance.connect();
  try {
    const datasets: Record<string, DatasetDiff> = {};
    for (const def of DATASETS) {
      const file = (r: ReleaseOnDisk) => path.join(r.dir, r.manifest.datasets[def.name]!.file);
      datasets[def.name] = await diffDataset(connection, def, file(a), file(b), top);
    }
    return { a: a.manifest.release, b: b.manifest.release, datasets };
  } finally {
    connection.closeSync();
    instance.closeSync();
    await fs.rm(tempDir, { recursive: true, force: true });
  }
}

/** `a FULL JOIN b` on the dimension tuple, each side marked present. */
const joined = (def: DatasetDef, a: string, b: string) =>
  `(SELECT *, true AS in_a FROM read_parquet(${quoteLiteral(a)})) a FULL JOIN (SELECT *, true AS in_b FROM read_parquet(${quoteLiteral(b)})) b USING (${def.dimensions.map(quoteIdent).join(', ')})`;

const changedWhere = (def: DatasetDef) =>
  def.metrics.length ? def.metrics.map((m) => `a.${quoteIdent(m)} IS DISTINCT FROM b.${quoteIdent(m)}`).join(' OR ') : 'false';

/**
 * Rows added, removed and changed between two files of a dataset: one out-of-core
 * FULL JOIN whose rows are counted, never kept (what `etl load` writes into the
 * manifest).
 */
export async function countChanges(
  connection: DuckDBConnection,
  def: DatasetDef,
  a: string,
  b: string,
): Promise<{ added: number; removed: number; changed: number }> {
  const [counts] = (
    await connection.runAndReadAll(`
    SELECT count(*) FILTER (WHERE a.in_a IS NULL), count(*) FILTER (WHERE b.in_b IS NULL), count(*) FILTER (WHERE a.in_a AND b.in_b AND (${changedWhere(def)}))
    FROM ${joined(def, a, b)}`)
  ).getRows();
  const [added, removed, changed] = counts!.map(Number) as [number, number, number];
  return { added, removed, changed };
}

async function diffDataset(connection: DuckDBConnection, def: DatasetDef, a: string, b: string, top: number): Promise<DatasetDiff> {
  const [counts] = (
    await connection.runAndReadAll(`
    SELECT count(*) FILTER (WHERE a.in_a), count(*) FILTER (WHERE b.in_b), count(*) FILTER (WHERE a.in_a IS NULL),
           count(*) FILTER (WHERE b.in_b IS NULL), count(*) FILTER (WHERE a.in_a AND b.in_b AND (${changedWhere(def)}))
    FROM ${joined(def, a, b)}`)
  ).getRows();
  const [rowsA, rowsB, added, removed, changed] = counts!.map(Number);
  const largest: ValueChange[] = [];
  if (def.metrics.length && top > 0) {
    // Only matched rows whose values moved: an inner join, the largest moves first.
    const dims = def.dimensions.map(quoteIdent).join(', ');
    const key = `to_json(struct_pack(${def.dimensions.map((d) => `${quoteIdent(d)} := ${quoteIdent(d)}`).join(', ')}))::VARCHAR`;
    const perMetric = def.metrics.map(
      (m) => `SELECT ${key} AS key, ${quoteLiteral(m)} AS metric, a.${quoteIdent(m)}::DOUBLE AS "from", b.${quoteIdent(m)}::DOUBLE AS "to"
        FROM read_parquet(${quoteLiteral(a)}) a JOIN read_parquet(${quoteLiteral(b)}) b USING (${dims}) WHERE a.${quoteIdent(m)} <> b.${quoteIdent(m)}`,
    );
    const reader = await connection.runAndReadAll(
      `SELECT key, metric, "from", "to" FROM (${perMetric.join(' UNION ALL ')}) ORDER BY abs("to" - "from") DESC, key, metric LIMIT ${top}`,
    );
    for (const [key, metric, from, to] of reader.getRows()) {
      largest.push({
        key: JSON.parse(String(key)),
        metric: String(metric),
        from: Number(from),
        to: Number(to),
        change: Number(to) - Number(from),
      });
    }
  }
  return { rows_a: rowsA!, rows_b: rowsB!, added: added!, removed: removed!, changed: changed!, largest_changes: largest };
}

/** The diff as the table analysts read in a terminal. */
export function formatDiff(diff: ReleaseDiff): string {
  const lines = [`${diff.a} → ${diff.b}`, ''];
  const header = ['dataset', `rows ${diff.a}`, `rows ${diff.b}`, 'added', 'removed', 'changed'];
  const rows = Object.entries(diff.datasets).map(([name, d]) => [name, d.rows_a, d.rows_b, d.added, d.removed, d.changed].map(String));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  lines.push(line(header), ...rows.map(line));
  for (const [name, d] of Object.entries(diff.datasets)) {
    if (d.largest_changes.length === 0) continue;
    lines.push('', `largest changes in ${name}:`);
    for (const c of d.largest_changes) {
      const key = Object.entries(c.key)
        .filter(([, v]) => v !== '')
        .map(([, v]) => v)
        .join(' / ');
      lines.push(
        `  ${c.metric.padEnd(18)} ${formatNumber(c.from).padStart(16)} → ${formatNumber(c.to).padStart(16)}  (${c.change > 0 ? '+' : ''}${formatNumber(c.change)})  ${key}`,
      );
    }
  }
  return lines.join('\n');
}

const formatNumber = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 2 });
