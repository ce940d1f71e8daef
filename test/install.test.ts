import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

// Installing the service must never phone home. swagger-ui-dist
// pulls in @scarf/scarf, whose postinstall reports installs unless the root
// package.json opts out; this runs scarf's own decision, as `npm ci` runs it (npm sets
// INIT_CWD to the project), and requires its refusal.

const ROOT = path.resolve(import.meta.dirname, '..');

test("@scarf/scarf's postinstall refuses to report: package.json's scarfSettings.enabled = false", async () => {
  const script = `require('@scarf/scarf/report.js').reportPostInstall().then(() => console.log('reported'), (err) => console.log('refused: ' + err.message))`;
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], {
    cwd: ROOT,
    env: { ...process.env, INIT_CWD: ROOT, SCARF_ANALYTICS: '', DO_NOT_TRACK: '' },
    timeout: 60_000,
  });
  assert.is(stdout.trim(), 'refused: Scarf has been disabled via a package.json in the dependency chain.');
});

test("npm ci warns of no install script: esbuild's runs, @scarf/scarf's is denied (package.json allowScripts)", async () => {
  const pkg = JSON.parse(await fs.readFile(path.join(ROOT, 'package.json'), 'utf8'));
  assert.equal(pkg.allowScripts, { esbuild: true, '@scarf/scarf': false });
  // What npm ci lists at its end as "not yet covered by allowScripts": nothing.
  const { stdout } = await promisify(execFile)('npm', ['install-scripts', 'ls'], { cwd: ROOT, timeout: 60_000 });
  assert.match(stdout, /^No packages with unreviewed install scripts\.?$/m);
});

test.run();
