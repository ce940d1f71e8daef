import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Request } from '../runner/load.ts';

/** What the service answered, as captured: replayed by the bare server. */
export interface Captured {
  readonly status: number;
  /** Every header the service sent but those a server sets per connection (Date, Connection, Keep-Alive, Content-Length). */
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

export interface BareServer {
  readonly url: string;
  readonly pid: number;
  /** The bare server's request for each captured answer, expecting the same status and bytes. */
  requests(answers: readonly Captured[]): Request[];
  stop(): Promise<void>;
}

/** bare: node:http alone (bench/ceilings/bare-server.ts); koa: the framework floor (bench/ceilings/koa-floor-server.ts). */
const SCRIPTS = { bare: 'bare-server.ts', koa: 'koa-floor-server.ts' } as const;

/**
 * Starts a server replaying `answers` (written under `dir`); an answer given twice (a
 * workload's repeated request) is stored once. `launcher` runs node (valgrind and its options).
 */
export async function startBare(
  answers: readonly Captured[],
  dir: string,
  kind: keyof typeof SCRIPTS = 'bare',
  launcher: readonly string[] = [],
): Promise<BareServer> {
  await fs.mkdir(dir, { recursive: true });
  const index = new Map<Captured, number>();
  const chunks: Buffer[] = [];
  let offset = 0;
  const manifest = [];
  for (const answer of answers) {
    if (index.has(answer)) continue;
    index.set(answer, manifest.length);
    manifest.push({ status: answer.status, headers: answer.headers, offset, length: answer.body.length });
    chunks.push(answer.body);
    offset += answer.body.length;
  }
  const bodies = path.join(dir, `${kind}-bodies.bin`);
  const manifestFile = path.join(dir, `${kind}-manifest.json`);
  await fs.writeFile(bodies, Buffer.concat(chunks));
  await fs.writeFile(manifestFile, JSON.stringify({ bodies, answers: manifest }));
  const [command = process.execPath, ...args] = [
    ...launcher,
    process.execPath,
    '--import',
    'tsx',
    path.join(import.meta.dirname, SCRIPTS[kind]),
    manifestFile,
  ];
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${SCRIPTS[kind]} exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line).url));
  });
  return {
    url,
    pid: child.pid!,
    requests: (list) =>
      list.map((answer) => {
        const i = index.get(answer);
        if (i === undefined) throw new Error('the bare server was not given this answer');
        return { path: `/${i}`, headers: {}, status: answer.status, body: answer.body };
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        child.removeAllListeners('exit');
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
