import fs from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { denominatorsTable, metricsTable } from '../src/http/openapi/operations/aggregate.ts';
import { dimensionsTable } from '../src/http/routes/catalog.ts';
import { DATASETS } from '../src/registry.ts';

// docs/api.md's dataset table is derived from the registry; this keeps it so.

test('docs/api.md lists the registry as it is', async () => {
  const doc = await fs.readFile(path.resolve(import.meta.dirname, '../docs/api.md'), 'utf8');
  const table = [
    '| name | kind | dimensions | metrics |',
    '|---|---|---|---|',
    ...DATASETS.map((d) => `| ${d.name} | ${d.kind} | ${d.dimensions.join(', ')} | ${d.metrics.join(', ')} |`.replace('|  |', '| |')),
  ].join('\n');
  const between = /<!-- datasets:begin[^\n]*-->\n([\s\S]*?)\n<!-- datasets:end -->/.exec(doc)?.[1];
  assert.is(between, table, 'replace the table in docs/api.md with the expected one');
});

test('docs/api.md lists what each metric means as the registry says it', async () => {
  const doc = await fs.readFile(path.resolve(import.meta.dirname, '../docs/api.md'), 'utf8');
  const between = /<!-- metrics:begin[^\n]*-->\n([\s\S]*?)\n<!-- metrics:end -->/.exec(doc)?.[1];
  assert.is(between, metricsTable(), 'replace the table in docs/api.md with the expected one');
});

test("docs/api.md gives each dimension's meaning and its vocabulary's, as the registry defines them", async () => {
  const doc = await fs.readFile(path.resolve(import.meta.dirname, '../docs/api.md'), 'utf8');
  const between = /<!-- dimensions:begin[^\n]*-->\n([\s\S]*?)\n<!-- dimensions:end -->/.exec(doc)?.[1];
  assert.is(between, dimensionsTable(), 'replace the table in docs/api.md with the expected one');
});

test('docs/api.md lists each per= denominator as the registry defines it', async () => {
  const doc = await fs.readFile(path.resolve(import.meta.dirname, '../docs/api.md'), 'utf8');
  const between = /<!-- denominators:begin[^\n]*-->\n([\s\S]*?)\n<!-- denominators:end -->/.exec(doc)?.[1];
  assert.is(between, denominatorsTable(), 'replace the table in docs/api.md with the expected one');
});

test("docs/api.md's error table lists every code of the catalog (src/errors/), with its status, and no other", async () => {
  const doc = await fs.readFile(path.resolve(import.meta.dirname, '../docs/api.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Error codes'), doc.indexOf('\n## ', doc.indexOf('## Error codes') + 1));
  const listed = new Map([...section.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map(([, status, code]) => [code!, Number(status)]));
  const dir = path.resolve(import.meta.dirname, '../src/errors');
  const files = (await fs.readdir(dir)).filter((f) => f.endsWith('.ts'));
  const source = (await Promise.all(files.map((f) => fs.readFile(path.join(dir, f), 'utf8')))).join('\n');
  // Each class with its code, and the status it passes to super (its parent's, for a refusal class).
  const catalog = new Map<string, number>();
  for (const [, body] of source.matchAll(/\nexport class \w+ extends \w+ \{([\s\S]*?)\n\}/g)) {
    const code = /readonly code = '([a-z_]+)'/.exec(body!)?.[1];
    if (code) catalog.set(code, Number(/super\(\s*(\d{3})/.exec(body!)?.[1] ?? 400));
  }
  assert.ok(catalog.size > 30, 'the catalog was read');
  assert.equal(new Map([...listed].sort()), new Map([...catalog].sort()), 'docs/api.md "Error codes" and src/errors/ disagree');
});

test.run();
