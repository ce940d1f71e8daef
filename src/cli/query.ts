import { once } from 'node:events';
import { tableFromIPC } from 'apache-arrow';
import cliProgress from 'cli-progress';
import { Command, InvalidArgumentError, Option } from 'commander';
import {
  type AggregateQuery,
  DataQueryClient,
  DataQueryError,
  DataQueryNetworkError,
  type Filters,
  type HistoryQuery,
  type Metric,
  type Page,
  type RetryEvent,
  type RevisionQuery,
  type WalkOptions,
} from 'data-query-client';
import { queryCliEnvironment } from '../config.ts';
import { AGGREGATE, HISTORY, REVISIONS } from '../query/options/endpoints.ts';
import { type DatasetDef, FINANCIAL_DATASETS, RELEASE_ID } from '../registry.ts';
import { mergeArrowPages } from './arrow-pages.ts';
import { addOptionFlags, flagOf, optionsQuery } from './option-flags.ts';
import { addWebhookCommands } from './webhook-commands.ts';

// The consumers' CLI, on top of the typed client. It is a program of its own, not
// the server, with settings of its own (DQS_API_KEY, DQS_URL), which src/config.ts,
// the one reader of the environment, hands it.

type Format = 'json' | 'csv' | 'arrow';

interface Run {
  readonly client: DataQueryClient;
  /** The pages of what is asked (rows or groups), in `format`. */
  readonly pages: (
    format: Format,
    walk: Pick<WalkOptions, 'limit' | 'cursor' | 'maxPages' | 'release' | 'asOf'>,
  ) => AsyncGenerator<Page<unknown>>;
  readonly format: Format;
  readonly all: boolean;
  readonly limit: number;
  readonly cursor: string | undefined;
  readonly release: string | undefined;
  readonly asOf: string | undefined;
}

const integer = (name: string) => (text: string) => {
  if (!/^\d+$/.test(text)) throw new InvalidArgumentError(`${name} must be a whole number`);
  return Number(text);
};

const collect =
  <T>(parse: (text: string) => T) =>
  (text: string, previous: T[] = []) => [...previous, parse(text)];

