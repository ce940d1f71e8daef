import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

// The ceiling of the whole-file export, in its own process as the service is: bare
// node:http streaming one file from disk, as the service's export does, with no
// routing, key check or headers beyond its type and length.
// Usage: bare-file-server.ts FILE; prints {"url"} when listening.

const file = process.argv[2]!;
const size = fs.statSync(file).size;
const server = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/vnd.apache.parquet', 'content-length': size });
  fs.createReadStream(file).pipe(res);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
