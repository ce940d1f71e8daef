import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { request } from 'undici';
import { type ServiceProcess, startServer } from '../../tools/service-process.ts';
import { cpuSeconds } from '../runner/wrk.ts';
import { cancelReleases } from './cancel.ts';

// What a whole revisions diff costs to stream, beside an export of the same data
// (docs/performance.md "Whole diffs"). On the two 1x releases of the cancellation
// scenarios, in which every row differs, the ggr diff is computed and kept first; then
// the whole diff as CSV, as Arrow, and `/v1/export?format=csv` of ggr are each read
// ROUNDS times in turn, one at a time. For each: its bytes, the server's CPU seconds
// (the least of the rounds: other work on a shared machine adds to it, never takes
// away), and the event-loop steps over 50 ms while it streamed and the longest of
// them, as bench/runner/loop-steps.mjs sees them inside the server.

const RELEASES = ['2026-01', '2026-02'] as const;
const ROUNDS = 3;
const DIFF = `/v1/revisions?metric=ggr&from=${RELEASES[0]}&to=${RELEASES[1]}`;

export const WHOLE_DIFF_STREAMS = [
  { name: 'whole diff, CSV', path: `${DIFF}&format=csv` },
  { name: 'whole diff, Arrow', path: `${DIFF}&format=arrow` },
  { name: 'export of ggr, CSV', path: '/v1/export?metric=ggr&format=csv' },
] as const;

export type WholeDiffStream = (typeof WHOLE_DIFF_STREAMS)[number]['name'];

export interface WholeDiffFigure {
  readonly stream: WholeDiffStream;
  readonly bytes: number;
  /** Server CPU seconds of one answer, the least of the rounds. */
  readonly cpuSeconds: number;
  /** Wall seconds of that round. */
  readonly seconds: number;
  /** The longest event-loop step over 50 ms while any round streamed (ms); 0 when there was none. */
  readonly longestStepMs: number;
  /** Event-loop steps over 50 ms in all rounds. */
  readonly stepsOver50ms: number;
}

const LOOP_STEPS = path.join(import.meta.dirname, '..', 'runner', 'loop-steps.mjs');

/** The steps over 50 ms the server has had so far (ms each), as loop-steps.mjs wrote them. */
const stepsSoFar = (file: string): number[] =>
  fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number) : [];

/** Streams one answer to its end, counting its bytes; throws on anything but a 200. */
async function drain(server: ServiceProcess, pathAndQuery: string): Promise<number> {
  const res = await request(`${server.url}${pathAndQuery}`, { headers: server.headers, headersTimeout: 600_000, bodyTimeout: 600_000 });
  let bytes = 0;
  for await (const chunk of res.body) bytes += (chunk as Buffer).length;
  if (res.statusCode !== 200) throw new Error(`${pathAndQuery}: ${res.statusCode}`);
  return bytes;
}

/** The three streams on a fresh server of the checkout at `root` (this one by default), over the releases in `work`/cancel. */
export async function wholeDiffFigures(work: string, progress: (text: string) => void, root?: string): Promise<WholeDiffFigure[]> {
  const dataDir = await cancelReleases(work, progress);
  const stateDir = fs.mkdtempSync(path.join(work, 'state-whole-diff-'));
  const stepsFile = path.join(stateDir, 'loop-steps');
  progress('whole diffs: starting a server and computing the ggr diff once');
  const server = await startServer(
    // The diff is computed once, under no deadline a busy machine could miss; limits are lifted (a bench setting).
    { DATA_DIR: dataDir, STATE_DIR: stateDir, QUERY_TIMEOUT_MS: '600000', DQS_BENCH_LOOP_STEPS: stepsFile },
    path.join(work, 'logs', 'whole-diff.log'),
    root,
    ['--import', pathToFileURL(LOOP_STEPS).href],
  );
  try {
    await drain(server, `${DIFF}&limit=1`);
    const cpu = () => cpuSeconds(fs.readFileSync(`/proc/${server.pid}/stat`, 'utf8'));
    const figures = new Map<WholeDiffStream, WholeDiffFigure>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const stream of WHOLE_DIFF_STREAMS) {
        progress(`whole diffs: ${stream.name}, round ${round + 1} of ${ROUNDS}`);
        const stepsBefore = stepsSoFar(stepsFile).length;
        const cpuBefore = cpu();
        const started = performance.now();
        const bytes = await drain(server, stream.path);
        const seconds = (performance.now() - started) / 1000;
        const cpuSpent = cpu() - cpuBefore;
        const steps = stepsSoFar(stepsFile).slice(stepsBefore);
        const previous = figures.get(stream.name);
        if (previous && previous.bytes !== bytes) throw new Error(`${stream.path}: ${bytes} bytes, ${previous.bytes} in an earlier round`);
        const least = previous && previous.cpuSeconds <= cpuSpent ? previous : { cpuSeconds: cpuSpent, seconds };
        figures.set(stream.name, {
          stream: stream.name,
          bytes,
          cpuSeconds: least.cpuSeconds,
          seconds: least.seconds,
          longestStepMs: Math.max(previous?.longestStepMs ?? 0, ...steps),
          stepsOver50ms: (previous?.stepsOver50ms ?? 0) + steps.length,
        });
      }
    }
    return [...figures.values()];
  } finally {
    await server.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

/** Server CPU a byte of `stream` over the export's: what docs/performance.md's target bounds at 2. */
export function cpuPerByteVsExport(figures: readonly WholeDiffFigure[], stream: WholeDiffStream): number | undefined {
  const of = (name: WholeDiffStream) => figures.find((f) => f.stream === name);
  const ours = of(stream);
  const exported = of('export of ggr, CSV');
  if (!ours || !exported) return undefined;
  return ours.cpuSeconds / ours.bytes / (exported.cpuSeconds / exported.bytes);
}

export const WHOLE_DIFF_HEADER = `${'a ggr diff of two 1x releases, kept'.padEnd(36)} ${'MB'.padStart(7)}   ${'CPU s'.padStart(6)}   ${'MB/s'.padStart(6)}   ${'CPU/byte vs export'.padStart(18)}   ${'longest step'.padStart(12)}   steps > 50 ms`;

export function wholeDiffRow(f: WholeDiffFigure, figures: readonly WholeDiffFigure[]): string {
  const ratio = cpuPerByteVsExport(figures, f.stream);
  return `${f.stream.padEnd(36)} ${(f.bytes / 1e6).toFixed(1).padStart(7)}   ${f.cpuSeconds.toFixed(2).padStart(6)}   ${(f.bytes / 1e6 / f.seconds).toFixed(1).padStart(6)}   ${(ratio === undefined ? '' : `${ratio.toFixed(2)}×`).padStart(18)}   ${`${f.longestStepMs.toFixed(0)} ms`.padStart(12)}   ${f.stepsOver50ms}`;
}
