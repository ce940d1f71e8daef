import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type LoadOptions, loadDrop } from '../etl/load.ts';
import { rollback } from '../etl/releases.ts';
import { readPointer, writePointer } from '../src/releases/on-disk.ts';
import { LOG_FILE, parseLog, readPublicationLog, servedAfter, servedAt } from '../src/releases/publication-log.ts';
import { FIXTURE_RELEASE, fixtureDataDir, startTestService, tempDir } from './helpers/service.ts';

// The publication log (DATA_DIR/publications.jsonl): one line per switch of the release
// served, written by etl load and etl rollback once the switch has happened; never half
// a line, and a DATA_DIR published before it existed gets its history once.

const ROOT = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);
const etl = (...args: string[]) => run('node', ['--import', 'tsx', 'etl/cli.ts', ...args], { cwd: ROOT });

const created: string[] = [];
async function scratch(prefix: string): Promise<string> {
  const dir = await tempDir(prefix);
  created.push(dir);
  return dir;
}

const at = (iso: string) => () => new Date(iso);
const options = (drop: string, dataDir: string, release: string, now: string): LoadOptions => ({
  drop,
  dataDir,
  release,
  force: true,
  minYear: 1990,
  maxYear: 2100,
  maxRowChange: 0.25,
  now: at(now),
});

const fileLines = async (dataDir: string) => {
  const text = await fs.readFile(path.join(dataDir, LOG_FILE), 'utf8');
  return { text, lines: parseLog(text, LOG_FILE) };
};
const brief = (lines: readonly { seq: number; type: string; release: string; previous: string | null }[]) =>
  lines.map((l) => `${l.seq} ${l.type.slice(8)} ${l.release} ${l.previous ?? '-'}`);

