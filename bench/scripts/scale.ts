import fs from 'node:fs';
import path from 'node:path';
import { latestRelease } from '../../src/releases/on-disk.ts';
import { sweep } from '../runner/sweep.ts';

// `npx tsx bench/scripts/scale.ts DATA_DIR [DATA_DIR …]`: the suite's scale sweep (bench/runner/sweep.ts)
// on releases of your choice; the first is the reference for the ratios.
// `npm run bench` runs it on its own 1x, 4x and 16x releases.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const dataDirs = process.argv.slice(2).map((dir) => path.resolve(dir));
if (dataDirs.length === 0) throw new Error('usage: npx tsx bench/scripts/scale.ts DATA_DIR [DATA_DIR …] (the first is the reference)');
const releases = [];
for (const [i, dataDir] of dataDirs.entries()) {
  const release = await latestRelease(dataDir);
  if (!release) throw new Error(`${dataDir}: no release; make one with npm run etl -- generate --out ${dataDir}/2026-11 --scale X`);
  releases.push({ scale: i, dataDir, rows: release.manifest.datasets.ggr!.rows });
}
const work = path.join(ROOT, 'tmp', 'bench', 'scale');
fs.mkdirSync(work, { recursive: true });
const { entries, servers } = await sweep(releases, work, { count: 8, size: 50 }, (text) => process.stderr.write(`${text}\n`));
await Promise.all([...servers.values()].map((s) => s.stop()));
for (const e of entries) {
  console.log(
    `${path.relative(ROOT, e.dataDir).padEnd(24)} ${e.rows.toLocaleString('en').padStart(11)} rows  p50 ${e.page.p50.toFixed(2)} ms (${(e.page.p50 / entries[0]!.page.p50).toFixed(2)}x)  p99 ${e.page.p99.toFixed(2)} ms  ` +
      `load ${e.loadSeconds.toFixed(1)} s  peak while loading ${e.loadPeakMB} MB  steady RSS ${e.steadyRssMB} MB`,
  );
}
