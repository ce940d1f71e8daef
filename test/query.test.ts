import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DATASETS } from '../src/data/registry.ts';
import { RowStore } from '../src/data/row-store.ts';
import type { ServedDataset } from '../src/data/loader.ts';
import { CursorCodec } from '../src/query/cursor.ts';
import { pageQuery, whereClauses, type YearRange } from '../src/query/filters.ts';

// The one place request values turn into SQL, as a table of input → (sql, params):
// values only ever become bound parameters, never SQL text.

const ggr: ServedDataset = {
  def: DATASETS.find((d) => d.name === 'ggr')!,
  table: '"r2026_11"."ggr"',
  rows: RowStore.fromLines(Buffer.from(''), 0),
  codes: new Map([
    ['country', new Map([['France', 0], ['Spain', 1], ["Cote d'Ivoire", 2]])],
    ['channel', new Map([['Land', 0], ['Online', 1]])],
    ['state', new Map([['', 0], ['Nevada', 1]])],
  ]),
};

const sql = suite('filters → SQL');
const cases: Array<{ name: string; filters: Record<string, string[]>; period?: YearRange; limit?: number; after?: number; sql: string | null; params?: number[] }> = [
  { name: 'no filters', filters: {}, sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 LIMIT $1 + 1', params: [100, -1] },
  { name: 'one value', filters: { country: ['Spain'] }, sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 AND "country" IN ($3) LIMIT $1 + 1', params: [100, -1, 1] },
  { name: 'OR within, AND across', filters: { country: ['France', 'Spain'], channel: ['Online'] }, limit: 7, after: 41, sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 AND "country" IN ($3, $4) AND "channel" IN ($5) LIMIT $1 + 1', params: [7, 41, 0, 1, 1] },
  { name: 'repeated value counted once', filters: { country: ['Spain', 'Spain'] }, sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 AND "country" IN ($3) LIMIT $1 + 1', params: [100, -1, 1] },
  { name: 'unknown values dropped, known kept', filters: { country: ["' OR 1=1 --", 'France'] }, sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 AND "country" IN ($3) LIMIT $1 + 1', params: [100, -1, 0] },
  { name: 'quote inside a real value is just a value', filters: { country: ["Cote d'Ivoire"] }, sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 AND "country" IN ($3) LIMIT $1 + 1', params: [100, -1, 2] },
  { name: 'empty string is a value', filters: { state: [''] }, sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 AND "state" IN ($3) LIMIT $1 + 1', params: [100, -1, 0] },
  { name: 'years are integers', filters: { year: ['2020', '2021', '2020'] }, sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 AND "year" IN ($3, $4) LIMIT $1 + 1', params: [100, -1, 2020, 2021] },
  { name: 'period', filters: { channel: ['Land'] }, period: { from: 2019, to: 2021 }, sql: 'SELECT rid FROM "r2026_11"."ggr" WHERE rid > $2 AND "channel" IN ($3) AND "year" BETWEEN $4 AND $5 LIMIT $1 + 1', params: [100, -1, 0, 2019, 2021] },
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
sql.run();

const rows = suite('row store');
rows('renders chosen rows between a prefix and a suffix', () => {
  const store = RowStore.fromLines(Buffer.from('{"a":1}\n{"b":"é"}\n{"c":[1,2]}\n'), 3);
  assert.is(store.render([0, 2], '{"data":[', ']}').toString(), '{"data":[{"a":1},{"c":[1,2]}]}');
  assert.is(store.render([1], '[', ']').toString(), '[{"b":"é"}]');
  assert.is(store.render([], '[', ']').toString(), '[]');
});
rows('refuses text that is not one JSON object per line', () => {
  for (const [text, count] of [['{"a":1}\n', 2], ['{"a":1}\n{"b":2}\n', 1], ['{"a":1}', 1], ['"x"\n', 1], ['{"a":\n1}\n', 1]] as const) {
    assert.throws(() => RowStore.fromLines(Buffer.from(text), count), undefined, JSON.stringify(text));
  }
});
rows.run();

const cursors = suite('cursor tokens');
cursors('the canonical scope is unchanged: cursors issued before stay valid', () => {
  // Tokens made by the codec before the canonical form moved to src/query/scope.ts.
  const codec = new CursorCodec(Buffer.alloc(32, 7));
  const filters = new Map([['year', ['2021', '2020']], ['country', ['Spain', 'France', 'Spain']]]);
  assert.is(codec.encode({ release: '2026-11', dataset: 'ggr', filters, period: '2019-01-01:2022-12-31' }, 123456), '2n9c.64_LsnkjhRyQoPrnqKXl2A');
  assert.is(codec.encode({ release: '2026-11', dataset: 'country_reference', filters: new Map() }, 0), '0.UbnlEH4WpMXmer62_CQFTA');
  const reordered = new Map([['country', ['France', 'Spain']], ['year', ['2020', '2021']]]);
  assert.is(codec.decode('2n9c.64_LsnkjhRyQoPrnqKXl2A', { release: '2026-11', dataset: 'ggr', filters: reordered, period: '2019-01-01:2022-12-31' }), 123456);
});
cursors.run();