const log = suite('publication log');
log.after(async () => {
  await Promise.all(created.splice(0).map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

log(
  'loads publish, a rollback withdraws each release served since, a later load leaves them withdrawn; /v1/releases says when',
  async () => {
    const drop = path.join(await fixtureDataDir(), FIXTURE_RELEASE);
    const dataDir = await scratch('dqs-log-');
    await loadDrop(options(drop, dataDir, '2026-01', '2026-01-05T10:00:00.000Z'));
    await loadDrop(options(drop, dataDir, '2026-02', '2026-02-05T10:00:00.000Z'));
    await loadDrop(options(drop, dataDir, '2026-03', '2026-03-05T10:00:00.000Z'));
    await rollback(dataDir, '2026-01', at('2026-03-06T09:00:00.000Z'));
    await loadDrop(options(drop, dataDir, '2026-04', '2026-04-05T10:00:00.000Z'));
    const { text, lines } = await fileLines(dataDir);
    assert.ok(text.endsWith('\n'));
    assert.equal(brief(lines), [
      '1 published 2026-01 -',
      '2 published 2026-02 2026-01',
      '3 published 2026-03 2026-02',
      '4 withdrawn 2026-03 2026-02',
      '5 withdrawn 2026-02 2026-01',
      '6 published 2026-04 2026-01',
    ]);
    assert.equal(
      lines.map((l) => l.at),
      [
        '2026-01-05T10:00:00.000Z',
        '2026-02-05T10:00:00.000Z',
        '2026-03-05T10:00:00.000Z',
        '2026-03-06T09:00:00.000Z',
        '2026-03-06T09:00:00.000Z',
        '2026-04-05T10:00:00.000Z',
      ],
    );
    // Served at an instant: the state after the last line at or before it.
    assert.is(servedAt(lines, Date.parse('2026-01-31T23:59:59.999Z')), '2026-01');
    assert.is(servedAt(lines, Date.parse('2026-03-05T12:00:00Z')), '2026-03');
    assert.is(servedAt(lines, Date.parse('2026-03-06T09:00:00Z')), '2026-01', 'a rollback counts');
    assert.is(servedAt(lines, Date.parse('2026-01-01T00:00:00Z')), null);

    const service = await startTestService({ dataDir });
    try {
      const answer = (await service.get('/v1/releases')).json;
      assert.equal(
        answer.releases.map((r: { id: string; published_at: string }) => [r.id, r.published_at]),
        [
          ['2026-04', '2026-04-05T10:00:00.000Z'],
          ['2026-01', '2026-01-05T10:00:00.000Z'],
        ],
      );
      assert.equal(answer.withdrawn, [
        { id: '2026-03', published_at: '2026-03-05T10:00:00.000Z', withdrawn_at: '2026-03-06T09:00:00.000Z' },
        { id: '2026-02', published_at: '2026-02-05T10:00:00.000Z', withdrawn_at: '2026-03-06T09:00:00.000Z' },
      ]);
      // Older than the current release, yet withdrawn: not served.
      const refused = await service.get('/v1/catalog?release=2026-02');
      assert.is(refused.status, 404, refused.text);
    } finally {
      await service.stop();
    }

    // Rolled to a withdrawn release: served again, published again; 2026-04, newer, is withdrawn in the same switch.
    await rollback(dataDir, '2026-03', at('2026-04-06T09:00:00.000Z'));
    assert.equal(brief((await fileLines(dataDir)).lines).slice(6), ['7 withdrawn 2026-04 2026-01', '8 published 2026-03 2026-01']);
  },
);

log(
  'a DATA_DIR published before the log: its history from the manifests and the pointer, written once by the next etl command',
  async () => {
    const drop = path.join(await fixtureDataDir(), FIXTURE_RELEASE);
    const dataDir = await scratch('dqs-log-');
    await loadDrop(options(drop, dataDir, '2026-01', '2026-01-05T10:00:00.000Z'));
    await loadDrop(options(drop, dataDir, '2026-02', '2026-02-05T10:00:00.000Z'));
    await loadDrop(options(drop, dataDir, '2026-03', '2026-03-05T10:00:00.000Z'));
    // What an older service left: no log, and a rollback that moved the pointer.
    await fs.rm(path.join(dataDir, LOG_FILE));
    await writePointer(dataDir, '2026-02');
    const moved = new Date('2026-03-07T08:00:00.000Z');
    await fs.utimes(path.join(dataDir, 'CURRENT'), moved, moved);

    const derived = await readPublicationLog(dataDir);
    assert.equal(brief(derived), [
      '1 published 2026-01 -',
      '2 published 2026-02 2026-01',
      '3 published 2026-03 2026-02',
      '4 withdrawn 2026-03 2026-02',
    ]);
    assert.equal(
      derived.map((l) => l.at),
      ['2026-01-05T10:00:00.000Z', '2026-02-05T10:00:00.000Z', '2026-03-05T10:00:00.000Z', '2026-03-07T08:00:00.000Z'],
    );
    assert.is(
      await fs.stat(path.join(dataDir, LOG_FILE)).then(
        () => 'written',
        () => 'absent',
      ),
      'absent',
      'reading writes nothing',
    );

    const service = await startTestService({ dataDir });
    try {
      const answer = (await service.get('/v1/releases')).json;
      assert.equal(
        answer.releases.map((r: { id: string }) => r.id),
        ['2026-02', '2026-01'],
      );
      assert.equal(
        answer.withdrawn.map((r: { id: string; withdrawn_at: string }) => [r.id, r.withdrawn_at]),
        [['2026-03', '2026-03-07T08:00:00.000Z']],
      );
    } finally {
      await service.stop();
    }

    await etl('rollback', '2026-01', '--data-dir', dataDir);
    const { lines } = await fileLines(dataDir);
    assert.equal(brief(lines), [...brief(derived), '5 withdrawn 2026-02 2026-01']);
  },
);

log('a switch whose line a kill prevented is completed when read; a cut last line is no line, and the next append repairs it', async () => {
  const drop = path.join(await fixtureDataDir(), FIXTURE_RELEASE);
  const dataDir = await scratch('dqs-log-');
  await loadDrop(options(drop, dataDir, '2026-01', '2026-01-05T10:00:00.000Z'));
  await loadDrop(options(drop, dataDir, '2026-02', '2026-02-05T10:00:00.000Z'));
  // Killed after the pointer moved, before the line: the switch happened, so the log says it.
  await writePointer(dataDir, '2026-01');
  const read = await readPublicationLog(dataDir);
  assert.equal(brief(read).at(-1), '3 withdrawn 2026-02 2026-01');
  // Killed mid-write: a line without its newline.
  await fs.appendFile(path.join(dataDir, LOG_FILE), '{"seq":3,"type":"release.pub');
  assert.equal(brief(await readPublicationLog(dataDir)), brief(read));
  await etl('rollback', '2026-02', '--data-dir', dataDir);
  const { text, lines } = await fileLines(dataDir);
  assert.not.match(text, /release\.pub[^l]/);
  assert.equal(brief(lines), [...brief(read), '4 published 2026-02 2026-01']);
});

log(
  'etl load killed (SIGKILL) at each of its steps: the file holds whole lines only, and the log ends on the release the pointer names',
  async () => {
    const drop = path.join(await fixtureDataDir(), FIXTURE_RELEASE);
    const dataDir = await scratch('dqs-log-');
    await loadDrop(options(drop, dataDir, '2026-01', '2026-01-05T10:00:00.000Z'));
    const steps: string[] = [];
    let release = 2;
    // Each round kills the load at the next step it reports, until a load ends before its kill.
    for (let round = 0; round < 12; round++) {
      const id = `2026-${String(release).padStart(2, '0')}`;
      const child = spawn('node', ['--import', 'tsx', 'etl/cli.ts', 'load', drop, '--release', id, '--force', '--data-dir', dataDir], {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let seen = 0;
      let killedAt: string | undefined;
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => {
        for (const line of chunk.split('\n').filter(Boolean)) {
          if (!steps.includes(line)) steps.push(line);
          if (killedAt === undefined && seen++ === round) {
            killedAt = line;
            child.kill('SIGKILL');
          }
        }
      });
      const [code, signal] = await once(child, 'exit');
      const pointer = await readPointer(dataDir);
      const text = await fs.readFile(path.join(dataDir, LOG_FILE), 'utf8');
      assert.ok(text.endsWith('\n'), `killed at ${killedAt}: the file ends on a whole line`);
      parseLog(text, LOG_FILE);
      assert.is(servedAfter(await readPublicationLog(dataDir)), pointer, `killed at ${killedAt}`);
      // A folder renamed into place is a release id taken, switched to or not.
      if (
        await fs.stat(path.join(dataDir, id)).then(
          () => true,
          () => false,
        )
      )
        release++;
      if (signal === null) {
        assert.is(code, 0);
        break;
      }
    }
    assert.ok(steps.length >= 3, `the load reported its steps: ${steps.join(' | ')}`);
    // The next load after all those kills: one published line per release the pointer moved to, in order.
    const { lines } = await fileLines(dataDir);
    assert.ok(lines.every((l, i) => l.seq === i + 1 && l.type === 'release.published'));
    assert.is(lines.at(-1)!.release, await readPointer(dataDir));
  },
);

log.run();
