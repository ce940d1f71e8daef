import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { alive, descendants } from './helpers/processes.ts';
import { fixtureDataDir, tempDir } from './helpers/service.ts';

// `npm start` as a supervisor runs it: SIGTERM to the top process (npm) must stop
// the server, not leave it running as an orphan.

const ROOT = path.resolve(import.meta.dirname, '..');

test('SIGTERM to npm start stops the server process and everything it started', async () => {
  const stateDir = await tempDir();
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: await fixtureDataDir(), STATE_DIR: stateDir, PORT: '0', ADMIN_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  let tree: number[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no 'ready' line in 60 s:\n${lines.join('\n')}`)), 60_000);
      createInterface({ input: npm.stdout! }).on('line', (line) => {
        lines.push(line);
        if (line.includes('"msg":"ready"')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    tree = await descendants(npm.pid!);
    assert.ok(tree.length > 0, 'npm start runs the server in a child process');
    npm.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 15_000))]);
    assert.is(code, 0, 'npm exits 0 after a clean shutdown');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(tree.filter(alive), [], 'no process of the tree outlives npm');
    assert.ok(
      lines.some((l) => l.includes('"msg":"stopped"')),
      'the server logged its clean stop',
    );
  } finally {
    for (const pid of [...tree, npm.pid!]) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await fs.rm(stateDir, { recursive: true, force: true });
  }
});

test.run();
