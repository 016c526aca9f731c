import type { z } from 'zod';

/**
 * Validation problems in plain words. Every schema of the API writes its own messages where it
 * can (`url must be a string`); what zod says by itself ("Invalid input: expected string, received
 * undefined", a union's bare "Invalid input", "Too big: expected string to have <=200 characters")
 * is rewritten here from the issue's structured fields, so an API user always reads which field is
 * wrong and what it takes.
 */

/** One problem: where (`path`, as zod gives it: keys and array indexes) and what is expected. */
export interface PlainIssue {
  path: PropertyKey[];
  message: string;
}

/** Where the validated value came from: a JSON body names "fields", a query string "parameters". */
export type InputSource = 'body' | 'query';

/** How zod's own English messages begin; a message a schema wrote never does. */
const LIBRARY_PHRASING = /^(Invalid\b|Too (big|small):|Unrecognized keys?:)/;

const NOUNS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  bigint: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  record: 'an object',
  array: 'an array',
  tuple: 'an array',
  null: 'null',
  date: 'a date',
};

/** What zod calls a received value, as a noun ("an array", "null"). */
const RECEIVED: Record<string, string> = { ...NOUNS, boolean: 'a boolean', nan: 'NaN', undefined: 'nothing' };

function noun(expected: string): string {
  return NOUNS[expected] ?? `a ${expected}`;
}

