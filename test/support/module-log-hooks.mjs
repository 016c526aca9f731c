// Module hooks for a child process that must show which packages it loads: each resolved URL
// matching MODULE_LOG_PATTERN is written to stderr as `loaded <url>` (hooks run off the main
// thread, so they write to the file descriptor directly).
import { writeSync } from 'node:fs';
import { register } from 'node:module';

if (!process.env.MODULE_LOG_HOOKS_THREAD) {
  process.env.MODULE_LOG_HOOKS_THREAD = '1';
  register(import.meta.url);
}

const pattern = new RegExp(process.env.MODULE_LOG_PATTERN ?? '$^');

/** Node's resolve hook: passes every specifier on, logging the matching ones. */
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (pattern.test(resolved.url)) writeSync(2, `loaded ${resolved.url}\n`);
  return resolved;
}
