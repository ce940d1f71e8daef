import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readAnswers } from './replayed-answers.ts';

// The HTTP ceiling, run in its own process as the service is: bare node:http sending
// fixed answers (each the exact status, headers and body the service gave a
// scenario's request, captured by the bench) with no routing, framework, key check or
// cache lookup. GET /<n> sends answer n.
// Usage: bare-server.ts MANIFEST.json (written by bench/ceilings/bare.ts); prints {"url"} when listening.

const answers = readAnswers(process.argv[2]!).map((a) => ({ ...a, headers: { ...a.headers, 'content-length': a.body.length } }));

const server = http.createServer((req, res) => {
  const answer = answers[Number((req.url ?? '').slice(1))];
  if (!answer) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(answer.status, answer.headers).end(answer.body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
