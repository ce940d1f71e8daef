import { Writable } from 'node:stream';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger, infoWriter } from '../src/log.ts';

// The request log's writer (infoWriter) writes what pino writes for the same fields,
// byte for byte but the time, honouring the level; a logger it did not make is written
// through pino.

function sink(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines };
}

const withoutTime = (line: string) => line.replace(/"time":"[^"]*"/, '"time":""');

test('the same line as log.info(fields, msg), escaping included; undefined fields left out', async () => {
  const { stream, lines } = sink();
  const log = createLogger('info', stream);
  const write = infoWriter(log, 'request');
  const fields = {
    reqId: 'trace-"42"',
    method: 'GET',
    url: '/v1/x?a=b&c=\u2028"\\é',
    status: 200,
    ms: 0.42,
    bytes: undefined,
    key: 'key_1',
    code: undefined,
  };
  write(fields);
  log.info(fields, 'request');
  await new Promise((resolve) => setImmediate(resolve));
  assert.is(lines.length, 2);
  assert.is(withoutTime(lines[0]!), withoutTime(lines[1]!));
  assert.equal(JSON.parse(lines[0]!).url, fields.url);
});

test("nothing below the logger's level; a child logger is written through pino, with its bindings", async () => {
  const { stream, lines } = sink();
  const quiet = createLogger('warn', stream);
  infoWriter(quiet, 'request')({ status: 200 });
  const child = createLogger('info', stream).child({ listener: 'admin' });
  infoWriter(child, 'request')({ status: 200 });
  await new Promise((resolve) => setImmediate(resolve));
  assert.is(lines.length, 1);
  assert.equal({ ...JSON.parse(lines[0]!), time: 0 }, { level: 30, time: 0, listener: 'admin', status: 200, msg: 'request' });
});

test.run();
