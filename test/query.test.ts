import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CursorCodec } from '../src/query/cursor.ts';
import { fileConditions, pageQuery, whereClauses, type YearRange } from '../src/query/filters.ts';
import { type Grouping, groupBound, groupCountQuery } from '../src/query/group-count.ts';
import type { QueryScope } from '../src/query/scope.ts';
import { alternatives, closest } from '../src/query/suggest.ts';
import { DATASETS } from '../src/registry.ts';
import { jsonSyntax } from '../src/render/json-syntax.ts';
import { TextRenderer } from '../src/render/text-renderer.ts';
import { buildAggregateTables } from '../src/store/aggregate-tables.ts';
import { ColumnStore } from '../src/store/column-store.ts';
import type { StoredDataset } from '../src/store/loader.ts';

// The one place request values turn into SQL, as a table of input → (sql, params):
// values only ever become bound parameters, never SQL text.

const empty = await ColumnStore.build(0, [], [], 1);
const ggrDef = DATASETS.find((d) => d.name === 'ggr')!;
const ggr: StoredDataset = {
  def: ggrDef,
  table: '"r2026_11"."ggr"',
  store: empty,
  codes: new Map([
    [
      'country',
      new Map([
        ['France', 0],
        ['Spain', 1],
        ["Cote d'Ivoire", 2],
      ]),
    ],
    [
      'channel',
      new Map([
        ['Land', 0],
        ['Online', 1],
      ]),
    ],
    [
      'state',
      new Map([
        ['', 0],
        ['Nevada', 1],
      ]),
    ],
    [
      'year',
      new Map([
        ['2020', 2020],
        ['2021', 2021],
      ]),
    ],
  ]),
  aggregates: await buildAggregateTables({ ...ggrDef, rollups: [] }, empty),
};

