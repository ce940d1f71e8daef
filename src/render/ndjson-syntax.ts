import type { ColumnStore } from '../store/column-store.ts';
import type { TextSyntax } from './text-renderer.ts';

/**
 * Rows as newline-delimited JSON, one flat object per line: the dimensions, then the
 * metrics, each value written as the JSON pages write it (bulk exports).
 */
export function ndjsonSyntax(store: ColumnStore): TextSyntax {
  const metricNames = store.metrics.map((m) => JSON.stringify(m.name));
  const last = store.segments.length - 1;
  return {
    fragment: (s, values) => {
      const pairs = values.map(([column, code]) => `${JSON.stringify(column.name)}:${column.dictionary.json[code]}`);
      return (s > 0 ? ',' : '{') + pairs.join(',') + (s === last && metricNames.length > 0 ? `,${metricNames[0]}:` : '');
    },
    metricGlue: metricNames.slice(1).map((name) => `,${name}:`),
    tail: '}\n',
    separator: '',
  };
}
