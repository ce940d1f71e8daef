import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { buildPythonClient, PYTHON } from '../tools/clients/python.ts';
import { until } from './helpers/redis.ts';
import {
  FIXTURE_RELEASE,
  ownFixtureDataDir,
  publishNextMonth,
  startTestService,
  type TestService,
  tempDir,
  walkPages,
} from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';
import { WEBHOOK_METHODS } from './helpers/webhook-methods.ts';
import { LOOPBACK_WEBHOOKS, type Receiver, startReceiver, verified } from './helpers/webhook-receiver.ts';

// The Python client as a user gets it: the wheel built for the server's info.version
// into its CLIENTS_DIR, pip-installed from the URL the front door gives, with no index,
// into an empty folder, run by Debian's python3 (with
// pandas, or with pandas hidden) against a live server, compared with the JSON walk.
// The second suite uses the folder the first installed into, and removes it.

const run = promisify(execFile);

const missing = await run(PYTHON, ['-W', 'ignore', '-c', 'import setuptools, wheel, pip, pandas']).then(
  () => undefined,
  () =>
    `${PYTHON} with pandas, pip, setuptools and wheel (apt-get install python3-pandas python3-pip python3-setuptools python3-wheel; .ci/run installs them)`,
);

let service: TestService;
let work: string;
let site: string;
let version: string;
let wheel: string;
let served: string;
let receiver: Receiver;
let dataDir: string;
let release = FIXTURE_RELEASE;

/** What `code` prints to stdout as JSON, run in the empty folder with the installed client, DQS_URL and DQS_API_KEY. */
async function python(code: string, options: { url?: string; key?: string; stdin?: string } = {}): Promise<any> {
  const child = execFile(PYTHON, ['-c', code], {
    cwd: work,
    env: { PATH: process.env.PATH, PYTHONPATH: site, DQS_URL: options.url ?? service.url, DQS_API_KEY: options.key ?? service.key },
    maxBuffer: 256 * 1024 * 1024,
  });
  child.stdin?.end(options.stdin ?? '');
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (status !== 0) throw new Error(`python exited ${status}: ${stderr}`);
  return JSON.parse(stdout);
}

/** A frame's rows as JSON the test can compare: NA as null, numbers as Python prints them (the shortest text of the double). */
const ROWS = `
import json, math
def rows(frame):
    def plain(v):
        if v is None or v is getattr(pd, "NA", None) or (isinstance(v, float) and math.isnan(v)):
            return None
        return v.item() if hasattr(v, "item") else v
    return [{k: plain(v) for k, v in r.items()} for r in frame.astype(object).to_dict("records")]
`;

/** A JSON row as the client's flat row: its dimensions then its values. */
const flat = (row: { dimensions: Record<string, unknown>; values: Record<string, unknown> }) => ({ ...row.dimensions, ...row.values });

