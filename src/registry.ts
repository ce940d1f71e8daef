// The one definition of every dataset. The catalog, parameter validation, the
// loader's schema checks, SQL building and docs/api.md's table all derive from it:
// adding a dataset is one entry here (plus its generator in etl/).

export type DatasetKind = 'financial' | 'reference';

/** A release's id: the month it was published, `YYYY-MM` (its folder in DATA_DIR, and `release=`). */
export const RELEASE_ID = /^\d{4}-(0[1-9]|1[0-2])$/;

export interface DatasetDef {
  readonly name: string;
  readonly kind: DatasetKind;
  readonly description: string;
  /** Filterable columns, in serving order: rows are sorted by these, left to right. */
  readonly dimensions: readonly string[];
  /** Numeric columns; empty for reference datasets. Each has its meaning in METRICS. */
  readonly metrics: readonly string[];
  /**
   * Pre-aggregated tables built at load time, each named by the dimensions it keeps:
   * an aggregate reads the smallest one that keeps every dimension it groups or
   * filters by, instead of every row (docs/performance.md, "Aggregates").
   */
  readonly rollups?: readonly (readonly string[])[];
  /**
   * A dimension one of whose values marks rows that total the rows holding its other
   * values (a country's national row, state "", and the rows of its states).
   * Aggregates add up one or the other, never both.
   */
  readonly totals?: TotalsDef;
}

export interface TotalsDef {
  readonly dimension: string;
  /** The value of `dimension` on the rows that hold totals. */
  readonly value: string;
  /** What those rows are, as error messages and docs say it. */
  readonly means: string;
}

/** Additive metrics add up across rows (into totals); rates do not (a sum of rates means nothing). */
export type MetricKind = 'additive' | 'rate';

export interface MetricDef {
  readonly kind: MetricKind;
  /** What a value is measured in, as docs and OpenAPI say it. */
  readonly unit: string;
  /**
   * The dimension whose value names each row's unit (ggr's `fx`, the currency; GDP in
   * local currency's `country`): rows may be combined only within one of its values,
   * fixed by a filter or by grouping by it.
   */
  readonly unitFrom?: { readonly dimension: string; readonly units: string; readonly one: string };
}

const market = [
  'year',
  'region',
  'country',
  'state',
  'category',
  'product',
  'channel',
  'sub_channel',
  'fx',
  'temporal',
  'calculation',
] as const;
const geography = ['year', 'region', 'country', 'state'] as const;
const nationalTotals = { dimension: 'state', value: '', means: 'national totals' } as const;

// Without state and sub_channel (and, in turn, country or the product split), which
// multiply the rows most, these keep a small share of ggr's rows. A rollup without
// state holds the national rows only (see `totals`), so provinces added at larger
// scales do not grow it.
const marketRollups = [
  ['year', 'region', 'fx', 'temporal', 'calculation'],
  ['year', 'region', 'country', 'channel', 'fx', 'temporal', 'calculation'],
  ['year', 'region', 'category', 'product', 'channel', 'fx', 'temporal', 'calculation'],
  ['year', 'region', 'country', 'state', 'fx', 'temporal', 'calculation'],
] as const;

