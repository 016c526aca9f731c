import { jsonConsole, type FieldLogger } from './console-logging.js';

test('console output becomes one logger call per console call, a stack trace inside one string', () => {
  const calls: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const record = (level: string) => (fields: Record<string, unknown>, message: string) => void calls.push({ level, fields, message });
  const logger: FieldLogger = { error: record('error'), warn: record('warn'), info: record('info'), debug: record('debug') };
  const console = jsonConsole(logger);
  const err = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
  console.error(err);
  console.warn('low memory: %d MB', 12);
  expect(calls.map((c) => [c.level, c.message])).toEqual([['error', 'console.error'], ['warn', 'console.warn']]);
  expect(calls[0]!.fields.console).toMatch(/^Error: connect ECONNREFUSED 127\.0\.0\.1:6379\n {4}at /);
  expect(calls[1]!.fields.console).toBe('low memory: 12 MB');
  // What the logger writes is JSON, so the newlines of the stack stay inside one line.
  expect(JSON.stringify(calls[0]!.fields).includes('\n')).toBe(false);
});
