import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../src/config.ts';
import type { Publication } from '../src/releases/publication-log.ts';
import { releaseCalendar } from '../src/releases/release-calendar.ts';
import { startTestService } from './helpers/service.ts';
import { R2, R3, type Vintages, vintages } from './helpers/vintages.ts';

// The release calendar of /v1/releases (RELEASE_DAY, RELEASE_TOLERANCE_DAYS): when the
// next release is expected and whether it is late, at fixed instants around month and
// year ends, and from a real service whose clock is injected.

const published = (at: string, release = '2026-12'): Publication => ({ seq: 1, type: 'release.published', release, previous: null, at });
const at = (iso: string) => Date.parse(iso);

const pure = suite('release calendar');

pure('late only from 00:00 UTC on the day after the expected day plus the tolerance', () => {
  const log = [published('2026-12-14T09:00:00.000Z')];
  const settings = { day: 15, toleranceDays: 7 };
  assert.equal(releaseCalendar(log, settings, at('2027-01-22T23:59:59.999Z')), {
    periodicity: 'P1M',
    next_expected: '2027-01-15',
    tolerance: 'P7D',
    late: false,
  });
  assert.is(releaseCalendar(log, settings, at('2027-01-23T00:00:00.000Z')).late, true);
  assert.is(releaseCalendar(log, settings, at('2027-01-10T00:00:00.000Z')).late, false);
});

pure('a release published within the tolerance, early or late, counts for the day it was expected on', () => {
  const settings = { day: 15, toleranceDays: 7 };
  const next = (last: string) => releaseCalendar([published(last)], settings, at(last)).next_expected;
  assert.is(next('2026-12-08T00:00:00.000Z'), '2027-01-15'); // the first instant of December's window
  assert.is(next('2026-12-22T23:59:59.000Z'), '2027-01-15'); // the last day of it
  assert.is(next('2026-12-27T10:00:00.000Z'), '2027-01-15'); // past it: still December's, very late
  assert.is(next('2026-12-07T23:59:59.999Z'), '2026-12-15'); // before it: November's, late
});

pure('across the end of the year', () => {
  const settings = { day: 1, toleranceDays: 7 };
  // Published on 30 December, within 1 January's window: the next is February's.
  const early = [published('2026-12-30T12:00:00.000Z')];
  assert.is(releaseCalendar(early, settings, at('2027-01-02T00:00:00.000Z')).next_expected, '2027-02-01');
  // Published on 20 December, before it: January's is next, late from 9 January.
  const before = [published('2026-12-20T12:00:00.000Z')];
  assert.equal(releaseCalendar(before, settings, at('2027-01-08T23:59:59.999Z')), {
    periodicity: 'P1M',
    next_expected: '2027-01-01',
    tolerance: 'P7D',
    late: false,
  });
  assert.is(releaseCalendar(before, settings, at('2027-01-09T00:00:00.000Z')).late, true);
});

pure('day 28 in February, in a common and a leap year; the tolerance running into March', () => {
  const settings = { day: 28, toleranceDays: 3 };
  const common = [published('2027-01-27T00:00:00.000Z', '2027-01')];
  assert.is(releaseCalendar(common, settings, at('2027-03-03T23:59:59.999Z')).next_expected, '2027-02-28');
  assert.is(releaseCalendar(common, settings, at('2027-03-03T23:59:59.999Z')).late, false);
  assert.is(releaseCalendar(common, settings, at('2027-03-04T00:00:00.000Z')).late, true);
  const leap = [published('2028-01-27T00:00:00.000Z', '2028-01')];
  assert.is(releaseCalendar(leap, settings, at('2028-03-02T23:59:59.999Z')).late, false);
  assert.is(releaseCalendar(leap, settings, at('2028-03-03T00:00:00.000Z')).late, true);
});

