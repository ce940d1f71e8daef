import fs from 'node:fs';
import zlib from 'node:zlib';

// `npx tsx bench/scripts/compression.ts FILE`: time and size of each brotli quality and gzip
// level on one body (e.g. the bench page saved with curl), to choose the levels in
// src/http/respond/content-coding.ts. CPU time of one compression, in process; the slowest
// levels get fewer runs to stay bounded.

interface LevelResult {
  readonly coding: string;
  readonly level: number;
  readonly ms: number;
  readonly bytes: number;
}

function median(run: () => Buffer, runs: number): { ms: number; bytes: number } {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    bytes = run().length;
    times.push(performance.now() - started);
  }
  return { ms: times.sort((a, b) => a - b)[Math.floor(runs / 2)]!, bytes };
}

function compressionLevels(body: Buffer): LevelResult[] {
  const results: LevelResult[] = [];
  for (let quality = 1; quality <= 11; quality++) {
    const params = { [zlib.constants.BROTLI_PARAM_QUALITY]: quality, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length };
    results.push({ coding: 'br', level: quality, ...median(() => zlib.brotliCompressSync(body, { params }), quality >= 10 ? 3 : 21) });
  }
  for (let level = 1; level <= 9; level++) {
    results.push({ coding: 'gzip', level, ...median(() => zlib.gzipSync(body, { level }), 21) });
  }
  return results;
}

const file = process.argv[2];
if (!file)
  throw new Error(
    "usage: npx tsx bench/scripts/compression.ts FILE (e.g. curl -H 'x-api-key: KEY' 'http://127.0.0.1:3000/v1/financials?metric=ggr&region=Europe&channel=Online&limit=1000' > page.json)",
  );
const body = fs.readFileSync(file);
console.log(`compressing ${file} (${body.length} bytes) once, median time:`);
for (const level of compressionLevels(body)) {
  console.log(
    `${`${level.coding} ${level.level}`.padEnd(10)} ${level.ms.toFixed(2).padStart(8)} ms  ${String(level.bytes).padStart(7)} bytes  ${((level.bytes / body.length) * 100).toFixed(1).padStart(4)}%`,
  );
}
