import pino, { type Logger } from 'pino';
import { LogBlocks } from './log-blocks.ts';

/** The longest a log line waits before it is written. */
const FLUSH_MS = 200;
/** Lines go out in writes of at least this many characters, unless FLUSH_MS passes first. */
const BLOCK_CHARS = 4096;

/** Fields of a line written by an infoWriter, in order: texts and finite numbers; undefined ones are left out, as pino leaves them. */
export type LineFields = Readonly<Record<string, string | number | undefined>>;

/** The destination of each logger made here, for its infoWriter. */
const destinations = new WeakMap<Logger, pino.DestinationStream>();

/** stdout, shared by every logger made here without a destination of its own: one writer keeps lines in order. */
let stdout: LogBlocks | undefined;

/**
 * Structured JSON lines on stdout; `base` drops pid/hostname noise, `time` stays ISO.
 * Written in blocks of at least 4 kB (src/log-blocks.ts), or every 200 ms when fewer
 * lines arrive: a write per line cost a cached page about a tenth of the server's CPU
 * when it was measured, more when stdout is a pipe whose reader wakes per line. Each
 * block is written synchronously, as node writes to a stdout file or pipe: a reader
 * that stops holds the server up instead of letting its memory grow (docs/deploy.md),
 * lines stay in order, and an exit loses none; a SIGKILL loses at most the last 200 ms.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  // sonic-boom writes each block as it comes (minLength 0): the blocks are already whole.
  let stream = destination;
  if (!stream) {
    stdout ??= new LogBlocks(pino.destination({ dest: 1, sync: true, minLength: 0 }), BLOCK_CHARS, FLUSH_MS);
    stream = stdout;
  }
  const log = pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, stream);
  destinations.set(log, stream);
  return log;
}

/**
 * Writes info lines with message `msg` to `log`'s destination, each the line
 * `log.info(fields, msg)` would write (test/log.test.ts holds the two equal). It is
 * for the request log's one line per request: pino's generic serializer, which walks
 * each object and escapes each string, was a fifth of a cached hit's CPU. A logger not
 * made by createLogger (a child, with bindings of its own) is written through pino.
 */
export function infoWriter(log: Logger, msg: string): (fields: LineFields) => void {
  const stream = destinations.get(log);
  if (!stream) return (fields) => log.info(fields, msg);
  const level = log.levels.values.info!;
  const end = `,"msg":${JSON.stringify(msg)}}\n`;
  // The time text changes once a millisecond; lines come faster than that.
  let lastMs = -1;
  let time = '';
  return (fields) => {
    if (!log.isLevelEnabled('info')) return;
    const now = Date.now();
    if (now !== lastMs) {
      lastMs = now;
      time = new Date(now).toISOString();
    }
    let line = `{"level":${level},"time":"${time}"`;
    for (const name in fields) {
      const value = fields[name];
      if (value !== undefined) line += `,"${name}":${typeof value === 'number' ? value : JSON.stringify(value)}`;
    }
    stream.write(line + end);
  };
}
