import { Pool } from 'undici';

export interface Stats {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly rps: number;
  /** Mean bytes read per response (wrk's count: headers included). */
  readonly bytes: number;
  /** The load client's CPU time over wall time (0.05: 5% of a core), when it was measured. */
  readonly clientCpu?: number;
  /** The same for the server's process. */
  readonly serverCpu?: number;
}

export interface Run {
  readonly latencies: number[];
  readonly seconds: number;
  readonly bytes: number;
  readonly clientCpu?: number;
  readonly serverCpu?: number;
}

/** One request as the bench sends it, with the answer it must get. */
export interface Request {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly status: number;
  /** The exact body expected; absent where it varies by design (a 429's Retry-After). */
  readonly body?: Buffer;
}

/** No single run may take longer than this, whatever its count. */
const MAX_RUN_SECONDS = 120;

/** Pools runs of the same requests (e.g. alternated blocks) into one summary. */
export function summarizeRuns(runs: readonly Run[]): Stats {
  const count = runs.reduce((a, r) => a + r.latencies.length, 0);
  const bytes = runs.reduce((a, r) => a + r.bytes * r.latencies.length, 0) / Math.max(1, count);
  const seconds = runs.reduce((a, r) => a + r.seconds, 0);
  // CPU shares weighted by each run's wall time: the share over all of them.
  const share = (pick: (r: Run) => number | undefined) =>
    runs.every((r) => pick(r) !== undefined) && runs.length ? runs.reduce((a, r) => a + pick(r)! * r.seconds, 0) / seconds : undefined;
  const clientCpu = share((r) => r.clientCpu);
  const serverCpu = share((r) => r.serverCpu);
  return {
    ...summarize(
      runs.flatMap((r) => r.latencies),
      seconds,
      bytes,
    ),
    ...(clientCpu !== undefined && { clientCpu }),
    ...(serverCpu !== undefined && { serverCpu }),
  };
}

export function summarize(latencies: readonly number[], seconds: number, bytes: number): Stats {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), rps: sorted.length / seconds, bytes };
}

/**
 * Sends `total` GETs, `requests` taken in turn, over `connections` keep-alive
 * connections, each one request at a time, and times each from send to last body
 * byte. Bounded in count and in time, so it always ends. Every answer is checked
 * (status, and the bytes where given); the first wrong one aborts the run. The suite
 * times with wrk (bench/runner/wrk.ts) and checks with this; the single-purpose scripts
 * (bench/scripts/vintages.ts, formats.ts, memory.ts, the scale sweep) still time with it,
 * for single-client latency or figures compared with each other.
 */
export async function load(origin: string, requests: readonly Request[], connections: number, total: number): Promise<Run> {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  const latencies: number[] = [];
  const deadline = performance.now() + MAX_RUN_SECONDS * 1000;
  let sent = 0;
  let bytes = 0;
  const worker = async () => {
    while (sent < total && performance.now() < deadline) {
      const expected = requests[sent++ % requests.length]!;
      const started = performance.now();
      const res = await pool.request({ method: 'GET', path: expected.path, headers: expected.headers });
      const body = Buffer.from(await res.body.arrayBuffer());
      latencies.push(performance.now() - started);
      bytes += body.length;
      if (res.statusCode !== expected.status || (expected.body && !body.equals(expected.body))) {
        throw new Error(
          `${origin}${expected.path}: got ${res.statusCode} (${body.length} bytes) where ${expected.status} (${expected.body?.length ?? 'any'} bytes) was captured: ${body.toString().slice(0, 200)}`,
        );
      }
    }
  };
  const started = performance.now();
  try {
    await Promise.all(Array.from({ length: connections }, worker));
  } finally {
    await pool.close();
  }
  return { latencies, seconds: (performance.now() - started) / 1000, bytes: bytes / Math.max(1, latencies.length) };
}

/** Relative spread of two samples of one figure. */
export const spread = (x: number, y: number) => Math.abs(x - y) / ((x + y) / 2 || 1);
