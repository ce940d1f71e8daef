import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

// The shape of src/ that README.md "Layout" describes, held against the code: imports
// point one way, down these layers (Biome's noImportCycles rules out cycles within
// one); no file grows past 400 lines; nothing reads another object's `_` fields.

const SRC = path.resolve(import.meta.dirname, '../src');

/** Each top-level folder or file of src/ and its layer: a file imports only from lower layers, or from its own folder. */
const LAYERS: Readonly<Record<string, number>> = {
  'clock.ts': 0,
  'config.ts': 0,
  'registry.ts': 0,
  'version.ts': 0,
  'clients.ts': 0,
  errors: 0,
  duckdb: 0,
  state: 0,
  cache: 0,
  'log.ts': 1,
  'redis.ts': 1,
  'metrics.ts': 1,
  limits: 1,
  admission: 1,
  keys: 1,
  usage: 3,
  invites: 1,
  store: 1,
  render: 2,
  query: 3,
  releases: 3,
  // Above releases and query, whose files and diffs it reads; below the services that hold it.
  notify: 3.5,
  // Above notify, whose events it sends; below the services that hold it.
  webhooks: 3.6,
  'services.ts': 4,
  http: 5,
  claim: 5,
  explore: 5,
  admin: 6,
  'app.ts': 6,
  cli: 7,
  'server.ts': 7,
  'main.ts': 8,
};

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(file);
    return entry.name.endsWith('.ts') ? [file] : [];
  });
}

/** The top-level folder or file of src/ that `file` belongs to. */
const unitOf = (file: string) => path.relative(SRC, file).split(path.sep)[0]!;

const files = sources(SRC);

test('every import goes down the layers, or stays within its folder', () => {
  const upward: string[] = [];
  for (const file of files) {
    const unit = unitOf(file);
    assert.ok(unit in LAYERS, `src/${unit} has no layer: add it to LAYERS here and to README.md "Layout"`);
    for (const [, spec] of fs.readFileSync(file, 'utf8').matchAll(/from '(\.[^']*)'/g)) {
      const target = path.resolve(path.dirname(file), spec!);
      if (!target.startsWith(SRC)) continue;
      const to = unitOf(target);
      if (to !== unit && !(LAYERS[to]! < LAYERS[unit]!))
        upward.push(`${path.relative(SRC, file)} imports ${spec} (${unit} is layer ${LAYERS[unit]}, ${to} ${LAYERS[to]})`);
    }
  }
  assert.equal(upward, []);
});

test('no file of src/ is over 400 lines', () => {
  const long = files
    .map((file) => [path.relative(SRC, file), fs.readFileSync(file, 'utf8').split('\n').length - 1] as const)
    .filter(([, n]) => n > 400);
  assert.equal(long, []);
});

test("no line of src/ reads or writes a `_` field of an object it did not make (only `this._…`, a subclass's own)", () => {
  const found = files.flatMap((file) =>
    fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) =>
        /(?<!\bthis)\??\.\s*_[A-Za-z]/.test(line.replace(/\/\/.*$/, '')) ? [`${path.relative(SRC, file)}:${i + 1}: ${line.trim()}`] : [],
      ),
  );
  assert.equal(found, []);
});

test.run();
