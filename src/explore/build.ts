import fs from 'node:fs/promises';
import path from 'node:path';
import { MANIFEST } from './assets.ts';
import { bundleExplore } from './bundle.ts';

// `npm run build`'s step for the Explore page: the bundle written as hashed files to
// dist/explore/assets/, with a manifest naming the entry files, which dist/explore/
// assets.ts reads at start instead of bundling.

const out = path.resolve(import.meta.dirname, '../../dist/explore/assets');
const bundle = await bundleExplore();
await fs.rm(out, { recursive: true, force: true });
await fs.mkdir(out, { recursive: true });
for (const [name, asset] of bundle.files) await fs.writeFile(path.join(out, name), asset.body);
await fs.writeFile(path.join(out, MANIFEST), `${JSON.stringify({ script: bundle.script, style: bundle.style })}\n`);
const sizes = [...bundle.files].map(([name, asset]) => `${name} ${asset.body.length} B`).join(', ');
process.stdout.write(`explore: ${sizes}\n`);
