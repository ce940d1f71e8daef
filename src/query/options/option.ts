import * as v from 'valibot';
import type { ApiError } from '../../errors/index.ts';
import type { DatasetDef } from '../../registry.ts';

// A query option of a data endpoint, described once: how it is parsed, what the
// document says of it, the values it is shown and tried with, its refusals, and its
// part of the key that kept results, cursors and cached answers share. Each endpoint
// lists its options (endpoint.ts); its schema, OpenAPI parameters, key, the hints
// that point a misplaced parameter to its endpoint, the typed client's request types
// and the query CLI's flags are derived from those lists.

/** A value of an option, and a request it works in. */
export interface OptionExample {
  /** As sent: one value, or several for an option that repeats. */
  readonly value: string | readonly string[];
  /** The path and query of a request that sends this value and answers 200; by default the endpoint's example request with it. */
  readonly request?: string;
}

/**
 * An option's part of the key (query/scope.ts). A function gives its own part, from
 * its value as parsed; `scope` says one of the scope's own fields holds it, resolved
 * by the request before it is keyed (the release read, the dataset, the filters and
 * period, the format answered, the page's position and size).
 */
export type OptionKey<T> = ((value: Given<T>) => unknown) | 'scope';

/** An option's value when it is sent (or has a default): what its hooks are called with. */
export type Given<T> = Exclude<T, undefined>;

/**
 * How the typed client and the query CLI take an option whose parsed value is not
 * what a client sends (src/client/types.ts gives each its type per metric); an option
 * without one is sent as its parsed value's type.
 */
export type ClientShape = 'dimensions' | 'dimension-or-all' | 'measures' | 'denominator' | 'having' | 'span' | 'text' | 'flag';

export interface QueryOption<T = unknown> {
  /** Parses the parameter as Koa hands it over (a string, several, or none) into its value. */
  readonly schema: v.GenericSchema<unknown, T>;
  /** What it does, as the document says it; its first sentence is its help line (the query CLI, the Explore page). */
  readonly description: string;
  /** Two values or more that answer differently, each with a request it works in. */
  readonly examples: readonly OptionExample[];
  /** Its refusals, each as the error catalog words it: the document's examples of its 400s. */
  readonly errors?: Readonly<Record<string, ApiError>>;
  readonly key: OptionKey<T>;
  /** Sent as an integer: the document's type, the client's number. */
  readonly integer?: boolean;
  /** The values it takes where its schema leaves them to the plan (names of dimensions, measures): the document's enum and the CLI's choices. */
  readonly values?: (def: DatasetDef) => readonly string[];
  /** The document's schema of each value, made of `values`, where an enum of them is not it. */
  readonly openapi?: (values: readonly string[]) => Readonly<Record<string, unknown>>;
  readonly client?: ClientShape;
  /**
   * Where the Explore page puts its control, as the document's `x-explore` says:
   * `first` among the controls an analyst reads first (the dataset, grouping, measures,
   * years, a diff's releases), `page` nowhere (the page sets it: a cursor, a format);
   * without it, under the page's "More options".
   */
  readonly explore?: 'first' | 'page';
}

/** An endpoint's options by name, in the document's order. */
// biome-ignore lint/suspicious/noExplicitAny: options of every value type; each list's own type keeps each option's
export type Options = Readonly<Record<string, QueryOption<any>>>;

/** The parsed value of each option. */
export type ValuesOf<O extends Options> = { readonly [K in keyof O]: v.InferOutput<O[K]['schema']> };

/** An option's help line: the first sentence of its description. */
export const helpLine = (option: Pick<QueryOption, 'description'>) => option.description.split(/(?<=\.)\s/)[0]!;

/**
 * The parts of the key the options give for `values`, in the options' order: each
 * option with a key of its own and a value. Two requests that differ in any option
 * differ here, unless the option says the scope holds it.
 */
export function keyParts<O extends Options>(options: O, values: ValuesOf<O>): [string, unknown][] {
  const parts: [string, unknown][] = [];
  for (const [name, option] of Object.entries(options)) {
    if (option.key === 'scope') continue;
    const value = values[name as keyof O];
    const part = value === undefined ? undefined : option.key(value as Given<unknown>);
    if (part !== undefined) parts.push([name, part]);
  }
  return parts;
}

/** Each option's schema by name, for the endpoint's object schema. */
export const schemasOf = <O extends Options>(options: O) =>
  Object.fromEntries(Object.entries(options).map(([name, option]) => [name, option.schema])) as { [K in keyof O]: O[K]['schema'] };

const absentValues = new WeakMap<QueryOption, string | undefined>();

/** What an option parses to when it is not sent (its default), as JSON; undefined for none. */
function absentValue(option: QueryOption): string | undefined {
  if (!absentValues.has(option)) {
    const parsed = v.safeParse(option.schema, undefined);
    absentValues.set(option, parsed.success && parsed.output !== undefined ? JSON.stringify(parsed.output) : undefined);
  }
  return absentValues.get(option);
}

/** Whether `value` is one a request asked for: sent, and not what the option means when it is not sent. */
export const isGiven = (option: QueryOption, value: unknown): boolean =>
  value !== undefined && JSON.stringify(value) !== absentValue(option);

/** Whether the option may be sent several times (`a=1&a=2`): its schema takes a list. */
export const repeats = (option: QueryOption): boolean => v.safeParse(option.schema, []).success;
