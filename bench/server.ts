import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { request } from 'undici';

const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * Starts `npm start`'s entry point (of the checkout at `root`) in its own process with
 * these settings (DATA_DIR and STATE_DIR among them) on free ports; resolves once it
 * serves, with an API key.
 */
export async function startServer(env: Record<string, string>, root = ROOT) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    // Thousands of requests on one key: limits are lifted (a bench-only setting).
    env: { ...process.env, PORT: '0', ADMIN_PORT: '0', BENCH_DISABLE_LIMITS: 'true', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let url = '';
  let adminUrl = '';
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const entry = JSON.parse(line);
      if (entry.msg === 'listening') ({ url, adminUrl } = entry);
      if (entry.msg !== 'ready') return;
      // From here on the request log is drained unread: parsing a line per request
      // would take CPU from the load client during service runs only.
      lines.close();
      child.stdout!.resume();
      resolve();
    });
  });
  const token = (await fs.readFile(path.join(env.STATE_DIR!, 'admin-token'), 'utf8')).trim();
  const created = await request(`${adminUrl}/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ client: 'bench' }),
  });
  const { key } = (await created.body.json()) as { key: string };
  return {
    url,
    pid: child.pid!,
    headers: { 'x-api-key': key },
    stop: () => new Promise<void>((resolve) => {
      child.removeAllListeners('exit');
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}