function show(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

function list(values: readonly unknown[]): string {
  const shown = values.map(show);
  return shown.length <= 1 ? (shown[0] ?? 'nothing') : `${shown.slice(0, -1).join(', ')} or ${shown.at(-1)}`;
}

/** The field a sentence is about: the last key of `path`, or "each entry of <list>" for an index; '' at the root. */
function subjectOf(path: readonly PropertyKey[]): string {
  const last = path.at(-1);
  if (last === undefined) return '';
  if (typeof last === 'number') {
    const list = [...path].reverse().find((p) => typeof p === 'string');
    return list === undefined ? 'each entry' : `each entry of ${String(list)}`;
  }
  return String(last);
}

function sentence(path: readonly PropertyKey[], predicate: string): string {
  const subject = subjectOf(path);
  return subject === '' ? predicate : `${subject} ${predicate}`;
}

type Issue = z.core.$ZodIssue;

function sizePredicate(issue: Extract<Issue, { code: 'too_big' | 'too_small' }>): string {
  const small = issue.code === 'too_small';
  const limit = Number(small ? issue.minimum : issue.maximum);
  const inclusive = issue.inclusive !== false;
  const bound = small ? (inclusive ? 'at least' : 'more than') : inclusive ? 'at most' : 'less than';
  switch (issue.origin) {
    case 'string':
      return small && limit === 1 && inclusive ? 'must not be empty' : `must be ${bound} ${limit} characters`;
    case 'array':
    case 'set':
      return small && limit === 1 && inclusive ? 'must hold at least one entry' : `must hold ${bound} ${limit} entries`;
    case 'number':
    case 'int':
    case 'bigint':
      return `must be ${small ? (inclusive ? 'at least' : 'greater than') : inclusive ? 'at most' : 'less than'} ${limit}`;
    case 'file':
      return `must be ${bound} ${limit} bytes`;
    default:
      return small ? 'is too small' : 'is too large';
  }
}

const FORMATS: Record<string, string> = {
  datetime: 'must be an ISO 8601 date-time, e.g. 2026-11-29T12:00:00Z',
  date: 'must be a date, YYYY-MM-DD',
  time: 'must be a time, HH:MM[:SS]',
  duration: 'must be an ISO 8601 duration, e.g. PT5M',
  url: 'must be a URL',
  email: 'must be an email address',
  uuid: 'must be a UUID',
  guid: 'must be a UUID',
  base64: 'must be base64',
  base64url: 'must be base64url',
  ipv4: 'must be an IPv4 address',
  ipv6: 'must be an IPv6 address',
  jwt: 'must be a JWT',
  regex: 'is not in a form this field accepts',
};

function formatPredicate(issue: Extract<Issue, { code: 'invalid_format' }>): string {
  const extra = issue as { prefix?: string; suffix?: string; includes?: string };
  if (issue.format === 'starts_with') return `must start with ${show(extra.prefix)}`;
  if (issue.format === 'ends_with') return `must end with ${show(extra.suffix)}`;
  if (issue.format === 'includes') return `must contain ${show(extra.includes)}`;
  return FORMATS[issue.format] ?? `must be a valid ${issue.format}`;
}

/** Whether an issue says a value is missing altogether (zod: "received undefined"). */
function isMissing(issue: Issue): boolean {
  return issue.code === 'invalid_type' && (issue.expected === 'nonoptional' || / received undefined$/.test(issue.message));
}

/**
 * The branch of a failed union the input came closest to: fewest problems (each unknown field
 * counting as one), a wrong value preferred over a missing one (the input aimed at that branch).
 */
function closestBranch(branches: readonly (readonly Issue[])[]): readonly Issue[] | undefined {
  const score = (issues: readonly Issue[]) => issues.reduce((n, i) => n + (i.code === 'unrecognized_keys' ? i.keys.length : 1) + (isMissing(i) ? 0.5 : 0), 0);
  return [...branches].filter((b) => b.length > 0).sort((a, b) => score(a) - score(b))[0];
}

function unionIssue(issue: Extract<Issue, { code: 'invalid_union' }>, source: InputSource): PlainIssue {
  const path = [...issue.path];
  const discriminated = issue as { discriminator?: string; options?: unknown[] };
  if (issue.errors.length === 0) {
    // A discriminated union whose discriminator matched no option: the path ends at that key.
    const options = discriminated.options ?? [];
    return { path, message: sentence(path, options.length > 0 ? `must be one of ${list(options)}` : 'is not one of the accepted forms') };
  }
  // Every option refused the value's very type: it is none of the shapes taken.
  const rootTypes = issue.errors.map((b) => (b.length === 1 && b[0]!.path.length === 0 && b[0]!.code === 'invalid_type' ? b[0]!.expected : null));
  if (rootTypes.every((t) => t !== null)) {
    const nouns = [...new Set(rootTypes.map((t) => noun(t!)))];
    const either = nouns.length === 1 ? nouns[0]! : `${nouns.slice(0, -1).join(', ')} or ${nouns.at(-1)}`;
    const missing = issue.errors.every((b) => isMissing(b[0]!));
    return { path, message: sentence(path, missing ? `is required (${either})` : `must be ${either}`) };
  }
  const first = closestBranch(issue.errors)?.[0];
  if (!first) return { path, message: sentence(path, 'is not one of the accepted forms') };
  const inner = plainIssue(first, source);
  return { path: [...path, ...inner.path], message: inner.message };
}

/**
 * One zod issue in plain words, e.g. `{path: ['url'], message: 'url is required (a string)'}`.
 * A message the schema wrote itself is kept as it is; zod's own wording is rewritten from the
 * issue's fields: a missing or wrongly typed value, a value outside a list, a size or number out
 * of range, a format, an unknown field (`unknown field "colour"`, or `unknown parameter` for a
 * query), and for a union the problem of the option the input came closest to. The message never
 * repeats the path: the caller puts it in front (`url: url is required (a string)`).
 *
 * @param source - `query` for a query string: an unknown key is a "parameter", an array where one
 *   value was expected means the parameter was given more than once.
 */
export function plainIssue(issue: Issue, source: InputSource = 'body'): PlainIssue {
  const path = [...issue.path];
  if (issue.code === 'unrecognized_keys') return { path, message: `unknown ${source === 'query' ? 'parameter' : 'field'} "${issue.keys[0] ?? ''}"` };
  if (issue.code === 'invalid_union' && LIBRARY_PHRASING.test(issue.message)) return unionIssue(issue, source);
  if (!LIBRARY_PHRASING.test(issue.message)) return { path, message: issue.message };
  switch (issue.code) {
    case 'invalid_type': {
      if (isMissing(issue)) return { path, message: sentence(path, issue.expected === 'nonoptional' ? 'is required' : `is required (${noun(issue.expected)})`) };
      const received = / received (\w+)$/.exec(issue.message)?.[1];
      if (source === 'query' && received === 'array') return { path, message: sentence(path, 'must be given once') };
      const not = received !== undefined && RECEIVED[received] !== undefined ? `, not ${RECEIVED[received]}` : '';
      return { path, message: sentence(path, `must be ${noun(issue.expected)}${not}`) };
    }
    case 'invalid_value':
      return { path, message: sentence(path, issue.values.length === 1 ? `must be ${show(issue.values[0])}` : `must be one of ${list(issue.values)}`) };
    case 'too_big':
    case 'too_small':
      return { path, message: sentence(path, sizePredicate(issue)) };
    case 'invalid_format':
      return { path, message: sentence(path, formatPredicate(issue)) };
    case 'not_multiple_of':
      return { path, message: sentence(path, `must be a multiple of ${String(issue.divisor)}`) };
    case 'invalid_key':
      return { path, message: `the key ${show(path.at(-1))} is not accepted here` };
    case 'invalid_element':
      return { path, message: sentence(path, 'holds a value that is not accepted') };
    default:
      return { path, message: sentence(path, 'is not accepted') };
  }
}

/**
 * A path as the API prints it before a message: keys and indexes joined with dots
 * (`headers.0.name`), after `prefix` when given; '' for the root.
 */
export function issuePath(path: readonly PropertyKey[], prefix = ''): string {
  return [prefix, ...path.map(String)].filter(Boolean).join('.');
}
