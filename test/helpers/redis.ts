import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { suite } from 'uvu';
import { createLogger } from '../../src/log.ts';
import { connectRedis } from '../../src/redis.ts';

// A real redis-server per suite, on a free loopback port, with nothing on disk.
// Where the binary is absent, Redis cases are skipped with this printed reason.

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

/** A port nothing listens on right now, on loopback. */
export async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
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

/** A redis-server and `count` clients connected the way the service connects. */
export async function redisWithClients(count: number, timeoutMs: number) {
  const server = await startRedis();
  const clients: Redis[] = [];
  for (let i = 0; i < count; i++) clients.push(await connectRedis(server.url, timeoutMs, createLogger('silent')));
  return {
    server,
    clients,
    async stop() {
      for (const client of clients) client.disconnect();
      await server.stop();
    },
  };
}

/** Drops and makes again a connection, as a network blip or a Redis restart does; its 'ready' makes the stores on it check Redis. */
export async function reconnect(client: Redis): Promise<void> {
  const ready = once(client, 'ready');
  client.disconnect(true);
  await ready;
}

/** Polls `check` every 20 ms until it holds; false once `ms` have passed. */
export async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  for (const started = Date.now(); Date.now() - started < ms; await sleep(20)) if (await check()) return true;
  return false;
}

/** Where redis-server is absent: one skipped case per Redis suite, and the reason printed. */
export function skipRedisSuite(name: string): void {
  const skipped = suite(name);
  skipped.skip(`skipped: ${REDIS_SKIP_REASON}`, () => {});
  console.log(`${name}: skipped: ${REDIS_SKIP_REASON}`);
  skipped.run();
}