pure('a withdrawal is no release; before any publication, the first expected day from today on', () => {
  const settings = { day: 15, toleranceDays: 7 };
  const log: Publication[] = [
    published('2026-11-15T08:00:00.000Z', '2026-11'),
    { seq: 2, type: 'release.published', release: '2026-12', previous: '2026-11', at: '2026-12-15T08:00:00.000Z' },
    { seq: 3, type: 'release.withdrawn', release: '2026-12', previous: '2026-11', at: '2027-01-30T08:00:00.000Z' },
  ];
  assert.equal(releaseCalendar(log, settings, at('2027-01-30T09:00:00.000Z')), {
    periodicity: 'P1M',
    next_expected: '2027-01-15',
    tolerance: 'P7D',
    late: true,
  });
  assert.is(releaseCalendar([], { day: 7, toleranceDays: 7 }, at('2026-12-07T12:00:00.000Z')).next_expected, '2026-12-07');
  assert.is(releaseCalendar([], { day: 6, toleranceDays: 7 }, at('2026-12-07T12:00:00.000Z')).next_expected, '2027-01-06');
});

pure('RELEASE_DAY is a day every month has; RELEASE_TOLERANCE_DAYS at most 14', () => {
  assert.equal(
    [loadConfig({ RELEASE_DAY: '28' }).RELEASE_DAY, loadConfig({}).RELEASE_DAY, loadConfig({}).RELEASE_TOLERANCE_DAYS],
    [28, undefined, 7],
  );
  for (const env of [{ RELEASE_DAY: '29' }, { RELEASE_DAY: '0' }, { RELEASE_DAY: 'mid' }, { RELEASE_TOLERANCE_DAYS: '15' }]) {
    assert.throws(
      () => loadConfig(env),
      (err: Error) => err instanceof ConfigError && err.message.includes(Object.keys(env)[0]!),
      JSON.stringify(env),
    );
  }
});

pure.run();

const served = suite('release calendar on /v1/releases');
let v: Vintages;
served.before(async () => {
  // R3 published on 5 March, withdrawn on 10 March: the last publication stays 5 March.
  v = await vintages({ rolledBack: true });
});
served.after(async () => {
  await v?.remove();
});

served('with RELEASE_DAY, `calendar` says when the next release is due and turns late with the clock, changing the ETag', async () => {
  let now = at('2026-04-12T23:59:59.000Z');
  const service = await startTestService({ dataDir: v.dataDir, env: { RELEASE_DAY: '5' }, clock: () => now });
  try {
    const onTime = await service.get('/v1/releases');
    assert.is(onTime.status, 200, onTime.text);
    assert.equal(onTime.json.calendar, { periodicity: 'P1M', next_expected: '2026-04-05', tolerance: 'P7D', late: false });
    assert.equal([onTime.json.releases[0].id, onTime.json.withdrawn[0].id], [R2, R3]);
    now = at('2026-04-13T00:00:00.000Z');
    const late = await service.get('/v1/releases', { headers: { 'if-none-match': String(onTime.headers.etag) } });
    assert.is(late.status, 200);
    assert.equal(late.json.calendar, { periodicity: 'P1M', next_expected: '2026-04-05', tolerance: 'P7D', late: true });
    assert.is.not(late.headers.etag, onTime.headers.etag);
  } finally {
    await service.stop();
  }
});

served('RELEASE_TOLERANCE_DAYS sets the tolerance; without RELEASE_DAY there is no calendar', async () => {
  const now = at('2026-04-14T12:00:00.000Z');
  const tolerant = await startTestService({
    dataDir: v.dataDir,
    env: { RELEASE_DAY: '5', RELEASE_TOLERANCE_DAYS: '10' },
    clock: () => now,
  });
  try {
    const res = await tolerant.get('/v1/releases');
    assert.equal(res.json.calendar, { periodicity: 'P1M', next_expected: '2026-04-05', tolerance: 'P10D', late: false });
  } finally {
    await tolerant.stop();
  }
  const none = await startTestService({ dataDir: v.dataDir, clock: () => now });
  try {
    const res = await none.get('/v1/releases');
    assert.is(res.status, 200);
    assert.not.ok('calendar' in res.json);
  } finally {
    await none.stop();
  }
});

served.run();
