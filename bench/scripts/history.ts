import path from 'node:path';
import { parseArgs } from 'node:util';
import { startServer } from '../../tools/service-process.ts';
import { figureRow, line, progress, TABLE_HEADER } from '../runner/report.ts';
import { asOfFigures, HISTORY_HEADER, HISTORY_SERVER, historyFigures, historyReleases, historyRows } from '../scenarios/history.ts';

// `npx tsx bench/scripts/history.ts [--root CHECKOUT]`: the history scenario of `npm run bench`
// alone (bench/scenarios/history.ts), the as_of figures timed as a full run times them;
// --root runs another checkout's server (the code before a change) on the same releases.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const WORK = path.join(ROOT, 'tmp', 'bench');
const { values: args } = parseArgs({ options: { root: { type: 'string' } } });
const dataDir = await historyReleases(WORK, progress);
const server = await startServer(
  { DATA_DIR: dataDir, STATE_DIR: path.join(WORK, 'state-history'), ...HISTORY_SERVER },
  path.join(WORK, 'logs', 'history.log'),
  args.root && path.resolve(args.root),
);
try {
  const figures = await historyFigures(server, dataDir, WORK, progress);
  line(`\n${HISTORY_HEADER}`);
  for (const row of historyRows(figures)) line(row);
  line(`\n${TABLE_HEADER.join('\n')}`);
  for (const f of await asOfFigures(server, dataDir, { rounds: 4, seconds: 2, warmup: 200 }, (text) => progress(text, false)))
    line(figureRow(f));
} finally {
  await server.stop();
}
