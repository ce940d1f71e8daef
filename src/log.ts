import pino, { type Logger } from 'pino';

/** The longest a log line waits in the buffer. */
const FLUSH_MS = 200;

/**
 * Structured JSON lines on stdout; `base` drops pid/hostname noise, `time` stays ISO.
 * Written asynchronously and in blocks of at least 4 kB, or every 200 ms when fewer
 * lines arrive: a write per line cost a cached page about a tenth of the server's
 * CPU (docs/performance.md), more when stdout is a pipe whose reader wakes per line.
 * pino flushes what is pending at exit; a process killed with SIGKILL loses at most
 * the last 200 ms of lines.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    { level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime },
    destination ?? pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: FLUSH_MS }),
  );
}
