import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runQueryCli } from './helpers/query-cli.ts';
import { startTestService, type TestService, tempDir, twoReleaseDataDir, walkPages } from './helpers/service.ts';
import { requiring } from './helpers/skip.ts';

// README.md's pandas and R sections, run as they are written (extracted from the
// README, so they cannot drift) with Debian's python3-pandas and r-base-core against a
// real server holding two releases, as the README's recipe leaves a fresh clone. The
// frames they read must have the service's types (`year` an integer, `state` a string
// holding "") and the totals of the JSON answers. Plus what a fresh clone needs of the
// README itself: links only to what the repository holds, one address set once.

const ROOT = path.resolve(import.meta.dirname, '..');
const PYTHON = '/usr/bin/python3'; // Debian's, with python3-pandas; the python3 on PATH may be another
const RSCRIPT = ['/usr/bin/Rscript', '/usr/local/bin/Rscript'].find((file) => existsSync(file));
const run = promisify(execFile);

/** The README's fenced blocks of `language`, in order. */
async function snippets(language: string): Promise<string[]> {
  const readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
  return [...readme.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((m) => m[1]!);
}

let service: TestService;
let work: string;
let written = 0;
const env = () => ({ PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8', BASE: service.url, KEY: service.key });

/** Runs `code` with `interpreter` in the scratch folder; what it printed after the marker, as JSON. */
async function execute(interpreter: string, args: string[], code: string): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  const file = path.join(work, `snippet-${++written}${interpreter === PYTHON ? '.py' : '.R'}`);
  await fs.writeFile(file, code);
  return run(interpreter, [...args, file], { cwd: work, env: env(), timeout: 120_000, maxBuffer: 64 << 20 }).then(
    ({ stdout, stderr }) => ({ ok: true, stdout, stderr }),
    (err: { stdout?: string; stderr?: string; message: string }) => ({
      ok: false,
      stdout: err.stdout ?? '',
      stderr: err.stderr ?? err.message,
    }),
  );
}

const MARK = '=== checks ===';
const checksOf = (stdout: string) => JSON.parse(stdout.slice(stdout.indexOf(MARK) + MARK.length));

/** What the JSON answers say the snippets' frames hold. */
async function expected() {
  const page = { data: (await walkPages(service, '/v1/financials?metric=ggr&country=France&year=2024', 1000)).flatMap((p) => p.data) };
  const byRegion = (await service.get('/v1/aggregate?metric=ggr&group_by=region&fx=USD&year=2024')).json;
  const yen = (await walkPages(service, '/v1/financials?metric=fx&fx_local_currency=JPY', 1000)).flatMap((p) => p.data);
  // Walked in pages smaller than the diff, so a CSV holding only its first page could not match.
  const revisedPages = await walkPages(service, '/v1/revisions?metric=ggr&country=France', REVISED_PAGE);
  const revised = revisedPages.flatMap((p) => p.data);
  const france = (await walkPages(service, '/v1/financials?metric=ggr&country=France', 1000)).flatMap((p) => p.data);
  const sum = (rows: any[], read: (row: any) => number) => rows.reduce((total, row) => total + read(row), 0);
  const count = (kind: string) => revised.filter((r: any) => r.change === kind).length;
  const byFx: Record<string, number> = {};
  for (const row of france) byFx[row.dimensions.fx] = (byFx[row.dimensions.fx] ?? 0) + row.values.ggr;
  return {
    page: { rows: page.data.length, ggr: sum(page.data, (r) => r.values.ggr) },
    byRegion: Object.fromEntries(byRegion.data.map((r: any) => [r.dimensions.region, r.values.ggr_sum])) as Record<string, number>,
    yen: { rows: yen.length, fx_current_usd: sum(yen, (r) => r.values.fx_current_usd) },
    revised: {
      rows: revised.length,
      pages: revisedPages.length,
      added: count('added'),
      removed: count('removed'),
      changed: count('changed'),
    },
    france: { rows: france.length, byFx },
  };
}

/** The page size the JSON walk of the README's diff uses: below its row count, so the walk takes several pages. */
const REVISED_PAGE = 25;

const close = (actual: number, wanted: number, what: string) =>
  assert.ok(Math.abs(actual - wanted) <= 1e-9 * Math.max(1, Math.abs(wanted)), `${what}: ${actual} vs ${wanted}`);

/** The Parquet file the snippets saved, read by DuckDB (npm ci's): its rows and GGR per currency. */
async function savedParquet(): Promise<{ rows: number; byFx: Record<string, number> }> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const file = path.join(work, 'downloads', 'ggr-france.parquet').replaceAll("'", "''");
    const rows = (
      await connection.runAndReadAll(`SELECT fx, count(*)::INTEGER AS n, sum(ggr) AS ggr FROM '${file}' GROUP BY fx`)
    ).getRowObjectsJS() as { fx: string; n: number; ggr: number }[];
    return { rows: rows.reduce((n, r) => n + r.n, 0), byFx: Object.fromEntries(rows.map((r) => [r.fx, r.ggr])) };
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/**
 * Runs a snippet that saves the Parquet export, then requires the file it saved to be
 * the whole export (read by DuckDB); gives what it ran and what the file must hold.
 */
async function savingExport(snippet: () => Promise<{ ok: boolean; stdout: string; stderr: string }>) {
  await fs.rm(path.join(work, 'downloads', 'ggr-france.parquet'), { force: true });
  const result = await snippet();
  const want = (await expected()).france;
  const saved = await savedParquet();
  assert.is(saved.rows, want.rows, 'the saved file is the whole export');
  for (const [fx, ggr] of Object.entries(want.byFx)) close(saved.byFx[fx]!, ggr, fx);
  return { result, want };
}

const readme = suite('README: pandas and R against a real server');
readme.before(async () => {
  service = await startTestService({ dataDir: (await twoReleaseDataDir()).dataDir });
  work = await tempDir('dqs-readme-');
  await fs.mkdir(path.join(work, 'downloads'));
});
readme.after(async () => {
  await service.stop();
  await fs.rm(work, { recursive: true, force: true });
});

const pandasMissing = existsSync(PYTHON)
  ? await run(PYTHON, ['-c', 'import pandas']).then(
      () => undefined,
      () => `${PYTHON} has no pandas (apt-get install python3-pandas; .ci/run installs it)`,
    )
  : `no ${PYTHON} (apt-get install python3-pandas; .ci/run installs it)`;
const withPandas = requiring(readme, pandasMissing, 'README pandas examples');

withPandas("pandas: exports, an aggregate and revisions read from the URL keep the service's types and whole totals", async () => {
  const [reads, parquet] = await snippets('python');
  assert.ok(reads && parquet, 'the README has both pandas blocks');
  const checks = `
import json
def described(frame):
    return {"rows": len(frame), "dtypes": {name: str(kind) for name, kind in frame.dtypes.items()}}
print(${JSON.stringify(MARK)})
print(json.dumps({
    "page": {**described(france_2024), "states": sorted(set(france_2024["state"])), "ggr": float(france_2024["ggr"].sum())},
    "by_region": {**described(by_region), "ggr_sum": {region: float(value) for region, value in zip(by_region["region"], by_region["ggr_sum"])}},
    "yen": {**described(yen), "states": sorted(set(yen["state"])), "fx_current_usd": float(yen["fx_current_usd"].sum())},
    "revised": {**described(revised), "changes": {kind: int(n) for kind, n in revised["change"].value_counts().items()},
                "before_missing": int(revised["before_ggr"].isna().sum()), "after_missing": int(revised["after_ggr"].isna().sum())},
}))
`;
  const result = await execute(PYTHON, [], `${reads}\n${checks}`);
  assert.ok(result.ok, result.stderr);
  const got = checksOf(result.stdout);
  const want = await expected();
  assert.is(got.page.rows, want.page.rows);
  assert.ok(got.page.rows > 0);
  assert.equal([got.page.dtypes.year, got.page.dtypes.state, got.page.dtypes.ggr], ['int64', 'object', 'float64']);
  assert.equal(got.page.states, [''], 'France has national rows only: state "" stays a string');
  close(got.page.ggr, want.page.ggr, 'page ggr');
  assert.equal(Object.keys(got.by_region.ggr_sum).sort(), Object.keys(want.byRegion).sort());
  for (const [region, value] of Object.entries<number>(got.by_region.ggr_sum)) close(value, want.byRegion[region]!, region);
  assert.is(got.yen.rows, want.yen.rows);
  assert.equal([got.yen.dtypes.year, got.yen.dtypes.state], ['int64', 'object']);
  assert.ok(got.yen.states.includes(''), 'the national rows');
  close(got.yen.fx_current_usd, want.yen.fx_current_usd, 'yen');
  // The whole diff, not a page of it: as many rows as every JSON page together.
  assert.is(got.revised.rows, want.revised.rows, 'every row of the diff');
  assert.ok(want.revised.pages > 1, `the JSON walk took ${want.revised.pages} pages of ${REVISED_PAGE}`);
  assert.equal(
    got.revised.changes,
    Object.fromEntries(
      Object.entries({ added: want.revised.added, removed: want.revised.removed, changed: want.revised.changed }).filter(([, n]) => n > 0),
    ),
  );
  assert.equal(
    [got.revised.dtypes.before_ggr, got.revised.before_missing, got.revised.after_missing],
    ['float64', want.revised.added, want.revised.removed],
  );
});

withPandas('pandas: the Parquet export is saved as the service sent it and read back where pyarrow is installed', async () => {
  const [reads, parquet] = await snippets('python');
  const engine = await run(PYTHON, ['-c', 'import pyarrow']).then(
    () => true,
    () => false,
  );
  const checks = `\nprint(${JSON.stringify(MARK)})\nimport json\nprint(json.dumps({"rows": len(france), "by_fx": {fx: float(v) for fx, v in france.groupby("fx")["ggr"].sum().items()}}))\n`;
  const { result, want } = await savingExport(() => execute(PYTHON, [], `${reads}\n${parquet}\n${checks}`));
  if (engine) {
    assert.ok(result.ok, result.stderr);
    const got = checksOf(result.stdout);
    assert.is(got.rows, want.rows);
    for (const [fx, ggr] of Object.entries(want.byFx)) close(got.by_fx[fx], ggr, fx);
  } else {
    // Debian 12 packages no Parquet engine for pandas: the one line that needs it is the one that fails.
    console.log(
      'README pandas Parquet: pyarrow is not importable here, so pd.read_parquet is checked to fail for that reason alone, and the saved file is read with DuckDB',
    );
    assert.not.ok(result.ok);
    assert.match(result.stderr, /Unable to find a usable engine; tried using: 'pyarrow', 'fastparquet'/);
    assert.match(result.stderr, /france = pd\.read_parquet\("downloads\/ggr-france\.parquet"\)/);
  }
});

const withR = requiring(readme, RSCRIPT ? undefined : 'no Rscript (apt-get install r-base-core; .ci/run installs it)', 'README R examples');

const R_CHECKS = `
cat(${JSON.stringify(MARK)}, "\\n", sep = "")
number <- function(x) sprintf("%.17g", x)
text <- function(x) paste0('"', x, '"')
list_of <- function(names, values) paste0("{", paste(text(names), values, sep = ": ", collapse = ", "), "}")
cat("{",
  '"page": {"rows": ', nrow(france_2024), ', "year": ', text(class(france_2024$year)), ', "state": ', text(class(france_2024$state)), ', "states": [', paste(text(unique(france_2024$state)), collapse = ", "), '], "ggr": ', number(sum(france_2024$ggr)), "},",
  '"by_region": ', list_of(by_region$region, number(by_region$ggr_sum)), ",",
  '"yen": {"rows": ', nrow(yen), ', "year": ', text(class(yen$year)), ', "state": ', text(class(yen$state)), ', "fx_current_usd": ', number(sum(yen$fx_current_usd)), "},",
  '"revised": {"rows": ', nrow(revised), ', "changes": ', list_of(names(table(revised$change)), as.vector(table(revised$change))), "}",
  "}\\n", sep = "")
`;

withR("R: an export, an aggregate and revisions read from the URL keep the service's types and whole totals", async () => {
  const [reads, parquet] = await snippets('r');
  assert.ok(reads && parquet, 'the README has both R blocks');
  const result = await execute(RSCRIPT!, ['--vanilla'], `${reads}\n${R_CHECKS}`);
  assert.ok(result.ok, result.stderr);
  const got = checksOf(result.stdout);
  const want = await expected();
  assert.equal([got.page.rows, got.page.year, got.page.state, got.page.states], [want.page.rows, 'integer', 'character', ['']]);
  close(got.page.ggr, want.page.ggr, 'page ggr');
  assert.equal(Object.keys(got.by_region).sort(), Object.keys(want.byRegion).sort());
  for (const [region, value] of Object.entries<number>(got.by_region)) close(value, want.byRegion[region]!, region);
  assert.equal([got.yen.rows, got.yen.year, got.yen.state], [want.yen.rows, 'integer', 'character']);
  close(got.yen.fx_current_usd, want.yen.fx_current_usd, 'yen');
  assert.is(got.revised.rows, want.revised.rows, 'every row of the diff');
  assert.ok(want.revised.pages > 1);
  const kinds = { added: want.revised.added, removed: want.revised.removed, changed: want.revised.changed };
  assert.equal(got.revised.changes, Object.fromEntries(Object.entries(kinds).filter(([, n]) => n > 0)));
});

withR('R: the Parquet export is saved as the service sent it and read back where the arrow package is installed', async () => {
  const [reads, parquet] = await snippets('r');
  const engine = await run(RSCRIPT!, ['--vanilla', '-e', 'quit(status = if (requireNamespace("arrow", quietly = TRUE)) 0 else 1)']).then(
    () => true,
    () => false,
  );
  const { result, want } = await savingExport(() =>
    execute(RSCRIPT!, ['--vanilla'], `${reads}\n${parquet}\ncat(${JSON.stringify(MARK)}, "\\n", nrow(france), "\\n", sep = "")\n`),
  );
  if (engine) {
    assert.ok(result.ok, result.stderr);
    assert.is(Number(result.stdout.slice(result.stdout.indexOf(MARK) + MARK.length)), want.rows);
  } else {
    // Debian 12 packages no Parquet reader for R: the one line that needs it is the one that fails.
    console.log(
      'README R Parquet: the arrow package is not installed here, so arrow::read_parquet is checked to fail for that reason alone, and the saved file is read with DuckDB',
    );
    assert.not.ok(result.ok);
    assert.match(result.stderr, /there is no package called .arrow./);
  }
});

// README's time-series examples run as a reader copies them, each showing what its comment says.
readme('README: the time-series examples and their CLI line answer with an index, a CAGR, latest years and year columns', async () => {
  const text = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
  const section = text.slice(text.indexOf('#### Time series'), text.indexOf('### Releases and revisions'));
  const lines = [...section.matchAll(/^curl -s "\$BASE(\/v1\/aggregate\?[^"]+)"/gm)].map((m) => m[1]!);
  assert.is(lines.length, 4, 'index, cagr, latest, wide');
  const [index, cagr, latest, wide] = await Promise.all(lines.map((line) => service.get(line)));
  for (const [i, res] of [index, cagr, latest, wide].entries()) assert.is(res!.status, 200, `${lines[i]}: ${res!.text}`);
  assert.ok(index!.json.data.some((g: any) => g.values.ggr_sum_index > 0) && index!.json.data.every((g: any) => g.dimensions.year >= 2020));
  const rates = cagr!.json.data.map((g: any) => g.values.ggr_sum_cagr);
  assert.ok(rates.length === 10 && rates.every((r: number | null, i: number) => r !== null && (i === 0 || r <= rates[i - 1])));
  const years = new Set(latest!.json.data.map((g: any) => g.dimensions.year));
  const countries = latest!.json.data.map((g: any) => g.dimensions.country);
  assert.is(new Set(countries).size, countries.length, 'one year per country');
  assert.ok(years.size > 1, 'the latest years differ between countries');
  const header = wide!.text.split('\r\n')[0]!;
  assert.is(header, ['region', ...[2019, 2020, 2021, 2022, 2023, 2024].map((y) => `ggr_sum_${y}`), 'rows'].join(','));
  const cli = /^DQS_API_KEY=\$KEY npm run --silent query -- (aggregate .+)$/m.exec(section)?.[1];
  assert.ok(cli, 'README shows the CLI line');
  const res = await runQueryCli(cli!.split(' '), { DQS_API_KEY: service.key, DQS_URL: service.url });
  assert.is(res.code, 0, res.stderr);
  assert.match(res.stdout.toString(), /^region,ggr_sum_\d{4},/);
  assert.match(res.stdout.toString().split('\r\n')[0]!, /ggr_sum_index_\d{4}/);
});

readme.run();

const text = suite('README: what a fresh clone needs of it');

text('the pandas and R examples read whole results: no page of /v1/financials, no limit on an aggregate or a diff', async () => {
  const code = [...(await snippets('python')), ...(await snippets('r'))].join('\n');
  const urls = [...code.matchAll(/"(?:\{BASE\}|)(\/v1\/[^"]+)"/g)].map((m) => m[1]!);
  assert.ok(urls.some((u) => u.startsWith('/v1/revisions')) && urls.some((u) => u.startsWith('/v1/aggregate')), urls.join(' '));
  for (const url of urls) {
    assert.not.match(url, /^\/v1\/(financials|reference)\b/, `${url}: a page of at most 1,000 rows`);
    assert.not.match(url, /[?&]limit=/, `${url}: limit makes CSV a page`);
  }
});

text("links only files the repository holds; the service's address is set once", async () => {
  const readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
  for (const [, target] of readme.matchAll(/\]\(([^)]+)\)/g)) {
    assert.not.match(target!, /^[a-z]+:|^\.\.\//, `a link outside the repository: ${target}`);
    assert.ok(existsSync(path.join(ROOT, target!.split('#')[0]!)), `${target} exists`);
  }
  assert.not.match(readme, /\.\.\/shared|shared\/spec/);
  // The commands, their comments left out.
  const commands = [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)]
    .flatMap((m) => m[1]!.split('\n').map((line) => line.replace(/(^|\s)#.*$/, '')))
    .join('\n');
  assert.equal(commands.match(/127\.0\.0\.1:\d+/g), ['127.0.0.1:3000'], 'BASE is set once; every example uses it');
  assert.not.match(
    commands,
    /\bduckdb -c|import pyarrow|release=20\d\d-\d\d|from=20\d\d/,
    'no tool npm ci does not install, no release the clone does not have',
  );
});

text("what running the service and the examples write is ignored by git; the repository's own files are not", () => {
  const written = [
    'datasets/CURRENT',
    'datasets/2026-12/ggr.parquet',
    'var/keys.json',
    'downloads/ggr.parquet',
    'dist/main.js',
    'tmp/test-data/fixture',
    'bench/results/run.json',
  ];
  const kept = ['datasets/README.md', 'bench/baselines/2x-intel-xeon-processor.json', 'docs/api.md'];
  const result = spawnSync('git', ['check-ignore', '--no-index', ...written, ...kept], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(result.stdout.trim().split('\n'), written, `git check-ignore: ${result.stderr}`);
});

text.run();
