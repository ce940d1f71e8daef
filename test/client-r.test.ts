import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { buildRClient } from '../tools/clients/r.ts';
import { until } from './helpers/redis.ts';
import { FIXTURE_RELEASE, ownFixtureDataDir, publishNextMonth, startTestService, type TestService, tempDir } from './helpers/service.ts';
import { skippedSuite } from './helpers/skip.ts';
import { WEBHOOK_METHODS } from './helpers/webhook-methods.ts';
import { LOOPBACK_WEBHOOKS, type Receiver, startReceiver, verified } from './helpers/webhook-receiver.ts';

// The R client as a user gets it: the source package built for the server's
// info.version into its CLIENTS_DIR, installed from the URL the front door gives into
// an empty library with install.packages(repos = NULL),
// run against a live server and compared with the JSON answer; then R CMD check.

const run = promisify(execFile);

const missing = await run('Rscript', ['-e', 'library(httr); library(jsonlite)']).then(
  () => undefined,
  () => 'Rscript with httr and jsonlite (apt-get install r-base-core r-cran-httr r-cran-jsonlite; .ci/run installs them)',
);

let service: TestService;
let work: string;
let library: string;
let version: string;
let tarball: string;
let served: string;
let receiver: Receiver;
let dataDir: string;
let release = FIXTURE_RELEASE;

