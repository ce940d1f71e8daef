import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent, quoteLiteral } from '../duckdb/sql-text.ts';
import { type DatasetDef, INTEGER_DIMENSIONS } from '../registry.ts';
import { DatasetError } from './dataset-error.ts';

// The checks a dataset's Parquet file must pass, shared by the server's loader (which
// refuses a release) and `etl load` (which refuses a drop before publishing it). Each
// returns every problem it finds, so one run tells an analyst all there is to fix.

/** One thing wrong with a file: `file: message`, the message naming the column and the fix. */
export interface Problem {
  readonly file: string;
  readonly message: string;
}

export const formatProblems = (problems: readonly Problem[]) => problems.map((p) => `${p.file}: ${p.message}`).join('\n');

/** Throws a DatasetError listing every problem, if there are any. */
export function refuseProblems(problems: readonly Problem[]): void {
  if (problems.length > 0) throw new DatasetError(formatProblems(problems));
}

const INTEGER_TYPES = new Set(['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'UTINYINT', 'USMALLINT', 'UINTEGER']);
const NUMERIC_TYPES = new Set([...INTEGER_TYPES, 'FLOAT', 'DOUBLE', 'UBIGINT', 'HUGEINT']);
const isNumeric = (type: string) => NUMERIC_TYPES.has(type) || type.startsWith('DECIMAL(');
/** Example rows a message lists; the count says how many more there are. */
const EXAMPLES = 3;

/** `read_parquet(file)` with the file's own row numbers, which messages quote (counted from 1). */
export const parquetSource = (file: string) => `read_parquet(${quoteLiteral(file)}, file_row_number = true)`;

/** Column name → DuckDB type; a file that cannot be read as Parquet is a DatasetError. */
export async function describeParquet(connection: DuckDBConnection, file: string): Promise<Map<string, string>> {
  const reader = await connection
    .runAndReadAll(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(${quoteLiteral(file)}))`)
    .catch((err: Error) => {
      throw new DatasetError(
        `${file}: cannot read as Parquet (${err.message.split('\n')[0]}); the file is empty, truncated or not Parquet, so export it again`,
      );
    });
  return new Map(reader.getRows().map(([name, type]) => [String(name), String(type)]));
}

/** Missing, extra and mistyped columns. Order, integer width and numeric type do not matter. */
export function columnProblems(def: DatasetDef, types: ReadonlyMap<string, string>, file: string): Problem[] {
  const expected = [...def.dimensions, ...def.metrics];
  const problems: Problem[] = [];
  const missing = expected.filter((c) => !types.has(c));
  const extra = [...types.keys()].filter((c) => !expected.includes(c));
  for (const column of missing) {
    problems.push({
      file,
      message: `column "${column}" is missing; the ${def.name} dataset needs ${expected.join(', ')}, so re-export the file with every one of them${extra.length ? ` (it has ${extra.map((c) => `"${c}"`).join(', ')} instead: misnamed?)` : ''}`,
    });
  }
  for (const column of extra) {
    problems.push({
      file,
      message: `column "${column}" is not part of the ${def.name} dataset, which has exactly ${expected.join(', ')}; rename or drop it`,
    });
  }
  for (const column of expected) {
    const type = types.get(column);
    if (type === undefined) continue;
    if (INTEGER_DIMENSIONS.has(column)) {
      if (!INTEGER_TYPES.has(type)) problems.push({ file, message: `column "${column}" has type ${type}; write it as an integer` });
    } else if (def.metrics.includes(column)) {
      if (!isNumeric(type)) problems.push({ file, message: `column "${column}" has type ${type}; write it as a number (DOUBLE)` });
    } else if (type !== 'VARCHAR') {
      problems.push({ file, message: `column "${column}" has type ${type}; write it as VARCHAR (text)` });
    }
  }
  return problems;
}

/**
 * Row count and the values every row needs: no empty file, no null dimension, no
 * null, NaN or infinite metric. Call it only on a file whose columns passed.
 */
export async function valueProblems(
  connection: DuckDBConnection,
  def: DatasetDef,
  file: string,
): Promise<{ rows: number; problems: Problem[] }> {
  const source = parquetSource(file);
  const columns = [...def.dimensions, ...def.metrics];
  const badWhere = (c: string) =>
    def.metrics.includes(c) ? `${quoteIdent(c)} IS NULL OR NOT isfinite(${quoteIdent(c)}::DOUBLE)` : `${quoteIdent(c)} IS NULL`;
  const reader = await connection.runAndReadAll(
    `SELECT count(*), ${columns.map((c) => `count(*) FILTER (WHERE ${badWhere(c)})`).join(', ')} FROM ${source}`,
  );
  const [rows, ...badCounts] = reader.getRows()[0]!.map(Number);
  const problems: Problem[] = [];
  if (rows === 0)
    problems.push({
      file,
      message: `has no rows; export the ${def.name} dataset again, or leave the file out to keep the current release's`,
    });
  for (const [i, count] of badCounts.entries()) {
    if (count === 0) continue;
    const column = columns[i]!;
    const metric = def.metrics.includes(column);
    const rowsAt = await exampleRows(connection, `SELECT file_row_number FROM ${source} WHERE ${badWhere(column)}`);
    problems.push({
      file,
      message: `column "${column}" has ${count} null${metric ? ' or non-finite' : ''} values (${rowsAt}); every row needs one${metric ? '' : " (use '' for a dimension that does not apply)"}`,
    });
  }
  return { rows: rows!, problems };
}

/** "rows 3, 9, 12 and 4 more" (file row numbers counted from 1) for the first rows `sql` selects. */
export async function exampleRows(connection: DuckDBConnection, sql: string): Promise<string> {
  const reader = await connection.runAndReadAll(`SELECT file_row_number + 1, count(*) OVER () FROM (${sql}) ORDER BY 1 LIMIT ${EXAMPLES}`);
  const rows = reader.getRows();
  const total = Number(rows[0]?.[1] ?? 0);
  const listed = rows.map(([n]) => String(n)).join(', ');
  return `${total === 1 ? 'row' : 'rows'} ${listed}${total > rows.length ? ` and ${total - rows.length} more` : ''}`;
}
