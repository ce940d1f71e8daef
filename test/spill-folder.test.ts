import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort } from '../tools/free-port.ts';
import { alive, SERVER_ARGS } from './helpers/processes.ts';
import { fixtureDataDir, startTestService, tempDir, twoReleaseDataDir } from './helpers/service.ts';

// DuckDB's spill folder (issue 56 item 3): a folder of each process's own under
// STATE_DIR/duckdb-tmp, 0700, swept of a killed process's at the next start, and kept
// on disk within REVISIONS_KEEP_BYTES by dropping kept diffs.

const ROOT = path.resolve(import.meta.dirname, '..');
const host = os.hostname();

const mode = async (dir: string) => (await fs.stat(dir)).mode & 0o777;

/** Bytes the files of `dir` take on disk; a file DuckDB removes between the listing and its stat takes none. */
async function diskBytes(dir: string): Promise<number> {
  const names = await fs.readdir(dir);
  const sizes = await Promise.all(
    names.map((name) =>
      fs.stat(path.join(dir, name)).then(
        (stat) => stat.blocks * 512,
        (err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT') return 0;
          throw err;
        },
      ),
    ),
  );
  return sizes.reduce((sum, n) => sum + n, 0);
}

/** The server as `npm start` runs it, ready to serve. */
async function startServer(dataDir: string, stateDir: string): Promise<ChildProcess> {
  const port = await freePort();
  const server = spawn(process.execPath, [...SERVER_ARGS], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, STATE_DIR: stateDir, PORT: String(port), ADMIN_PORT: '0', LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = await request(`http://127.0.0.1:${port}/healthz`).then(
      async (r) => {
        await r.body.dump();
        return r.statusCode;
      },
      () => 0,
    );
    if (status === 200) return server;
    assert.ok(Date.now() < deadline && server.exitCode === null, 'the server was not ready within 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('a server killed with SIGKILL leaves its spill folder; the next start removes it, and makes its own 0700', async () => {
  const stateDir = await tempDir();
  const dataDir = await fixtureDataDir();
  const servers: ChildProcess[] = [];
  try {
    const first = await startServer(dataDir, stateDir);
    servers.push(first);
    const root = path.join(stateDir, 'duckdb-tmp');
    const killed = path.join(root, `${host}-${first.pid}`);
    assert.is(await mode(root), 0o700, 'STATE_DIR/duckdb-tmp is 0700');
    assert.is(await mode(killed), 0o700, "the process's own folder is 0700");
    // What DuckDB would have spilled there when the process died.
    await fs.writeFile(path.join(killed, 'duckdb_temp_storage_DEFAULT-0.tmp'), Buffer.alloc(1 << 20));
    first.kill('SIGKILL');
    while (alive(first.pid!)) await new Promise((r) => setTimeout(r, 50));
    assert.ok(await fs.stat(killed).then(() => true), 'a killed process cannot remove its folder');

    const second = await startServer(dataDir, stateDir);
    servers.push(second);
    assert.equal(await fs.readdir(root), [`${host}-${second.pid}`], "the killed process's folder is gone at the next start");
    assert.is(await mode(path.join(root, `${host}-${second.pid}`)), 0o700);
    for (const pid of [first.pid, second.pid]) {
      assert.not.ok(
        await fs.stat(path.join(os.tmpdir(), `dqs-duckdb-${pid}`)).then(
          () => true,
          () => false,
        ),
        'nothing in the OS temp dir',
      );
    }
  } finally {
    for (const server of servers) if (alive(server.pid!)) server.kill('SIGKILL');
    await fs.rm(stateDir, { recursive: true, force: true });
  }
});

test('diffs kept past a small REVISIONS_KEEP_BYTES keep the spill folder on disk within it', async () => {
  // Room for a few of these diffs by their size, less than all of them on disk (14 MB measured without the bound).
  const keep = 8 * 1024 * 1024;
  const stateDir = await tempDir();
  const service = await startTestService({
    // Releases large enough that their diffs spill past a small DUCKDB_MEMORY_LIMIT.
    dataDir: (await twoReleaseDataDir({ scale: 0.25 })).dataDir,
    stateDir,
    env: { DUCKDB_MEMORY_LIMIT: '40MB', REVISIONS_KEEP_BYTES: String(keep) },
  });
  try {
    const folder = path.join(stateDir, 'duckdb-tmp', `${host}-${process.pid}`);
    let largest = 0;
    for (const fx of ['', '&fx=USD', '&fx=EUR']) {
      for (const change of ['', '&change=changed', '&change=added&change=removed']) {
        const res = await service.get(`/v1/revisions?metric=ggr${fx}${change}&limit=10`);
        assert.is(res.status, 200, res.text);
        largest = Math.max(largest, await diskBytes(folder));
        // Diffs are dropped just after the computation that went over, beside the answer: within 5 s on a busy machine.
        for (const until = Date.now() + 5000; (await diskBytes(folder)) > keep && Date.now() < until; )
          await new Promise((r) => setTimeout(r, 50));
        assert.ok((await diskBytes(folder)) <= keep, `spill folder at ${await diskBytes(folder)} bytes, over ${keep}`);
      }
    }
    assert.ok(largest > 0, 'DuckDB spilled at all');
  } finally {
    await service.stop();
    await fs.rm(stateDir, { recursive: true, force: true });
  }
});

test.run();
