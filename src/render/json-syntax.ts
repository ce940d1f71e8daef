import type { ColumnStore } from '../store/column-store.ts';
import type { TextSyntax } from './text-renderer.ts';

export type RowShape = 'financial' | 'reference';

/**
 * Rows as the API has always served them, byte for byte what DuckDB's to_json made
 * of `{dimensions: {...}, values: {...}}` (financial) or the flat row (reference),
 * comma-separated: the caller's `before` and `after` make the envelope.
 */
export function jsonSyntax(store: ColumnStore, shape: RowShape): TextSyntax {
  const financial = shape === 'financial';
  const metricNames = store.metrics.map((m) => JSON.stringify(m.name));
  const last = store.segments.length - 1;
  return {
    fragment: (s, values) => {
      const open = s > 0 ? ',' : financial ? '{"dimensions":{' : '{';
      const close = s < last ? '' : financial ? `},"values":{${metricNames[0]}:` : '}';
      const pairs = values.map(([column, code]) => `${JSON.stringify(column.name)}:${column.dictionary.json[code]}`);
      return open + pairs.join(',') + close;
    },
    metricGlue: metricNames.slice(1).map((name) => `,${name}:`),
    tail: financial ? '}}' : '',
    separator: ',',
  };
}
