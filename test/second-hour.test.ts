import { tableFromIPC } from 'apache-arrow';
import { DataQueryClient } from 'data-query-client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runQueryCli } from './helpers/query-cli.ts';
import { send, startTestService, type TestService } from './helpers/service.ts';

// What a newcomer trips on after the README: each mistake's answer names its fix, the
// front door answers, and a typo in a CSV or Arrow request is said where pandas, R and
// the CLI can see it.

const test = suite('the second hour');
let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after(async () => service.stop());

test('GET / needs no key and names the entry points, each of which answers', async () => {
  const res = await send(`${service.url}/`);
  assert.is(res.status, 200, res.text);
  assert.match(res.json.key, /x-api-key/);
  // With the key as a client sends it, each checked against the OpenAPI document but the pages it does not describe.
  for (const [name, link] of Object.entries<string>(res.json.links)) {
    const answer = ['/docs', '/explore'].includes(link) ? await send(`${service.url}${link}`) : await service.get(link);
    assert.is(answer.status, 200, `${name}: ${link} answered ${answer.status}`);
  }
});

test('a parameter of another endpoint names it in a hint; the spec text stays word for word', async () => {
  const cases: [string, RegExp][] = [
    ['/v1/financials?metric=ggr&group_by=country', /\/v1\/aggregate\?metric=ggr&group_by=country/],
    ['/v1/financials?metric=turnover&having=turnover_sum.gt.1', /`having` is a parameter of \/v1\/aggregate/],
    ['/v1/aggregate?metric=ggr&from=2026-10', /`from` is a parameter of \/v1\/revisions/],
    ['/v1/export?metric=ggr&limit=10', /`limit` is a parameter of \/v1\/financials/],
  ];
  for (const [url, hint] of cases) {
    const res = await service.get(url);
    assert.is(res.status, 400, url);
    assert.match(res.json.error, /^Invalid filter dimension "\w+" for metric "\w+"\. Valid dimensions: /);
    assert.match(res.json.hint, hint, url);
  }
  const typo = await service.get('/v1/financials?metric=ggr&contry=France');
  assert.is(typo.json.hint, undefined, 'a typo needs no hint: the valid dimensions are listed');
});

test('format=parquet on a page names /v1/export; year=2019-2024 names period and a repeated year', async () => {
  const parquet = await service.get('/v1/financials?metric=ggr&format=parquet');
  assert.is(parquet.status, 400);
  assert.match(parquet.json.details.fieldErrors.format[0], /\/v1\/export \(format=parquet\)/);
  const span = await service.get('/v1/financials?metric=ggr&year=2019-2024');
  assert.match(span.json.details.fieldErrors.year[0], /year=2019&year=2020.*period=2019-01-01:2024-12-31/);
});

test('a POST is a JSON 405 with Allow', async () => {
  const res = await service.get('/v1/financials?metric=ggr', { method: 'POST' });
  assert.is(res.status, 405);
  assert.equal(res.json, { error: 'Method not allowed' });
  assert.match(String(res.headers.allow), /GET/);
});

test('a typo in a CSV or Arrow request: X-Warnings, the typed client and the CLI say it', async () => {
  const warning = 'country "france" matches no value; did you mean "France"?';
  const csv = await service.get('/v1/financials?metric=ggr&country=france&format=csv');
  assert.is(csv.status, 200);
  assert.equal(JSON.parse(String(csv.headers['x-warnings'])), [warning]);
  const arrow = await fetch(`${service.url}/v1/aggregate?metric=ggr&group_by=year&fx=USD&country=france&format=arrow`, {
    headers: { 'x-api-key': service.key },
  });
  assert.is(arrow.status, 200);
  assert.is(tableFromIPC(new Uint8Array(await arrow.arrayBuffer())).numRows, 0);
  assert.equal(JSON.parse(arrow.headers.get('x-warnings')!), [warning]);
  // Non-ASCII values survive the Latin-1 header as JSON escapes.
  const accented = await service.get('/v1/financials?metric=ggr&country=C%C3%B4te%20d%27Ivoir&format=csv');
  assert.match(JSON.parse(String(accented.headers['x-warnings']))[0], /^country "Côte d'Ivoir" matches no value/);
  // Held values: no header; JSON keeps meta.warnings.
  assert.is((await service.get('/v1/financials?metric=ggr&country=France&format=csv')).headers['x-warnings'], undefined);
  assert.is((await service.get('/v1/financials?metric=ggr&country=france')).headers['x-warnings'], undefined);
  const client = new DataQueryClient({ baseUrl: service.url, apiKey: service.key });
  for await (const page of client.csv('ggr', { country: 'france' })) assert.equal(page.warnings, [warning]);
  const cli = await runQueryCli(['ggr', '--country', 'france', '--format', 'csv'], { DQS_URL: service.url, DQS_API_KEY: service.key });
  assert.is(cli.code, 0, cli.stderr);
  assert.ok(cli.stderr.includes(`warning: ${warning}`), cli.stderr);
});

test.run();
