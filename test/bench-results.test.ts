import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

// docs/performance.md's list of result-file fields against the type a run's result
// file is written from (`Result` in bench/runner/result.ts, read with the TypeScript
// compiler): every field the type holds is documented, and every documented field is
// one the type holds. Optional fields and every member of a union (a skipped peer or
// sweep, a skipped target) count, so nothing depends on which runs happen to exist.

const ROOT = path.resolve(import.meta.dirname, '..');
const DOC = path.join(ROOT, 'docs', 'performance.md');
const RESULT_TS = path.join(ROOT, 'bench', 'runner', 'result.ts');
const LOAD_TS = path.join(ROOT, 'bench', 'runner', 'load.ts');

function documentedFields(doc: string): Set<string> {
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

const program = ts.createProgram([RESULT_TS, LOAD_TS], {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2023,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  allowImportingTsExtensions: true,
  skipLibCheck: true,
  types: ['node'],
});
const checker = program.getTypeChecker();

/** The exported interface `name` of `file`, as a type. */
function exported(file: string, name: string): ts.Type {
  const source = program.getSourceFile(file);
  assert.ok(source, `${file} is not in the program`);
  const symbol = checker.getExportsOfModule(checker.getSymbolAtLocation(source)!).find((s) => s.name === name);
  assert.ok(symbol, `${path.relative(ROOT, file)} exports no ${name}`);
  return checker.getDeclaredTypeOfSymbol(symbol);
}

/**
 * Walks a type as the result file holds it: a documented field that no other
 * documented field extends is a leaf (its value's own keys, such as Stats or a
 * ceiling's name, are described in prose); anything else is descended into (each
 * property, an array's items as `[]`, every member of a union but null and
 * undefined), and any field reached that way and not documented is undocumented.
 */
function fieldsCheck(root: ts.Type, fields: ReadonlySet<string>): { undocumented: string[]; stale: string[] } {
  const seen = new Set<string>();
  const undocumented = new Set<string>();
  const walk = (type: ts.Type, at: string) => {
    const extended = [...fields].some((f) => f.startsWith(`${at}.`) || f.startsWith(`${at}[]`));
    if (at && fields.has(at)) seen.add(at);
    if (at && !extended) {
      if (!fields.has(at)) undocumented.add(at);
      return;
    }
    let descended = false;
    for (const member of type.isUnion() ? type.types : [type]) {
      if (member.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)) continue;
      if (checker.isArrayType(member)) {
        walk(checker.getTypeArguments(member as ts.TypeReference)[0]!, `${at}[]`);
        descended = true;
      } else if (member.flags & ts.TypeFlags.Object) {
        for (const property of checker.getPropertiesOfType(member))
          walk(checker.getTypeOfSymbol(property), at ? `${at}.${property.name}` : property.name);
        descended = true;
      }
    }
    // A documented field extended by others that holds no fields of its own.
    if (!descended && at) undocumented.add(at);
  };
  walk(root, '');
  return { undocumented: [...undocumented], stale: [...fields].filter((f) => !seen.has(f)) };
}

const doc = fs.readFileSync(DOC, 'utf8');
const result = exported(RESULT_TS, 'Result');

test('every field of a result file (bench/runner/result.ts, Result) is documented, and every documented field is one of them', () => {
  const { undocumented, stale } = fieldsCheck(result, documentedFields(doc));
  assert.equal(undocumented, [], 'fields a run writes but docs/performance.md does not list');
  assert.equal(stale, [], 'fields docs/performance.md lists that a run no longer writes');
});

test('the check fails on a field left out of the doc, on a field the type no longer has, and inside unions and arrays', () => {
  const fields = documentedFields(doc);
  assert.ok(fields.size > 30, `${fields.size} documented fields`);
  for (const field of [
    'durationSeconds',
    'sweep.entries[].noise',
    'sweep.skipped',
    'targets[].tolerance',
    'selfCheck.ratio',
    'figures[].judgedBy',
  ]) {
    assert.ok(fields.has(field), `${field} is documented`);
    const without = new Set([...fields].filter((f) => f !== field));
    assert.ok(fieldsCheck(result, without).undocumented.includes(field), `${field} left out of the doc`);
  }
  for (const field of ['figures[].p75', 'sweep.entries[].cpuSeconds', 'machine.gpu']) {
    assert.ok(fieldsCheck(result, new Set([...fields, field])).stale.includes(field), `${field}, which no result holds`);
  }
});

test("the doc's list of Stats fields is the Stats type's (bench/runner/load.ts)", () => {
  const listed = /Stats are\s+`\{([^}]*)\}`/.exec(doc)?.[1];
  assert.ok(listed, 'docs/performance.md does not say "Stats are `{…}`"');
  const stats = checker
    .getPropertiesOfType(exported(LOAD_TS, 'Stats'))
    .map((p) => `${p.name}${p.flags & ts.SymbolFlags.Optional ? '?' : ''}`);
  assert.ok(stats.length >= 5, stats.join(', '));
  assert.equal(
    listed.split(',').map((s) => s.trim()),
    stats,
  );
});

test.run();
