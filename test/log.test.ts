import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../src/log.ts';
import { underCpuLoad } from './helpers/cpu-load.ts';

// The log is pino's: its serializer, its redaction of the key header, its destination
// on stdout, which writes in blocks yet loses no line when the process exits, however
// it exits, on a busy machine too.

const ROOT = path.resolve(import.meta.dirname, '..');

function sink(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test('a key header is redacted wherever a logged object carries one; nothing below the level is written', async () => {
  const { stream, lines } = sink();
  const log = createLogger('info', stream);
  const key = `sk_live_${'a'.repeat(40)}`;
  log.info({ req: { method: 'GET', headers: { 'x-api-key': key, accept: 'text/csv' } } }, 'request');
  log.error({ headers: { 'x-api-key': key } }, 'failed');
  log.debug({ status: 200 }, 'below the level');
  await settle();
  assert.is(lines.length, 2);
  assert.not.ok(lines.join('\n').includes(key), 'the key reached the log');
  assert.equal(JSON.parse(lines[0]!).req.headers, { 'x-api-key': '[redacted]', accept: 'text/csv' });
  assert.is(JSON.parse(lines[1]!).headers['x-api-key'], '[redacted]');
});

const URL = '/v1/financials?metric=ggr&region=Europe&channel=Online&limit=1000';
const numbers = (count: number) => Array.from({ length: count }, (_, i) => i);

/**
 * Runs `body` in a node process whose stdout is a pipe, with `log` from
 * createLogger('info') and libuv's thread pool (one thread) held by a hash that takes
 * seconds under load: an asynchronous write would wait behind it past the exit. With
 * `signal`, the process gets a SIGTERM once it wrote `logged` on stderr.
 * Answers its exit code, stderr and each stdout line's `n`, or its msg.
 */
async function loggingProcess(
  body: string,
  signal = false,
): Promise<{ code: number | null; stderr: string; lines: Array<number | string> }> {
  const script = `import crypto from 'node:crypto';
import { createLogger } from './src/log.ts';
const log = createLogger('info');
crypto.pbkdf2('key', 'salt', 2_000_000, 64, 'sha512', () => {});
${body}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, UV_THREADPOOL_SIZE: '1' },
  });
  // Bounds a hang; the assertions then say what was missing.
  const bound = setTimeout(() => child.kill('SIGKILL'), 60_000);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    stderr += chunk;
    if (signal && stderr.includes('logged\n') && !child.killed) child.kill('SIGTERM');
  });
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(bound);
  const lines = stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { n?: number; msg: string })
    .map((line) => line.n ?? line.msg);
  return { code, stderr, lines };
}

test('every line reaches stdout, in order, when the process exits right after its last one, under load', async () => {
  const body = `for (let i = 0; i < 100; i++) log.info({ n: i, url: '${URL}' }, 'request');
log.info('stopped');
process.exit(0);`;
  const { code, stderr, lines } = await underCpuLoad(() => loggingProcess(body));
  assert.is(code, 0, stderr);
  assert.equal(lines, [...numbers(100), 'stopped']);
});

test('10,000 lines then SIGTERM, under load: every line reaches stdout, in order, before the process exits', async () => {
  // As the server stops (src/main.ts): the signal's handler logs its last line and exits.
  const body = `process.on('SIGTERM', () => {
  log.info('stopped');
  process.exit(0);
});
for (let i = 0; i < 10_000; i++) log.info({ n: i, url: '${URL}' }, 'request');
process.stderr.write('logged\\n');
setInterval(() => {}, 1000);`;
  const { code, stderr, lines } = await underCpuLoad(() => loggingProcess(body, true));
  assert.is(code, 0, stderr);
  const logged = lines.filter((line) => typeof line === 'number');
  const missing = 10_000 - new Set(logged).size;
  const backwards = logged.filter((n, i) => i > 0 && n < logged[i - 1]!).length;
  assert.equal([missing, backwards], [0, 0], `${missing} lines missing, ${backwards} written before an earlier one`);
  assert.equal(lines, [...numbers(10_000), 'stopped']);
});

test('every line reaches stdout, in order, when the process dies of an uncaught exception, under load', async () => {
  const body = `for (let i = 0; i < 100; i++) log.info({ n: i, url: '${URL}' }, 'request');
throw new Error('fatal');`;
  const { code, stderr, lines } = await underCpuLoad(() => loggingProcess(body));
  assert.is(code, 1);
  assert.match(stderr, /Error: fatal/);
  assert.equal(lines, numbers(100));
});

test('every line reaches stdout when the process runs out of work', async () => {
  const body = `for (let i = 0; i < 100; i++) log.info({ n: i, url: '${URL}' }, 'request');
log.info('done');`;
  const { code, stderr, lines } = await loggingProcess(body);
  assert.is(code, 0, stderr);
  assert.equal(lines, [...numbers(100), 'done']);
});

test('a line written alone goes out within the flush interval, not at the next block', () => {
  // The process stays alive 1 s after its one line and is then killed: only a flush on the interval writes it.
  const script = `import { createLogger } from './src/log.ts';
createLogger('info').info('alone');
setInterval(() => {}, 1000);`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 5_000,
    killSignal: 'SIGKILL',
  });
  assert.is(run.signal, 'SIGKILL');
  assert.equal(
    run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line).msg),
    ['alone'],
  );
});

test.run();
