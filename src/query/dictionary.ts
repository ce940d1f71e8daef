import type { DuckDBListValue } from '@duckdb/node-api';
import { quoteIdent, quoteLiteral } from '../duckdb/sql-text.ts';

// A kept result's text dimension as codes into its own sorted dictionary of values
// (a revisions diff, a history): a page read from its table is numbers, not text.

/** A result's distinct values of one dimension, sorted: what its rows are coded against. */
export interface Dictionary {
  readonly name: string;
  readonly values: readonly (string | number)[];
  readonly json: readonly string[];
  /** The SQL of a row's code: its text cast to an ENUM of the values, whose code DuckDB gives (a hash lookup). */
  readonly code: string;
}

/** The dictionary of dimension `name` from DuckDB's sorted list of its distinct values (NULL for an empty result). */
export function dictionary(name: string, list: unknown): Dictionary {
  const values = list === null ? [] : ((list as DuckDBListValue).items as (string | number)[]);
  const texts = values.map((value) => quoteLiteral(String(value)));
  // An ENUM needs one value at least; an empty result reads no rows.
  const code = values.length === 0 ? 'NULL' : `enum_code(CAST(${quoteIdent(name)} AS VARCHAR)::ENUM(${texts.join(', ')}))`;
  return { name, values, json: values.map((value) => JSON.stringify(value)), code };
}

/** The bytes a row's codes take in a kept table: 1, 2 or 4 per dimension, by its dictionary's size. */
export const codeBytes = (dictionaries: readonly Dictionary[]): number =>
  dictionaries.reduce((sum, d) => sum + (d.values.length <= 0x100 ? 1 : d.values.length <= 0x10000 ? 2 : 4), 0);
