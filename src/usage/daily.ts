import { csvField } from '../render/csv-syntax.ts';
import { DAY_MS, type DayCounts, dateOf, datesFrom, dayOf, emptyCounts, KEEP_DAYS } from './counts.ts';

/** One day of GET /v1/usage/daily. */
export interface DailyUsage {
  readonly date: string;
  readonly requests: number;
  readonly by_status: Record<string, number>;
  readonly by_endpoint: Record<string, number>;
  readonly refused: Record<string, number>;
  readonly exports: number;
  readonly bytes_sent: number;
  readonly heavy_seconds: number;
}

/** The days GET /v1/usage/daily covers without `start` and `end`: the last 7 UTC days, today included. */
export const DEFAULT_DAYS = 7;

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const isDate = (text: string) => DATE.test(text) && dateOf(dayOf(text)) === text;

/**
 * `start` and `end` (YYYY-MM-DD, UTC, both included) checked: each a calendar date,
 * `end` not after today, `start` not after `end`, at most KEEP_DAYS days; a missing
 * `end` is today and a missing `start` DEFAULT_DAYS before `end`. Each problem under
 * its field's name, for the 400.
 */
export function dailyRange(
  given: { start?: string; end?: string },
  now: number,
): { start: string; end: string } | { errors: Record<string, string[]> } {
  const today = dateOf(Math.floor(now / DAY_MS));
  const errors: Record<string, string[]> = {};
  for (const field of ['start', 'end'] as const) {
    const text = given[field];
    if (text !== undefined && !isDate(text)) errors[field] = [`Expected a calendar date YYYY-MM-DD (UTC), received '${text.slice(0, 40)}'`];
  }
  if (Object.keys(errors).length > 0) return { errors };
  const end = given.end ?? today;
  const start = given.start ?? dateOf(dayOf(end) - DEFAULT_DAYS + 1);
  if (end > today) errors.end = [`${end} is after today (${today}, UTC)`];
  else if (start > end) errors.start = [`${start} is after the end ${end}`];
  else if (dayOf(end) - dayOf(start) + 1 > KEEP_DAYS)
    errors.start = [`${start} to ${end} is ${dayOf(end) - dayOf(start) + 1} days; at most ${KEEP_DAYS} are kept and asked at once`];
  return Object.keys(errors).length > 0 ? { errors } : { start, end };
}

/** Every date of the range, in order, with what the store holds (zeros for a day without any). */
export function dailyUsage(days: ReadonlyMap<string, DayCounts>, start: string, end: string): DailyUsage[] {
  return datesFrom(start, end).map((date) => {
    const { heavy_ms, ...counts } = days.get(date) ?? emptyCounts();
    return { date, ...counts, heavy_seconds: Math.round(heavy_ms) / 1000 };
  });
}

/**
 * The days as RFC 4180 CSV, one row a day: the totals, then a column per status,
 * endpoint and refusing limit seen in the range (`status:200`, `endpoint:/v1/financials`,
 * `refused:minute`), 0 where a day has none.
 */
export function dailyCsv(days: readonly DailyUsage[]): string {
  const tallies = [
    ['status', 'by_status'],
    ['endpoint', 'by_endpoint'],
    ['refused', 'refused'],
  ] as const;
  const columns = tallies.flatMap(([label, field]) =>
    [...new Set(days.flatMap((d) => Object.keys(d[field])))].sort().map((name) => ({ name: `${label}:${name}`, field, key: name })),
  );
  const header = ['date', 'requests', 'exports', 'bytes_sent', 'heavy_seconds', ...columns.map((c) => c.name)];
  const rows = days.map((d) => [
    d.date,
    d.requests,
    d.exports,
    d.bytes_sent,
    d.heavy_seconds,
    ...columns.map((c) => d[c.field][c.key] ?? 0),
  ]);
  return [header, ...rows].map((row) => `${row.map(csvField).join(',')}\r\n`).join('');
}
