import fs from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DATASETS } from '../src/registry.ts';
import { metricsTable } from '../src/http/routes/aggregate.ts';

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

test.run();
