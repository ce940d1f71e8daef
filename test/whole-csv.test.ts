import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { type Table, tableFromIPC } from 'apache-arrow';
import { request } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseCsv } from './helpers/csv.ts';
import { startTestService, type TestService, tempDir, twoReleaseDataDir, walkPages } from './helpers/service.ts';
import { requiring } from './helpers/skip.ts';

// CSV and Arrow give pandas and R the whole answer (issue 44 item 2): /v1/aggregate and
// /v1/revisions without `limit` answer every row, the same rows in the same order as
// the JSON pages walked one by one; with `limit` they page as before. /v1/financials
// keeps the spec's pages, and a truncated CSV or Arrow page names the next one in
// headers that a loop in any client can follow.

let service: TestService;

const test = suite('CSV and Arrow: the whole answer where pandas reads them');
test.before(async () => {
  service = await startTestService({ dataDir: (await twoReleaseDataDir()).dataDir });
});
test.after(async () => service.stop());

/** The body of a GET as bytes (Arrow), with its headers; checked against docs/openapi.json by service.get for text. */
async function bytes(pathAndQuery: string): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  const res = await request(`${service.url}${pathAndQuery}`, { headers: { 'x-api-key': service.key } });
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

/** Every row the JSON pages hold, walked page by page, as flat records: the CSV's columns. */
async function jsonRows(pathAndQuery: string, flatten: (row: any) => Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const pages = await walkPages(service, pathAndQuery, 1000);
  assert.ok(pages.length > 1, `${pathAndQuery}: more than one JSON page`);
  return pages.flatMap((page) => page.data.map(flatten));
}

const aggregateRow = (row: any) => ({ ...row.dimensions, ...row.values });
const revisionRow = (row: any) => ({
  ...row.dimensions,
  change: row.change,
  before_ggr: row.before?.ggr ?? null,
  after_ggr: row.after?.ggr ?? null,
});

/** CSV rows as the JSON values they print: an empty field is null, a number column a number. */
function csvRecords(text: string, numeric: ReadonlySet<string>): Record<string, unknown>[] {
  const [header, ...lines] = parseCsv(text);
  return lines.map((fields) =>
    Object.fromEntries(
      header!.map((name, i) => {
        const field = fields[i]!;
        if (!numeric.has(name)) return [name, field];
        return [name, field === '' ? null : Number(field)];
      }),
    ),
  );
}

/** Arrow rows as plain values (Int32 and Float64 numbers, Utf8 strings, nulls). */
const arrowRecords = (table: Table): Record<string, unknown>[] =>
  table.toArray().map((row) => Object.fromEntries(Object.entries(row.toJSON()).map(([k, v]) => [k, v ?? null])));

const AGGREGATE = '/v1/aggregate?metric=ggr&group_by=country,year,fx';
/** Every row either release holds that the other does not, or holds with another value: tens of thousands here. */
const REVISIONS = '/v1/revisions?metric=ggr';

test('an aggregate of more than 1,000 groups: CSV and Arrow without limit hold every group, as the JSON pages do', async () => {
  const want = await jsonRows(AGGREGATE, aggregateRow);
  assert.ok(want.length > 1000, `${want.length} groups`);
  const csv = await service.get(`${AGGREGATE}&format=csv`);
  assert.is(csv.status, 200);
  assert.is(csv.headers.link, undefined, 'nothing follows the whole answer');
  assert.is(csv.headers['x-next-cursor'], undefined);
  assert.equal(csvRecords(csv.text, new Set(['year', 'ggr_sum', 'rows'])), want);
  const arrow = await bytes(`${AGGREGATE}&format=arrow`);
  assert.is(arrow.status, 200);
  assert.is(arrow.headers.link, undefined);
  const table = tableFromIPC(arrow.body);
  assert.equal(
    table.schema.fields.map((f) => f.name),
    ['country', 'year', 'fx', 'ggr_sum', 'rows'],
  );
  assert.equal(arrowRecords(table), want);
});

test('an aggregate with limit still pages in CSV, naming the next page', async () => {
  const page = await service.get(`${AGGREGATE}&format=csv&limit=1000`);
  assert.is(parseCsv(page.text).length, 1001, 'the header and 1,000 groups');
  assert.match(String(page.headers.link), /^<\/v1\/aggregate\?.*&cursor=[^>]+>; rel="next"$/);
  assert.ok(page.headers['x-next-cursor']);
  // The rest after that page's cursor, without limit: every group left.
  const rest = await service.get(`${AGGREGATE}&format=csv&cursor=${encodeURIComponent(String(page.headers['x-next-cursor']))}`);
  assert.is(rest.status, 200);
  const all = parseCsv((await service.get(`${AGGREGATE}&format=csv`)).text);
  assert.equal(parseCsv(rest.text), [all[0], ...all.slice(1001)]);
});

test('a revisions diff of more than 1,000 rows: CSV and Arrow without limit stream every row, as the JSON pages hold them', async () => {
  const want = await jsonRows(REVISIONS, revisionRow);
  assert.ok(want.length > 1000, `${want.length} rows`);
  assert.ok(want.filter((r) => r.change === 'changed').length > 100, 'changed rows among them');
  const csv = await service.get(`${REVISIONS}&format=csv`);
  assert.is(csv.status, 200);
  assert.is(csv.headers.link, undefined);
  assert.match(String(csv.headers['content-disposition']), /^attachment; filename="ggr-revisions-\d{4}-\d\d-\d{4}-\d\d\.csv"$/);
  assert.equal(csvRecords(csv.text, new Set(['year', 'before_ggr', 'after_ggr'])), want);
  const arrow = await bytes(`${REVISIONS}&format=arrow`);
  assert.is(arrow.status, 200);
  const table = tableFromIPC(arrow.body);
  assert.ok(table.batches.length > 1, 'a record batch per slice of rows');
  assert.equal(arrowRecords(table), want);
});

