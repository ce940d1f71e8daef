import zlib from 'node:zlib';

// Time and size of each brotli quality and gzip level on one body (the 1000-row
// page), to choose the levels in src/http/content-coding.ts. CPU time of one
// compression, in process; the slowest levels get fewer runs to stay bounded.

export interface LevelResult {
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

export function compressionLevels(body: Buffer): LevelResult[] {
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
