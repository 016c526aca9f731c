import { format } from 'node:util';

/** The logger methods {@link jsonConsole} writes through (pino's signature: fields, then message). */
export interface FieldLogger {
  error(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

/** The console methods {@link jsonConsole} replaces. */
export type ConsoleMethods = Pick<Console, 'error' | 'warn' | 'info' | 'log' | 'debug' | 'trace'>;

/**
 * Console methods that write through `logger`, so that what a library prints with
 * `console.error(err)` (BullMQ does, for an error event nobody listens to) becomes one JSON line
 * — `{"console":"Error: connect ECONNREFUSED …\n    at …"}` with its stack inside one string —
 * instead of a multi-line stack trace among the JSON logs. A main module installs them, with the
 * process's crash handlers, through {@link logProcessOutput}. README, Logs: every line one JSON
 * object.
 */
export function jsonConsole(logger: FieldLogger): ConsoleMethods {
  const text = (args: unknown[]) => ({ console: format(...args) });
  return {
    error: (...args: unknown[]) => logger.error(text(args), 'console.error'),
    warn: (...args: unknown[]) => logger.warn(text(args), 'console.warn'),
    info: (...args: unknown[]) => logger.info(text(args), 'console.info'),
    log: (...args: unknown[]) => logger.info(text(args), 'console.log'),
    debug: (...args: unknown[]) => logger.debug(text(args), 'console.debug'),
    trace: (...args: unknown[]) => logger.debug({ ...text(args), stack: new Error('console.trace').stack }, 'console.trace'),
  };
}

/**
 * What an app's `main.ts` does once its logger exists: every line on stdout one JSON object. What
 * libraries print goes through the logger ({@link jsonConsole}); an uncaught exception is logged
 * as one `fatal` line and the process exits 1; an unhandled rejection is logged as an error.
 */
export function logProcessOutput(logger: FieldLogger & { fatal(fields: Record<string, unknown>, message: string): void }): void {
  Object.assign(console, jsonConsole(logger));
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception; exiting');
    process.exit(1);
  });
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled promise rejection'));
}
