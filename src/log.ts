import pino, { type Logger } from 'pino';

/** Structured JSON lines on stdout; `base` drops pid/hostname noise, `time` stays ISO. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}
