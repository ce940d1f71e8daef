import path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { generateRelease, MAX_SCALE } from './generate.ts';
import { progressBar } from './progress.ts';

const integer = (raw: string) => {
  if (!/^\d+$/.test(raw)) throw new InvalidArgumentError('expected a non-negative integer');
  return Number(raw);
};
const scale = (raw: string) => {
  const value = Number(raw);
  if (!(value > 0 && value <= MAX_SCALE)) throw new InvalidArgumentError(`expected a number greater than 0 and at most ${MAX_SCALE}`);
  return value;
};
const currentMonth = () => new Date().toISOString().slice(0, 7);

const program = new Command('etl').description('Build and inspect monthly data releases');

program
  .command('generate')
  .description('Write a synthetic release (one Parquet file per dataset + manifest.json) into a new folder')
  .requiredOption('--out <dir>', 'folder to create; its name is the release id when it looks like 2026-11')
  .option('--seed <n>', 'seed of the generator: the same seed gives the same rows', integer, 1)
  .option('--scale <x>', 'ggr/turnover rows as a multiple of the ~940,000 at 1: below 1 keeps that fraction, above 1 adds provinces', scale, 1)
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

await program.parseAsync().catch((err: Error) => {
  console.error(`etl: ${err.message}`);
  process.exit(1);
});
