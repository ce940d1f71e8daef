import fs from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadDrop } from '../etl/load.ts';
import { readPointer } from '../src/releases/on-disk.ts';
import { fixtureDataDir, tempDir } from './helpers/service.ts';

// `etl load` works within ETL_MEMORY_LIMIT: DuckDB spills to ETL_TEMP_DIR what does not
// fit (the sort of a 1x dataset takes ~100 MB), and publishes; a limit too small for
// any step refuses with the setting to raise, publishing nothing.

const options = (dataDir: string, drop: string, memoryLimit: string, temp: string) => ({
  drop,
  dataDir,
  release: '2026-11',
  force: false,
  minYear: 1990,
  maxYear: 2100,
  maxRowChange: 0.25,
  memoryLimit,
  tempDir: temp,
});

test('a 1x release published under ETL_MEMORY_LIMIT=64MB spills to ETL_TEMP_DIR and is published', async () => {
  const drop = path.join(await fixtureDataDir({ seed: 1, scale: 1, release: '2026-11' }), '2026-11');
  const dataDir = await tempDir('dqs-etl-memory-');
  const temp = path.join(dataDir, '..', `${path.basename(dataDir)}-spill`);
  // DuckDB makes the folder when it first spills, and removes its files when done with them.
  let spilled = 0;
  const watch = setInterval(
    () =>
      void fs.readdir(temp).then(
        (files) => (spilled = Math.max(spilled, files.length)),
        () => {},
      ),
    10,
  );
  try {
    const manifest = await loadDrop(options(dataDir, drop, '64MB', temp));
    assert.is(manifest.datasets.ggr!.rows, 938_742);
    assert.is(await readPointer(dataDir), '2026-11');
    assert.ok(spilled > 0, 'DuckDB spilled to ETL_TEMP_DIR');
    assert.is(
      await fs.stat(temp).then(
        () => 'left',
        () => 'removed',
      ),
      'removed',
      'the spill folder is removed after the load',
    );
  } finally {
    clearInterval(watch);
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

test('a limit too small for any step is refused with the setting to raise, and nothing is published', async () => {
  const drop = path.join(await fixtureDataDir({ seed: 1, scale: 1, release: '2026-11' }), '2026-11');
  const dataDir = await tempDir('dqs-etl-memory-');
  try {
    const error = await loadDrop(options(dataDir, drop, '16MB', path.join(dataDir, '.spill'))).then(
      () => undefined,
      (err: Error) => err,
    );
    assert.match(String(error?.message), /Out of Memory Error.*ETL_MEMORY_LIMIT \(16MB\) is too small for this step; raise it/);
    assert.equal(await fs.readdir(dataDir), [], 'DATA_DIR is as it was');
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});

test.run();
