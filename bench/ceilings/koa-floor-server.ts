import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { readAnswers } from './replayed-answers.ts';

// The framework floor: a minimal Koa app sending the same answers as the bare server
// (bench/ceilings/bare-server.ts: the same manifest, status, headers and bytes) through Koa's
// context, response setters and middleware dispatch, with nothing of ours. What the
// service spends beyond this on a cached hit is its own per-request work.
// Usage: koa-floor-server.ts MANIFEST.json; prints {"url"} when listening.

const answers = readAnswers(process.argv[2]!);

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
