import fs from 'node:fs';
import path from 'node:path';
import { type Asset, type Bundle, bundleExplore } from './bundle.ts';

/** The file of dist/explore/assets/ that names the entry files (`npm run build` writes it). */
export const MANIFEST = 'manifest.json';

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

/**
 * The page's bundle: what `npm run build` wrote beside this module (dist/explore/assets/,
 * when the built server runs), or else, running from src/ through tsx (tests, a dev
 * checkout), bundled now from the source, so it is never older than the code.
 */
export async function loadBundle(): Promise<Bundle> {
  const dir = path.join(import.meta.dirname, 'assets');
  if (!fs.existsSync(path.join(dir, MANIFEST))) return bundleExplore();
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, MANIFEST), 'utf8')) as { script: string; style: string };
  const files = new Map<string, Asset>();
  for (const name of fs.readdirSync(dir)) {
    const type = TYPES[path.extname(name)];
    if (type) files.set(name, { type, body: fs.readFileSync(path.join(dir, name)) });
  }
  return { files, script: manifest.script, style: manifest.style };
}
