import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from './free-port.ts';

// A real redis-server on a free loopback port, with nothing on disk: for the tests
// and the bench. Where the binary is absent, what needs it says REDIS_SKIP_REASON.

export const REDIS_BINARY = (process.env.PATH ?? '')
  .split(path.delimiter)
  .map((dir) => path.join(dir, 'redis-server'))
  .find((file) => fs.existsSync(file));

export const REDIS_SKIP_REASON = 'redis-server is not on PATH (Debian: apt-get install -y redis-server)';

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** SIGSTOP / SIGCONT: Redis alive but not answering. */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

/** A redis-server holding nothing, on `port` (one left by a killed server: a restart without persistence) or a free one. */
export async function startRedis(options: { port?: number } = {}): Promise<RedisServer> {
  if (!REDIS_BINARY) throw new Error(REDIS_SKIP_REASON);
  const port = options.port ?? (await freePort());
  const child: ChildProcess = spawn(REDIS_BINARY, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const early = (code: number | null) => new Error(`redis-server exited with ${code} before it was ready`);
  let onEarlyExit = (_code: number | null) => {};
  child.once('exit', (code) => onEarlyExit(code));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server on port ${port} did not start within 10 s`)), 10_000);
    onEarlyExit = (code) => reject(early(code));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (/Ready to accept connections/.test(line)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  onEarlyExit = () => {};
  const pid = child.pid!;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid,
    pause: () => process.kill(pid, 'SIGSTOP'),
    resume: () => process.kill(pid, 'SIGCONT'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      process.kill(pid, 'SIGCONT');
      process.kill(pid, 'SIGKILL');
      await exited;
    },
  };
}
