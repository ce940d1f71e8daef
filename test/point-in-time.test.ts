import { DataQueryClient } from 'data-query-client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runQueryCli } from './helpers/query-cli.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { ggrIn, PUBLISHED, R1, R2, R3, ROLLED_BACK, type Vintages, vintages } from './helpers/vintages.ts';

// as_of=<date | instant>: answers as release=R does, R the release the publication log
// says was served then; checked against the releases' own files read by plain DuckDB.

const test = suite('as_of: the release served at an instant');
let data: Vintages;
let service: TestService;

test.before(async () => {
  data = await vintages({ rolledBack: true });
  service = await startTestService({ dataDir: data.dataDir });
});
test.after(async () => {
  await service?.stop();
  await data?.remove();
});

/** /v1/financials' query for one observation: each of its dimensions as a filter. */
const query = (dims: Readonly<Record<string, string | number>>) =>
  new URLSearchParams(Object.entries(dims).map(([k, v]) => [k, String(v)])).toString();
const ggrAt = async (letter: 'A' | 'B' | 'C' | 'D', asOf: string) => {
  const answer = await service.get(`/v1/financials?metric=ggr&${query(data.observations[letter])}&as_of=${asOf}`);
  assert.is(answer.status, 200, answer.text);
  assert.ok(answer.json.data.length <= 1);
  return { answer, ggr: answer.json.data[0]?.values.ggr as number | undefined };
};

test('between R1 and R2, between R2 and R3, and after the rollback to R2: each figure is the file of the release served then', async () => {
  const cases: [string, string][] = [
    ['2026-01-20', R1],
    [PUBLISHED[R2], R2],
    ['2026-02-05T09:59:59.999Z', R1],
    ['2026-03-04', R2],
    ['2026-03-11', R2],
    ['2026-03-10T09:00:00+01:00', R2],
  ];
  for (const [asOf, release] of cases) {
    for (const letter of ['A', 'B', 'C', 'D'] as const) {
      const { answer, ggr } = await ggrAt(letter, encodeURIComponent(asOf));
      assert.is(ggr, await ggrIn(data.files[release]!, data.observations[letter]), `${letter} as of ${asOf}`);
      assert.is(answer.json.meta.release, release);
      assert.equal(answer.json.meta.as_of.release, release);
    }
  }
});

test('meta.as_of says the instant read (a date is the end of its UTC day); Content-Location is the same request with release=, which answers the same rows', async () => {
  const path = `/v1/financials?metric=ggr&country=${encodeURIComponent(String(data.observations.B.country))}&limit=3&as_of=2026-01-20`;
  const asked = await service.get(path);
  assert.equal(asked.json.meta.as_of, { asked: '2026-01-20T23:59:59.999Z', release: R1 });
  const cited = asked.headers['content-location'] as string;
  assert.is(
    cited,
    `/v1/financials?metric=ggr&country=${encodeURIComponent(String(data.observations.B.country)).replaceAll('%20', '+')}&limit=3&release=${R1}`,
  );
  const again = await service.get(cited);
  assert.is(again.status, 200);
  assert.equal(again.json.data, asked.json.data);
  assert.is(again.json.meta.as_of, undefined);
});

test('while R3 was served (before its rollback), as_of answers as release=R3 does: withdrawn, so 404', async () => {
  const during = await service.get(`/v1/financials?metric=ggr&as_of=2026-03-07`);
  const byId = await service.get(`/v1/financials?metric=ggr&release=${R3}`);
  assert.is(during.status, 404);
  assert.is(during.status, byId.status);
  assert.equal(during.json, byId.json);
  assert.ok(Date.parse(ROLLED_BACK) > Date.parse('2026-03-07T23:59:59.999Z'));
});

