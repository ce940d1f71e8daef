import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { underCpuLoad } from './helpers/cpu-load.ts';

// Installing the service must never phone home. swagger-ui-dist
// pulls in @scarf/scarf, whose postinstall reports installs unless the root
// package.json opts out; this runs scarf's own decision, as `npm ci` runs it (npm sets
// INIT_CWD to the project), and requires its refusal. It runs under CPU load: without
// scarfSettings.skipTraversal, the decision first ran `npm ls` under a fixed 3 s
// timeout, which a busy machine exceeded, and failed on that instead.

const ROOT = path.resolve(import.meta.dirname, '..');

test("@scarf/scarf's postinstall refuses to report, on a busy machine too: package.json's scarfSettings", async () => {
  const pkg = JSON.parse(await fs.readFile(path.join(ROOT, 'package.json'), 'utf8'));
  assert.equal(pkg.scarfSettings, { enabled: false, skipTraversal: true });
  const script = `require('@scarf/scarf/report.js').reportPostInstall().then(() => console.log('reported'), (err) => console.log('refused: ' + err.message))`;
  const { stdout } = await underCpuLoad(() =>
    promisify(execFile)(process.execPath, ['-e', script], {
      cwd: ROOT,
      env: { ...process.env, INIT_CWD: ROOT, SCARF_ANALYTICS: '', DO_NOT_TRACK: '' },
      timeout: 60_000,
    }),
  );
  assert.is(stdout.trim(), 'refused: User has opted out');
});

test("npm ci warns of no install script: esbuild's runs, @scarf/scarf's is denied (package.json allowScripts)", async () => {
  const pkg = JSON.parse(await fs.readFile(path.join(ROOT, 'package.json'), 'utf8'));
  assert.equal(pkg.allowScripts, { esbuild: true, '@scarf/scarf': false });
  // What npm ci lists at its end as "not yet covered by allowScripts": nothing.
  const { stdout } = await promisify(execFile)('npm', ['install-scripts', 'ls'], { cwd: ROOT, timeout: 60_000 });
  assert.match(stdout, /^No packages with unreviewed install scripts\.?$/m);
});

test.run();
