import type { FormatName } from '../render/formats.ts';
import type { Filters } from './filters.ts';

/** What a page request selects: a different release, dataset or filter set is another selection. */
export interface QueryScope {
  readonly release: string;
  readonly dataset: string;
  readonly filters: Filters;
  readonly period?: string;
  /** The instant `as_of` named, when it named the release: its answers say so (`meta.as_of`), unlike `release=`'s. */
  readonly asOf?: string;
  /**
   * What else decides the answer, beyond which rows: the endpoint's own options, each
   * as its part of the key (options/option.ts keyParts), such as an aggregate's
   * grouping, measures and order, or the releases and kinds of a diff.
   */
  readonly options?: readonly (readonly [string, unknown])[];
  /**
   * The format of the page a cursor is issued with: the cursor codec binds it, so a
   * cursor pages only that format. Not part of `canonicalScope`, which also keys kept
   * results (one aggregate or diff serves every format); page cache keys add it themselves.
   */
  readonly format?: FormatName;
}

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The scope as one canonical value (dimensions and values sorted, duplicates
 * dropped), so the order of query parameters does not matter but any other change
 * does. Cursor MACs and response cache keys are both built on it; changing it
 * invalidates every cursor in circulation.
 */
export function canonicalScope(scope: QueryScope): readonly unknown[] {
  const filters = [...scope.filters]
    .map(([dimension, values]) => [dimension, [...new Set(values)].sort()] as const)
    .sort(([a], [b]) => byCodeUnits(a, b));
  const canonical = [scope.release, scope.dataset, filters, scope.period ?? null];
  // Appended only when there are some, so the cursors of an endpoint without options of its own stay valid.
  const keyed = scope.options?.length ? [...canonical, scope.options] : canonical;
  return scope.asOf === undefined ? keyed : [...keyed, ['as_of', scope.asOf]];
}
