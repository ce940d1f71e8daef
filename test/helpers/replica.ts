import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { SERVER_ARGS } from './processes.ts';

// One replica as deployed: its own `node dist/main.js` process (as `npm start` runs it),
// one DuckDB connection, its JSON log read line by line; ready once it logs "ready".

const ROOT = path.resolve(import.meta.dirname, '..', '..');

export interface Replica {
  readonly url: string;
  readonly adminUrl: string;
  readonly pid: number;
  /** Every log line so far, parsed. */
  readonly logs: any[];
  readonly child: ChildProcess;
  /** Ends it with `signal` (SIGTERM: a graceful stop) and waits for its exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function startReplica(env: Record<string, string>): Promise<Replica> {
  const child = spawn(process.execPath, [...SERVER_ARGS], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', ADMIN_PORT: '0', DUCKDB_CONNECTIONS: '1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const logs: any[] = [];
  let url = '';
  let adminUrl = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('replica not ready within 120 s')), 120_000);
    child.once('exit', (code) => reject(new Error(`replica exited with ${code}: ${JSON.stringify(logs.slice(-3))}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line);
      logs.push(entry);
      if (entry.msg === 'listening') ({ url, adminUrl } = entry);
      if (entry.msg === 'ready') {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  child.removeAllListeners('exit');
  return {
    url,
    adminUrl,
    pid: child.pid!,
    logs,
    child,
    stop: (signal = 'SIGTERM') =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
}
