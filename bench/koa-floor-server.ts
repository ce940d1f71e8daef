import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';

// The framework floor: a minimal Koa app sending the same answers as the bare server
// (bench/bare-server.ts: the same manifest, status, headers and bytes) through Koa's
// context, response setters and middleware dispatch, with nothing of ours. What the
// service spends beyond this on a cached hit is its own per-request work.
// Usage: koa-floor-server.ts MANIFEST.json; prints {"url"} when listening.

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly offset: number;
  readonly length: number;
}

const manifest = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as { bodies: string; answers: Answer[] };
const bodies = fs.readFileSync(manifest.bodies);
const answers = manifest.answers.map((a) => ({ status: a.status, headers: a.headers, body: bodies.subarray(a.offset, a.offset + a.length) }));

const app = new Koa();
app.use((ctx) => {
  const answer = answers[Number(ctx.path.slice(1))];
  if (!answer) return;
  ctx.status = answer.status;
  ctx.set(answer.headers);
  ctx.body = answer.body;
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
