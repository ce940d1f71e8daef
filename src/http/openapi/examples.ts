import { FUNCTIONS, planAggregate } from '../../query/aggregate-plan.ts';
import { DATASETS } from '../../registry.ts';
import type { Json } from './json.ts';

// What the document shows by example, for tools that build requests from it (Portman
// and Postman, Swagger UI's "Try it out", client generators): a value for every
// parameter, and on every operation a request that works as it is (docs/api.md
// "OpenAPI"). A generated request sends the required parameters with their examples,
// so those alone must make a request that succeeds.

export const financialSets = DATASETS.filter((d) => d.kind === 'financial');
export const referenceSets = DATASETS.filter((d) => d.kind === 'reference');

/** What the document says of a query parameter beyond what its valibot schema checks. */
export interface ParameterNotes {
  readonly description?: string;
  /** The closed set of values it takes (of each value, when it repeats), where the code checks them elsewhere. */
  readonly values?: readonly string[];
  /** More of its schema (of each value, when it repeats). */
  readonly schema?: Json;
  /** A value to send: an array for a parameter that repeats. */
  readonly example?: unknown;
}

const dimensions = [...new Set(financialSets.flatMap((d) => d.dimensions))];
const measures = financialSets.flatMap((d) => d.metrics.flatMap((m) => [m, ...FUNCTIONS.map((fn) => `${m}:${fn}`)]));
const orderKeys = [...dimensions, ...financialSets.flatMap((d) => d.metrics.flatMap((m) => FUNCTIONS.map((fn) => `${m}_${fn}`))), 'rows'];
const oneOf = (names: readonly string[]) => `(?:${names.join('|')})`;

/**
 * The aggregate a generated request makes, sending `metric` alone: the first dataset
 * whose ungrouped, unfiltered aggregate is allowed and adds something up. (ggr and
 * turnover alone would add up several currencies, which is refused; fx holds rates only.)
 */
function aggregateExample(): { metric: string; measure: string; refused: string[] } {
  const refused: string[] = [];
  for (const def of financialSets) {
    try {
      const plan = planAggregate(def, {
        groupBy: [],
        filters: new Map(),
        measures: undefined,
        order: undefined,
        rollup: false,
        derived: { compare: undefined, share: undefined, per: undefined, having: [] },
      });
      const sum = plan.measures.find((m) => m.fn === 'sum');
      if (sum) return { metric: def.name, measure: `${sum.metric}:${sum.fn}`, refused };
    } catch {
      // Refused without a filter: not an example that works alone.
      refused.push(def.name);
    }
  }
  throw new Error('no financial dataset aggregates without filters: the document has no working example for /v1/aggregate');
}

/** Notes of the parameters several routes share, by name. */
export const SHARED_NOTES: Readonly<Record<string, ParameterNotes>> = {
  metric: {
    description: `Financial dataset: ${financialSets.map((d) => d.name).join(', ')} (GET /v1/catalog lists them). Given once.`,
    values: financialSets.map((d) => d.name),
    example: financialSets[0]!.name,
  },
  dataset: {
    description: `Reference dataset: ${referenceSets.map((d) => d.name).join(', ')}. Given once.`,
    values: referenceSets.map((d) => d.name),
    example: referenceSets[0]!.name,
  },
  period: {
    description: 'Keeps rows whose calendar year overlaps `YYYY-MM-DD:YYYY-MM-DD` (rows are annual). Given once.',
    example: '2020-01-01:2024-12-31',
  },
  limit: { description: 'Rows per page. Given once.', example: 1000 },
  cursor: {
    description:
      'Opaque cursor of the next page: `pagination.cursor` of the previous JSON page, or its `X-Next-Cursor` header. Keep the other parameters the same; a refused cursor (400 `Invalid pagination cursor`) means: repeat the request without it.',
    example: '2n9c.64_LsnkjhRyQoPrnqKXl2A.4cc3.json',
  },
  release: {
    description:
      'A published release `YYYY-MM` to read instead of the current one (GET /v1/releases lists them). Its answers never change: they are cached as immutable. Given once.',
    // The served document names the server's newest release instead (prefill.ts).
    example: '2026-12',
  },
  year: { description: 'Filter by integer year; repeat for several values. Applies to every metric.', example: ['2024'] },
  format: {
    description:
      "The body's format, by name: it wins over `Accept`, so a URL alone (pandas, R, Excel, a browser) picks it. A cursor pages only the format it was issued in. Given once.",
    example: 'csv',
  },
  // The served document names the server's two newest releases instead (prefill.ts).
  from: { example: '2026-11' },
  to: { example: '2026-12' },
  change: { example: ['changed'] },
};

const aggregate = aggregateExample();

/** Notes of /v1/aggregate's own parameters: the closed sets its plan checks, and examples that work with its `metric` example. */
export const AGGREGATE_NOTES: Readonly<Record<string, ParameterNotes>> = {
  metric: {
    ...SHARED_NOTES.metric,
    example: aggregate.metric,
    description: `${SHARED_NOTES.metric!.description} Its example, ${aggregate.metric}, aggregates with no other parameter; ${aggregate.refused.join(' and ')} alone would add up amounts in different units, which is refused unless a filter or a grouping keeps one unit.`,
  },
  group_by: {
    // One name per value, or several comma-separated in one.
    schema: { anyOf: [{ enum: dimensions }, { pattern: `^${oneOf(dimensions)}(?:,${oneOf(dimensions)})+$` }] },
    example: ['region'],
  },
  measure: { values: measures, example: [aggregate.measure] },
  order: { values: orderKeys.flatMap((key) => [key, `-${key}`]), example: `-${aggregate.measure.replace(':', '_')}` },
  rollup: { example: 'true' },
};

/**
 * /v1/aggregate's example request: Swagger UI fills in its parameters (prefill.ts), and
 * a generated request sends `metric` alone, so it takes the metric that works alone.
 */
export const AGGREGATE_EXAMPLE = `/v1/aggregate?metric=${aggregate.metric}&group_by=region&measure=${aggregate.measure}`;

/**
 * `x-codeSamples` (the extension Redoc, Scalar and Stoplight show) with one request
 * that works as it is, as README.md writes them: `$BASE` the service's address and
 * `$KEY` an API key. The document's own descriptions repeat it (document.ts).
 */
export function exampleRequest(pathAndQuery: string, keyed = true): Json[] {
  return [{ lang: 'Shell', label: 'curl', source: `curl -s "$BASE${pathAndQuery}"${keyed ? ' -H "x-api-key: $KEY"' : ''}` }];
}

/** The path and query of an operation's example request (`exampleRequest`), as its description and the tests read it. */
export function examplePath(operation: Json): string | undefined {
  const [sample] = (operation['x-codeSamples'] as { source: string }[] | undefined) ?? [];
  return sample && /"\$BASE([^"]+)"/.exec(sample.source)?.[1];
}
