import * as v from 'valibot';
import { type ApiError, InvalidParametersError } from '../../errors/index.ts';
import { FILTER_ERRORS, filterParams, yearParam } from './filters.ts';
import { type Options, schemasOf, type ValuesOf } from './option.ts';
import { invalidParameters, unknownKeys } from './params.ts';

// A data endpoint's query: the options it lists, and what it makes of any other
// parameter. The financial endpoints take every other parameter as a dimension
// filter of the dataset named (filter-values.ts); /v1/reference refuses
// it; /v1/catalog ignores it, as it always has.

export type Others = 'filters' | 'refused' | 'ignored';

export interface Endpoint<O extends Options = Options> {
  readonly path: string;
  readonly options: O;
  readonly others: Others;
  /** The operation's example request: Swagger UI fills it in, generated tests send it, so it answers as it is. */
  readonly example: string;
  /**
   * A request on financial dataset `metric` that answers as it is (a filter endpoint's):
   * where a dimension filter's examples are tried, and where a hint sends a parameter
   * this endpoint takes but another was sent.
   */
  readonly requestFor?: (metric: string) => string;
}

/** What the query of an endpoint with dimension filters parses to: its options' values, then each filter as sent. */
export type FilteredValues<O extends Options> = ValuesOf<O> & { readonly [filter: string]: unknown };

function schemaOf(endpoint: Endpoint): v.GenericSchema {
  const entries = schemasOf(endpoint.options);
  if (endpoint.others === 'filters') return v.objectWithRest({ ...entries, year: yearParam }, filterParams);
  return endpoint.others === 'ignored' ? v.looseObject(entries) : v.object(entries);
}

const schemas = new WeakMap<Endpoint, v.GenericSchema>();

/** The endpoint's valibot schema: made once, read by the parser and the document. */
export function querySchema(endpoint: Endpoint): v.GenericSchema {
  let schema = schemas.get(endpoint);
  if (!schema) {
    schema = schemaOf(endpoint);
    schemas.set(endpoint, schema);
  }
  return schema;
}

/** The endpoint's sentence refusing a parameter it does not take (`others: 'refused'`). */
export const unknownParameter = (endpoint: Endpoint) => {
  const names = Object.keys(endpoint.options);
  return `Unknown parameter: ${endpoint.path} accepts ${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
};

/** Parses a request's query for `endpoint`, throwing the spec's 400 (Invalid query parameters) on failure. */
export function parseOptions<O extends Options>(endpoint: Endpoint<O>, query: Record<string, unknown>): FilteredValues<O> {
  if (endpoint.others === 'refused') {
    const unknown = unknownKeys(query, (key) => Object.hasOwn(endpoint.options, key));
    if (unknown.length) throw new InvalidParametersError(Object.fromEntries(unknown.map((key) => [key, [unknownParameter(endpoint)]])));
  }
  const result = v.safeParse(querySchema(endpoint), query);
  if (!result.success) throw invalidParameters(result.issues);
  return result.output as FilteredValues<O>;
}

/** The refusals of its options and of what it makes of other parameters: the document's examples of its 400s. */
export function optionErrors(endpoint: Endpoint): Record<string, ApiError> {
  const others =
    endpoint.others === 'filters'
      ? FILTER_ERRORS
      : endpoint.others === 'refused'
        ? { unknownParameter: new InvalidParametersError({ country: [unknownParameter(endpoint)] }) }
        : {};
  return Object.assign({}, ...Object.values(endpoint.options).map((option) => option.errors ?? {}), others);
}
