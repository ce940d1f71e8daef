import path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { loadConfig } from '../src/config.ts';
import { readManifest } from '../src/releases/manifest.ts';
import { diffReleases, formatDiff } from './diff.ts';
import { generateRelease, MAX_SCALE } from './generate.ts';
import { DropRefused, loadDrop } from './load.ts';
import { progressBar } from './progress.ts';
import { formatList, formatPrune, listReleases, pruneReleases, removeAbandoned, rollback } from './releases.ts';

const integer = (raw: string) => {
  if (!/^\d+$/.test(raw)) throw new InvalidArgumentError('expected a non-negative integer');
  return Number(raw);
};
const scale = (raw: string) => {
  const value = Number(raw);
  if (!(value > 0 && value <= MAX_SCALE)) throw new InvalidArgumentError(`expected a number greater than 0 and at most ${MAX_SCALE}`);
  return value;
};
const share = (raw: string) => {
  const value = Number(raw);
  if (!(value >= 0)) throw new InvalidArgumentError('expected a share such as 0.25 (25%)');
  return value;
};
const currentMonth = () => new Date().toISOString().slice(0, 7);
/** DATA_DIR as the server reads it (src/config.ts), unless --data-dir says otherwise. */
const dataDirOption = '--data-dir <dir>';
const dataDir = (opts: { dataDir?: string }) => (opts.dataDir ? path.resolve(opts.dataDir) : loadConfig().DATA_DIR);
/** Each step on stderr with the time it started, and, once done, how long it took: a long load shows where it is and where its time went. */
const started = Date.now();
const step = (text: string, seconds?: number) =>
  console.error(
    `[${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s] ${seconds === undefined ? text : `${text}: done in ${seconds.toFixed(1)} s`}`,
  );

const program = new Command('etl')
  .description('Build and inspect monthly data releases')
  // Every command on a DATA_DIR first clears what killed commands left there.
  .hook('preAction', async (_program, command) => {
    if (!command.options.some((option) => option.long === '--data-dir')) return;
    const target = dataDir(command.opts());
    for (const entry of await removeAbandoned(target))
      step(`removed ${path.join(target, entry)}, left by an etl command that no longer runs`);
  });

program
  .command('generate')
  .description('Write a synthetic release (one Parquet file per dataset + manifest.json) into a new folder')
  .requiredOption('--out <dir>', 'folder to create; its name is the release id when it looks like 2026-11')
  .option('--seed <n>', 'seed of the generator: the same seed gives the same rows', integer, 1)
  .option(
    '--scale <x>',
    'ggr/turnover rows as a multiple of the ~940,000 at 1: below 1 keeps that fraction, above 1 adds provinces',
    scale,
    1,
  )
  .option('--release <id>', 'release id written to the manifest (default: the folder name, else this month)')
  .action(async (opts: { out: string; seed: number; scale: number; release?: string }) => {
    const name = path.basename(path.resolve(opts.out));
    const release = opts.release ?? (/^\d{4}-\d{2}$/.test(name) ? name : currentMonth());
    const bar = progressBar('ggr+turnover');
    const onStep = (step: string) => {
      bar.stop();
      console.error(step);
    };
    const manifest = await generateRelease({ ...opts, release, onProgress: bar.update, onStep }).finally(bar.stop);
    for (const [dataset, entry] of Object.entries(manifest.datasets)) {
      console.log(`${dataset.padEnd(18)} ${String(entry.rows).padStart(9)} rows  ${entry.file}`);
    }
    console.log(`release ${manifest.release} written to ${path.resolve(opts.out)}`);
  });