/** Rows, pages and the rate-limit budget on stderr; a line of its own for every wait. */
function progress() {
  const bar = new cliProgress.SingleBar(
    {
      format: '{rows} rows | {pages} pages | rate-limit budget left: {budget} | {status}',
      stream: process.stderr,
      noTTYOutput: true,
      notTTYSchedule: 1000,
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  const state = { rows: 0, pages: 0, budget: '?', status: 'fetching' };
  bar.start(0, 0, state);
  return {
    page(rows: number, page: Page<unknown>) {
      // Said once, on the first page: every page of a walk has the same filters.
      if (state.pages === 0) for (const warning of page.warnings ?? []) process.stderr.write(`warning: ${warning}\n`);
      state.rows += rows;
      state.pages += 1;
      state.budget = page.rateLimit.remaining === undefined ? '?' : String(page.rateLimit.remaining);
      state.status = page.nextCursor === undefined ? 'done' : 'fetching';
      bar.update(0, state);
    },
    retry(event: RetryEvent) {
      const seconds = Math.ceil(event.waitMs / 1000);
      const why =
        event.reason === 'rate-limited'
          ? 'rate limited (429): waiting as Retry-After asks'
          : event.reason === 'server-error'
            ? `server error ${event.status}: backing off`
            : 'network error: backing off';
      state.status = `${why}, ${seconds} s`;
      bar.update(0, state);
      process.stderr.write(`\n${why}, ${seconds} s\n`);
    },
    stop() {
      bar.stop();
    },
  };
}

async function write(text: string | Uint8Array): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

async function query(run: Run, bar: ReturnType<typeof progress>): Promise<string | undefined> {
  const walk = { limit: run.limit, cursor: run.cursor, maxPages: run.all ? Infinity : 1, release: run.release, asOf: run.asOf };
  let next: string | undefined;
  if (run.format === 'json') {
    // One JSON array whatever the number of pages, written as pages arrive.
    let first = true;
    await write('[');
    for await (const page of run.pages('json', walk) as AsyncGenerator<Page<{ data: unknown[] }>>) {
      for (const row of page.body.data) {
        await write(`${first ? '\n' : ',\n'}${JSON.stringify(row)}`);
        first = false;
      }
      bar.page(page.body.data.length, page);
      next = page.nextCursor;
    }
    await write(first ? ']\n' : '\n]\n');
  } else if (run.format === 'csv') {
    // Every page has its header row: the first page's is kept, the others' dropped.
    let first = true;
    for await (const page of run.pages('csv', walk) as AsyncGenerator<Page<string>>) {
      const body = first ? page.body : page.body.slice(page.body.indexOf('\n') + 1);
      await write(body);
      bar.page(Math.max(0, body.split('\n').filter(Boolean).length - (first ? 1 : 0)), page);
      first = false;
      next = page.nextCursor;
    }
  } else {
    const pages: Uint8Array[] = [];
    for await (const page of run.pages('arrow', walk) as AsyncGenerator<Page<Uint8Array>>) {
      pages.push(page.body);
      // Counted from the page's own record batches: an Arrow body has no rows to count as text.
      bar.page(tableFromIPC(page.body).numRows, page);
      next = page.nextCursor;
    }
    await write(mergeArrowPages(pages));
  }
  return next;
}

/** A filter option per dimension of `def`, `--period`, and the paging and format options every command shares. */
/** A --<dimension> option per dimension of `def` (repeatable) and --period. */
function addFilterOptions(command: Command, def: DatasetDef): Command {
  for (const dimension of def.dimensions) {
    const parse: (text: string) => string | number = dimension === 'year' ? integer('--year') : (text) => text;
    command.addOption(
      new Option(`${flagOf(dimension)} <value>`, `filter on ${dimension}; repeat for several values`).argParser(collect(parse)),
    );
  }
  return command.option('--period <from:to>', 'date range YYYY-MM-DD:YYYY-MM-DD');
}

function addQueryOptions(command: Command, def: DatasetDef, unit: string): Command {
  return addFilterOptions(command, def)
    .option('--all', 'walk every page (default: the first page only)')
    .addOption(new Option('--limit <n>', `${unit} per page, 1 to 1000`).argParser(integer('--limit')).default(1000))
    .addOption(new Option('--format <format>', 'output format').choices(['json', 'csv', 'arrow']).default('json'))
    .option('--cursor <cursor>', 'start from this cursor (printed when a walk stops early)')
    .addOption(
      new Option(
        '--release <YYYY-MM>',
        'read this published release instead of the current one (`query -- releases` lists them)',
      ).argParser(releaseId('--release')),
    )
    .option(
      '--as-of <date|instant>',
      'read the release the service was serving then: YYYY-MM-DD (the end of that UTC day) or an RFC 3339 instant; not with --release',
    );
}

const releaseId = (name: string) => (text: string) => {
  if (!RELEASE_ID.test(text)) throw new InvalidArgumentError(`${name} must be a release id like 2026-11`);
  return text;
};

function filtersOf(def: DatasetDef, options: Record<string, unknown>): Filters<Metric> {
  const filters: Record<string, unknown> = { period: options.period };
  for (const dimension of def.dimensions) filters[dimension] = options[new Option(flagOf(dimension)).attributeName()];
  return filters as Filters<Metric>;
}

function program(env: NodeJS.ProcessEnv): Command {
  const cli = new Command('query')
    .description('Query the data query service; rows go to stdout, progress to stderr')
    .addHelpText('after', '\nEnvironment: DQS_API_KEY (required, your sk_live_ key), DQS_URL (default http://127.0.0.1:3000).')
    .showHelpAfterError();
  const connect = (onRetry?: (event: RetryEvent) => void) => {
    const apiKey = env.DQS_API_KEY;
    if (!apiKey)
      throw new CliError('DQS_API_KEY is not set: export DQS_API_KEY=sk_live_… (ask the operator for an invite if you have no key)');
    return new DataQueryClient({ baseUrl: env.DQS_URL ?? 'http://127.0.0.1:3000', apiKey, onRetry });
  };
  const start = async (options: Record<string, unknown>, pages: (client: DataQueryClient) => Run['pages']) => {
    let bar: ReturnType<typeof progress> | undefined;
    // Before the bar starts: a missing key must not leave its timer running.
    const client = connect((event) => bar!.retry(event));
    bar = progress();
    try {
      const next = await query(
        {
          client,
          pages: pages(client),
          format: options.format as Format,
          all: options.all === true,
          limit: options.limit as number,
          cursor: options.cursor as string | undefined,
          release: options.release as string | undefined,
          asOf: options.asOf as string | undefined,
        },
        bar,
      );
      bar.stop();
      if (next) process.stderr.write(`More rows: add --all for every page, or --cursor ${next} for the next one\n`);
    } catch (err) {
      bar.stop();
      throw err;
    }
  };
  for (const def of FINANCIAL_DATASETS) {
    addQueryOptions(cli.command(def.name).description(def.description), def, 'rows').action((options: Record<string, unknown>) =>
      start(options, (client) => (format, walk) => {
        const [metric, filters] = [def.name as Metric, filtersOf(def, options)];
        return format === 'json'
          ? client.financialPages(metric, filters, walk)
          : format === 'csv'
            ? client.csv(metric, filters, walk)
            : client.arrow(metric, filters, walk);
      }),
    );
  }
  const aggregate = cli
    .command('aggregate')
    .description('Totals, averages, minima and maxima of a financial dataset, grouped (GET /v1/aggregate)');
  for (const def of FINANCIAL_DATASETS) {
    const command = aggregate.command(def.name).description(`Aggregate ${def.name}: ${def.metrics.join(', ')}`);
    addOptionFlags(addQueryOptions(command, def, 'groups'), AGGREGATE.options, def).action((options: Record<string, unknown>) =>
      start(options, (client) => (format, walk) => {
        const query = { ...filtersOf(def, options), ...optionsQuery(AGGREGATE.options, options) };
        return client.aggregatePages(def.name as Metric, query as AggregateQuery<Metric>, format, walk);
      }),
    );
  }
  /** Revisions and history name their releases with --from and --to: --release and --as-of mean nothing there. */
  const refuseReleaseFlags = (options: Record<string, unknown>, command: string) => {
    const given = options.release !== undefined ? '--release' : options.asOf !== undefined ? '--as-of' : undefined;
    if (given) throw new CliError(`${given} has no meaning for ${command}: name the releases with --from and --to`);
  };
  const revisions = cli.command('revisions').description('Rows that differ between two published releases (GET /v1/revisions)');
  for (const def of FINANCIAL_DATASETS) {
    const command = revisions.command(def.name).description(`Revised ${def.name} rows: added, removed or changed`);
    addOptionFlags(addQueryOptions(command, def, 'rows'), REVISIONS.options, def).action((options: Record<string, unknown>) => {
      refuseReleaseFlags(options, 'revisions');
      return start(options, (client) => (format, walk) => {
        const query = { ...filtersOf(def, options), ...optionsQuery(REVISIONS.options, options) };
        return client.revisionPages(def.name as Metric, query as RevisionQuery<Metric>, format, walk);
      });
    });
  }
  const history = cli.command('history').description('Each observation release after release (GET /v1/history)');
  for (const def of FINANCIAL_DATASETS) {
    const command = history.command(def.name).description(`The history of ${def.name} rows: changes, first values or every vintage`);
    addOptionFlags(addQueryOptions(command, def, 'rows'), HISTORY.options, def).action((options: Record<string, unknown>) => {
      refuseReleaseFlags(options, 'history');
      return start(options, (client) => (format, walk) => {
        const query = { ...filtersOf(def, options), ...optionsQuery(HISTORY.options, options) };
        return client.historyPages(def.name as Metric, query as HistoryQuery<Metric>, format, walk);
      });
    });
  }
  const exporter = cli
    .command('export')
    .description('Every matching row in one file (GET /v1/export): Parquet by default; bytes to stdout, progress to stderr');
  for (const def of FINANCIAL_DATASETS) {
    addFilterOptions(exporter.command(def.name).description(`Export ${def.name} rows`), def)
      .addOption(new Option('--format <format>', 'file format').choices(['parquet', 'csv', 'arrow', 'ndjson']).default('parquet'))
      .addOption(
        new Option('--release <YYYY-MM>', 'export this published release instead of the current one').argParser(releaseId('--release')),
      )
      .action(async (options: Record<string, unknown>) => {
        const client = connect();
        const stream = await client.export(def.name as Metric, filtersOf(def, options), {
          format: options.format as 'parquet',
          release: options.release as string | undefined,
        });
        const bar = new cliProgress.SingleBar(
          { format: '{bytes} written | {status}', stream: process.stderr, noTTYOutput: true, notTTYSchedule: 1000, hideCursor: true },
          cliProgress.Presets.shades_classic,
        );
        const state = { bytes: '0 B', status: 'downloading' };
        bar.start(0, 0, state);
        let bytes = 0;
        try {
          for await (const chunk of stream) {
            bytes += (chunk as Buffer).length;
            state.bytes = bytes < 1 << 20 ? `${bytes.toLocaleString('en-US')} B` : `${(bytes / (1 << 20)).toFixed(1)} MB`;
            bar.update(0, state);
            await write(chunk as Buffer);
          }
          state.status = 'done';
          bar.update(0, state);
        } finally {
          bar.stop();
        }
      });
  }
  const facets = cli
    .command('facets')
    .description("Each dimension's values and their row counts under the filters, as JSON (GET /v1/facets)");
  for (const def of FINANCIAL_DATASETS) {
    addFilterOptions(facets.command(def.name).description(`Facets of ${def.name}: every filter applied but the dimension's own`), def)
      .addOption(
        new Option('--release <YYYY-MM>', 'count this published release instead of the current one').argParser(releaseId('--release')),
      )
      .action(async (options: Record<string, unknown>) => {
        const answer = await connect().facets(def.name as Metric, filtersOf(def, options), {
          release: options.release as string | undefined,
        });
        await write(`${JSON.stringify(answer, null, 2)}\n`);
      });
  }
  cli
    .command('releases')
    .description('The published releases, newest first, as JSON (GET /v1/releases)')
    .action(async () => {
      await write(`${JSON.stringify(await connect().releases(), null, 2)}\n`);
    });
  addWebhookCommands(cli, () => connect(), write);
  cli
    .command('usage')
    .description(
      "Where the key stands, every limit that can refuse it, as JSON (GET /v1/usage); with --daily, its usage per UTC day (GET /v1/usage/daily). Counts against no limit but the key's usage guard",
    )
    .option('--daily', 'the usage per UTC day instead, by default the last 7 days')
    .option('--start <YYYY-MM-DD>', 'with --daily: the first day')
    .option('--end <YYYY-MM-DD>', 'with --daily: the last day (default: today)')
    .action(async ({ daily, start, end }: { daily?: boolean; start?: string; end?: string }) => {
      if (!daily && (start !== undefined || end !== undefined)) throw new CliError('--start and --end go with --daily');
      const answer = daily ? await connect().usageDaily({ start, end }) : await connect().usage();
      await write(`${JSON.stringify(answer, null, 2)}\n`);
    });
  return cli;
}

class CliError extends Error {}

function explain(err: unknown): string {
  if (err instanceof DataQueryError) {
    const fields = Object.entries(err.details?.fieldErrors ?? {}).map(([field, messages]) => `\n  ${field}: ${messages.join('; ')}`);
    // A refused cursor is never worth resuming from: the walk starts again without one (docs/api.md "Pagination").
    const resume =
      err.error === 'Invalid pagination cursor'
        ? '\nrepeat the command without --cursor to start again from the first page'
        : err.resumeCursor
          ? `\nresume with: --cursor ${err.resumeCursor}`
          : '';
    return `error ${err.status}: ${err.error}${fields.join('')}${err.requestId ? `\n(request id ${err.requestId})` : ''}${resume}`;
  }
  if (err instanceof DataQueryNetworkError)
    return `error: ${err.message}; is DQS_URL right and the service up?${err.resumeCursor ? `\nresume with: --cursor ${err.resumeCursor}` : ''}`;
  return `error: ${(err as Error).message}`;
}

try {
  await program(queryCliEnvironment()).parseAsync(process.argv);
} catch (err) {
  process.stderr.write(`${explain(err)}\n`);
  process.exitCode = err instanceof CliError ? 2 : 1;
}
