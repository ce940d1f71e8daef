import path from 'node:path';
import { parseArgs } from 'node:util';
import { WHOLE_DIFF_HEADER, wholeDiffFigures, wholeDiffRow } from '../scenarios/whole-diff.ts';

// `npx tsx bench/scripts/whole-diff.ts [--root CHECKOUT]`: the whole-diff scenario of
// `npm run bench` alone (bench/scenarios/whole-diff.ts); --root runs another checkout's
// server (the code before a change) on the same releases.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const { values: args } = parseArgs({ options: { root: { type: 'string' } } });
const line = (text: string) => process.stderr.write(`${text}\n`);
const figures = await wholeDiffFigures(
  path.join(ROOT, 'tmp', 'bench'),
  (text) => line(`  … ${text}`),
  args.root && path.resolve(args.root),
);
line(WHOLE_DIFF_HEADER);
for (const f of figures) line(wholeDiffRow(f, figures));