// `as const` keeps each name, dimension and metric as a literal type, so the typed
// client (src/client/) derives per-metric filters from this very table.
const DEFINITIONS = [
  {
    name: 'ggr',
    kind: 'financial',
    description: 'Gross gaming revenue: the amount operators keep after paying out winnings, by market segment and year',
    dimensions: market,
    metrics: ['ggr'],
    rollups: marketRollups,
    totals: nationalTotals,
  },
  {
    name: 'turnover',
    kind: 'financial',
    description: 'Turnover: total stakes and wagers placed before operator deductions, by market segment and year',
    dimensions: market,
    metrics: ['turnover'],
    rollups: marketRollups,
    totals: nationalTotals,
  },
  {
    name: 'fx',
    kind: 'financial',
    description: 'Foreign exchange rates of each local currency, in constant and current terms against USD and EUR',
    dimensions: [...geography, 'fx_local_currency', 'temporal', 'calculation'],
    metrics: ['fx_constant_usd', 'fx_current_eur', 'fx_constant_eur', 'fx_current_usd'],
    totals: nationalTotals,
  },
  {
    name: 'country',
    kind: 'financial',
    description: 'Country-level economic indicators: GDP in local currency and USD, adult population and inflation',
    dimensions: [...geography, 'temporal', 'calculation'],
    metrics: ['gdp_local_currency', 'gdp_usd', 'adult_population', 'inflation'],
    totals: nationalTotals,
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

export const FINANCIAL_DATASETS = DATASETS.filter((d) => d.kind === 'financial');
export const REFERENCE_DATASETS = DATASETS.filter((d) => d.kind === 'reference');

type DimensionName = (typeof DEFINITIONS)[number]['dimensions'][number];

/**
 * What each dimension means, and a value it takes, as spec 2.4 illustrates them. Which
 * values a dimension holds is each release's to say, not the registry's (docs/api.md
 * "OpenAPI"); the vocabularies every publisher shares (`values`) are named with their
 * meanings, which the catalog and the OpenAPI document carry. `fx` names an ISO 4217
 * code, an open set: only the two every market is given in are listed.
 */
export interface DimensionDef {
  readonly meaning: string;
  /** Two values it takes that select different rows: the document's examples of its filter. */
  readonly examples: readonly [string, string];
  /** A vocabulary's values and what each means. */
  readonly values?: Readonly<Record<string, string>>;
  /** `values` names some of the values only (an ISO code list): others occur too. */
  readonly open?: boolean;
}

export const DIMENSIONS: Readonly<Record<DimensionName, DimensionDef>> = {
  year: { meaning: 'Calendar year, an integer', examples: ['2024', '2019'] },
  region: { meaning: 'Geographic region', examples: ['Europe', 'Africa'] },
  country: { meaning: 'Country name', examples: ['France', 'Spain'] },
  state: { meaning: 'State or province; "" on a country\'s national rows', examples: ['Nevada', 'New Jersey'] },
  category: { meaning: 'Gambling category', examples: ['Betting', 'Lottery'] },
  product: { meaning: 'Product type', examples: ['Sport Betting', 'Poker'] },
  channel: {
    meaning: 'Distribution channel',
    examples: ['Online', 'Land'],
    values: { Online: 'Played over the internet or a mobile app', Land: 'Played in a venue: casino, betting shop, arcade, retailer' },
  },
  sub_channel: {
    meaning: 'Whether the operator is licensed in the market it serves',
    examples: ['Onshore', 'Offshore'],
    values: {
      Onshore: 'Licensed in the market (regulated, locally taxed)',
      Offshore: 'Serving the market from outside it, unlicensed there (an estimate)',
    },
  },
  fx: {
    meaning: 'Currency code (ISO 4217) the amounts are in: every market in USD, EUR and its local currency',
    examples: ['USD', 'EUR'],
    values: { USD: 'US dollars', EUR: 'Euros' },
    open: true,
  },
  fx_local_currency: { meaning: 'Local currency code (ISO 4217)', examples: ['JPY', 'GBP'] },
  temporal: {
    meaning: 'Whether the year is history or projection, as of the release',
    examples: ['Current', 'Forecast'],
    values: { Current: "A year up to the release's data year: history", Forecast: "A year after the release's data year: a projection" },
  },
  calculation: {
    meaning: 'How the figure was arrived at',
    examples: ['Reported', 'Estimated'],
    values: {
      Reported: 'Published by the regulator or operators of the market',
      Calculated: 'Derived from reported figures (a state or province from its parts, a rate from its inputs)',
      Estimated: 'Modelled where nothing is reported: forecasts, amalgamated markets, offshore play',
    },
  },
  country_type: {
    meaning: 'Whether the country is tracked on its own',
    examples: ['Tracked', 'Amalgamated'],
    values: { Tracked: 'Covered as its own market', Amalgamated: 'Estimated as part of a group of small markets' },
  },
};

export const dimensionDef = (name: string) => DIMENSIONS[name as DimensionName];

type MetricName = (typeof DEFINITIONS)[number]['metrics'][number];

const currency = { dimension: 'fx', units: 'currencies', one: 'currency' } as const;

/** What each metric means: aggregation guards, default functions, OpenAPI and docs read it. */
export const METRICS: Readonly<Record<MetricName, MetricDef>> = {
  ggr: { kind: 'additive', unit: "the currency named by the row's fx", unitFrom: currency },
  turnover: { kind: 'additive', unit: "the currency named by the row's fx", unitFrom: currency },
  fx_constant_usd: { kind: 'rate', unit: 'local currency units per USD, constant terms' },
  fx_current_eur: { kind: 'rate', unit: 'local currency units per EUR, current terms' },
  fx_constant_eur: { kind: 'rate', unit: 'local currency units per EUR, constant terms' },
  fx_current_usd: { kind: 'rate', unit: 'local currency units per USD, current terms' },
  gdp_local_currency: {
    kind: 'additive',
    unit: "each country's own currency",
    unitFrom: { dimension: 'country', units: 'currencies', one: 'country' },
  },
  gdp_usd: { kind: 'additive', unit: 'USD' },
  adult_population: { kind: 'additive', unit: 'people' },
  inflation: { kind: 'rate', unit: '%' },
};

export const metricDef = (name: string): MetricDef => METRICS[name as MetricName];

/**
 * A metric another dataset's sums may be divided by (`per=<metric>` on
 * /v1/aggregate): where it comes from, which keys a numerator row is matched on,
 * and what the numerator must be. A group's denominator is the metric's sum over
 * exactly the distinct keys of the group's numerator rows.
 */
export interface DenominatorDef {
  /** The dataset holding the metric. */
  readonly dataset: string;
  /** The dimensions a numerator row is matched on; `shared` is every dimension the two datasets share. */
  readonly keys: readonly string[] | 'shared';
  /** The financial datasets whose sums it may divide. */
  readonly numerators: readonly string[];
  /** A unit the numerator must be in (`USD`): a ratio of two currencies means nothing. */
  readonly numeratorUnit?: string;
  /** What `<key>_per_<metric>` is, as docs and OpenAPI say it. */
  readonly means: string;
}

const byCountry = ['country', 'state', 'year'] as const;

/** Every `per=` denominator: the catalog, validation, OpenAPI, docs, the typed client and the CLI read it. */
export const DENOMINATORS = {
  adult_population: {
    dataset: 'country',
    keys: byCountry,
    numerators: ['ggr', 'turnover', 'country'],
    means: "per adult: the sum divided by the adult population of the (country, state, year) keys the group's rows have",
  },
  gdp_usd: {
    dataset: 'country',
    keys: byCountry,
    numerators: ['ggr', 'turnover', 'country'],
    numeratorUnit: 'USD',
    means: "a fraction of GDP: the sum (in USD) divided by the GDP in USD of the (country, state, year) keys the group's rows have",
  },
  turnover: {
    dataset: 'turnover',
    keys: 'shared',
    numerators: ['ggr'],
    means: 'hold, the gross win margin: GGR divided by the turnover of the same rows (every shared dimension, fx included)',
  },
} as const satisfies Readonly<Record<string, DenominatorDef>>;

export type DenominatorName = keyof typeof DENOMINATORS;

/** Every denominator with its literal names (for types only: the typed client's `per`). */
export type Denominators = typeof DENOMINATORS;

export const DENOMINATOR_NAMES = Object.keys(DENOMINATORS) as DenominatorName[];

/** The dimensions `per` of a `numerator` dataset joins on: as listed, or (`shared`) in the numerator's dimension order. */
export function denominatorKeys(per: DenominatorDef, numerator: DatasetDef): readonly string[] {
  const other = byName.get(per.dataset)!;
  if (per.keys !== 'shared') return per.keys;
  return numerator.dimensions.filter((d) => other.dimensions.includes(d));
}

/** Every dataset with its literal names (for types only). */
export type Registry = typeof DEFINITIONS;

const byName = new Map(DATASETS.map((d) => [d.name, d]));

export function findDataset(name: string, kind: DatasetKind): DatasetDef | undefined {
  const def = byName.get(name);
  return def?.kind === kind ? def : undefined;
}

/** Integer-typed dimensions; every other dimension is a string. */
export const INTEGER_DIMENSIONS: ReadonlySet<string> = new Set(['year']);
