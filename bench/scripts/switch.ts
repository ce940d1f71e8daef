import fs from 'node:fs/promises';
import path from 'node:path';
import { Agent, request } from 'undici';
import { latestRelease, writePointer } from '../../src/releases/on-disk.ts';
import { releaseCopies } from '../../tools/release-copies.ts';
import { memoryBreakdown, processMemory, releaseMemory, startServer } from '../../tools/service-process.ts';

// What a live release switch costs the requests served meanwhile: a probe asks for
// /v1/catalog every 10 ms over keep-alive connections, first for 5 s with nothing
// loading, then from the moment DATA_DIR's pointer names a second release until the
// server serves it (loaded beside the first, then swapped in). Reports each stretch's
// p50, p99 and longest answer, the extra wait over idle, failed requests (a reset
// connection among them), and the server's memory before and after.
//   npx tsx bench/scripts/switch.ts [RELEASE_DIR]   (default the 1x release of tmp/bench; tmp/bench/x16 for 16x)

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const source = await latestRelease(path.resolve(process.argv[2] ?? path.join(ROOT, 'tmp', 'bench', 'data')));
if (!source) throw new Error('no release found; run npm run bench once, or pass a folder holding one');
const DATA_DIR = path.join(ROOT, 'tmp', 'bench', `switch-${path.basename(path.dirname(source.dir))}`);
const PROBE_MS = 10;

// The release twice under two ids, its files hard-linked: the second load costs what the first did.
const ids = ['2026-10', '2026-11'];
await fs.rm(DATA_DIR, { recursive: true, force: true });
await releaseCopies(source, DATA_DIR, ids);
await writePointer(DATA_DIR, ids[0]!);

const stateDir = path.join(ROOT, 'tmp', 'bench', 'switch-state');
await fs.rm(stateDir, { recursive: true, force: true });
// A grace period short enough to see the old release unloaded, and its memory returned, in the same run.
const GRACE_SECONDS = 20;
const server = await startServer(
  { DATA_DIR, STATE_DIR: stateDir, RELEASE_POLL_MS: '200', RELEASE_GRACE_SECONDS: String(GRACE_SECONDS) },
  path.join(ROOT, 'tmp', 'bench', 'logs', 'switch.log'),
);
const agent = new Agent({ connections: 4 });

interface Probe {
  readonly waits: number[];
  readonly failures: string[];
}

/** Asks for the catalog every PROBE_MS until `done()`; several in flight when one is slow, as clients keep asking. */
async function probe(done: () => boolean): Promise<Probe> {
  const waits: number[] = [];
  const failures: string[] = [];
  const pending: Promise<void>[] = [];
  while (!done()) {
    const sent = performance.now();
    pending.push(
      request(`${server.url}/v1/catalog`, { headers: server.headers, dispatcher: agent }).then(
        async (res) => {
          await res.body.dump();
          if (res.statusCode !== 200) failures.push(`status ${res.statusCode}`);
          waits.push(performance.now() - sent);
        },
        (err: Error) => void failures.push(err.message),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, PROBE_MS));
  }
  await Promise.all(pending);
  return { waits, failures };
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const summary = ({ waits, failures }: Probe) => {
  const sorted = [...waits].sort((a, b) => a - b);
  return {
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted.at(-1) ?? 0,
    answers: waits.length,
    failures: failures.length,
  };
};
const fmt = (s: ReturnType<typeof summary>) =>
  `p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, max ${s.max.toFixed(1)} ms (${s.answers} answers, ${s.failures} failed)`;

try {
  const before = processMemory(server.pid);
  const idleUntil = performance.now() + 5000;
  const idle = summary(await probe(() => performance.now() > idleUntil));

  const started = performance.now();
  await writePointer(DATA_DIR, ids[1]!);
  let switched = false;
  const watch = (async () => {
    while (!switched && performance.now() - started < 600_000) {
      const health = (await (await request(`${server.url}/healthz`)).body.json()) as { release: string };
      switched = health.release === ids[1];
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const during = await probe(() => switched || performance.now() - started > 600_000);
  await watch;
  if (!switched) throw new Error('the server did not switch within 10 minutes');
  const seconds = (performance.now() - started) / 1000;
  const after = processMemory(server.pid);
  const d = summary(during);

  console.log(
    `release: ${source.dir} (${source.manifest.datasets.ggr!.rows.toLocaleString('en')} ggr rows), switched in ${seconds.toFixed(1)} s`,
  );
  console.log(`idle:          ${fmt(idle)}`);
  console.log(`during switch: ${fmt(d)}`);
  console.log(
    `longest extra wait over idle: ${(d.max - idle.max).toFixed(1)} ms; failures: ${during.failures.length ? [...new Set(during.failures)].join('; ') : 'none'}`,
  );
  const held = Object.entries(await releaseMemory(server))
    .map(([id, mb]) => `${id} ${mb.toFixed(0)} MB`)
    .join(', ');
  console.log(
    `server RSS: ${before.rss} MB before, ${after.rss} MB after (the old release retained), peak ${after.peak} MB; what each release holds (columns, rollups, renderers): ${held}`,
  );
  // The old release is unloaded once nobody has read it for the grace period (the poll checks every 200 ms).
  await new Promise((resolve) => setTimeout(resolve, (GRACE_SECONDS + 10) * 1000));
  const released = processMemory(server.pid);
  console.log(
    `after the ${GRACE_SECONDS} s grace period: RSS ${released.rss} MB, releases held: ${Object.keys(await releaseMemory(server)).join(', ')}; ${await memoryBreakdown(server)}`,
  );
} finally {
  await agent.close();
  await server.stop();
  await fs.rm(DATA_DIR, { recursive: true, force: true });
  await fs.rm(stateDir, { recursive: true, force: true });
}
