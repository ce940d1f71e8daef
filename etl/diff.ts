import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { DATASETS, type DatasetDef } from '../src/registry.ts';
import type { ReleaseOnDisk } from '../src/releases/on-disk.ts';
import { quoteIdent, quoteLiteral } from '../src/duckdb/sql-text.ts';

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

export async function diffReleases(a: ReleaseOnDisk, b: ReleaseOnDisk, top = 5): Promise<ReleaseDiff> {
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  const connection = await instance.connect();
  try {
    const datasets: Record<string, DatasetDiff> = {};
    for (const def of DATASETS) {
      const file = (r: ReleaseOnDisk) => `read_parquet(${quoteLiteral(path.join(r.dir, r.manifest.datasets[def.name]!.file))})`;
      datasets[def.name] = await diffDataset(connection, def, file(a), file(b), top);
    }
    return { a: a.manifest.release, b: b.manifest.release, datasets };
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

async function diffDataset(connection: DuckDBConnection, def: DatasetDef, a: string, b: string, top: number): Promise<DatasetDiff> {
  const dims = def.dimensions.map(quoteIdent).join(', ');
  const changedWhere = def.metrics.length ? def.metrics.map((m) => `a.${quoteIdent(m)} IS DISTINCT FROM b.${quoteIdent(m)}`).join(' OR ') : 'false';
  await connection.run(`CREATE OR REPLACE TEMP TABLE joined AS
    SELECT ${dims}, a.in_a, b.in_b,
           ${[...def.metrics.map((m) => `a.${quoteIdent(m)} AS ${quoteIdent(`a_${m}`)}, b.${quoteIdent(m)} AS ${quoteIdent(`b_${m}`)}`), `(${changedWhere}) AS changed`].join(', ')}
    FROM (SELECT *, true AS in_a FROM ${a}) a FULL JOIN (SELECT *, true AS in_b FROM ${b}) b USING (${dims})`);
  const [counts] = (await connection.runAndReadAll(`
    SELECT count(*) FILTER (WHERE in_a), count(*) FILTER (WHERE in_b), count(*) FILTER (WHERE in_a IS NULL),
           count(*) FILTER (WHERE in_b IS NULL), count(*) FILTER (WHERE in_a AND in_b AND changed) FROM joined`)).getRows();
  const [rowsA, rowsB, added, removed, changed] = counts!.map(Number);
  const largest: ValueChange[] = [];
  if (def.metrics.length && top > 0) {
    const perMetric = def.metrics.map((m) => `SELECT to_json(struct_pack(${def.dimensions.map((d) => `${quoteIdent(d)} := ${quoteIdent(d)}`).join(', ')}))::VARCHAR AS key, ${quoteLiteral(m)} AS metric,
        ${quoteIdent(`a_${m}`)}::DOUBLE AS "from", ${quoteIdent(`b_${m}`)}::DOUBLE AS "to" FROM joined WHERE in_a AND in_b AND ${quoteIdent(`a_${m}`)} <> ${quoteIdent(`b_${m}`)}`);
    const reader = await connection.runAndReadAll(`SELECT key, metric, "from", "to" FROM (${perMetric.join(' UNION ALL ')}) ORDER BY abs("to" - "from") DESC, key, metric LIMIT ${top}`);
    for (const [key, metric, from, to] of reader.getRows()) {
      largest.push({ key: JSON.parse(String(key)), metric: String(metric), from: Number(from), to: Number(to), change: Number(to) - Number(from) });
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
      const key = Object.entries(c.key).filter(([, v]) => v !== '').map(([, v]) => v).join(' / ');
      lines.push(`  ${c.metric.padEnd(18)} ${formatNumber(c.from).padStart(16)} → ${formatNumber(c.to).padStart(16)}  (${c.change > 0 ? '+' : ''}${formatNumber(c.change)})  ${key}`);
    }
  }
  return lines.join('\n');
}

const formatNumber = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 2 });
