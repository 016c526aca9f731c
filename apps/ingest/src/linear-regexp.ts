import { createRequire } from 'node:module';
import type { CodeOptions } from 'ajv/dist/2020.js';
import type { RE2JS } from 're2js';

/** ajv's `code.regExp`: what compiles a schema's `pattern` and `patternProperties` keys. */
type RegExpEngine = NonNullable<CodeOptions['regExp']>;

/**
 * A JSON Schema pattern (ECMA-262 syntax) as RE2 compiles it: `(?<name>…)`, `\u00e9` and
 * `\u{1F600}` are translated to RE2's spelling first. Throws (`RE2JSSyntaxException`) for what RE2
 * has no linear-time way to run: lookahead, lookbehind, backreferences, repeat counts over 1000.
 */
function compileLinear(pattern: string): RE2JS {
  const engine = loadRe2();
  return engine.compile(engine.translateRegExp(pattern));
}

let re2: typeof RE2JS | undefined;

/** re2js, loaded with the first pattern: an ingest whose orgs have no catalog patterns never holds it. */
function loadRe2(): typeof RE2JS {
  re2 ??= (createRequire(import.meta.url)('re2js') as typeof import('re2js')).RE2JS;
  return re2;
}

/**
 * The regular-expression engine of every schema ingest compiles (ajv's `code.regExp` option):
 * `re2js`, a pure-JavaScript RE2, whose matching time is linear in the input's length whatever the
 * pattern. A catalog schema comes from an API caller and is run on ingest's one thread, so a
 * backtracking engine would let a pattern like `^(a*)*b$` or `^a*a*a*a*a*a*a*a*b$` and one crafted
 * event stall every org. Differences from JavaScript's engine: `\s` and `\b` are ASCII only, and
 * the constructs {@link linearPatternProblem} names are refused.
 */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string) => {
    const re = compileLinear(pattern);
    // ajv keys compiled patterns by toString() to share one between keywords.
    return { test: (s: string) => re.test(s), toString: () => `re2:${pattern}` };
  },
  // Only used by ajv's standalone code generation, which ingest does not use.
  { code: 'require("re2js").RE2JS' },
);

/** A lookahead or lookbehind group, which RE2 reports in words of its own ("invalid named capture"). */
const LOOKAROUND = /\(\?<?[=!]/;

/**
 * Why {@link linearRegExp} cannot run a schema pattern, in plain words (RE2's reason, then what
 * RE2 syntax leaves out), or null when it can.
 */
export function linearPatternProblem(pattern: string): string | null {
  try {
    compileLinear(pattern);
    return null;
  } catch (err) {
    const reason = LOOKAROUND.test(pattern)
      ? 'lookahead and lookbehind are not supported'
      : err instanceof Error
        ? err.message.replace(/^error parsing regexp: /, '')
        : 'does not compile';
    return `${reason}; patterns run on a linear-time engine (RE2 syntax): no backreferences, lookahead or lookbehind, repeat counts at most 1000 (nested repeats multiplied together)`;
  }
}