program
  .command('load')
  .description('Check a folder of Parquet files (one per dataset) and publish it as a release: nothing changes unless every check passes')
  .argument(
    '<dir>',
    "the month's folder: ggr.parquet, turnover.parquet, fx.parquet, country.parquet, country_reference.parquet (datasets left out are carried over)",
  )
  .option('--release <id>', 'release id, YYYY-MM (default: this month)')
  .option('--force', 'publish even when a row count moved more than --max-row-change', false)
  .option('--max-row-change <share>', "largest share a dataset's row count may move against the current release", share, 0.25)
  .option('--min-year <year>', 'earliest year a row may have', integer, 1990)
  .option('--max-year <year>', 'latest year a row may have', integer, 2100)
  .option(dataDirOption, 'DATA_DIR to publish into (default: DATA_DIR of the environment, else ./datasets)')
  .action(
    async (
      dir: string,
      opts: { release?: string; force: boolean; maxRowChange: number; minYear: number; maxYear: number; dataDir?: string },
    ) => {
      const target = dataDir(opts);
      const release = opts.release ?? currentMonth();
      step(`loading ${path.resolve(dir)} as release ${release} into ${target}`);
      try {
        const config = loadConfig();
        const manifest = await loadDrop({
          ...opts,
          drop: dir,
          dataDir: target,
          release,
          memoryLimit: config.ETL_MEMORY_LIMIT,
          tempDir: config.ETL_TEMP_DIR,
          onStep: step,
        });
        for (const [dataset, entry] of Object.entries(manifest.datasets)) {
          console.log(
            `${dataset.padEnd(18)} ${String(entry.rows).padStart(9)} rows  ${entry.carried_from ? `carried over from ${entry.carried_from}` : 'new'}`,
          );
        }
        console.log(`release ${release} published; ${path.join(target, 'CURRENT')} now names it (running servers switch within 2 s)`);
      } catch (err) {
        if (!(err instanceof DropRefused)) throw err;
        console.error(err.message);
        process.exit(2);
      }
    },
  );

program
  .command('list')
  .description('The releases of DATA_DIR; * marks the one servers serve')
  .option(dataDirOption, 'DATA_DIR to read (default: DATA_DIR of the environment, else ./datasets)')
  .action(async (opts: { dataDir?: string }) => {
    console.log(formatList(await listReleases(dataDir(opts))));
  });

program
  .command('rollback')
  .description('Point DATA_DIR back at an earlier release (default: the one before the current)')
  .argument('[release]', 'release id to serve')
  .option(dataDirOption, 'DATA_DIR to change (default: DATA_DIR of the environment, else ./datasets)')
  .action(async (release: string | undefined, opts: { dataDir?: string }) => {
    const [from, to] = await rollback(dataDir(opts), release);
    console.log(`current release: ${from ?? '(none)'} → ${to}`);
  });

program
  .command('prune')
  .description('Remove old releases from disk, keeping the N newest up to the current one; never the current one or a newer one')
  // Checked in the action, not by a commander parser, so that every bad --keep exits 2 with the fix.
  .option('--keep <n>', 'releases to keep, the current one included: a whole number, at least 1 (required)')
  .option('--dry-run', 'print what would be removed, remove nothing', false)
  .option(dataDirOption, 'DATA_DIR to prune (default: DATA_DIR of the environment, else ./datasets)')
  .action(async (opts: { keep?: string; dryRun: boolean; dataDir?: string }) => {
    if (opts.keep === undefined || !/^\d+$/.test(opts.keep) || Number(opts.keep) < 1) {
      const got = opts.keep === undefined ? 'it is missing' : `got ${JSON.stringify(opts.keep)}`;
      console.error(
        `etl: --keep must be a whole number of at least 1 (${got}); the current release counts as one, so \`prune --keep 1\` keeps only the current release (and any newer one)`,
      );
      process.exit(2);
    }
    const keep = Number(opts.keep);
    console.log(formatPrune(await pruneReleases(dataDir(opts), keep, { dryRun: opts.dryRun }), keep, opts.dryRun));
  });

program
  .command('diff')
  .description('Rows added, removed and changed per dataset between two releases, with the largest value changes')
  .argument('<a>', 'the older release id')
  .argument('<b>', 'the newer release id')
  .option('--json', 'print JSON instead of a table', false)
  .option('--top <n>', 'largest changes listed per dataset', integer, 5)
  .option(dataDirOption, 'DATA_DIR to read (default: DATA_DIR of the environment, else ./datasets)')
  .action(async (a: string, b: string, opts: { json: boolean; top: number; dataDir?: string }) => {
    const root = dataDir(opts);
    const open = async (id: string) => ({ dir: path.join(root, id), manifest: await readManifest(path.join(root, id)) });
    const config = loadConfig();
    const diff = await diffReleases(await open(a), await open(b), opts.top, {
      memoryLimit: config.ETL_MEMORY_LIMIT,
      tempDir: config.ETL_TEMP_DIR,
    });
    console.log(opts.json ? JSON.stringify(diff, null, 2) : formatDiff(diff));
  });

await program.parseAsync().catch((err: Error) => {
  console.error(`etl: ${err.message}`);
  process.exit(1);
});
