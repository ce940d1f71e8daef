import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SCHEMA } from '../bench/runner/result.ts';

// docs/performance.md's list of result-file fields against the result files committed
// under bench/results/ (written by real runs): every field a run writes is
// documented, and every documented field occurs in some run's file.

const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS = path.join(ROOT, 'bench', 'results');

function documentedFields(): Set<string> {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'performance.md'), 'utf8');
  const block = /<!-- result-fields:begin -->\n([\s\S]*?)\n<!-- result-fields:end -->/.exec(doc)?.[1];
  assert.ok(block, 'docs/performance.md has no result-fields block');
  const fields = new Set<string>();
  for (const line of block.split('\n')) {
    // "- `a`, `b`: text": the names before the colon.
    const names = /^- ((?:`[^`]+`(?:, )?)+)/.exec(line)?.[1];
    assert.ok(names, `not a field line: ${line}`);
    for (const [, name] of names.matchAll(/`([^`]+)`/g)) fields.add(name!);
  }
  return fields;
}

/**
 * Walks a result: a documented field that no other documented field extends is a
 * leaf (its value's own keys, such as Stats or a ceiling's name, are described in
 * prose); anything else is descended into, and any value reached that way is undocumented.
 */
function walk(value: unknown, at: string, fields: ReadonlySet<string>, seen: Set<string>, undocumented: Set<string>): void {
  const extended = [...fields].some((f) => f.startsWith(`${at}.`) || f.startsWith(`${at}[]`));
  if (at && fields.has(at)) seen.add(at);
  if (at && !extended) {
    if (!fields.has(at)) undocumented.add(at);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) walk(item, `${at}[]`, fields, seen, undocumented);
  } else if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) walk(child, at ? `${at}.${key}` : key, fields, seen, undocumented);
  } else if (at) {
    undocumented.add(at);
  }
}

test('every field of the committed result files is documented, and every documented field occurs', () => {
  const files = fs.readdirSync(RESULTS).filter((f) => f.endsWith('.json'));
  assert.ok(files.length > 0, 'bench/results/ holds no result file');
  const fields = documentedFields();
  const seen = new Set<string>();
  const undocumented = new Set<string>();
  for (const file of files) {
    const result = JSON.parse(fs.readFileSync(path.join(RESULTS, file), 'utf8'));
    assert.is(result.schema, SCHEMA, `${file}: schema`);
    walk(result, '', fields, seen, undocumented);
  }
  assert.equal([...undocumented], [], 'fields written by a run but missing from docs/performance.md');
  assert.equal([...fields].filter((f) => !seen.has(f)), [], 'fields documented in docs/performance.md that no committed result holds');
});

test.run();
