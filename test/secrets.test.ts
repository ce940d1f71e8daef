import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openScratch } from '../src/state/scratch.ts';
import { ensureStateDir, readOrCreateSecret } from '../src/state/secrets.ts';
import { tempDir } from './helpers/service.ts';

// Replicas sharing one STATE_DIR start at once: every reader must get the one secret
// that ends up in the file, never a half-written one.

const ROUNDS = 3;
const CALLS = 8;
/** Far longer than a real secret: its write spans several event-loop turns, so later calls overlap it. */
const BYTES = 1 << 20;

test('calls overlapping the creation of a secret all return the whole secret the file keeps', async () => {
  const root = await tempDir();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const dir = path.join(root, String(round));
      await fs.mkdir(dir);
      // Call i starts i event-loop turns after the first, while the first may still be writing.
      const values = await Promise.all(
        Array.from({ length: CALLS }, async (_, i) => {
          for (let turn = 0; turn < i; turn++) await nextTurn();
          return readOrCreateSecret(dir, 'cursor-secret', BYTES);
        }),
      );
      const kept = (await fs.readFile(path.join(dir, 'cursor-secret'), 'utf8')).trim();
      assert.is(kept.length, 2 * BYTES);
      assert.is(values.filter((v) => v !== kept).length, 0, `round ${round}: a call returned another value than the file's`);
      assert.equal(await fs.readdir(dir), ['cursor-secret'], 'no temporary file left behind');
    }
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});

test('an existing STATE_DIR is tightened to 0700 at start, as a new one is made', async () => {
  const root = await tempDir();
  try {
    const existing = path.join(root, 'existing');
    await fs.mkdir(existing, { mode: 0o755 });
    await fs.chmod(existing, 0o755);
    await ensureStateDir(existing);
    assert.is((await fs.stat(existing)).mode & 0o777, 0o700);
    const made = path.join(root, 'made');
    await ensureStateDir(made);
    assert.is((await fs.stat(made)).mode & 0o777, 0o700);
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});

test("the scratch folder is emptied at start, with those of this host's dead processes; a live process's stays", async () => {
  const root = await tempDir();
  try {
    const scratch = path.join(root, 'scratch');
    const host = os.hostname();
    // A pid no process has (above the kernel's pid_max), this process's parent (alive), and another host's.
    for (const name of [`${host}-99999999`, `${host}-${process.ppid}`, 'elsewhere-1', `${host}-${process.pid}`]) {
      await fs.mkdir(path.join(scratch, name), { recursive: true });
      await fs.writeFile(path.join(scratch, name, 'left.parquet'), 'x');
    }
    const dir = await openScratch(root);
    assert.is(dir, path.join(scratch, `${host}-${process.pid}`));
    assert.equal(await fs.readdir(dir), [], 'its own folder is empty');
    assert.equal((await fs.readdir(scratch)).sort(), ['elsewhere-1', `${host}-${process.pid}`, `${host}-${process.ppid}`].sort());
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});

test.run();
