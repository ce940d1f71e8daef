import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../src/log.ts';

// The log is pino's: its serializer, its redaction of the key header, its destination
// on stdout, which writes in blocks yet loses no line when the process exits.

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

/** Runs `body` in a node process whose stdout is a pipe, with `log` from createLogger('info'): each line's `n`, or its msg. */
function loggingProcess(body: string): Array<number | string> {
  const script = `import crypto from 'node:crypto';
import { createLogger, exitWithLog } from './src/log.ts';
const log = createLogger('info');
${body}`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, UV_THREADPOOL_SIZE: '1' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.is(run.status, 0, run.stderr);
  return run.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { n?: number; msg: string })
    .map((line) => line.n ?? line.msg);
}

const URL = '/v1/financials?metric=ggr&region=Europe&channel=Online&limit=1000';

test('every line reaches stdout, in order, when the server exits right after its last one, its first block still being written', () => {
  // 100 lines fill more than a block, whose write waits behind a busy thread pool (one
  // thread, held by a slow hash) while the rest are pending at the exit.
  const body = `crypto.pbkdf2('key', 'salt', 2_000_000, 64, 'sha512', () => {});
for (let i = 0; i < 100; i++) log.info({ n: i, url: '${URL}' }, 'request');
log.info('stopped');
await exitWithLog(log, 0);`;
  assert.equal(loggingProcess(body), [...Array.from({ length: 100 }, (_, i) => i), 'stopped']);
});

test('every line reaches stdout when the process runs out of work', () => {
  const body = `for (let i = 0; i < 100; i++) log.info({ n: i, url: '${URL}' }, 'request');
log.info('done');`;
  assert.equal(loggingProcess(body), [...Array.from({ length: 100 }, (_, i) => i), 'done']);
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
