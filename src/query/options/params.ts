import * as v from 'valibot';
import { InvalidParametersError } from '../../errors/index.ts';
import { RELEASE_ID } from '../../registry.ts';
import type { FormatName } from '../../render/formats.ts';
import type { YearRange } from '../filters.ts';

// Building blocks for query-string schemas. Koa parses `a=1&a=2` into an array, so
// every parameter arrives as a string, an array of strings, or not at all.

/**
 * A parameter given at most once. A missing one reaches `schema` as undefined, so a
 * required string reports "Expected string but received undefined".
 */
export const single = <S extends v.GenericSchema>(schema: S) =>
  // Typed by `schema` alone. valibot skips an absent key unless its schema has a
  // default, so a default of "undefined" (as a function) routes a missing value on to
  // `schema`, which then says which type it expected instead of "Invalid key".
  v.pipe(
    v.optional(v.unknown(), () => undefined),
    v.check((value) => !Array.isArray(value), 'Expected a single value, received several'),
    schema,
  ) as unknown as v.GenericSchema<unknown, v.InferOutput<S>>;

/** A parameter that may repeat (`country=France&country=Spain`), always as an array. */
export const repeatable = <S extends v.GenericSchema<string, string>>(item: S) =>
  v.pipe(
    v.union([v.string(), v.array(v.string())]),
    v.transform((value) => (Array.isArray(value) ? value : [value])),
    v.array(item),
  );

/** `limit`: 1 to 1000 (spec section 8), `fallback` when absent. */
export const limitParam = (fallback: number) =>
  v.optional(
    single(
      v.pipe(
        v.string(),
        v.regex(/^\d{1,7}$/, 'Expected an integer from 1 to 1000'),
        v.transform(Number),
        v.minValue(1, 'Expected an integer from 1 to 1000'),
        v.maxValue(1000, 'Expected an integer from 1 to 1000'),
      ),
    ),
    String(fallback),
  );

/** `release=YYYY-MM`: a published release to read instead of the current one (docs/api.md "Releases"). */
export const releaseParam = v.optional(single(v.pipe(v.string(), v.regex(RELEASE_ID, 'Expected a release id like 2026-11'))));

// Any text: whether it is a cursor of ours is for the cursor codec to say ("Invalid pagination cursor").
export const cursorParam = v.optional(single(v.string()));

/** `format=`: one of the formats an endpoint serves, by name; it wins over Accept (docs/api.md "Formats"). */
export const formatParam = <const N extends FormatName>(offered: readonly N[]) =>
  v.optional(
    single(
      v.picklist(
        offered,
        // A page format asked where only /v1/export writes it (Parquet, NDJSON): the message names where.
        `Expected ${offered.slice(0, -1).join(', ')} or ${offered.at(-1)}${(offered as readonly string[]).includes('parquet') ? '' : '; Parquet and NDJSON files come from /v1/export (format=parquet)'}`,
      ),
    ),
  );

const PERIOD = /^(\d{4})-(\d{2})-(\d{2}):(\d{4})-(\d{2})-(\d{2})$/;

function isCalendarDate(year: number, month: number, day: number): boolean {
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

const AS_OF_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const AS_OF_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/i;
export const AS_OF_EXPECTED = 'Expected a date YYYY-MM-DD or an RFC 3339 instant such as 2026-03-05T12:00:00Z';

/** An instant `as_of` names: the one given, or the end (23:59:59.999 UTC) of the day given. */
export interface AsOf {
  /** As an ISO instant in UTC, to the millisecond: what meta.as_of says was asked. */
  readonly instant: string;
  readonly ms: number;
}

/** `as_of=`: a date (the end of that UTC day) or an RFC 3339 instant. */
export const asOfParam = v.optional(
  single(
    v.pipe(
      v.string(),
      v.rawTransform(({ dataset, addIssue, NEVER }) => {
        const text = dataset.value;
        const parts = AS_OF_DAY.exec(text) ?? AS_OF_INSTANT.exec(text);
        if (!parts) {
          addIssue({ message: AS_OF_EXPECTED });
          return NEVER;
        }
        const [y, m, d] = parts.slice(1, 4).map(Number) as [number, number, number];
        if (!isCalendarDate(y, m, d)) {
          addIssue({ message: `Not a calendar date: ${text.slice(0, 10)}` });
          return NEVER;
        }
        const ms = AS_OF_DAY.test(text) ? Date.parse(`${text}T23:59:59.999Z`) : Date.parse(text);
        return { instant: new Date(ms).toISOString(), ms } satisfies AsOf;
      }),
    ),
  ),
);

/** `YYYY-MM-DD:YYYY-MM-DD`; keeps rows whose calendar year overlaps the range. */
export const periodParam = v.optional(
  single(
    v.pipe(
      v.string(),
      v.regex(PERIOD, 'Expected format: YYYY-MM-DD:YYYY-MM-DD'),
      v.rawTransform(({ dataset, addIssue, NEVER }) => {
        const [, y1, m1, d1, y2, m2, d2] = PERIOD.exec(dataset.value)!.map(Number) as number[];
        const [start, end] = dataset.value.split(':') as [string, string];
        if (!isCalendarDate(y1!, m1!, d1!)) addIssue({ message: `Not a calendar date: ${start}` });
        if (!isCalendarDate(y2!, m2!, d2!)) addIssue({ message: `Not a calendar date: ${end}` });
        if (start > end) addIssue({ message: `The start ${start} is after the end ${end}` });
        return dataset.issues ? NEVER : { text: dataset.value, years: { from: y1!, to: y2! } satisfies YearRange };
      }),
    ),
  ),
);

/** Renders valibot issues as the spec's flattened `details` (formErrors, fieldErrors). */
export function invalidParameters(issues: readonly v.BaseIssue<unknown>[]): InvalidParametersError {
  // No prototype: a parameter named __proto__ must become a key like any other.
  const fieldErrors: Record<string, string[]> = Object.create(null);
  const formErrors: string[] = [];
  for (const issue of issues) {
    // Keyed by the parameter itself: a bad second `year` is reported under `year`, not `year.1`.
    const key = issue.path?.[0]?.key;
    if (typeof key === 'string') {
      fieldErrors[key] ??= [];
      fieldErrors[key].push(issue.message);
    } else formErrors.push(issue.message);
  }
  return new InvalidParametersError(fieldErrors, formErrors);
}

/**
 * Parameter names outside `known`. Read from the raw query, not the schema's output:
 * valibot skips keys such as `__proto__`, and those must be refused like any other.
 */
export const unknownKeys = (query: object, known: (key: string) => boolean) => Object.keys(query).filter((key) => !known(key));
