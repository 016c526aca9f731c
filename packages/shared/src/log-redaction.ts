/**
 * Log fields that pino must never write (docs/architecture.md: logs carry no secrets, API keys or payloads).
 * Pino `redact` paths, for both apps' root loggers: credentials in request headers, any
 * `secret`/`apiKey` field at the top level or one level down, and payload-bearing fields.
 * A redacted value is written as `[redacted]`.
 */
export const LOG_REDACT_PATHS: readonly string[] = Object.freeze([
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  '*.headers.authorization',
  'authorization',
  'secret',
  '*.secret',
  'secrets',
  '*.secrets',
  'apiKey',
  '*.apiKey',
  'adminToken',
  '*.adminToken',
  'envelope',
  '*.envelope',
  'payload',
  '*.payload',
  'body',
  'req.body',
  'data',
]);

/** What a redacted value is replaced with. */
export const LOG_REDACT_CENSOR = '[redacted]';

/**
 * Pino options of an app's root logger: its name, level and the redaction above. Both `main.ts`
 * files use it (`pino(loggerOptions('postern-ingest', 'info'))`), so tests can check the real setup.
 */
export function loggerOptions(name: string, level: string): { name: string; level: string; redact: { paths: string[]; censor: string } } {
  return { name, level, redact: { paths: [...LOG_REDACT_PATHS], censor: LOG_REDACT_CENSOR } };
}
