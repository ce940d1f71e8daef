import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Pool, request } from 'undici';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort } from '../tools/free-port.ts';
import { alive, SERVER_ARGS } from './helpers/processes.ts';
import { fixtureDataDir, tempDir } from './helpers/service.ts';

// Keyless paths (/openapi.json, /docs, the claim pages) answer anyone: no request to
// them may leave state behind that grows with the URLs and headers a client invents.

const ROOT = path.resolve(import.meta.dirname, '..');
const REQUESTS = 12_000;
const ACCEPT_BYTES = 14_000;

const rssMb = async (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(await fs.readFile(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

test(`${REQUESTS} keyless requests, each a new URL with a ${ACCEPT_BYTES / 1000} kB Accept, grow the server by at most 40 MB`, async () => {
  const stateDir = await tempDir();
  const port = await freePort();
  const server = spawn(process.execPath, [...SERVER_ARGS], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: await fixtureDataDir(), STATE_DIR: stateDir, PORT: String(port), ADMIN_PORT: '0', LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  const origin = `http://127.0.0.1:${port}`;
  const pool = new Pool(origin, { connections: 8 });
  try {
    const deadline = Date.now() + 60_000;
    while (
      (await request(`${origin}/healthz`).then(
        (r) => {
          r.body.dump();
          return r.statusCode;
        },
        () => 0,
      )) !== 200
    ) {
      assert.ok(Date.now() < deadline, 'the server was not ready within 60 s');
      await new Promise((r) => setTimeout(r, 200));
    }
    let sent = 0;
    const send = async (count: number) => {
      const stop = sent + count;
      const worker = async () => {
        while (sent < stop) {
          const n = sent++;
          const accept = `application/json;q=0.9, text/x-${n}-${'a'.repeat(ACCEPT_BYTES)}`;
          const res = await pool.request({
            method: 'GET',
            path: `/openapi.json?n=${n}`,
            headers: { accept, 'accept-encoding': n % 2 ? 'br' : 'identity' },
          });
          await res.body.dump();
          assert.is(res.statusCode, 200);
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
    };
    // Warm up first: the JIT, the heap and the response cache's few variants settle here.
    await send(1000);
    const before = await rssMb(server.pid!);
    const started = Date.now();
    await send(REQUESTS);
    assert.ok(Date.now() - started < 120_000, 'bounded in time');
    const grown = (await rssMb(server.pid!)) - before;
    assert.ok(grown <= 40, `RSS grew by ${grown.toFixed(1)} MB`);
  } finally {
    await pool.close();
    if (alive(server.pid!)) server.kill('SIGKILL');
    await fs.rm(stateDir, { recursive: true, force: true });
  }
});

test.run();
