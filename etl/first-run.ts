import path from 'node:path';
import { DEFAULT_DATA_DIR, loadConfigOrExit } from '../src/config.ts';
import { currentRelease } from '../src/releases/on-disk.ts';
import { generateRelease } from './generate.ts';

// `npm start`'s prestart step: a fresh clone with the default DATA_DIR gets the
// synthetic sample, so it serves something at once. A DATA_DIR an operator chose is
// never filled with invented figures; the server refuses to start on it instead.

const config = loadConfigOrExit();
if (config.DATA_DIR === path.resolve(DEFAULT_DATA_DIR) && !(await currentRelease(config.DATA_DIR))) {
  const id = new Date().toISOString().slice(0, 7);
  console.error(
    `${config.DATA_DIR} holds no release: generating the synthetic sample ${id} (about 10 s; its manifest says "synthetic": true)`,
  );
  await generateRelease({ out: path.join(config.DATA_DIR, id), seed: 1, scale: 1, release: id });
}
