import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LogBlocks } from '../src/log-blocks.ts';

// Log lines reach the destination in blocks, whole and in order: at the block size at
// once, below it within the flush interval, and at exit, the way a server is stopped
// (process.exit after its last line) or runs out of work.

const ROOT = path.resolve(import.meta.dirname, '..');

function capture(): { out: { write(block: string): void }; blocks: string[] } {
  const blocks: string[] = [];
  return { out: { write: (block) => void blocks.push(block) }, blocks };
}

test('a block goes out in one write once it holds blockChars characters, lines in order', () => {
  const { out, blocks } = capture();
  const lines = new LogBlocks(out, 30, 60_000);
  lines.write('{"n":1}\n');
  lines.write('{"n":2}\n');
  lines.write('{"n":3}\n');
  assert.equal(blocks, []);
  lines.write('{"n":4}\n');
  assert.equal(blocks, ['{"n":1}\n{"n":2}\n{"n":3}\n{"n":4}\n']);
});

test('fewer lines than a block are written within the flush interval', async () => {
  const { out, blocks } = capture();
  const lines = new LogBlocks(out, 4096, 20);
  lines.write('{"n":1}\n');
  lines.write('{"n":2}\n');
  assert.equal(blocks, []);
  await sleep(80);
  assert.equal(blocks, ['{"n":1}\n{"n":2}\n']);
});

test("pino's flush(done) writes what is pending, then calls back", () => {
  const { out, blocks } = capture();
  const lines = new LogBlocks(out, 4096, 60_000);
  lines.write('{"n":1}\n');
  let called = false;
  lines.flush(() => (called = true));
  assert.equal(blocks, ['{"n":1}\n']);
  assert.ok(called);
});

/** Runs `body` in a node process whose stdout is a pipe, with `log` (createLogger('info')) and `write` (its infoWriter for "request"): each line's `n`, or its msg. */
function loggingProcess(body: string): Array<number | string> {
  const script = `import { createLogger, infoWriter } from './src/log.ts';
const log = createLogger('info');
const write = infoWriter(log, 'request');
${body}`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
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

test('every line reaches stdout, in order, when the process exits right after its last one', () => {
  // 100 lines fill a block, which is written; the rest are pending at the exit.
  const body = `for (let i = 0; i < 100; i++) write({ n: i, url: '${URL}' });
log.info('stopped');
process.exit(0);`;
  assert.equal(loggingProcess(body), [...Array.from({ length: 100 }, (_, i) => i), 'stopped']);
});

test('every line reaches stdout when the process runs out of work', () => {
  const body = `for (let i = 0; i < 100; i++) write({ n: i, url: '${URL}' });
log.info('done');`;
  assert.equal(loggingProcess(body), [...Array.from({ length: 100 }, (_, i) => i), 'done']);
});

test.run();
