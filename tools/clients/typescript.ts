import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { rollup } from 'rollup';
import { dts } from 'rollup-plugin-dts';

// The npm package data-query-client (clients/typescript): its source bundled to one ES
// module by esbuild, its declarations to one .d.ts by rollup-plugin-dts, which inlines
// the types it derives from the service's registry and option lists (valibot's
// included), so the package has no dependency at all, not even for its types.

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const PACKAGE = path.join(ROOT, 'clients/typescript');
const ENTRY = path.join(PACKAGE, 'src/index.ts');

/**
 * The package as npm would publish it, in `dir`: dist/index.js, dist/index.d.ts, and
 * package.json stamped with `version` (clients/typescript/package.json has none, so the
 * service's package.json stays its one source).
 */
export async function stageTypeScriptClient(version: string, dir: string): Promise<void> {
  const dist = path.join(dir, 'dist');
  await build({
    entryPoints: [ENTRY],
    outfile: path.join(dist, 'index.js'),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
  const types = await rollup({
    input: ENTRY,
    external: [/^node:/],
    plugins: [dts({ includeExternal: ['valibot'], tsconfig: path.join(ROOT, 'tsconfig.json') })],
  });
  await types.write({ file: path.join(dist, 'index.d.ts'), format: 'es' });
  await types.close();
  const manifest = JSON.parse(await fs.readFile(path.join(PACKAGE, 'package.json'), 'utf8')) as Record<string, unknown>;
  await fs.writeFile(path.join(dir, 'package.json'), `${JSON.stringify({ name: manifest.name, version, ...manifest }, null, 2)}\n`);
  await fs.copyFile(path.join(PACKAGE, 'README.md'), path.join(dir, 'README.md'));
}

/** Builds the package and packs it into `outDir` as data-query-client-<version>.tgz; returns the tarball's path. */
export async function buildTypeScriptClient(version: string, outDir: string): Promise<string> {
  await fs.mkdir(outDir, { recursive: true });
  const stage = await fs.mkdtemp(path.join(os.tmpdir(), 'data-query-client-'));
  try {
    await stageTypeScriptClient(version, stage);
    // --ignore-scripts: the staged package has none, and packing must not run the repository's.
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', outDir], { cwd: stage });
    const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
    return path.join(outDir, filename);
  } finally {
    await fs.rm(stage, { recursive: true, force: true });
  }
}
