import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { clientPath } from '../src/clients.ts';
import { SERVICE_VERSION } from '../src/version.ts';
import { builtClients } from './helpers/clients.ts';
import { startTestService, type TestService, tempDir, walkPages } from './helpers/service.ts';

// The npm package data-query-client as a user gets it: `npm install <served .tgz URL>`
// into an empty folder, a sample type-checked under moduleResolution bundler and node16
// by the repository's own TypeScript, then compiled and run against a live server. The
// packed tarball also passes @arethetypeswrong/cli and publint. Offline: the package has
// no dependency, and npm's registry is pointed at a closed loopback port, so any
// registry request would fail the install.

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');
const bin = (name: string) => path.join(ROOT, 'node_modules/.bin', name);
// Nothing listens on port 9 (discard) on loopback: a registry request fails at once.
const NO_REGISTRY = 'http://127.0.0.1:9/';

const SAMPLE = `import { type AggregateRow, DataQueryClient, DataQueryError, type ReleaseInfo } from 'data-query-client';

const api = new DataQueryClient({ baseUrl: process.env.DQS_URL!, apiKey: process.env.DQS_API_KEY! });
const releases: ReleaseInfo[] = await api.releases();
const { meta, data } = await api.aggregate('ggr', { group_by: ['region', 'year'], fx: 'USD' });
const rows: AggregateRow<'ggr'>[] = data;
try {
  await api.releases.call(new DataQueryClient({ baseUrl: process.env.DQS_URL!, apiKey: 'sk_live_nope' }));
} catch (err) {
  if (!(err instanceof DataQueryError)) throw err;
  console.log(JSON.stringify({ releases, groups: meta.row_count, rows, refused: err.status }));
}
`;

const test = suite<{ service: TestService; project: string; tarball: string }>('client package');

test.before(async (context) => {
  const { dir, tarball } = await builtClients();
  context.tarball = tarball;
  context.service = await startTestService({ env: { CLIENTS_DIR: dir } });
  context.project = await tempDir('dqs-client-user-');
});

test.after(async ({ service, project }) => {
  await service?.stop();
  if (project) await fs.rm(project, { recursive: true, force: true });
});

test('npm installs the served tarball into an empty folder, offline, with no dependency', async ({ service, project }) => {
  const url = `${service.url}${clientPath('typescript', SERVICE_VERSION)}`;
  await run(
    'npm',
    ['install', url, '--prefer-offline', '--no-audit', '--no-fund', `--registry=${NO_REGISTRY}`, `--cache=${path.join(project, '.npm')}`],
    { cwd: project },
  );
  const installed = JSON.parse(await fs.readFile(path.join(project, 'node_modules/data-query-client/package.json'), 'utf8'));
  assert.is(installed.version, SERVICE_VERSION);
  assert.is(installed.dependencies, undefined);
  assert.equal(
    (await fs.readdir(path.join(project, 'node_modules'))).filter((name) => !name.startsWith('.')),
    ['data-query-client'],
  );
  const manifest = JSON.parse(await fs.readFile(path.join(project, 'package.json'), 'utf8'));
  assert.is(manifest.dependencies['data-query-client'], url);
});

test("its version is the OpenAPI document's info.version", async ({ service, project }) => {
  const { json } = await service.get('/openapi.json', { key: null });
  const installed = JSON.parse(await fs.readFile(path.join(project, 'node_modules/data-query-client/package.json'), 'utf8'));
  assert.is(installed.version, json.info.version);
});

/** Type-checks the sample in `project` under `options` (the types of @types/node from this repository). */
async function typeCheck(project: string, name: string, options: Record<string, unknown>): Promise<void> {
  const config = path.join(project, `tsconfig.${name}.json`);
  const compilerOptions = {
    target: 'ES2022',
    strict: true,
    skipLibCheck: false,
    typeRoots: [path.join(ROOT, 'node_modules/@types')],
    types: ['node'],
    ...options,
  };
  await fs.writeFile(config, JSON.stringify({ compilerOptions, files: ['sample.ts'] }));
  try {
    await run(bin('tsc'), ['-p', config], { cwd: project });
  } catch (err) {
    const { stdout, stderr } = err as { stdout: string; stderr: string };
    assert.unreachable(`tsc (${name}): ${stdout}${stderr}`);
  }
}

test('a sample type-checks with moduleResolution bundler and node16', async ({ project }) => {
  await fs.writeFile(path.join(project, 'sample.ts'), SAMPLE);
  // node16 reads the project's own package.json to know sample.ts is an ES module.
  const manifest = JSON.parse(await fs.readFile(path.join(project, 'package.json'), 'utf8'));
  await fs.writeFile(path.join(project, 'package.json'), JSON.stringify({ ...manifest, type: 'module' }));
  await typeCheck(project, 'bundler', { module: 'preserve', moduleResolution: 'bundler', noEmit: true });
  await typeCheck(project, 'node16', { module: 'node16', moduleResolution: 'node16', outDir: 'out' });
});

test('a wrong call does not type-check: the types come with the package', async ({ project }) => {
  await fs.writeFile(path.join(project, 'wrong.ts'), SAMPLE.replace("group_by: ['region', 'year']", "group_by: ['planet']"));
  const config = path.join(project, 'tsconfig.wrong.json');
  const bundler = JSON.parse(await fs.readFile(path.join(project, 'tsconfig.bundler.json'), 'utf8'));
  await fs.writeFile(config, JSON.stringify({ ...bundler, files: ['wrong.ts'] }));
  const failed = await run(bin('tsc'), ['-p', config], { cwd: project }).then(
    () => '',
    (err: { stdout: string }) => err.stdout,
  );
  assert.match(failed, /wrong\.ts.*'"planet"'/);
});

test('the compiled sample lists the releases and an aggregate from a live server', async ({ service, project }) => {
  const { stdout } = await run(process.execPath, [path.join(project, 'out/sample.js')], {
    cwd: project,
    env: { ...process.env, DQS_URL: service.url, DQS_API_KEY: service.key },
  });
  const printed = JSON.parse(stdout);
  assert.equal(printed.releases, (await service.get('/v1/releases')).json.releases);
  const pages = await walkPages(service, '/v1/aggregate?metric=ggr&group_by=region,year&fx=USD', 1000);
  assert.equal(
    printed.rows,
    pages.flatMap((page) => page.data),
  );
  assert.ok(printed.rows.length > 10, `${printed.rows.length} groups`);
  assert.is(printed.groups, printed.rows.length);
  assert.is(printed.refused, 401);
});

test('the packed tarball passes @arethetypeswrong/cli (ES module only) and publint', async ({ tarball }) => {
  const unpacked = await tempDir('dqs-client-packed-');
  try {
    await run('tar', ['xzf', tarball, '-C', unpacked]);
    const dir = path.join(unpacked, 'package');
    const env = { ...process.env, npm_config_registry: NO_REGISTRY };
    // esm-only: the package has no CommonJS entry, so node16-from-CJS and node10 are not asked.
    await run(bin('attw'), ['--pack', dir, '--profile', 'esm-only', '--no-definitely-typed', '--format', 'ascii'], { env });
    const { stdout } = await run(bin('publint'), ['run', dir, '--strict'], { env });
    assert.match(stdout, /All good!/);
  } finally {
    await fs.rm(unpacked, { recursive: true, force: true });
  }
});

test.run();
