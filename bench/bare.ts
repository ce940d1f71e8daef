import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Request } from './load.ts';

/** What the service answered, as captured: replayed by the bare server. */
export interface Captured {
  readonly status: number;
  /** Content-Type and Content-Encoding (when any) as the service sent them. */
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

export interface BareServer {
  readonly url: string;
  /** The bare server's request for each captured answer, expecting the same status and bytes. */
  requests(answers: readonly Captured[]): Request[];
  stop(): Promise<void>;
}

/**
 * Starts bench/bare-server.ts serving `answers` (written under `dir`); an answer given
 * twice (a workload's repeated request) is stored once.
 */
export async function startBare(answers: readonly Captured[], dir: string): Promise<BareServer> {
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
  const bodies = path.join(dir, 'bare-bodies.bin');
  const manifestFile = path.join(dir, 'bare-manifest.json');
  await fs.writeFile(bodies, Buffer.concat(chunks));
  await fs.writeFile(manifestFile, JSON.stringify({ bodies, answers: manifest }));
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'bare-server.ts'), manifestFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line).url));
  });
  return {
    url,
    requests: (list) => list.map((answer) => {
      const i = index.get(answer);
      if (i === undefined) throw new Error('the bare server was not given this answer');
      return { path: `/${i}`, headers: {}, status: answer.status, body: answer.body };
    }),
    stop: () => new Promise<void>((resolve) => {
      child.removeAllListeners('exit');
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}
