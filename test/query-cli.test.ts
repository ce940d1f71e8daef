import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Dictionary, Float64, Int32, Table, tableFromIPC, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runQueryCli } from './helpers/query-cli.ts';
import { startTestService, type TestService, walkPages } from './helpers/service.ts';

// The consumers' CLI end to end: `npm run --silent query -- …` as a user types it.

const runCli = runQueryCli;

/** A loopback server answering `pages` pages of `type` on /v1/financials, cursor in X-Next-Cursor (the documented contract). */
async function mimic(type: string, body: (page: number) => Uint8Array | string, pages = 3) {
  const server = http.createServer((req, res) => {
    const page = Number(new URL(req.url!, 'http://x').searchParams.get('cursor')?.slice(1) ?? 0);
    const headers: Record<string, string> = { 'content-type': type, 'x-ratelimit-remaining': String(50 - page) };
    if (page < pages - 1) headers['x-next-cursor'] = `c${page + 1}`;
    res.writeHead(200, headers).end(body(page));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(r)) };
}

let service: TestService;
let env: Record<string, string>;
const cli = suite('query CLI');
cli.before(async () => {
  service = await startTestService();
  env = { DQS_API_KEY: service.key, DQS_URL: service.url };
});
cli.after(async () => {
  await service.stop();
});

cli("aggregate: the issue's command line, as JSON and as CSV", async () => {
  const json = await runCli(
    [
      'aggregate',
      'ggr',
      '--group-by',
      'region',
      '--group-by',
      'year',
      '--fx',
      'USD',
      '--order',
      '-ggr_sum',
      '--rollup',
      '--all',
      '--limit',
      '50',
    ],
    env,
  );
  assert.is(json.code, 0, json.stderr);
  const served = (
    await walkPages(service, '/v1/aggregate?metric=ggr&group_by=region,year&fx=USD&order=-ggr_sum&rollup=true', 1000)
  ).flatMap((page) => page.data);
  assert.equal(JSON.parse(json.stdout.toString()), served);
  const csv = await runCli(['aggregate', 'ggr', '--group-by', 'region', '--fx', 'USD', '--measure', 'ggr:avg', '--format', 'csv'], env);
  assert.is(csv.code, 0, csv.stderr);
  const text = (await service.get('/v1/aggregate?metric=ggr&group_by=region&fx=USD&measure=ggr:avg', { headers: { accept: 'text/csv' } }))
    .text;
  assert.is(csv.stdout.toString(), text);
  const refused = await runCli(['aggregate', 'ggr', '--group-by', 'region'], env);
  assert.is(refused.code, 1);
  assert.match(
    refused.stderr,
    /error 400: Cannot combine ggr values in different currencies: filter fx to one currency or add fx to group_by/,
  );
});

cli("aggregate: the issue's derived flags, as JSON and CSV, and a refusal naming the fix", async () => {
  const flags = ['--compare', 'previous_year', '--share', 'channel', '--per', 'adult_population', '--having', 'ggr_sum.gt.1e9'];
  const json = await runCli(
    [
      'aggregate',
      'ggr',
      '--group-by',
      'region',
      '--group-by',
      'channel',
      '--group-by',
      'year',
      '--fx',
      'USD',
      ...flags,
      '--all',
      '--limit',
      '5',
    ],
    env,
  );
  assert.is(json.code, 0, json.stderr);
  const query =
    '/v1/aggregate?metric=ggr&group_by=region,channel,year&fx=USD&compare=previous_year&share=channel&per=adult_population&having=ggr_sum.gt.1e9';
  const served = (await walkPages(service, query, 1000)).flatMap((page) => page.data);
  assert.ok(served.length > 5);
  assert.equal(JSON.parse(json.stdout.toString()), served);
  const csv = await runCli(
    ['aggregate', 'ggr', '--group-by', 'region', '--group-by', 'channel', '--group-by', 'year', '--fx', 'USD', ...flags, '--format', 'csv'],
    env,
  );
  assert.is(csv.code, 0, csv.stderr);
  assert.is(csv.stdout.toString(), (await service.get(query, { headers: { accept: 'text/csv' } })).text);
  const refused = await runCli(['aggregate', 'ggr', '--group-by', 'region', '--fx', 'USD', '--compare', 'previous_year'], env);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /error 400: Cannot compare with the previous year without year in group_by: add year to group_by/);
  const fx = await runCli(['aggregate', 'fx', '--help'], env);
  assert.not.match(fx.stdout.toString(), /--per </, 'no denominator divides fx');
  assert.match((await runCli(['aggregate', 'ggr', '--help'], env)).stdout.toString(), /--per <metric>/);
});

