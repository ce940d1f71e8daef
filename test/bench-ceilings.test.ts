import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type Captured, startBare } from '../bench/ceilings/bare.ts';

// The bench's HTTP ceilings (bare node:http and the Koa floor, each in its own
// process) must send what the service sent: a ceiling with fewer headers or other
// bytes would measure something else.

const answers: Captured[] = [
  {
    status: 200,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'content-encoding': 'br',
      etag: '"abc-br"',
      vary: 'Accept, Accept-Encoding',
      'x-ratelimit-remaining': '99',
    },
    body: Buffer.from([0x1b, 0x02, 0x00, 0xf8, 0xa5]),
  },
  {
    status: 429,
    headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': '7' },
    body: Buffer.from('{"error":"Too many requests"}'),
  },
];

for (const kind of ['bare', 'koa'] as const) {
  test(`the ${kind} ceiling replays each captured answer: status, every header, the bytes`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dqs-ceiling-'));
    const server = await startBare(answers, dir, kind);
    try {
      const requests = server.requests(answers);
      for (const [i, answer] of answers.entries()) {
        const res = await request(`${server.url}${requests[i]!.path}`);
        const body = Buffer.from(await res.body.arrayBuffer());
        assert.is(res.statusCode, answer.status);
        for (const [name, value] of Object.entries(answer.headers)) assert.is(res.headers[name], value, name);
        assert.is(res.headers['content-length'], String(answer.body.length));
        assert.ok(body.equals(answer.body), 'the same bytes');
      }
    } finally {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

test.run();
