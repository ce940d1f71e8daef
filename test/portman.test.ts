import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { examplePath } from '../src/http/openapi/examples.ts';
import { DOCUMENTED_RELEASES } from '../src/http/openapi/prefill.ts';
import { openApiText, openApiTextFor } from '../src/http/routes/index.ts';
import { send, startTestService, type TestService, tempDir, twoReleaseDataDir } from './helpers/service.ts';

// Third-party tooling uses the OpenAPI document as it is. Portman turns the
// document the server serves into a Postman collection with its contract tests
// (status, Content-Type, JSON body, schema, documented headers), and Newman runs it
// against the server with nothing set but `baseUrl` and `apiKey`: every request is the
// one the document's examples make, and every assertion must pass. Then each
// operation's example request (`x-codeSamples`) is sent as the README would send it.

const ROOT = path.resolve(import.meta.dirname, '..');
const bin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);
const run = promisify(execFile);

interface NewmanSummary {
  run: {
    stats: { requests: { total: number; failed: number }; assertions: { total: number; failed: number } };
    executions: {
      item: { name: string };
      response?: { code: number };
      assertions?: { assertion: string; error?: { message: string } }[];
    }[];
    failures: { source?: { name?: string }; error: { message: string; test?: string } }[];
  };
}

/** The first value a parameter's examples give: its `example`, or the first of its named `examples` that has one. */
const exampleValues = (parameter: any): unknown[] =>
  parameter.example !== undefined
    ? [parameter.example]
    : Object.values<any>(parameter.examples ?? {}).flatMap((e) => (e.value === undefined ? [] : [e.value]));

/**
 * The suite against a server with `releases` releases: one, as a fresh clone has, and
 * two, as README.md's recipe makes. /v1/revisions' examples name the server's own.
 */
