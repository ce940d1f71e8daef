import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const SOURCE = path.resolve(import.meta.dirname, '../../clients/python');

/** Debian's python3, whose setuptools, wheel and pip build the wheel offline (the python3 on PATH may be another). */
export const PYTHON = '/usr/bin/python3';

/**
 * Builds clients/python as `dqs_client-<version>-py3-none-any.whl` in `outDir` and
 * returns its path: pip wheel with no index and no build isolation, so setuptools and
 * wheel are Debian's and nothing is downloaded. The version is written into a copy of
 * the source (src/dqs_client/_version.py), never into the checkout. A fixed
 * SOURCE_DATE_EPOCH makes the same source and version the same bytes, so the served
 * file's ETag changes only with its content.
 */
export async function buildPythonClient(version: string, outDir: string): Promise<string> {
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'dqs-python-client-'));
  try {
    const source = path.join(work, 'source');
    await fs.cp(SOURCE, source, { recursive: true });
    await fs.writeFile(path.join(source, 'src/dqs_client/_version.py'), `__version__ = ${JSON.stringify(version)}\n`);
    const wheels = path.join(work, 'wheels');
    await promisify(execFile)(
      PYTHON,
      [
        '-m',
        'pip',
        'wheel',
        '--no-index',
        '--no-build-isolation',
        '--no-deps',
        '--disable-pip-version-check',
        '--wheel-dir',
        wheels,
        source,
      ],
      { env: { ...process.env, SOURCE_DATE_EPOCH: '315532800', PYTHONDONTWRITEBYTECODE: '1' } },
    );
    const [wheel, ...others] = await fs.readdir(wheels);
    if (wheel === undefined || others.length > 0) throw new Error(`pip wheel made ${[wheel, ...others].join(', ') || 'no file'}`);
    await fs.mkdir(outDir, { recursive: true });
    const built = path.join(outDir, wheel);
    await fs.copyFile(path.join(wheels, wheel), built);
    return built;
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}