cli('aggregate: the series flags, as JSON and as wide CSV, and a conflict named', async () => {
  const cagr = await runCli(['aggregate', 'ggr', '--group-by', 'country', '--fx', 'USD', '--cagr', '2015:2024', '--all'], env);
  assert.is(cagr.code, 0, cagr.stderr);
  const served = (await walkPages(service, '/v1/aggregate?metric=ggr&group_by=country&fx=USD&cagr=2015:2024', 1000)).flatMap((p) => p.data);
  assert.equal(JSON.parse(cagr.stdout.toString()), served);
  const flags = ['--group-by', 'region', '--group-by', 'year', '--fx', 'USD', '--index', '2019', '--latest', '3', '--shape', 'wide'];
  const csv = await runCli(['aggregate', 'ggr', ...flags, '--format', 'csv'], env);
  assert.is(csv.code, 0, csv.stderr);
  const query = '/v1/aggregate?metric=ggr&group_by=region,year&fx=USD&index=2019&latest=3&shape=wide';
  assert.is(csv.stdout.toString(), (await service.get(query, { headers: { accept: 'text/csv' } })).text);
  assert.match(csv.stdout.toString(), /^region,ggr_sum_\d{4},/);
  const refused = await runCli(['aggregate', 'ggr', '--group-by', 'region', '--fx', 'USD', '--cagr', '2015:2024', '--index', '2019'], env);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /error 400: Cannot combine cagr with index/);
});

cli('the first page as JSON, the budget on stderr, and how to get more', async () => {
  const res = await runCli(['ggr', '--country', 'France', '--country', 'Spain', '--sub-channel', 'Onshore', '--limit', '5'], env);
  assert.is(res.code, 0, res.stderr);
  const expected = await service.get('/v1/financials?metric=ggr&country=France&country=Spain&sub_channel=Onshore&limit=5');
  assert.equal(JSON.parse(res.stdout.toString()), expected.json.data);
  assert.match(res.stderr, /5 rows \| 1 pages \| rate-limit budget left: \d+ \| fetching/);
  assert.match(res.stderr, /More rows: add --all for every page, or --cursor \S+ for the next one/);
});

cli('--all walks every page', async () => {
  const res = await runCli(['ggr', '--country', 'France', '--all', '--limit', '7'], env);
  assert.is(res.code, 0, res.stderr);
  const expected = (await walkPages(service, '/v1/financials?metric=ggr&country=France', 1000)).flatMap((p) => p.data);
  assert.ok(expected.length > 14);
  assert.equal(JSON.parse(res.stdout.toString()), expected);
  assert.match(
    res.stderr,
    new RegExp(`${expected.length} rows \\| ${Math.ceil(expected.length / 7)} pages \\| rate-limit budget left: \\d+ \\| done`),
  );
  assert.not.match(res.stderr, /More rows/);
});

cli('errors name the field and the fix; a filter the metric does not have is refused before any request', async () => {
  const bad = await runCli(['ggr', '--period', '2024'], env);
  assert.is(bad.code, 1);
  assert.match(
    bad.stderr,
    /error 400: Invalid query parameters\n {2}period: Expected format: YYYY-MM-DD:YYYY-MM-DD\n\(request id [0-9a-f-]{36}\)/,
  );
  const noKey = await runCli(['ggr'], { DQS_URL: service.url });
  assert.is(noKey.code, 2);
  assert.match(noKey.stderr, /DQS_API_KEY is not set/);
  const wrongKey = await runCli(['ggr'], { ...env, DQS_API_KEY: 'sk_live_nope' });
  assert.is(wrongKey.code, 1);
  assert.match(wrongKey.stderr, /error 401: Invalid or revoked API key/);
  const badCursor = await runCli(['ggr', '--cursor', 'nope'], env);
  assert.is(badCursor.code, 1);
  assert.match(
    badCursor.stderr,
    /error 400: Invalid pagination cursor\n\(request id [0-9a-f-]{36}\)\nrepeat the command without --cursor to start again from the first page/,
  );
  assert.not.match(badCursor.stderr, /resume with/);
  const notADimension = await runCli(['fx', '--product', 'Poker'], env);
  assert.is(notADimension.code, 1);
  assert.match(notADimension.stderr, /unknown option '--product'/);
});

