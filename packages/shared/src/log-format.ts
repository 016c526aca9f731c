/** How an app writes its log: `json` (one JSON object a line, for machines) or `pretty` (lines for people). */
export type LogFormat = 'json' | 'pretty';

/** What {@link logPlanOf} decides: the format, and the levels of the two lines that repeat most. */
export interface LogPlan {
  format: LogFormat;
  /** Ingest's line per API request. */
  requestLevel: 'info' | 'debug';
  /** Ingest's line per event accepted (its request line says as much in JSON logs). */
  eventLevel: 'info' | 'debug';
}

/**
 * How an app logs, from `LOG_FORMAT` and `NODE_ENV`: `LOG_FORMAT=json|pretty` wins; otherwise
 * `NODE_ENV=development` (what `npm start` sets) is `pretty`, anything else `json`. In `pretty`
 * a person reads along, so a request's line is at `debug` and each event accepted gets one `info`
 * line (with each attempt's `attempt finished`: one line per event accepted and per attempt
 * finished); in `json` both stay as they always were: the request line at `info`, the event line
 * at `debug` (not written at the default `LOG_LEVEL=info`), so production logs are unchanged.
 */
export function logPlanOf(env: { LOG_FORMAT?: string; NODE_ENV?: string }): LogPlan {
  const format: LogFormat = env.LOG_FORMAT === 'json' || env.LOG_FORMAT === 'pretty' ? env.LOG_FORMAT : env.NODE_ENV === 'development' ? 'pretty' : 'json';
  return format === 'pretty' ? { format, requestLevel: 'debug', eventLevel: 'info' } : { format, requestLevel: 'info', eventLevel: 'debug' };
}

/**
 * pino-pretty's options for `pretty` logs: one line per entry (time, level, app, message, then its
 * fields as compact JSON), without pid and hostname; colour when `colorize` (a terminal).
 */
export function prettyLogOptions(colorize: boolean): Record<string, unknown> {
  return { sync: true, colorize, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name', messageFormat: '{name} {msg}' };
}
