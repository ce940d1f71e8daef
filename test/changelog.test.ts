import fs from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { send, startTestService } from './helpers/service.ts';

// Spec 9.4: dated entries, newest first, breaking changes marked `Breaking:`.

const ROOT = path.resolve(import.meta.dirname, '..');

test("CHANGELOG.md: ISO-dated sections strictly newest first, every entry a bullet, Breaking: only as a bullet's prefix, the spec's two dates", async () => {
  const text = await fs.readFile(path.join(ROOT, 'CHANGELOG.md'), 'utf8');
  const sections = text.split(/^## /m).slice(1);
  const dates = sections.map((s) => s.split('\n')[0]!.trim());
  for (const date of dates) assert.ok(/^\d{4}-\d{2}-\d{2}$/.test(date) && !Number.isNaN(Date.parse(date)), `heading "${date}" is a date`);
  assert.equal(dates, [...dates].sort().reverse(), 'newest first');
  assert.is(new Set(dates).size, dates.length, 'one section per date');
  for (const section of sections) {
    const lines = section
      .split('\n')
      .slice(1)
      .filter((l) => l.trim() !== '');
    assert.ok(lines.length > 0, `${section.split('\n')[0]} has entries`);
    for (const line of lines) assert.ok(line.startsWith('- '), `an entry is a bullet: ${line}`);
    for (const line of lines) if (line.includes('Breaking:')) assert.match(line, /^- Breaking: /);
  }
  assert.ok(dates.includes('2026-07-01') && dates.includes('2026-08-23'));
  assert.is(dates.at(-1), '2026-07-01', "starts with v1's first release");
});

test('README and /docs link to the changelog, which /docs/changelog serves', async () => {
  assert.match(await fs.readFile(path.join(ROOT, 'README.md'), 'utf8'), /\[CHANGELOG\.md\]\(CHANGELOG\.md\)/);
  const service = await startTestService();
  try {
    const openapi = await service.get('/openapi.json', { key: null });
    assert.match(openapi.json.info.description, /\/docs\/changelog/);
    const changelog = await send(`${service.url}/docs/changelog`);
    assert.is(changelog.status, 200);
    assert.match(String(changelog.headers['content-type']), /^text\/markdown/);
    assert.is(changelog.text, await fs.readFile(path.join(ROOT, 'CHANGELOG.md'), 'utf8'));
  } finally {
    await service.stop();
  }
});

test.run();
