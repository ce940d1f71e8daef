import type { Publication } from './publication-log.ts';

// The release calendar /v1/releases carries when RELEASE_DAY is set (docs/api.md
// "Notifications"), after SDMX's release calendar (periodicity, offset, tolerance): a
// release is expected on day RELEASE_DAY of every month, UTC, and counts as on time
// within RELEASE_TOLERANCE_DAYS either side of it.

export interface CalendarSettings {
  /** RELEASE_DAY: 1 to 28, so every month has it. */
  readonly day: number;
  /** RELEASE_TOLERANCE_DAYS. */
  readonly toleranceDays: number;
}

export interface ReleaseCalendar {
  readonly periodicity: 'P1M';
  /** The date (UTC) the next release is expected, YYYY-MM-DD. */
  readonly next_expected: string;
  /** An ISO 8601 duration, P7D. */
  readonly tolerance: string;
  /** True from 00:00 UTC on the day after next_expected plus the tolerance, until a release is published. */
  readonly late: boolean;
}

const DAY_MS = 86_400_000;

/** Day `day` of the month `months` after January 1970, at 00:00 UTC. */
const expectedOn = (months: number, day: number) => Date.UTC(1970, months, day);

/**
 * The calendar at `now` (ms since the epoch), from the publication log: the next
 * expected release is the first expected day whose window (the tolerance before it)
 * opens after the last publication, so a release published a few days early or late
 * counts for the day it was expected on, not for the next one. Withdrawals publish
 * nothing. Before any publication, the first expected day from today on.
 */
export function releaseCalendar(log: readonly Publication[], settings: CalendarSettings, now: number): ReleaseCalendar {
  const tolerance = settings.toleranceDays * DAY_MS;
  const last = log.findLast((line) => line.type === 'release.published');
  const after = last === undefined ? Math.floor(now / DAY_MS) * DAY_MS - 1 - tolerance : Date.parse(last.at);
  const from = new Date(after);
  let months = (from.getUTCFullYear() - 1970) * 12 + from.getUTCMonth() - 1;
  while (expectedOn(months, settings.day) - tolerance <= after) months++;
  const expected = expectedOn(months, settings.day);
  return {
    periodicity: 'P1M',
    next_expected: new Date(expected).toISOString().slice(0, 10),
    tolerance: `P${settings.toleranceDays}D`,
    late: now >= expected + tolerance + DAY_MS,
  };
}