const client = suite('Python client installed from its wheel');
client.before(async () => {
  work = await tempDir('dqs-python-client-');
  site = path.join(work, 'site-packages');
  // The service reads CLIENTS_DIR per request, so the wheel can be built for the version it reports.
  receiver = await startReceiver();
  // A DATA_DIR of its own: the webhooks test publishes into it.
  dataDir = await ownFixtureDataDir('dqs-python-client-data-');
  service = await startTestService({
    dataDir,
    env: { CLIENTS_DIR: path.join(work, 'clients'), ...LOOPBACK_WEBHOOKS, RELEASE_POLL_MS: '100' },
  });
  version = (await service.get('/openapi.json')).json.info.version;
  wheel = await buildPythonClient(version, path.join(work, 'clients', 'python'));
  served = (await service.get('/')).json.clients.python.url;
  await run(PYTHON, ['-m', 'pip', 'install', '--no-index', '--no-deps', '--disable-pip-version-check', '--target', site, served]);
});
client.after(async () => {
  await service.stop();
  await receiver.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

client("the wheel and the installed package carry the OpenAPI document's info.version", async () => {
  assert.is(path.basename(wheel), `dqs_client-${version}-py3-none-any.whl`);
  assert.is(served, `${service.url}/clients/python/${path.basename(wheel)}`, 'installed from the URL the front door gives');
  const installed = await python(
    'import json, importlib.metadata, dqs_client; print(json.dumps([dqs_client.__version__, importlib.metadata.version("dqs_client")]))',
  );
  assert.equal(installed, [version, version]);
});

client('has a method per /v1 endpoint of /openapi.json, taking its required parameters by name and every other as a keyword', async () => {
  const document = (await service.get('/openapi.json')).json;
  const shapes = await python(`
import inspect, json
from dqs_client import Client
out = {}
for name, method in inspect.getmembers(Client, inspect.isfunction):
    if name.startswith("_"): continue
    ps = list(inspect.signature(method).parameters.values())[1:]
    out[name] = {
        "named": [p.name for p in ps if p.kind == p.POSITIONAL_OR_KEYWORD],
        "own": [p.name for p in ps if p.kind == p.KEYWORD_ONLY],
        "rest": any(p.kind == p.VAR_KEYWORD for p in ps),
    }
print(json.dumps(out))`);
  // The release feeds (/v1/releases.atom, /v1/releases.json) are documents for feed readers, not frames;
  // webhooks are client.webhooks' methods (the next test).
  const endpoints = Object.entries(document.paths as Record<string, any>).filter(
    ([p]) => p.startsWith('/v1/') && !p.includes('.') && !p.startsWith('/v1/webhooks'),
  );
  const methodOf = (p: string) => p.slice('/v1/'.length).replaceAll('/', '_');
  assert.equal(Object.keys(shapes).sort(), endpoints.map(([p]) => methodOf(p)).sort());
  for (const [p, item] of endpoints) {
    const parameters: any[] = (item.get.parameters ?? []).filter((x: any) => x.in === 'query');
    const shape = shapes[methodOf(p)];
    assert.equal(
      shape.named,
      parameters.filter((x) => x.required).map((x) => x.name),
      `${p}: the required parameters by name`,
    );
    const optional = parameters.filter((x) => !x.required).map((x) => x.name);
    assert.is(shape.rest, optional.length > 0, `${p}: its other parameters (${optional.join(', ')}) as keywords`);
    for (const own of shape.own) assert.not.ok(optional.includes(own), `${p}: the client's ${own} hides no parameter`);
  }
});

client('client.webhooks has a method per /v1/webhooks operation, named as the typed client names it', async () => {
  const document = (await service.get('/openapi.json')).json;
  const operations = Object.entries(document.paths as Record<string, any>)
    .filter(([p]) => p.startsWith('/v1/webhooks'))
    .flatMap(([, item]) => Object.values(item).flatMap((operation: any) => operation.operationId ?? []));
  assert.equal(operations.sort(), Object.keys(WEBHOOK_METHODS).sort());
  const methods = await python(`
import inspect, json
from dqs_client import Client
print(json.dumps([n for n, _ in inspect.getmembers(type(Client().webhooks), inspect.isfunction) if not n.startswith("_")]))`);
  assert.equal(methods.sort(), Object.values(WEBHOOK_METHODS).sort());
});

client('client.webhooks makes, tests, rotates, logs, redelivers and deletes an endpoint, signed for the secret it gave', async () => {
  const made = await python(`
import json
from dqs_client import Client
hooks = Client().webhooks
made = hooks.create(${JSON.stringify(`${receiver.url}/python`)}, events=["release.published"])
print(json.dumps({"made": made, "listed": hooks.list(), "off": hooks.update(made["id"], enabled=False),
                  "on": hooks.update(made["id"], enabled=True), "attempt": hooks.test(made["id"]),
                  "rotated": hooks.rotate_secret(made["id"])}))`);
  const { id, secret, events } = made.made;
  assert.match(secret, /^whsec_/);
  assert.equal(events, ['release.published']);
  const arrived = () => receiver.received.filter((r) => r.path === '/python');
  assert.is((verified(secret, arrived()[0]!) as { type: string }).type, 'webhook.test');
  assert.equal(
    made.listed.map((w: any) => [w.id, 'secret' in w]),
    [[id, false]],
  );
  assert.equal([made.off.enabled, made.on.enabled, made.attempt.status_code], [false, true, 200]);
  assert.ok(made.rotated.secret !== secret && made.rotated.previous_expires_at);

  // A release event, the kind of message the log can send again.
  release = await publishNextMonth(dataDir, release);
  assert.ok(await until(() => arrived().length === 3, 30_000), 'the publication delivered');
  const event = arrived()[2]!;
  assert.is((verified(made.rotated.secret, event) as { data: { release: string } }).data.release, release);
  const got = await python(`
import json
from dqs_client import Client, DqsError
hooks = Client().webhooks
log = list(hooks.deliveries(${JSON.stringify(id)}))
again = hooks.redeliver(${JSON.stringify(id)}, ${JSON.stringify(event.headers['webhook-id'])})
deleted = hooks.delete(${JSON.stringify(id)})
try:
    hooks.get(${JSON.stringify(id)})
    after = None
except DqsError as err:
    after = err.code
print(json.dumps({"log": log, "again": again, "deleted": deleted, "after": after}))`);
  assert.equal(
    got.log.map((d: any) => d.msg_id),
    [event.headers['webhook-id'], made.attempt.msg_id],
    "every attempt since it was made, newest first (the creation's test came before)",
  );
  assert.is(got.again.status_code, 200);
  assert.is(arrived()[3]!.headers['webhook-id'], event.headers['webhook-id'], 'sent again with the same webhook-id');
  assert.equal([got.deleted, got.after], [null, 404]);
});

client('usage() and usage_daily() are the JSON of /v1/usage and /v1/usage/daily, and count against nothing', async () => {
  const got = await python(`
import json
from dqs_client import Client
client = Client()
print(json.dumps({"now": client.usage(), "daily": client.usage_daily(), "again": client.usage()}))`);
  const now = (await service.get('/v1/usage')).json;
  const daily = (await service.get('/v1/usage/daily')).json;
  assert.equal(got.now.key, now.key);
  assert.equal(Object.keys(got.now.limits).sort(), Object.keys(now.limits).sort());
  assert.is(got.again.limits.day.used, got.now.limits.day.used, "a usage call uses none of the day's requests");
  assert.is(now.limits.day.used, got.now.limits.day.used);
  assert.equal(got.daily, daily);
});

client(
  'financials() equals the JSON walk row for row, and its dtypes are the catalog: year Int64, dimensions string, metrics float64',
  async () => {
    const expected = (await walkPages(service, '/v1/financials?metric=ggr&region=Europe', 1000)).flatMap((page) => page.data).map(flat);
    assert.ok(expected.length > 1000, `several pages (${expected.length} rows)`);
    const got = await python(`
import pandas as pd
from dqs_client import Client
${ROWS}
frame = Client().financials("ggr", region="Europe")
print(json.dumps({"rows": rows(frame), "dtypes": {k: str(v) for k, v in frame.dtypes.items()}}))`);
    assert.equal(got.rows, expected);
    const ggr = (await service.get('/v1/catalog')).json.datasets.find((d: any) => d.name === 'ggr');
    const want = Object.fromEntries([
      ...ggr.dimensions.map((d: string) => [d, d === 'year' ? 'Int64' : 'string']),
      ...ggr.metrics.map((m: string) => [m, 'float64']),
    ]);
    assert.equal(got.dtypes, want);
  },
);

client(
  'aggregate() equals the JSON answer, rolled-up dimensions missing and "" kept; decimal=True sums are the exact decimals',
  async () => {
    const query = '/v1/aggregate?metric=ggr&group_by=year&group_by=state&fx=USD&country=United%20States&rollup=true&year=2020&year=2021';
    const answer = (await service.get(query)).json;
    assert.ok(answer.data.some((r: any) => r.dimensions.state === '') && answer.data.some((r: any) => r.dimensions.state === null));
    const got = await python(`
import pandas as pd
from dqs_client import Client
${ROWS}
frame = Client().aggregate("ggr", group_by=["year", "state"], fx="USD", country="United States", rollup=True, year=[2020, 2021])
print(json.dumps(rows(frame)))`);
    assert.equal(got, answer.data.map(flat));

    // Sums of the country dataset pass 2^52 units of their last place: the JSON text is the exact decimal.
    const sums = await service.get('/v1/aggregate?metric=country&group_by=year');
    const exact = await python(
      `
import json, sys
from decimal import Decimal
from dqs_client import Client
want = [r["values"]["gdp_usd_sum"] for r in json.loads(sys.stdin.read(), parse_float=Decimal)["data"]]
got = list(Client().aggregate("country", group_by="year", decimal=True)["gdp_usd_sum"])
print(json.dumps({"types": sorted({type(v).__name__ for v in got}), "equal": got == want, "n": len(got), "text": [str(v) for v in got]}))`,
      { stdin: sums.text },
    );
    assert.equal(exact.types, ['Decimal']);
    assert.ok(exact.equal && exact.n === sums.json.data.length, 'every sum equals the decimal the JSON printed');
    assert.ok(sums.text.includes(`"gdp_usd_sum":${exact.text[0]}`));
  },
);

client('with pandas hidden, as_frame=False iterates typed dicts and as_frame=True names the [pandas] extra', async () => {
  const answer = (await service.get('/v1/aggregate?metric=turnover&group_by=channel&group_by=year&fx=EUR&country=France')).json;
  const got = await python(`
import sys, json
sys.modules["pandas"] = None
from dqs_client import Client
client = Client()
rows = client.aggregate("turnover", group_by=["channel", "year"], fx="EUR", country="France", as_frame=False)
lazy = not isinstance(rows, list)
rows = list(rows)
try:
    client.aggregate("turnover", group_by="year", fx="EUR")
    message = None
except ImportError as err:
    message = str(err)
print(json.dumps({"lazy": lazy, "rows": rows, "message": message}))`);
  assert.ok(got.lazy, 'an iterator, not a list');
  assert.equal(got.rows, answer.data.map(flat));
  assert.match(got.message, 'pip install "dqs_client[pandas]"');
});

client('an error carries the status as code, the message, the hint and the request id', async () => {
  const answer = await service.get('/v1/financials?metric=ggr&group_by=year');
  assert.is(answer.status, 400);
  assert.ok(answer.json.hint, 'a misplaced parameter gets a hint');
  const got = await python(`
import json
from dqs_client import Client, DqsError
try:
    Client().financials("ggr", group_by="year")
except DqsError as err:
    print(json.dumps({"code": err.code, "message": err.message, "hint": err.hint, "request_id": err.request_id}))`);
  assert.equal([got.code, got.message, got.hint], [400, answer.json.error, answer.json.hint]);
  assert.match(got.request_id, /^[0-9a-f-]{36}$/);
});

const limited = suite('Python client over a server allowing one request a minute');
let slow: TestService;
limited.before(async () => {
  slow = await startTestService({ env: { RATE_LIMIT_PER_MINUTE: '1' } });
});
limited.after(async () => {
  await slow.stop();
  await fs.rm(work, { recursive: true, force: true });
});

limited('a 429 is retried after its Retry-After, and the call then answers', async () => {
  // The second call is refused until the first one's unit comes back (up to 60 s).
  const got = await python(
    `
import json
from dqs_client import Client
events = []
client = Client(on_retry=events.append)
first = client.releases()
second = client.releases()
print(json.dumps({"same": first == second, "events": [
    {**{k: v for k, v in e.items() if k != "error"}, "retry_after": e["error"].retry_after} for e in events]}))`,
    { url: slow.url, key: slow.key },
  );
  assert.ok(got.same);
  assert.is(got.events.length, 1, JSON.stringify(got.events));
  const [event] = got.events;
  assert.equal([event.reason, event.attempt, event.status], ['rate-limited', 1, 429]);
  // The body's retryAfterSeconds is the Retry-After header's N (docs/api.md "Rate limits"): the wait the client took.
  assert.ok(event.retry_after >= 1 && event.wait === event.retry_after, JSON.stringify(event));
  const statuses = slow.logs.filter((line) => line.msg === 'request' && line.url === '/v1/releases').map((line) => line.status);
  assert.equal(statuses, [200, 429, 200]);
});

if (missing === undefined) {
  client.run();
  limited.run();
} else skippedSuite('Python client', missing);
