import { Pool } from 'undici';

export interface Stats {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly rps: number;
  readonly bytes: number;
}

export interface Run {
  readonly latencies: number[];
  readonly seconds: number;
  readonly bytes: number;
}

/** Pools runs of the same request (e.g. interleaved halves) into one summary. */
export const summarizeRuns = (runs: Run[]): Stats =>
  summarize(runs.flatMap((r) => r.latencies), runs.reduce((a, r) => a + r.seconds, 0), runs[0]!.bytes);

export function summarize(latencies: number[], seconds: number, bytes: number): Stats {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), rps: sorted.length / seconds, bytes };
}

/**
 * Sends `total` GETs over `connections` keep-alive connections, each connection
 * one request at a time, and times each from send to last body byte. Bounded in
 * count, so it always ends. Throws on any non-200.
 */
export async function load(origin: string, path: () => string, headers: Record<string, string>, connections: number, total: number): Promise<Run> {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  const latencies: number[] = [];
  let sent = 0;
  let bytes = 0;
  const worker = async () => {
    while (sent < total) {
      sent++;
      const started = performance.now();
      const res = await pool.request({ method: 'GET', path: path(), headers });
      const body = await res.body.arrayBuffer();
      latencies.push(performance.now() - started);
      if (res.statusCode !== 200) throw new Error(`${res.statusCode}: ${Buffer.from(body).toString().slice(0, 300)}`);
      bytes = body.byteLength;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return { latencies, seconds, bytes };
}