test('every data endpoint takes as_of: aggregate, facets, catalog, reference in meta; export in Content-Location', async () => {
  const aggregate = await service.get('/v1/aggregate?metric=ggr&fx=USD&group_by=region&as_of=2026-01-31');
  assert.is(aggregate.status, 200, aggregate.text);
  assert.equal(aggregate.json.meta.as_of, { asked: '2026-01-31T23:59:59.999Z', release: R1 });
  assert.equal(aggregate.json.data, (await service.get(`/v1/aggregate?metric=ggr&fx=USD&group_by=region&release=${R1}`)).json.data);
  const facets = await service.get('/v1/facets?metric=ggr&as_of=2026-02-28');
  assert.is(facets.status, 200, facets.text);
  assert.is(facets.json.meta.release, R2);
  assert.is(facets.json.meta.as_of.release, R2);
  const catalog = await service.get('/v1/catalog?as_of=2026-01-31');
  assert.is(catalog.status, 200);
  assert.is(catalog.json.release.id, R1);
  assert.equal(catalog.json.as_of, { asked: '2026-01-31T23:59:59.999Z', release: R1 });
  const reference = await service.get('/v1/reference?dataset=country_reference&limit=2&as_of=2026-02-28');
  assert.is(reference.status, 200);
  assert.is(reference.json.meta.as_of.release, R2);
  const exported = await service.get('/v1/export?metric=ggr&format=csv&as_of=2026-01-31');
  assert.is(exported.status, 200);
  assert.is(exported.headers['content-location'], `/v1/export?metric=ggr&format=csv&release=${R1}`);
  assert.is(exported.text, (await service.get(`/v1/export?metric=ggr&format=csv&release=${R1}`)).text);
});

test('refusals, by their exact text: before the first publication, with release, malformed', async () => {
  const before = await service.get('/v1/financials?metric=ggr&as_of=2025-12-31');
  assert.is(before.status, 404);
  assert.equal(before.json, {
    error: `No release was published by 2025-12-31T23:59:59.999Z; the first was published at ${PUBLISHED[R1]}`,
  });
  const both = await service.get(`/v1/aggregate?metric=ggr&fx=USD&release=${R1}&as_of=2026-01-31`);
  assert.is(both.status, 400);
  assert.equal(both.json.details.fieldErrors, {
    as_of: ['Give as_of or release, not both: as_of picks the release that was served at that instant'],
    release: ['Give release or as_of, not both'],
  });
  for (const bad of ['2026-13-01', '2026-02-30', 'yesterday', '2026-01-05T10:00:00']) {
    const refused = await service.get(`/v1/catalog?as_of=${bad}`);
    assert.is(refused.status, 400, bad);
    assert.ok(refused.json.details.fieldErrors.as_of, bad);
  }
});

test('as_of is part of the cache key: two instants of one release answer each their own meta.as_of', async () => {
  const first = await service.get('/v1/catalog?as_of=2026-01-20');
  const second = await service.get('/v1/catalog?as_of=2026-01-21');
  assert.is(first.json.as_of.asked, '2026-01-20T23:59:59.999Z');
  assert.is(second.json.as_of.asked, '2026-01-21T23:59:59.999Z');
  assert.is.not(first.headers.etag, second.headers.etag);
});

test('the typed client (asOf) and the query CLI (--as-of) read the release served then', async () => {
  const api = new DataQueryClient({ baseUrl: service.url, apiKey: service.key });
  const country = String(data.observations.A.country);
  const rows = async (choice: { asOf?: string; release?: string }) => {
    const out: unknown[] = [];
    for await (const row of api.financials('ggr', { country } as never, choice)) out.push(row);
    return out;
  };
  const asOf = await rows({ asOf: '2026-01-20' });
  assert.ok(asOf.length > 0);
  assert.equal(asOf, await rows({ release: R1 }));
  assert.not.equal(asOf, await rows({ release: R2 }), 'A and D differ between R1 and R2');
  const aggregate = await api.aggregate('ggr', { group_by: ['region'], fx: 'USD' } as never, { asOf: '2026-02-28' });
  assert.equal(aggregate.meta.as_of, { asked: '2026-02-28T23:59:59.999Z', release: R2 });
  const env = { DQS_API_KEY: service.key, DQS_URL: service.url };
  const cli = await runQueryCli(['ggr', '--country', country, '--as-of', '2026-01-20', '--format', 'csv', '--all'], env);
  assert.is(cli.code, 0, cli.stderr);
  const byId = await runQueryCli(['ggr', '--country', country, '--release', R1, '--format', 'csv', '--all'], env);
  assert.ok(cli.stdout.length > 0);
  assert.is(cli.stdout.toString(), byId.stdout.toString());
  for (const command of ['revisions', 'history']) {
    const refused = await runQueryCli([command, 'ggr', '--as-of', '2026-01-20'], env);
    assert.is.not(refused.code, 0, command);
    assert.match(refused.stderr, `--as-of has no meaning for ${command}: name the releases with --from and --to`);
  }
});

test.run();
