import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { latestRelease } from '../../src/releases/on-disk.ts';

// What publishing a month costs an analyst: `etl load` of a generated release into an
// empty DATA_DIR (the first release), then the same files again as the next month (the
// second, compared row by row with the first), each timed as a whole command by
// /usr/bin/time -v: wall time and the peak resident memory of the etl process.
//   npx tsx bench/scripts/publish.ts [SCALE …]   (default 1 4 16; releases from tmp/bench, made by npm run bench)
// Prints the table docs/etl.md "Steps, memory and time" shows.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const scales = process.argv.slice(2).map(Number);
const dataOf = (scale: number) => path.join(ROOT, 'tmp', 'bench', scale === 1 ? 'data' : `x${scale}`);

interface Run {
  readonly seconds: number;
  readonly peakMb: number;
}

/** Runs `etl load DROP --release ID --data-dir DATA_DIR` under /usr/bin/time -v. */
async function publish(drop: string, dataDir: string, release: string): Promise<Run> {
  const child = spawn(
    '/usr/bin/time',
    ['-v', process.execPath, '--import', 'tsx', 'etl/cli.ts', 'load', drop, '--release', release, '--data-dir', dataDir],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk;
    for (const line of String(chunk).split('\n')) if (/done in/.test(line)) console.error(`  ${line.trim()}`);
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`etl load ${drop} exited ${code}:\n${stderr.slice(-2000)}`);
  const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)/.exec(stderr)!;
  const peak = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)!;
  return { seconds: Number(wall[1] ?? 0) * 3600 + Number(wall[2]) * 60 + Number(wall[3]), peakMb: Number(peak[1]) / 1024 };
}

const fmt = ({ seconds, peakMb }: Run) =>
  `${seconds.toFixed(0)} s, ${peakMb >= 1024 ? `${(peakMb / 1024).toFixed(2)} GB` : `${peakMb.toFixed(0)} MB`}`;

const rows: string[] = [];
for (const scale of scales.length ? scales : [1, 4, 16]) {
  const release = await latestRelease(dataOf(scale));
  if (!release) throw new Error(`${dataOf(scale)}: no release; run npm run bench once (it generates the 1x, 4x and 16x releases)`);
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'dqs-publish-'));
  try {
    console.error(`${scale}x: first release`);
    const first = await publish(release.dir, dataDir, '2026-11');
    console.error(`${scale}x: second release`);
    const second = await publish(release.dir, dataDir, '2026-12');
    rows.push(`| ${scale}× (${release.manifest.datasets.ggr!.rows.toLocaleString('en')}) | ${fmt(first)} | ${fmt(second)} |`);
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}
console.log(['| scale (ggr rows) | first release | second release (beside the first) |', '|---|---|---|', ...rows].join('\n'));