const sql = suite('filters → SQL');
const cases: Array<{
  name: string;
  filters: Record<string, string[]>;
  period?: YearRange;
  limit?: number;
  after?: number;
  sql: string | null;
  params?: number[];
}> = [
  { name: 'no filters', filters: {}, sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 LIMIT $1 + 1', params: [100, -1] },
  {
    name: 'one value',
    filters: { country: ['Spain'] },
    sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 AND "country" IN ($3) LIMIT $1 + 1',
    params: [100, -1, 1],
  },
  {
    name: 'OR within, AND across',
    filters: { country: ['France', 'Spain'], channel: ['Online'] },
    limit: 7,
    after: 41,
    sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 AND "country" IN ($3, $4) AND "channel" IN ($5) LIMIT $1 + 1',
    params: [7, 41, 0, 1, 1],
  },
  {
    name: 'repeated value counted once',
    filters: { country: ['Spain', 'Spain'] },
    sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 AND "country" IN ($3) LIMIT $1 + 1',
    params: [100, -1, 1],
  },
  {
    name: 'unknown values dropped, known kept',
    filters: { country: ["' OR 1=1 --", 'France'] },
    sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 AND "country" IN ($3) LIMIT $1 + 1',
    params: [100, -1, 0],
  },
  {
    name: 'quote inside a real value is just a value',
    filters: { country: ["Cote d'Ivoire"] },
    sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 AND "country" IN ($3) LIMIT $1 + 1',
    params: [100, -1, 2],
  },
  {
    name: 'empty string is a value',
    filters: { state: [''] },
    sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 AND "state" IN ($3) LIMIT $1 + 1',
    params: [100, -1, 0],
  },
  {
    name: 'years are integers',
    filters: { year: ['2020', '2021', '2020'] },
    sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 AND "year" IN ($3, $4) LIMIT $1 + 1',
    params: [100, -1, 2020, 2021],
  },
  {
    name: 'years the release does not hold are dropped',
    filters: { year: ['1850', '2021', '999999999'] },
    sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 AND "year" IN ($3) LIMIT $1 + 1',
    params: [100, -1, 2021],
  },
  { name: 'only unknown years: no query at all', filters: { year: ['1850'] }, sql: null },
  {
    name: 'period',
    filters: { channel: ['Land'] },
    period: { from: 2019, to: 2021 },
    sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 AND "channel" IN ($3) AND "year" BETWEEN $4 AND $5 LIMIT $1 + 1',
    params: [100, -1, 0, 2019, 2021],
  },
  { name: 'only unknown values: no query at all', filters: { country: ['Atlantis', '%'] }, sql: null },
  { name: 'one dimension unmatched empties the AND', filters: { country: ['France'], channel: ['Moon'] }, sql: null },
];
for (const c of cases) {
  sql(c.name, () => {
    const clauses = whereClauses(ggr, new Map(Object.entries(c.filters)), c.period);
    if (c.sql === null) return assert.is(clauses, null);
    assert.ok(clauses);
    assert.equal(pageQuery(ggr.table, clauses, c.limit ?? 100, c.after ?? -1), { sql: c.sql, params: c.params });
  });
}

// Over a release's Parquet file (revisions, filtered Parquet exports) the values are
// bound as they are, text or integer: the file holds values, not codes.
const fileCases: Array<{
  name: string;
  filters: Record<string, string[]>;
  period?: YearRange;
  conditions: string[];
  params: (string | number)[];
}> = [
  { name: 'file: nothing', filters: {}, conditions: [], params: [] },
  {
    name: 'file: text values, a quote among them',
    filters: { country: ["' OR 1=1 --", "Cote d'Ivoire"] },
    conditions: ['"country" IN ($1, $2)'],
    params: ["' OR 1=1 --", "Cote d'Ivoire"],
  },
  {
    name: 'file: years as integers, then the period',
    filters: { channel: ['Online'], year: ['2020', '2021'] },
    period: { from: 2019, to: 2022 },
    conditions: ['"channel" IN ($1)', '"year" IN ($2, $3)', '"year" BETWEEN $4 AND $5'],
    params: ['Online', 2020, 2021, 2019, 2022],
  },
];
for (const c of fileCases) {
  sql(c.name, () => {
    const params: (string | number)[] = [];
    assert.equal(fileConditions(new Map(Object.entries(c.filters)), c.period, params), c.conditions);
    assert.equal(params, c.params);
  });
}

// The size guard's count: one SELECT DISTINCT per level of the result, with the
// request's clauses; a level that rolls up state counts national rows (state "") alone.
const plan = (groupBy: string[], rollup: boolean, filters: Record<string, string[]> = {}): Grouping => ({
  groupBy,
  rollup,
  filters: new Map(Object.entries(filters)),
});
const distinct = (columns: string, where = '') => `SELECT count(*) FROM (SELECT DISTINCT ${columns} FROM "r2026_11"."ggr"${where})`;
const countCases: Array<{ name: string; plan: Grouping; sql: string[]; params: number[] }> = [
  {
    name: 'count: groups alone',
    plan: plan(['country', 'year'], false, { channel: ['Online'] }),
    sql: [distinct('1, "country", "year"', ' WHERE "channel" IN ($1)')],
    params: [1],
  },
  {
    name: 'count: rollup levels, state rolled up from the second',
    plan: plan(['country', 'state'], true, { year: ['2020'] }),
    sql: [
      distinct('1, "country", "state"', ' WHERE "year" IN ($1)'),
      distinct('1, "country"', ' WHERE "year" IN ($2) AND "state" = $3'),
      distinct('1', ' WHERE "year" IN ($4) AND "state" = $5'),
    ],
    params: [2020, 2020, 0, 2020, 0],
  },
  { name: 'count: rollup without state', plan: plan(['channel'], true), sql: [distinct('1, "channel"'), distinct('1')], params: [] },
];
for (const c of countCases) {
  sql(c.name, () => {
    const clauses = whereClauses(ggr, c.plan.filters);
    assert.ok(clauses);
    assert.equal(groupCountQuery(ggr, c.plan, clauses), { sql: c.sql.join('\nUNION ALL\n'), params: c.params });
  });
}
sql('count: the dictionaries bound most requests without a query', () => {
  // Two countries by two channels, or at most one of each filtered: no count needed under the bound.
  const sized: StoredDataset = {
    ...ggr,
    aggregates: {
      ...ggr.aggregates,
      dictionaries: ggrDef.dimensions.map((d) => ({ values: [...(ggr.codes.get(d)?.keys() ?? [])], json: [] })),
    },
  };
  assert.is(groupBound(sized, plan(['country', 'channel'], false), undefined), 6);
  assert.is(groupBound(sized, plan(['country', 'channel'], true), undefined), 6 + 3 + 1);
  assert.is(groupBound(sized, plan(['country', 'year'], false, { country: ['Spain'] }), { from: 2021, to: 2030 }), 1);
});
sql.run();

const store = suite('column store and JSON renderer');
// Three dimensions where `country` fixes `region`: fused when allowed, apart otherwise.
const dictionary = (values: (string | number)[]) => ({ values, json: values.map((v) => JSON.stringify(v)) });
const inputs = () => [
  { name: 'year', dictionary: dictionary([2020, 2021]), codes: Uint8Array.from([0, 0, 1, 1]) },
  { name: 'region', dictionary: dictionary(['Asia', 'Europe']), codes: Uint8Array.from([1, 0, 1, 1]) },
  { name: 'country', dictionary: dictionary(['France', 'Japan', 'Côte "d" Ivoire']), codes: Uint8Array.from([0, 1, 0, 2]) },
];
const metric = () => [{ name: 'ggr', values: Float64Array.from([1, 2.5, -0, 1e21]), scale: null }];
const expected = [
  '{"dimensions":{"year":2020,"region":"Europe","country":"France"},"values":{"ggr":1.0}}',
  '{"dimensions":{"year":2020,"region":"Asia","country":"Japan"},"values":{"ggr":2.5}}',
  '{"dimensions":{"year":2021,"region":"Europe","country":"France"},"values":{"ggr":-0.0}}',
  '{"dimensions":{"year":2021,"region":"Europe","country":"Côte \\"d\\" Ivoire"},"values":{"ggr":1e21}}',
];
for (const max of [1, 3, 4, 0x10000]) {
  store(`renders the same rows whatever the fusion (at most ${max} combinations)`, async () => {
    const columns = await ColumnStore.build(4, inputs(), metric(), max);
    const json = await TextRenderer.create(columns, jsonSyntax(columns, 'financial'));
    assert.is(json.render([0, 1, 2, 3], '{"data":[', ']}').toString(), `{"data":[${expected.join(',')}]}`);
    assert.is(json.render([3, 1], '[', ']').toString(), `[${expected[3]},${expected[1]}]`);
    assert.is(json.render([], '[', ']').toString(), '[]');
    // Each dimension's own code survives fusion (what CSV and Arrow output read).
    for (const [d, input] of inputs().entries()) {
      assert.equal(
        [0, 1, 2, 3].map((rid) => columns.code(d, rid)),
        [...input.codes],
        input.name,
      );
    }
    assert.ok(columns.segments.every((s) => s.combinations <= Math.max(max, 3)));
  });
}
store('fuses the pair with the fewest combinations first, within the limit', async () => {
  // year+region and region+country have 3 combinations each: a tie fuses the left pair.
  assert.equal(
    (await ColumnStore.build(4, inputs(), metric(), 1)).segments.map((s) => s.dimensions),
    [[0], [1], [2]],
  );
  assert.equal(
    (await ColumnStore.build(4, inputs(), metric(), 3)).segments.map((s) => s.dimensions),
    [[0, 1], [2]],
  );
  assert.equal(
    (await ColumnStore.build(4, inputs(), metric(), 4)).segments.map((s) => s.dimensions),
    [[0, 1, 2]],
  );
});
store('reference rows are flat', async () => {
  const columns = await ColumnStore.build(4, inputs().slice(1), [], 0x10000);
  assert.is(
    (await TextRenderer.create(columns, jsonSyntax(columns, 'reference'))).render([1], '', '').toString(),
    '{"region":"Asia","country":"Japan"}',
  );
});
store.run();

const cursors = suite('cursor tokens');
/** The position a token gives in `scope`: parsed, then checked against it, as a request does. */
const decode = (codec: CursorCodec, token: string, scope: QueryScope) => codec.after(codec.parse(token), scope);
cursors('the canonical scope is unchanged: cursors issued before stay valid', () => {
  // Tokens made by the codec before the canonical form moved to src/query/scope.ts;
  // the release tag (202611 in base 36) was appended later, and tokens without it still decode.
  const codec = new CursorCodec(Buffer.alloc(32, 7));
  const filters = new Map([
    ['year', ['2021', '2020']],
    ['country', ['Spain', 'France', 'Spain']],
  ]);
  assert.is(
    codec.encode({ release: '2026-11', dataset: 'ggr', filters, period: '2019-01-01:2022-12-31' }, 123456),
    '2n9c.64_LsnkjhRyQoPrnqKXl2A.4cc3',
  );
  assert.is(codec.encode({ release: '2026-11', dataset: 'country_reference', filters: new Map() }, 0), '0.UbnlEH4WpMXmer62_CQFTA.4cc3');
  assert.is(codec.parse('0.UbnlEH4WpMXmer62_CQFTA.4cc3').release, '2026-11');
  assert.is(codec.parse('0.UbnlEH4WpMXmer62_CQFTA').release, undefined);
  assert.throws(() =>
    decode(codec, '0.UbnlEH4WpMXmer62_CQFTA.4cc4', { release: '2026-11', dataset: 'country_reference', filters: new Map() }),
  );
  const reordered = new Map([
    ['country', ['France', 'Spain']],
    ['year', ['2020', '2021']],
  ]);
  assert.is(
    decode(codec, '2n9c.64_LsnkjhRyQoPrnqKXl2A', {
      release: '2026-11',
      dataset: 'ggr',
      filters: reordered,
      period: '2019-01-01:2022-12-31',
    }),
    123456,
  );
});
cursors('a cursor names its format and pages only that one; tokens without a format page any', () => {
  const codec = new CursorCodec(Buffer.alloc(32, 7));
  const scope = { release: '2026-11', dataset: 'country_reference', filters: new Map() };
  const csv = codec.encode({ ...scope, format: 'csv' }, 41);
  assert.match(csv, /^15\.[A-Za-z0-9_-]{22}\.4cc3\.csv$/);
  assert.is(decode(codec, csv, { ...scope, format: 'csv' }), 41);
  for (const other of ['json', 'arrow', undefined] as const) assert.throws(() => decode(codec, csv, { ...scope, format: other }), other);
  // The format is signed: renaming it in the token breaks the MAC.
  assert.throws(() => decode(codec, csv.replace(/csv$/, 'arrow'), { ...scope, format: 'arrow' }));
  const legacy = codec.encode(scope, 41);
  for (const format of ['json', 'csv', 'arrow', undefined] as const) assert.is(decode(codec, legacy, { ...scope, format }), 41, format);
});
cursors.run();

const suggest = suite('suggestions for names and values we do not hold');
suggest('case first, then a few edits (a swap is one), nearest first, at most three', () => {
  const countries = ['France', 'Finland', 'Iceland', 'Ireland', 'Poland', 'Iran', 'Iraq'];
  assert.equal(closest('france', countries), ['France']);
  assert.equal(closest('Frnace', countries), ['France']);
  assert.equal(closest('Irak', countries), ['Iran', 'Iraq']);
  assert.equal(closest('Irland', countries), ['Ireland', 'Finland', 'Iceland']);
  assert.equal(closest('Irland', countries, 10), ['Ireland', 'Finland', 'Iceland', 'Iran', 'Poland']);
  // A value equal but for case is what was meant: nothing else is offered beside it.
  assert.equal(closest('usd', ['BSD', 'RSD', 'USD']), ['USD']);
  assert.equal(closest('Germany', countries), []);
  assert.equal(closest('', ['', 'a']), []);
  assert.equal(closest('a'.repeat(101), ['a'.repeat(100)]), [], 'a value longer than anything held gets none, cheaply');
  assert.is(alternatives(['A']), '"A"');
  assert.is(alternatives(['A', 'B"']), '"A" or "B\\""');
  assert.is(alternatives(['A', 'B', 'C']), '"A", "B" or "C"');
});
suggest.run();
