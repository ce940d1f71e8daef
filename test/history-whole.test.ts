import { type Table, tableFromIPC } from 'apache-arrow';
import { request } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from './helpers/service.ts';
import { R2, type Vintages, vintages } from './helpers/vintages.ts';

// A whole history in CSV or Arrow (no `limit`) is written from its rows as numbers,
// by the code a whole revisions diff uses (render/columns.ts); a page with `limit` is
// written by the generic table renderer (render/table.ts). Each output's whole answer
// is checked against its pages walked by their Link headers: the same CSV bytes, the
// same Arrow values, nulls included (a current value's valid_to, a removed row's
// value, a release a wide row lacks).

const test = suite('history: the whole answer as the pages give it');
let data: Vintages;
let service: TestService;

test.before(async () => {
  data = await vintages({ rolledBack: false });
  service = await startTestService({ dataDir: data.dataDir });
});
test.after(async () => {
  await service?.stop();
  await data?.remove();
});

async function get(pathAndQuery: string): Promise<{ headers: Record<string, unknown>; body: Buffer }> {
  const res = await request(`${service.url}${pathAndQuery}`, { headers: { 'x-api-key': service.key } });
  const body = Buffer.from(await res.body.arrayBuffer());
  assert.is(res.statusCode, 200, `${pathAndQuery}: ${body.toString().slice(0, 300)}`);
  return { headers: res.headers, body };
}

/** Every page of `query` with `limit`, its Link header followed to the end. */
async function pages(query: string, limit: number): Promise<Buffer[]> {
  const bodies: Buffer[] = [];
  let next: string | undefined = `${query}&limit=${limit}`;
  while (next !== undefined) {
    const page = await get(next);
    bodies.push(page.body);
    const link = page.headers.link as string | undefined;
    next = link === undefined ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)![1];
  }
  return bodies;
}

const records = (table: Table): Record<string, unknown>[] =>
  table.toArray().map((row) => Object.fromEntries(Object.entries(row.toJSON()).map(([k, v]) => [k, v ?? null])));

/** Each output, and whether its rows hold a null (a valid_to, a removed row's value, a release a wide row lacks). */
const OUTPUTS = [
  ['output=changes', true],
  [`output=changes&from=${R2}`, true],
  ['output=first', false],
  ['output=all', false],
  ['output=all&shape=wide', true],
] as const;

for (const [output, nulls] of OUTPUTS) {
  const query = `/v1/history?metric=ggr&${output}`;

  test(`${output}: the whole CSV is the header and every page's rows, byte for byte`, async () => {
    const whole = (await get(`${query}&format=csv`)).body.toString();
    const paged = (await pages(`${query}&format=csv`, 1000)).map((page) => page.toString());
    assert.ok(paged.length > 1, `${paged.length} pages`);
    const header = paged[0]!.slice(0, paged[0]!.indexOf('\r\n') + 2);
    for (const page of paged) assert.ok(page.startsWith(header), 'each page repeats the header');
    assert.is(whole, header + paged.map((page) => page.slice(header.length)).join(''));
    // Where there are nulls, they are checked: an empty last field.
    if (nulls) assert.match(whole, /,\r\n/);
  });

  test(`${output}: the whole Arrow stream holds every page's rows, with their types and nulls`, async () => {
    const whole = tableFromIPC((await get(`${query}&format=arrow`)).body);
    const paged = (await pages(`${query}&format=arrow`, 1000)).map((page) => tableFromIPC(page));
    assert.equal(
      whole.schema.fields.map((f) => `${f.name}:${f.type}`),
      paged[0]!.schema.fields.map((f) => `${f.name}:${f.type}`),
    );
    const rows = records(whole);
    assert.equal(rows, paged.flatMap(records));
    assert.is(
      rows.some((row) => Object.values(row).includes(null)),
      nulls,
      'nulls where the output has them',
    );
  });
}

test('an empty history is a header row alone in CSV, and a schema with no rows in Arrow', async () => {
  const query = '/v1/history?metric=ggr&country=Nowhere';
  const csv = (await get(`${query}&format=csv`)).body.toString();
  assert.is(
    csv,
    'year,region,country,state,category,product,channel,sub_channel,fx,temporal,calculation,change,valid_from,valid_to,ggr\r\n',
  );
  const table = tableFromIPC((await get(`${query}&format=arrow`)).body);
  assert.is(table.numRows, 0);
  assert.is(table.schema.fields.length, 15);
});

test.run();
