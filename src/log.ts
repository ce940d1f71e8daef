import pino, { type Logger } from 'pino';

/** Lines go out in writes of at least this many bytes, or every FLUSH_MS when fewer arrive. */
const BLOCK_BYTES = 4096;
const FLUSH_MS = 200;

/**
 * Where a logged object carries request headers (a request, as pino's serializer
 * writes one, or headers on their own), the key in them is replaced: a key never
 * reaches the log. Exact paths: a wildcard makes pino walk every line it writes.
 */
const REDACTED = ['req.headers["x-api-key"]', 'headers["x-api-key"]'];

/**
 * pino's `time` field as ISO text, made once a millisecond: requests come faster than
 * that, and formatting a date is a large part of what writing a line costs.
 */
function isoTimeEachMillisecond(): () => string {
  let last = -1;
  let field = '';
  return () => {
    const now = Date.now();
    if (now !== last) {
      last = now;
      field = `,"time":"${new Date(now).toISOString()}"`;
    }
    return field;
  };
}

let stdout: pino.DestinationStream | undefined;

/**
 * stdout for every logger of the process: one buffer, so blocks keep the order of
 * their lines. Blocks are written synchronously: an asynchronous write waits its turn
 * in libuv's thread pool, behind a compression or a hash on a busy machine, and an
 * exit before its turn lost the lines it carried (lines 0–28 of 100). What is still
 * buffered is written by the 'exit' listener, which every way out passes through
 * (process.exit, a signal's handler, an uncaught exception, running out of work).
 */
function sharedStdout(): pino.DestinationStream {
  if (stdout) return stdout;
  const destination = pino.destination({ dest: 1, sync: true, minLength: BLOCK_BYTES, periodicFlush: FLUSH_MS });
  process.once('exit', () => destination.flushSync());
  stdout = destination;
  return destination;
}

/**
 * Structured JSON lines on stdout, written in blocks of at least 4 kB, or every 200 ms
 * when fewer lines come, so a busy server makes one write per dozen requests; every
 * line logged before the process exits is written, however it exits, and a SIGKILL
 * loses at most the last 200 ms. A reader of stdout that stops reading holds the
 * server up, as it would with Node's own stdout on a pipe or a file.
 * `destination` replaces stdout (tests). `base` drops pid/hostname noise; `time` stays ISO.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const redact = { paths: REDACTED, censor: '[redacted]' };
  return pino({ level, base: undefined, timestamp: isoTimeEachMillisecond(), redact }, destination ?? sharedStdout());
}