test('a whole revisions CSV is charged as one export; a page of one is not', async () => {
  const first = await service.get(`${REVISIONS}&format=csv`);
  const second = await service.get(`${REVISIONS}&format=csv`);
  assert.is(Number(second.headers['x-export-remaining']), Number(first.headers['x-export-remaining']) - 1);
  const page = await service.get(`${REVISIONS}&format=csv&limit=1000`);
  assert.is(page.headers['x-export-remaining'], undefined);
  assert.is(parseCsv(page.text).length, 1001);
  assert.match(String(page.headers.link), /rel="next"$/);
  const third = await service.get(`${REVISIONS}&format=csv`);
  assert.is(Number(third.headers['x-export-remaining']), Number(second.headers['x-export-remaining']) - 1);
});

test('an empty diff is a header row alone in CSV, and a schema with no rows in Arrow', async () => {
  const query = '/v1/revisions?metric=ggr&country=Nowhere';
  const csv = await service.get(`${query}&format=csv`);
  assert.is(csv.status, 200);
  assert.is(
    csv.text,
    'year,region,country,state,category,product,channel,sub_channel,fx,temporal,calculation,change,before_ggr,after_ggr\r\n',
  );
  const table = tableFromIPC((await bytes(`${query}&format=arrow`)).body);
  assert.is(table.numRows, 0);
  assert.is(table.schema.fields.length, 14);
});

for (const format of ['csv', 'arrow'] as const) {
  test(`financials keep the spec's 1,000-row pages in ${format}: each truncated page's Link leads to the next, to the JSON walk's rows`, async () => {
    const query = `/v1/financials?metric=ggr&region=Europe&limit=1000&format=${format}`;
    const want = (await walkPages(service, '/v1/financials?metric=ggr&region=Europe', 1000)).flatMap((p) => p.data);
    let next: string | undefined = query;
    let rows = 0;
    let pages = 0;
    while (next) {
      const page = await bytes(next);
      assert.is(page.status, 200);
      const count = format === 'csv' ? parseCsv(page.body.toString()).length - 1 : tableFromIPC(page.body).numRows;
      assert.ok(count <= 1000);
      rows += count;
      pages++;
      const link = page.headers.link as string | undefined;
      if (link === undefined) {
        assert.is(page.headers['x-next-cursor'], undefined, 'the last page names no next one');
        break;
      }
      const [, target] = /^<([^>]+)>; rel="next"$/.exec(link)!;
      assert.is(
        new URL(target!, service.url).searchParams.get('cursor'),
        page.headers['x-next-cursor'],
        'X-Next-Cursor is the cursor Link names',
      );
      next = target;
    }
    assert.ok(pages > 1, `${pages} pages`);
    assert.is(rows, want.length);
  });
}

// docs/api.md's loops over the pages of a CSV answer, run as written (extracted, so they
// cannot drift) with Debian's python3-requests and r-cran-httr: they must read every
// row the JSON walk holds, across more than one page.

const run = promisify(execFile);
const PYTHON = '/usr/bin/python3';
const RSCRIPT = '/usr/bin/Rscript';

/** docs/api.md's fenced block of `language` that defines read_pages. */
async function pagingLoop(language: string): Promise<string> {
  const docs = await fs.readFile(path.join(import.meta.dirname, '..', 'docs', 'api.md'), 'utf8');
  const blocks = [...docs.matchAll(new RegExp(`^\`\`\`${language}\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((m) => m[1]!);
  const loop = blocks.find((block) => block.includes('read_pages'));
  assert.ok(loop, `docs/api.md shows the paging loop in ${language}`);
  return loop;
}

/** Runs `code` with `interpreter` against the service; the row count it printed. */
async function rowsRead(interpreter: string, args: string[], code: string, extension: string): Promise<number> {
  const dir = await tempDir('dqs-paging-loop-');
  try {
    const file = path.join(dir, `loop.${extension}`);
    await fs.writeFile(file, code);
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8', BASE: service.url, KEY: service.key };
    const { stdout } = await run(interpreter, [...args, file], { cwd: dir, env, timeout: 120_000 });
    return Number(/^(\d+) rows$/m.exec(stdout)![1]);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

const europeRows = async () => (await walkPages(service, '/v1/financials?metric=ggr&region=Europe', 1000)).flatMap((p) => p.data).length;

const requestsMissing = await run(PYTHON, ['-c', 'import pandas, requests']).then(
  () => undefined,
  () => `${PYTHON} lacks pandas or requests (apt-get install python3-pandas python3-requests; .ci/run installs them)`,
);
requiring(
  test,
  requestsMissing,
  'docs/api.md Python paging loop',
)("docs/api.md's Python loop (requests + pandas) follows Link to every row", async () => {
  assert.is(await rowsRead(PYTHON, [], await pagingLoop('python'), 'py'), await europeRows());
});

const httrMissing = !existsSync(RSCRIPT)
  ? `no ${RSCRIPT} (apt-get install r-base-core r-cran-httr; .ci/run installs them)`
  : await run(RSCRIPT, ['--vanilla', '-e', 'library(httr)']).then(
      () => undefined,
      () => 'R has no httr (apt-get install r-cran-httr; .ci/run installs it)',
    );
requiring(
  test,
  httrMissing,
  'docs/api.md R paging loop',
)("docs/api.md's R loop (httr) follows X-Next-Cursor to every row", async () => {
  assert.is(await rowsRead(RSCRIPT, ['--vanilla'], await pagingLoop('r'), 'R'), await europeRows());
});

test.run();
