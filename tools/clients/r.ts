import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const SOURCE = path.resolve(import.meta.dirname, '../../clients/r');

/**
 * Builds clients/r as `dqs_<version>.tar.gz` in `outDir` with `R CMD build` and
 * returns its path. The version is written into a copy's DESCRIPTION, never into the
 * checkout; the package has no vignettes and its one help page needs no LaTeX, so
 * the build needs R alone (Debian's r-base-core, with r-cran-httr and r-cran-jsonlite
 * for the check).
 */
export async function buildRClient(version: string, outDir: string): Promise<string> {
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'dqs-r-client-'));
  try {
    const source = path.join(work, 'dqs');
    await fs.cp(SOURCE, source, { recursive: true });
    const description = path.join(source, 'DESCRIPTION');
    await fs.writeFile(description, (await fs.readFile(description, 'utf8')).replace(/^Version: .*$/m, `Version: ${version}`));
    await promisify(execFile)('R', ['CMD', 'build', '--no-manual', source], { cwd: work });
    const name = `dqs_${version}.tar.gz`;
    await fs.mkdir(outDir, { recursive: true });
    const built = path.join(outDir, name);
    await fs.copyFile(path.join(work, name), built);
    return built;
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}
