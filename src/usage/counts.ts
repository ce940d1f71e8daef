// One key's usage of one UTC day (GET /v1/usage/daily), as the stores keep it and
// as a flush adds to them: plain counters, so adding two is adding each field.

export const DAY_MS = 86_400_000;

/** The most days asked for at once, and the most kept: older days are dropped. */
export const KEEP_DAYS = 92;

export interface DayCounts {
  requests: number;
  /** Answers by HTTP status. */
  by_status: Record<string, number>;
  /** Answers by route pattern (`unmatched` for a path no route has). */
  by_endpoint: Record<string, number>;
  /** Refusals by the limit that refused: minute, day, exports_day, exports_open, heavy_seconds_minute, busy, timeout… */
  refused: Record<string, number>;
  /** Exports charged to EXPORT_LIMIT_PER_DAY. */
  exports: number;
  /** Bytes written to the connection for the answers: status line, headers and body, as sent. */
  bytes_sent: number;
  /** Milliseconds of heavy work charged (KEY_HEAVY_SECONDS_PER_MINUTE). */
  heavy_ms: number;
}

/** The last request a limit refused for a key. */
export interface Refusal {
  readonly at: string;
  readonly limit: string;
  readonly path: string;
  readonly request_id: string;
  readonly retry_after: number | null;
}

/** What one flush adds: key id → UTC date → counts; and each key's newest refusal. */
export interface UsageBatch {
  readonly days: ReadonlyMap<string, ReadonlyMap<string, DayCounts>>;
  readonly refusals: ReadonlyMap<string, Refusal>;
}

export const emptyCounts = (): DayCounts => ({
  requests: 0,
  by_status: {},
  by_endpoint: {},
  refused: {},
  exports: 0,
  bytes_sent: 0,
  heavy_ms: 0,
});

function addTo(into: Record<string, number>, from: Readonly<Record<string, number>>): void {
  for (const name in from) into[name] = (into[name] ?? 0) + from[name]!;
}

/** Adds `from` into `into`, and returns `into`. */
export function addCounts(into: DayCounts, from: DayCounts): DayCounts {
  into.requests += from.requests;
  addTo(into.by_status, from.by_status);
  addTo(into.by_endpoint, from.by_endpoint);
  addTo(into.refused, from.refused);
  into.exports += from.exports;
  into.bytes_sent += from.bytes_sent;
  into.heavy_ms += from.heavy_ms;
  return into;
}

/** The UTC date (YYYY-MM-DD) of day number `day` since the epoch. */
export const dateOf = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** The day number of a YYYY-MM-DD date. */
export const dayOf = (date: string): number => Math.floor(Date.parse(`${date}T00:00:00Z`) / DAY_MS);

/** The first date a store keeps when it is `now`: KEEP_DAYS days, today included. */
export const oldestKept = (now: number): string => dateOf(Math.floor(now / DAY_MS) - KEEP_DAYS + 1);

/** Every date from `start` to `end`, both included. */
export function datesFrom(start: string, end: string): string[] {
  const dates: string[] = [];
  for (let day = dayOf(start); day <= dayOf(end); day++) dates.push(dateOf(day));
  return dates;
}

/** The newer of two refusals (either may be missing). */
export const newer = (a: Refusal | null | undefined, b: Refusal | null | undefined): Refusal | null =>
  !a ? (b ?? null) : !b ? a : a.at >= b.at ? a : b;
