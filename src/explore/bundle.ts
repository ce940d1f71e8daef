import path from 'node:path';

// The Explore page's scripts and styles, bundled by esbuild from src/explore/web/ and
// npm packages (uPlot): nothing is fetched from a CDN. Names carry a content hash, so
// the server may let browsers keep them for a year.

export interface Asset {
  readonly type: string;
  readonly body: Uint8Array;
}

export interface Bundle {
  /** Hashed file name (no folder) to its content. */
  readonly files: ReadonlyMap<string, Asset>;
  /** The entry script's and stylesheet's hashed names, which the HTML links. */
  readonly script: string;
  readonly style: string;
}

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

/** Bundles the page in memory (minified, hashed names); esbuild is imported only here, so a built server never loads it. */
export async function bundleExplore(): Promise<Bundle> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [path.join(import.meta.dirname, 'web', 'main.ts')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    entryNames: 'explore-[hash]',
    // Nothing is written (write: false); esbuild still wants a folder to name its outputs in.
    outdir: 'assets',
    write: false,
    logLevel: 'silent',
  });
  const files = new Map<string, Asset>();
  for (const out of result.outputFiles) {
    const name = path.basename(out.path);
    files.set(name, { type: TYPES[path.extname(name)] ?? 'application/octet-stream', body: out.contents });
  }
  const names = [...files.keys()];
  const script = names.find((n) => n.endsWith('.js'));
  const style = names.find((n) => n.endsWith('.css'));
  if (!script || !style) throw new Error(`explore bundle: expected one .js and one .css, got ${names.join(', ')}`);
  return { files, script, style };
}
