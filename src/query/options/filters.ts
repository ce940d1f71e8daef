import * as v from 'valibot';
import { InvalidFilterDimensionError } from '../../errors/index.ts';
import { FINANCIAL_DATASETS } from '../../registry.ts';
import { repeatable } from './params.ts';

// The dimension filters of the financial endpoints: every parameter an endpoint does
// not list as an option is a filter on a dimension of the dataset `metric` names
// (filter-values.ts reads them; the document lists one parameter per
// dimension, from the registry). `year` is the one integer dimension.

export const yearParam = v.optional(
  repeatable(
    v.pipe(
      v.string(),
      v.regex(/^-?\d{1,9}$/, 'Expected an integer year; for a span repeat it (year=2019&year=2020) or send period=2019-01-01:2024-12-31'),
    ),
  ),
);

/** Every other parameter: whether it is a dimension depends on `metric`. */
export const filterParams = repeatable(v.string());

const fx = FINANCIAL_DATASETS.find((d) => d.name === 'fx')!;

/** The refusal of a parameter that is no dimension of the dataset, as the catalog words it. */
export const FILTER_ERRORS = { invalidFilterDimension: new InvalidFilterDimensionError('product', 'fx', fx.dimensions) };
