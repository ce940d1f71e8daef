import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { request } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SECRET_FILES } from '../src/state/secrets.ts';
import { startTestService, type TestService, tempDir, twoReleaseDataDir } from './helpers/service.ts';

// No option can share an answer with another value of itself. Every query parameter of
// every data endpoint is read from the served /openapi.json, so an option added later
// is tried here without anyone extending this test. For each one, requests that differ
// only in that parameter (each of its named examples in the request the example names,
// and the request without it) are sent in turn to a server that keeps everything it
// can (cached answers, kept results, replayed answers, cursors), and each to a second
// server that keeps nothing, so it computes every answer afresh. An option missing from
// the key makes the first server answer a later request with an earlier one's body.
// Each answer is then either a 400, or the same bytes on both servers; two answers with
// one ETag are the same bytes; and each parameter's examples give at least two different
// answers, so every parameter is tried for real.

let keeping: TestService;
let fresh: TestService;
let document: any;
const stateDirs: string[] = [];

const test = suite('option keys: no option shares an answer');
test.before(async () => {
  const { dataDir } = await twoReleaseDataDir();
  // Exports are answers too: each variant of /v1/export is one.
  const limits = { EXPORT_LIMIT_PER_DAY: '100000', KEY_HEAVY_SECONDS_PER_MINUTE: '100000' };
  // One cursor secret for both, so a cursor one issued pages the other's answer too.
  const secret = `${randomBytes(32).toString('hex')}\n`;
  for (let i = 0; i < 2; i++) {
    const dir = await tempDir();
    await fs.writeFile(path.join(dir, SECRET_FILES.cursor), secret, { mode: 0o600 });
    stateDirs.push(dir);
  }
  keeping = await startTestService({ dataDir, stateDir: stateDirs[0], env: limits });
  fresh = await startTestService({
    dataDir,
    stateDir: stateDirs[1],
    env: { ...limits, CACHE_MAX_BYTES: '0', AGGREGATE_KEEP_BYTES: '0', REVISIONS_KEEP_BYTES: '0', REPLAY_MAX_BYTES: '0' },
  });
  document = (await request(`${keeping.url}/openapi.json`).then((res) => res.body.json())) as any;
});
test.after(async () => {
  await keeping?.stop();
  await fresh?.stop();
  for (const dir of stateDirs) await fs.rm(dir, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly etag: string | undefined;
  /** The body: the bytes, or a JSON answer's text. */
  readonly body: string;
}

async function answer(service: TestService, pathAndQuery: string): Promise<Answer> {
  const res = await request(`${service.url}${pathAndQuery}`, { headers: { 'x-api-key': service.key } });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  const body = String(res.headers['content-type']).startsWith('application/json') ? bytes.toString('utf8') : bytes.toString('base64');
  const etag = res.headers.etag;
  return { status: res.statusCode, etag: typeof etag === 'string' ? etag : undefined, body };
}

/** `pathAndQuery` with `name` set to `values`, or left out when there are none. */
function withParameter(pathAndQuery: string, name: string, values: readonly unknown[]): string {
  const url = new URL(pathAndQuery, 'http://x');
  url.searchParams.delete(name);
  for (const value of values) url.searchParams.append(name, String(value));
  return `${url.pathname}${url.search}`;
}

/** The cursors of a request's second and third pages, two to a page (a cursor is no value a document can name). */
async function cursorValues(pages: string): Promise<{ request: string; values: string[] }> {
  const first = withParameter(pages, 'limit', [2]);
  const values: string[] = [];
  let page = first;
  for (let i = 0; i < 2; i++) {
    const res = (await request(`${keeping.url}${page}`, { headers: { 'x-api-key': keeping.key } }).then((r) => r.body.json())) as any;
    if (!res.pagination?.has_more) break;
    values.push(res.pagination.cursor);
    page = withParameter(first, 'cursor', [res.pagination.cursor]);
  }
  return { request: first, values };
}

test('every parameter of every data endpoint: one answer per value, on a server that keeps answers as on one that keeps none', async () => {
  const data = Object.entries<any>(document.paths).filter(([, item]) => item.get?.tags.includes('data'));
  assert.ok(data.length >= 7, `${data.length} data endpoints`);
  const unexercised: string[] = [];
  let sent = 0;
  for (const [path, item] of data) {
    const example = /"\$BASE([^"]+)"/.exec(item.get['x-codeSamples'][0].source)![1]!;
    const parameters = (item.get.parameters ?? []).filter((p: any) => p.in === 'query');
    // Cursors are tried on the request the limit's own examples page (they follow the pre-filled one).
    const limit = parameters.find((p: any) => p.name === 'limit');
    const paged = Object.values<any>({ ...limit?.examples, ...limit?.['x-examples'] }).findLast((e) => e['x-request']);
    for (const parameter of parameters) {
      const name: string = parameter.name;
      const tried =
        name === 'cursor'
          ? [await cursorValues(paged['x-request'])].map(({ request, values }) => ({ request, values: values.map((v) => [v]) }))
          : [
              // The value the example request sends, then the named examples, each with the request it names.
              ...(parameter.example === undefined ? [] : [{ value: parameter.example, 'x-request': example }]),
              ...Object.values<any>({ ...parameter.examples, ...parameter['x-examples'] }).filter((e) => e.value !== undefined),
            ].map((e) => ({ request: e['x-request'] as string, values: [[e.value].flat()] }));
      const values = tried.flatMap((t) => t.values);
      // Each request an example names, with every value of the parameter and without it.
      const urls = [...new Set(tried.flatMap((t) => [undefined, ...values].map((v) => withParameter(t.request, name, v ?? []))))];
      const answers = new Map<string, Answer>();
      for (const url of urls) {
        const kept = await answer(keeping, url);
        const computed = await answer(fresh, url);
        sent++;
        assert.is(kept.status, computed.status, `${url}: ${kept.status} here, ${computed.status} computed afresh`);
        if (kept.status === 400) continue;
        assert.ok(kept.status === 200 || kept.status === 206, `${url}: ${kept.status} ${kept.body.slice(0, 300)}`);
        assert.ok(kept.body === computed.body, `${url}: answered with another request's body (its ${name} is not part of its key)`);
        answers.set(url, kept);
      }
      // A required parameter with one value only (/v1/reference's one dataset) has no other value to answer differently.
      const only = parameter.required && parameter.schema.enum?.length === 1;
      if (new Set([...answers.values()].map((a) => a.body)).size < 2 && !only) unexercised.push(`${path} ${name}`);
      const byTag = new Map<string, string>();
      for (const [url, { etag, body }] of answers) {
        if (etag === undefined) continue;
        const other = byTag.get(etag);
        assert.ok(other === undefined || answers.get(other)!.body === body, `${url} and ${other} differ under one ETag ${etag}`);
        byTag.set(etag, url);
      }
    }
  }
  assert.equal(unexercised, [], 'each parameter needs examples (x-request) that answer differently: give these some');
  assert.ok(sent > 300, `${sent} requests`);
});

test.run();
