import fs from 'node:fs';

// Debian's Chromium, as the browser tests and the bench drive it through playwright-core:
// headless, with nothing that would reach the network or another host.

export const CHROMIUM = '/usr/bin/chromium';

export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Why browser work is skipped here, or undefined when Chromium is installed. */
export const CHROMIUM_MISSING = fs.existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is absent (Debian: apt-get install -y chromium)`;