cli('a 429 is waited out visibly, for as long as Retry-After says', async () => {
  let refused = false;
  const proxy = http.createServer((req, res) => {
    if (!refused) {
      refused = true;
      res
        .writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' })
        .end('{"error":"Too many requests — please try again later","retryAfterSeconds":1}');
      return;
    }
    const forward = http.request(`${service.url}${req.url}`, { headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    req.pipe(forward);
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  try {
    const started = Date.now();
    const res = await runCli(['fx', '--fx-local-currency', 'JPY', '--all'], {
      ...env,
      DQS_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    });
    assert.is(res.code, 0, res.stderr);
    assert.ok(Date.now() - started >= 1000);
    assert.match(res.stderr, /rate limited \(429\): waiting as Retry-After asks, 1 s/);
    const expected = (await walkPages(service, '/v1/financials?metric=fx&fx_local_currency=JPY', 1000)).flatMap((p) => p.data);
    assert.equal(JSON.parse(res.stdout.toString()), expected);
  } finally {
    proxy.close();
  }
});

// Pages of CSV and Arrow whose contents the test chooses, from a loopback server that
// answers as docs/api.md documents (cursor in X-Next-Cursor).

cli('--format csv keeps one header row across pages', async () => {
  const server = await mimic('text/csv', (page) => `year,country,ggr\r\n${2020 + page},France,${page}.5\r\n`);
  try {
    const res = await runCli(['ggr', '--all', '--format', 'csv'], { DQS_API_KEY: 'sk_live_x', DQS_URL: server.url });
    assert.is(res.code, 0, res.stderr);
    assert.is(res.stdout.toString(), 'year,country,ggr\r\n2020,France,0.5\r\n2021,France,1.5\r\n2022,France,2.5\r\n');
    assert.match(res.stderr, /3 rows \| 3 pages \| rate-limit budget left: 48 \| done/);
  } finally {
    await server.close();
  }
});

cli('--format arrow writes one stream for every page, dictionaries merged', async () => {
  const names = [['France', 'Spain'], ['Germany'], ['Italy', 'France']];
  const server = await mimic('application/vnd.apache.arrow.stream', (page) =>
    tableToIPC(
      new Table({
        country: vectorFromArray(names[page]!, new Dictionary(new Utf8(), new Int32())),
        year: vectorFromArray(
          names[page]!.map(() => 2020 + page),
          new Int32(),
        ),
        ggr: vectorFromArray(
          names[page]!.map(() => page + 0.5),
          new Float64(),
        ),
      }),
      'stream',
    ),
  );
  try {
    const res = await runCli(['ggr', '--all', '--format', 'arrow'], { DQS_API_KEY: 'sk_live_x', DQS_URL: server.url });
    assert.is(res.code, 0, res.stderr);
    const table = tableFromIPC(res.stdout);
    assert.equal(
      table.toArray().map((row) => row.toJSON()),
      [
        { country: 'France', year: 2020, ggr: 0.5 },
        { country: 'Spain', year: 2020, ggr: 0.5 },
        { country: 'Germany', year: 2021, ggr: 1.5 },
        { country: 'Italy', year: 2022, ggr: 2.5 },
        { country: 'France', year: 2022, ggr: 2.5 },
      ],
    );
    assert.is(String(table.schema.fields.map((f) => f.type)), 'Dictionary<Int32, Utf8>,Int32,Float64');
    assert.match(res.stderr, /5 rows \| 3 pages \| rate-limit budget left: 48 \| done/);
  } finally {
    await server.close();
  }
});

cli('--format arrow against the server: the progress line counts the rows written', async () => {
  const res = await runCli(['fx', '--fx-local-currency', 'JPY', '--all', '--limit', '10', '--format', 'arrow'], env);
  assert.is(res.code, 0, res.stderr);
  const expected = (await walkPages(service, '/v1/financials?metric=fx&fx_local_currency=JPY', 1000)).flatMap((p) => p.data);
  assert.ok(expected.length > 10, 'more than one page');
  assert.is(tableFromIPC(res.stdout).numRows, expected.length);
  assert.match(
    res.stderr,
    new RegExp(`${expected.length} rows \\| ${Math.ceil(expected.length / 10)} pages \\| rate-limit budget left: \\d+ \\| done`),
  );
});

cli.run();