function contractSuite(releases: 1 | 2): void {
  let service: TestService;
  let work: string;
  const contract = suite(`the OpenAPI document, as Portman and Newman use it, on a server with ${releases} release(s)`);
  contract.before(async () => {
    service = await startTestService(releases === 2 ? { dataDir: (await twoReleaseDataDir()).dataDir } : {});
    work = await tempDir('dqs-portman-');
  });
  contract.after(async () => {
    await service.stop();
    await fs.rm(work, { recursive: true, force: true });
  });

  contract(
    'Portman generates the collection from /openapi.json; Newman runs it with only baseUrl and apiKey set, and every assertion passes',
    async () => {
      const document = (await send(`${service.url}/openapi.json`)).json;
      // /v1/webhooks is left out (test/webhooks.test.ts): making one needs a receiver that answers its test event.
      const operations = Object.keys(document.paths).filter((route) => !route.startsWith('/v1/webhooks')).length;
      const filter = path.join(work, 'filter.json');
      await fs.writeFile(filter, JSON.stringify({ tags: ['webhooks'] }));
      const collection = path.join(work, 'collection.json');
      // Portman's defaults (no config of ours): contract tests on, optional parameters sent disabled.
      await run(bin('portman'), ['--url', `${service.url}/openapi.json`, '--output', collection, '--filterFile', filter], {
        cwd: work,
        timeout: 120_000,
      });
      const report = path.join(work, 'newman.json');
      await run(
        bin('newman'),
        [
          'run',
          collection,
          '--env-var',
          `baseUrl=${service.url}`,
          '--env-var',
          `apiKey=${service.key}`,
          '--reporters',
          'json',
          '--reporter-json-export',
          report,
          '--timeout-request',
          '30000',
        ],
        { cwd: work, timeout: 300_000 },
      ).catch((err: Error) => err); // Non-zero on a failed assertion: the report says which.
      const { run: summary } = JSON.parse(await fs.readFile(report, 'utf8')) as NewmanSummary;
      const failures = summary.failures.map((f) => `${f.source?.name}: ${f.error.test ?? ''} ${f.error.message}`);
      assert.equal(failures, [], 'every assertion passes');
      assert.is(summary.stats.requests.total, operations, 'one request per operation of the document');
      assert.is(summary.stats.requests.failed, 0);
      for (const execution of summary.executions) {
        assert.ok(
          execution.response && execution.response.code >= 200 && execution.response.code < 300,
          `${execution.item.name}: ${execution.response?.code}`,
        );
        // At least the status, the Content-Type and, but for the pages, the body or headers.
        assert.ok((execution.assertions ?? []).length >= 2, `${execution.item.name} is tested`);
      }
      assert.is(summary.stats.assertions.failed, 0);
      assert.ok(summary.stats.assertions.total >= 5 * operations, `${summary.stats.assertions.total} assertions`);
    },
  );

  contract('the document names the release ids this server has published', async () => {
    const document = (await send(`${service.url}/openapi.json`)).json;
    const published = (await service.get('/v1/releases')).json.releases.map((r: any) => r.id);
    assert.is(published.length, releases);
    const [latest, previous = latest] = published;
    const revisions = document.paths['/v1/revisions'].get;
    const example = (name: string) => revisions.parameters.find((p: any) => p.name === name).example;
    assert.is(example('from'), previous);
    assert.is(example('to'), latest);
    assert.match(examplePath(revisions)!, `from=${previous}&to=${latest}&`);
    for (const [route, item] of Object.entries<Record<string, any>>(document.paths)) {
      const release = (item.get?.parameters ?? []).find((p: any) => p.name === 'release');
      if (release) assert.equal(exampleValues(release), [...new Set([latest, previous])], `${route} release`);
    }
    // A release compared with itself: nothing differs, so an empty page, not a 400;
    // with one release, a request without `from` (as generated ones are) compares it so.
    for (const query of [`from=${latest}&to=${latest}`, ...(releases === 1 ? [''] : [])]) {
      const res = await service.get(`/v1/revisions?metric=ggr&${query}`);
      assert.is(res.status, 200, `${query}: ${res.text.slice(0, 200)}`);
      assert.equal([res.json.meta.from, res.json.meta.to, res.json.data, res.json.pagination.has_more], [latest, latest, [], false], query);
    }
    // The two-release server serves docs/openapi.json as committed (its releases are the ones it names), but for
    // the `as_of` examples: the instants its releases were published.
    if (releases === 2) {
      const at = new Map<string, string>((await service.get('/v1/releases')).json.releases.map((r: any) => [r.id, r.published_at]));
      const served = openApiTextFor({ ...DOCUMENTED_RELEASES, latestAt: at.get(latest)!, previousAt: at.get(previous)! });
      assert.is((await send(`${service.url}/openapi.json`)).text, served);
      assert.is(openApiTextFor(DOCUMENTED_RELEASES), openApiText);
    }
  });

  contract('every operation has an example request, and it works as written', async () => {
    const document = (await send(`${service.url}/openapi.json`)).json;
    for (const [route, item] of Object.entries<Record<string, any>>(document.paths)) {
      const operation = item.get;
      if (route.startsWith('/v1/webhooks')) continue; // managed with bodies, not example requests
      const example = examplePath(operation);
      assert.ok(example, `${route} has x-codeSamples`);
      assert.ok(example!.startsWith(route), `${route}: ${example}`);
      assert.ok(operation.description.endsWith(`Example: \`GET ${example}\``), `${route}: the description shows it`);
      const keyed = operation.security === undefined;
      assert.is(operation['x-codeSamples'][0].source.includes('x-api-key: $KEY'), keyed, route);
      const res = await service.get(example!, { key: keyed ? undefined : null });
      assert.is(res.status, 200, `${example}: ${res.text.slice(0, 300)}`);
      // Pages count their rows; facets list each dimension's values.
      const found = res.json?.meta ? (res.json.meta.row_count ?? Object.values<unknown[]>(res.json.data).flat().length) : 1;
      // With one release, /v1/revisions compares it with itself: nothing differs.
      if (route === '/v1/revisions' && releases === 1) assert.is(found, 0, `${example}: an empty page`);
      else assert.ok(found > 0, `${example} finds rows`);
    }
  });

  contract("every parameter has an example; each of a dimension's is a value the sample holds", async () => {
    const document = (await send(`${service.url}/openapi.json`)).json;
    for (const [route, item] of Object.entries<Record<string, any>>(document.paths)) {
      for (const parameter of item.get?.parameters ?? []) {
        assert.ok(exampleValues(parameter).length > 0, `${route} ${parameter.name} has an example`);
        const values = parameter.schema.items?.enum ?? parameter.schema.enum;
        if (values)
          for (const value of exampleValues(parameter).flat())
            assert.ok(values.includes(value), `${route} ${parameter.name}: ${value} is one of its values`);
      }
    }
    for (const parameter of document.paths['/v1/financials'].get.parameters.filter((p: any) => p['x-metrics'])) {
      const metric = parameter['x-metrics'].at(-1);
      for (const [value] of exampleValues(parameter) as string[][]) {
        const res = await service.get(`/v1/financials?metric=${metric}&${parameter.name}=${encodeURIComponent(value!)}&limit=1`);
        assert.is(res.json.meta.row_count, 1, `${parameter.name}=${value} on ${metric}`);
      }
    }
  });

  contract.run();
}

contractSuite(1);
contractSuite(2);
