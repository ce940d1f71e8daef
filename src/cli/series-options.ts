import { type Command, Option } from 'commander';
import { SHAPES } from '../query/series-plan.ts';

// `aggregate`'s time-series flags (docs/api.md "Time series"), kept apart so that the
// CLI's main file stays under 400 lines. The server checks the values and names a
// conflict, so they are passed on as typed.

export function addSeriesOptions(command: Command): Command {
  return command
    .option('--index <year>', 'add <key>_index: 100 × each sum ÷ the same group in this year (needs --group-by year)')
    .option(
      '--cagr <from:to>',
      'add <key>_from, _to and _cagr (a fraction): compound annual growth between two years (needs year out of --group-by)',
    )
    .option('--latest <n>', "keep each group's latest n years with rows, 1 to 50 (needs --group-by year)")
    .addOption(
      new Option('--shape <shape>', 'wide: one row per group, each key as <key>_<year> columns (needs --group-by year)').choices([
        ...SHAPES,
      ]),
    );
}

/** The flags as the client's query takes them. */
export const seriesQuery = (options: Record<string, unknown>) => ({
  index: options.index,
  cagr: options.cagr,
  latest: options.latest,
  shape: options.shape,
});
