import fs from 'node:fs';

// The answers a ceiling server replays (bench/ceilings/bare-server.ts, bench/ceilings/koa-floor-server.ts),
// as bench/ceilings/bare.ts writes them: a manifest of status, headers and each body's place in
// one file of bodies.

interface ManifestAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly offset: number;
  readonly length: number;
}

export interface ReplayedAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

export function readAnswers(manifestFile: string): ReplayedAnswer[] {
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as { bodies: string; answers: ManifestAnswer[] };
  const bodies = fs.readFileSync(manifest.bodies);
  return manifest.answers.map((a) => ({ status: a.status, headers: a.headers, body: bodies.subarray(a.offset, a.offset + a.length) }));
}
