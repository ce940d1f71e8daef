// The one definition of every dataset. The catalog, parameter validation, the
// loader's schema checks, SQL building and docs/api.md's table all derive from it:
// adding a dataset is one entry here (plus its generator in etl/).

export type DatasetKind = 'financial' | 'reference';

export interface DatasetDef {
  readonly name: string;
  readonly kind: DatasetKind;
  readonly description: string;
  /** Filterable columns, in serving order: rows are sorted by these, left to right. */
  readonly dimensions: readonly string[];
  /** Numeric columns; empty for reference datasets. */
  readonly metrics: readonly string[];
}

const market = ['year', 'region', 'country', 'state', 'category', 'product', 'channel', 'sub_channel', 'fx', 'temporal', 'calculation'] as const;
const geography = ['year', 'region', 'country', 'state'] as const;

// `as const` keeps each name, dimension and metric as a literal type, so the typed
// client (src/client/) derives per-metric filters from this very table.
const DEFINITIONS = [
  {
    name: 'ggr',
    kind: 'financial',
    description: 'Gross gaming revenue: the amount operators keep after paying out winnings, by market segment and year',
    dimensions: market,
    metrics: ['ggr'],
  },
  {
    name: 'turnover',
    kind: 'financial',
    description: 'Turnover: total stakes and wagers placed before operator deductions, by market segment and year',
    dimensions: market,
    metrics: ['turnover'],
  },
  {
    name: 'fx',
    kind: 'financial',
    description: 'Foreign exchange rates of each local currency, in constant and current terms against USD and EUR',
    dimensions: [...geography, 'fx_local_currency', 'temporal', 'calculation'],
    metrics: ['fx_constant_usd', 'fx_current_eur', 'fx_constant_eur', 'fx_current_usd'],
  },
  {
    name: 'country',
    kind: 'financial',
    description: 'Country-level economic indicators: GDP in local currency and USD, adult population and inflation',
    dimensions: [...geography, 'temporal', 'calculation'],
    metrics: ['gdp_local_currency', 'gdp_usd', 'adult_population', 'inflation'],
  },
  {
    name: 'country_reference',
    kind: 'reference',
    description: 'Lookup of every country to its region and country type (Tracked or Amalgamated)',
    dimensions: ['region', 'country', 'country_type'],
    metrics: [],
  },
] as const satisfies readonly DatasetDef[];

export const DATASETS: readonly DatasetDef[] = DEFINITIONS;

/** Every dataset with its literal names (for types only). */
export type Registry = typeof DEFINITIONS;

const byName = new Map(DATASETS.map((d) => [d.name, d]));

export function findDataset(name: string, kind: DatasetKind): DatasetDef | undefined {
  const def = byName.get(name);
  return def?.kind === kind ? def : undefined;
}

/** Integer-typed dimensions; every other dimension is a string. */
export const INTEGER_DIMENSIONS: ReadonlySet<string> = new Set(['year']);
