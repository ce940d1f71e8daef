import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { send, tempDir } from './helpers/service.ts';

// `npm start` as a new user meets it: an empty DATA_DIR, the sample release
// generated and loaded, /healthz turning 200, then a clean exit on SIGTERM.

const ROOT = path.resolve(import.meta.dirname, '..');
const startup = suite('startup');

function waitForLog(lines: any[], predicate: (line: any) => boolean, child: ChildProcess, ms: number): Promise<any> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no such log line within ${ms} ms: ${JSON.stringify(lines.slice(-5))}`)), ms);
    const check = () => {
      const found = lines.find(predicate);
      if (found) {
        clearTimeout(timer);
        resolve(found);
      } else if (child.exitCode !== null) {
        clearTimeout(timer);
        reject(new Error(`exited ${child.exitCode}: ${JSON.stringify(lines.slice(-5))}`));
      } else setTimeout(check, 50);
    };
    check();
  });
}

startup('a fresh DATA_DIR gets the sample release, served once loaded; SIGTERM stops cleanly', async () => {
  const dataDir = await tempDir();
  const stateDir = await tempDir();
  const child = spawn('node', ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, STATE_DIR: stateDir, PORT: '0', ADMIN_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: any[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => lines.push(JSON.parse(line)));
  try {
    const { url } = await waitForLog(lines, (l) => l.msg === 'listening', child, 30_000);
    // Generating and loading the sample takes seconds, so the first answer is always "loading".
    const early = await send(`${url}/healthz`);
    assert.equal([early.status, early.json], [503, { status: 'loading' }]);
    assert.not.ok(lines.some((l) => l.msg === 'ready'), 'ready before the first /healthz: the test proved nothing');

    await waitForLog(lines, (l) => l.msg === 'ready', child, 120_000);
    const health = await send(`${url}/healthz`);
    assert.is(health.status, 200);
    const release = health.json.release;
    assert.match(release, /^\d{4}-\d{2}$/);
    const manifest = JSON.parse(await fs.readFile(path.join(dataDir, release, 'manifest.json'), 'utf8'));
    assert.ok(manifest.datasets.ggr.rows > 900_000, `sample ggr has ${manifest.datasets.ggr.rows} rows`);
    assert.ok(lines.some((l) => /key create --client NAME/.test(l.msg)));

    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    assert.is(await exited, 0);
    assert.ok(lines.some((l) => l.msg === 'stopped'));
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await fs.rm(dataDir, { recursive: true, force: true });
    await fs.rm(stateDir, { recursive: true, force: true });
  }
});

startup('invalid configuration stops the start with a message naming the setting', async () => {
  const child = spawn('node', ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: 'eighty' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.is(code, 2);
  assert.match(stderr, /PORT="eighty"/);
});

startup.run();
