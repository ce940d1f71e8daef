import { INTEGER_DIMENSIONS } from '../registry.ts';
import type { StoredDataset } from '../store/loader.ts';
import type { Filters } from './filters.ts';
import { alternatives, closest } from './suggest.ts';

// A filter value the release does not hold matches nothing, silently (docs/api.md
// "Responses"). An answer left without rows says which values those were, and what
// was probably meant, in `meta.warnings`.

/** One warning per filter value `dataset`'s release does not hold, in the filters' order. */
export function unmatchedValues(dataset: StoredDataset, filters: Filters): string[] {
  const warnings: string[] = [];
  for (const [dimension, values] of filters) {
    const held = dataset.codes.get(dimension) ?? new Map<string, number>();
    for (const value of values) {
      if (!held.has(value)) warnings.push(`${dimension} ${JSON.stringify(value)} matches no value${hint(dimension, value, held)}`);
    }
  }
  return warnings;
}

function hint(dimension: string, value: string, held: ReadonlyMap<string, number>): string {
  if (held.size === 0) return '';
  // A year is not misspelt but out of range: the range says what there is.
  if (INTEGER_DIMENSIONS.has(dimension)) {
    const years = [...held.values()];
    return `; the release holds ${Math.min(...years)} to ${Math.max(...years)}`;
  }
  const near = closest(value, held.keys());
  return near.length > 0 ? `; did you mean ${alternatives(near)}?` : '';
}
