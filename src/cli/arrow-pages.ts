import { DataType, Dictionary, Table, tableFromIPC, tableToIPC, type Vector, vectorFromArray } from 'apache-arrow';

/**
 * Several pages of Arrow IPC as one stream. Each page is a stream of its own whose
 * dictionaries hold only that page's values, so batches cannot simply be appended
 * (apache-arrow's stream writer starts a new stream at each new dictionary): each
 * column is rebuilt over every page with the first page's type, dictionaries
 * re-encoded over all values. One page is passed through untouched.
 */
export function mergeArrowPages(pages: readonly Uint8Array[]): Uint8Array {
  if (pages.length === 1) return pages[0]!;
  const tables = pages.map((page) => tableFromIPC(page));
  const columns: Record<string, Vector> = {};
  for (const field of tables[0]!.schema.fields) {
    const values = tables.flatMap((table) => [...(table.getChild(field.name) ?? [])]);
    const type = DataType.isDictionary(field.type) ? new Dictionary(field.type.dictionary, field.type.indices) : field.type;
    columns[field.name] = vectorFromArray(values, type);
  }
  return tableToIPC(new Table(columns), 'stream');
}
