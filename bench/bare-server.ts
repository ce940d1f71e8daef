import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// The ceiling for `npm run bench`, run in its own process as the service is: bare
// node:http sending fixed bytes (the service's own 1000-row page, each coding
// saved by the bench), with no routing, framework, key check or cache lookup.
// Usage: bare-server.ts <path>=<file>[:<content-encoding>] ...; prints {"url"} when listening.

const routes = new Map(
  process.argv.slice(2).map((arg) => {
    const [route, spec] = arg.split('=') as [string, string];
    const [file, coding] = spec.split(':') as [string, string | undefined];
    const body = fs.readFileSync(file);
    const headers = { 'content-type': 'application/json', 'content-length': body.length, ...(coding ? { 'content-encoding': coding } : {}) };
    return [route, { body, headers }] as const;
  }),
);

const server = http.createServer((req, res) => {
  const route = routes.get(req.url ?? '');
  if (!route) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, route.headers).end(route.body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