/** What `code` prints to stdout as JSON, with the installed package's library first and DQS_URL and DQS_API_KEY set. */
async function rscript(code: string): Promise<any> {
  const { stdout } = await run('Rscript', ['-e', code], {
    cwd: work,
    env: { ...process.env, R_LIBS: library, DQS_URL: service.url, DQS_API_KEY: service.key },
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout);
}

const flat = (row: { dimensions: Record<string, unknown>; values: Record<string, unknown> }) => ({ ...row.dimensions, ...row.values });

const r = suite('R client installed from its source package');
r.before(async () => {
  work = await tempDir('dqs-r-client-');
  library = path.join(work, 'library');
  await fs.mkdir(library);
  // The service reads CLIENTS_DIR per request, so the tarball can be built for the version it reports.
  receiver = await startReceiver();
  // A DATA_DIR of its own: the webhooks test publishes into it.
  dataDir = await ownFixtureDataDir('dqs-r-client-data-');
  service = await startTestService({
    dataDir,
    env: { CLIENTS_DIR: path.join(work, 'clients'), ...LOOPBACK_WEBHOOKS, RELEASE_POLL_MS: '100' },
  });
  version = (await service.get('/openapi.json')).json.info.version;
  tarball = await buildRClient(version, path.join(work, 'clients', 'r'));
  served = (await service.get('/')).json.clients.r.url;
  // install.packages() downloads a URL itself when repos = NULL, as the install line has it.
  await run('Rscript', [
    '-e',
    `install.packages(${JSON.stringify(served)}, lib = ${JSON.stringify(library)}, repos = NULL, type = "source")`,
  ]);
});
r.after(async () => {
  await service.stop();
  await receiver.close();
  await fs.rm(dataDir, { recursive: true, force: true });
  await fs.rm(work, { recursive: true, force: true });
});

r("the tarball and the installed package carry the OpenAPI document's info.version", async () => {
  assert.is(path.basename(tarball), `dqs_${version}.tar.gz`);
  assert.is(served, `${service.url}/clients/r/${path.basename(tarball)}`, 'installed from the URL the front door gives');
  assert.is(await rscript(`cat(jsonlite::toJSON(as.character(packageVersion("dqs")), auto_unbox = TRUE))`), version);
});

r(
  'aggregate() equals the JSON answer, typed from the catalog: year integer, dimensions character ("" kept, rolled up NA), sums double',
  async () => {
    const query = '/v1/aggregate?metric=ggr&group_by=year&group_by=state&fx=USD&country=United%20States&rollup=true&year=2020&year=2021';
    const answer = (await service.get(query)).json;
    assert.ok(answer.data.some((row: any) => row.dimensions.state === '') && answer.data.some((row: any) => row.dimensions.state === null));
    const got = await rscript(`
frame <- dqs::client()$aggregate("ggr", group_by = c("year", "state"), fx = "USD", country = "United States", rollup = TRUE, year = c(2020, 2021))
# NA as null; doubles with 17 significant digits, which read back as the same double.
cat(jsonlite::toJSON(list(classes = lapply(frame, class), rows = frame), dataframe = "rows", auto_unbox = TRUE, na = "null", digits = I(17)))`);
    assert.equal(got.rows, answer.data.map(flat));
    assert.equal(got.classes, { year: 'integer', state: 'character', ggr_sum: 'numeric', rows: 'integer' });
  },
);

r('aggregate(decimal = TRUE) gives each sum as the exact decimal the service printed', async () => {
  const sums = await service.get('/v1/aggregate?metric=country&group_by=year');
  const printed = [...sums.text.matchAll(/"gdp_usd_sum":([-\d.eE+]+)/g)].map((match) => match[1]);
  assert.is(printed.length, sums.json.data.length);
  const got = await rscript(`cat(jsonlite::toJSON(dqs::client()$aggregate("country", group_by = "year", decimal = TRUE)$gdp_usd_sum))`);
  assert.equal(got, printed);
});

r('has a function per /v1 endpoint of /openapi.json, and webhooks one per /v1/webhooks operation', async () => {
  const document = (await service.get('/openapi.json')).json;
  const paths = Object.entries(document.paths as Record<string, any>);
  // The release feeds are documents for feed readers; webhooks are their own list.
  const endpoints = paths.filter(([p]) => p.startsWith('/v1/') && !p.includes('.') && !p.startsWith('/v1/webhooks'));
  const operations = paths
    .filter(([p]) => p.startsWith('/v1/webhooks'))
    .flatMap(([, item]) => Object.values(item).flatMap((operation: any) => operation.operationId ?? []));
  assert.equal(operations.sort(), Object.keys(WEBHOOK_METHODS).sort());
  const got = await rscript('dqs <- dqs::client(); cat(jsonlite::toJSON(list(client = names(dqs), webhooks = names(dqs$webhooks))))');
  assert.equal(got.client.sort(), [...endpoints.map(([p]) => p.slice('/v1/'.length).replaceAll('/', '_')), 'webhooks'].sort());
  assert.equal(got.webhooks.sort(), Object.values(WEBHOOK_METHODS).sort());
});

r('usage() and usage_daily() are the JSON of /v1/usage and /v1/usage/daily', async () => {
  const got = await rscript(`
dqs <- dqs::client()
cat(jsonlite::toJSON(list(now = dqs$usage(), daily = dqs$usage_daily()), auto_unbox = TRUE, null = "null", digits = NA))`);
  const now = (await service.get('/v1/usage')).json;
  assert.equal(got.now.key, now.key);
  assert.is(got.now.limits.day.used, now.limits.day.used, 'usage calls count against nothing');
  assert.equal(got.daily, (await service.get('/v1/usage/daily')).json);
});

r('webhooks makes, updates, tests, logs, redelivers and deletes an endpoint, signed for the secret it gave', async () => {
  const made = await rscript(`
hooks <- dqs::client()$webhooks
made <- hooks$create(${JSON.stringify(`${receiver.url}/r`)}, events = "release.published")
off <- hooks$update(made$id, enabled = FALSE)
on <- hooks$update(made$id, enabled = TRUE)
cat(jsonlite::toJSON(list(made = made, off = off, on = on, attempt = hooks$test(made$id),
  listed = I(vapply(hooks$list(), function(w) w$id, ""))), auto_unbox = TRUE, null = "null"))`);
  const { id, secret } = made.made;
  assert.match(secret, /^whsec_/);
  assert.equal(made.made.events, ['release.published'], 'one event is still a list');
  const arrived = () => receiver.received.filter((r) => r.path === '/r');
  assert.is((verified(secret, arrived()[0]!) as { type: string }).type, 'webhook.test');
  assert.equal([made.off.enabled, made.on.enabled, made.attempt.status_code], [false, true, 200]);
  assert.equal(made.listed, [id]);

  // A release event, the kind of message the log can send again.
  release = await publishNextMonth(dataDir, release);
  assert.ok(await until(() => arrived().length === 3, 30_000), 'the publication delivered');
  const msg = arrived()[2]!.headers['webhook-id']!;
  const got = await rscript(`
hooks <- dqs::client()$webhooks
log <- hooks$deliveries(${JSON.stringify(id)})
again <- hooks$redeliver(${JSON.stringify(id)}, ${JSON.stringify(msg)})
hooks$delete(${JSON.stringify(id)})
after <- tryCatch(hooks$get(${JSON.stringify(id)}), dqs_error = function(e) e$code)
cat(jsonlite::toJSON(list(log = I(vapply(log, function(d) d$msg_id, "")), again = again, after = after), auto_unbox = TRUE, null = "null"))`);
  assert.equal(got.log, [msg, made.attempt.msg_id], "every attempt since it was made, newest first (the creation's test came before)");
  assert.is(got.again.status_code, 200);
  assert.is(arrived()[3]!.headers['webhook-id'], msg, 'sent again with the same webhook-id');
  assert.is(got.after, 404);
});

r('an error is a dqs_error condition with the status as code, the message, the hint and the request id', async () => {
  const answer = await service.get('/v1/financials?metric=ggr&group_by=year');
  assert.ok(answer.status === 400 && answer.json.hint);
  const got = await rscript(`
e <- tryCatch(dqs::client()$financials("ggr", group_by = "year"), dqs_error = function(e) e)
cat(jsonlite::toJSON(list(code = e$code, error = e$error, hint = e$hint, request_id = e$request_id), auto_unbox = TRUE))`);
  assert.equal([got.code, got.error, got.hint], [400, answer.json.error, answer.json.hint]);
  assert.match(got.request_id, /^[0-9a-f-]{36}$/);
});

r('R CMD check passes (--no-manual: no LaTeX needed, the one help page is checked as Rd)', async () => {
  const check = await run('R', ['CMD', 'check', '--no-manual', tarball], { cwd: work, maxBuffer: 16 * 1024 * 1024 }).catch((err) => err);
  assert.ok(!(check instanceof Error), `R CMD check failed: ${check.stdout ?? ''}${check.stderr ?? check}`);
  assert.match(check.stdout, /Status: OK/);
});

if (missing === undefined) r.run();
else skippedSuite('R client', missing);
