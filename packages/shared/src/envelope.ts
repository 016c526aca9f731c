/** What goes into an envelope; see {@link buildEnvelope}. */
export interface EnvelopeInput {
  /** Event id (`evt_…`), the receiver's dedupe key. */
  id: string;
  /** Event type, e.g. `invoice.paid`. */
  type: string;
  /** When the event was accepted, Unix epoch milliseconds. */
  timestampMs: number;
  /** The producer's `data` as JSON source text, kept exactly as received. */
  dataJson: string;
}

/**
 * Builds the body Postern POSTs for an event:
 * `{"id":…,"type":…,"timestamp":"<ISO 8601 UTC>","data":<dataJson>}`.
 *
 * The envelope is built once, at ingest, and its bytes never change across
 * attempts and redeliveries (docs/architecture.md, "The request Postern sends"). `data`
 * is spliced in verbatim rather than re-serialised, so numbers such as
 * `1.0` or `12345678901234567890123`, escapes and whitespace reach the
 * receiver exactly as the producer wrote them.
 *
 * @param input - `id` and `type` are JSON-escaped; `dataJson` must already be
 *   valid JSON text (the caller checked it with `JSON.parse`), it is not
 *   re-checked here.
 * @returns the envelope as a string; its UTF-8 bytes are what gets signed.
 * @throws RangeError when `timestampMs` is not a representable date.
 */
export function buildEnvelope({ id, type, timestampMs, dataJson }: EnvelopeInput): string {
  const timestamp = new Date(timestampMs).toISOString();
  return `{"id":${JSON.stringify(id)},"type":${JSON.stringify(type)},"timestamp":"${timestamp}","data":${dataJson}}`;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/** Index just past the string literal that opens at `start` (a `"`), or -1 if it never closes. */
function skipString(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '\\') i += 2;
    else if (ch === '"') return i + 1;
    else i += 1;
  }
  return -1;
}

function skipWhitespace(text: string, start: number): number {
  let i = start;
  while (i < text.length && WHITESPACE.has(text[i] as string)) i++;
  return i;
}

/** Index just past the JSON value that starts at `start`, or -1 when malformed. */
function skipValue(text: string, start: number): number {
  const first = text[start];
  if (first === undefined) return -1;
  if (first === '"') return skipString(text, start);
  if (first === '{' || first === '[') {
    let depth = 0;
    let i = start;
    while (i < text.length) {
      const ch = text[i];
      if (ch === '"') {
        i = skipString(text, i);
        if (i < 0) return -1;
        continue;
      }
      if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return -1;
  }
  // number, true, false, null: runs until a delimiter
  let i = start;
  while (i < text.length) {
    const ch = text[i] as string;
    if (ch === ',' || ch === '}' || ch === ']' || WHITESPACE.has(ch)) break;
    i++;
  }
  return i > start ? i : -1;
}

/**
 * Returns the exact source text of a top-level field's value in a JSON
 * object, so ingest can keep a producer's `data` byte for byte (JSON.parse
 * followed by JSON.stringify would rewrite `1.0`, big integers, escapes and
 * spacing).
 *
 * Keys are compared after unescaping, as JSON.parse does (`"d\u0061ta"` is
 * `data`). When a key appears more than once the last value wins, again as
 * with JSON.parse. Whitespace around the value is not included.
 *
 * @param bodyText - raw text of a JSON object that already passed JSON.parse.
 * @param field - top-level key to find.
 * @returns the value's source text, or `undefined` when the key is absent or
 *   `bodyText` is not a JSON object.
 */
export function extractRawField(bodyText: string, field: string): string | undefined {
  let i = skipWhitespace(bodyText, 0);
  if (bodyText[i] !== '{') return undefined;
  i = skipWhitespace(bodyText, i + 1);
  if (bodyText[i] === '}') return undefined;
  let found: string | undefined;
  while (i < bodyText.length) {
    if (bodyText[i] !== '"') return undefined;
    const keyEnd = skipString(bodyText, i);
    if (keyEnd < 0) return undefined;
    let key: unknown;
    try {
      key = JSON.parse(bodyText.slice(i, keyEnd));
    } catch {
      return undefined;
    }
    i = skipWhitespace(bodyText, keyEnd);
    if (bodyText[i] !== ':') return undefined;
    const valueStart = skipWhitespace(bodyText, i + 1);
    const valueEnd = skipValue(bodyText, valueStart);
    if (valueEnd < 0) return undefined;
    if (key === field) found = bodyText.slice(valueStart, valueEnd);
    i = skipWhitespace(bodyText, valueEnd);
    if (bodyText[i] === ',') {
      i = skipWhitespace(bodyText, i + 1);
      continue;
    }
    return bodyText[i] === '}' ? found : undefined;
  }
  return undefined;
}

/**
 * Returns the exact source text of each element of a top-level array field of a JSON object, in
 * order, so ingest can keep each event's `data` of a batch byte for byte ({@link extractRawField}
 * on each element then finds its `data`). One pass over the text, whatever the number of elements.
 *
 * As with {@link extractRawField}, keys are compared after unescaping and the last of a repeated
 * key wins (as with JSON.parse). Whitespace around each element is not included.
 *
 * @param bodyText - raw text of a JSON object that already passed JSON.parse.
 * @param field - top-level key whose value is an array.
 * @returns each element's source text, or `undefined` when the key is absent, its value is not an
 *   array, or `bodyText` is not a JSON object.
 */
export function extractRawArrayElements(bodyText: string, field: string): string[] | undefined {
  const array = extractRawField(bodyText, field);
  if (array === undefined || array[0] !== '[') return undefined;
  const elements: string[] = [];
  let i = skipWhitespace(array, 1);
  if (array[i] === ']') return elements;
  while (i < array.length) {
    const end = skipValue(array, i);
    if (end < 0) return undefined;
    elements.push(array.slice(i, end));
    i = skipWhitespace(array, end);
    if (array[i] === ',') {
      i = skipWhitespace(array, i + 1);
      continue;
    }
    return array[i] === ']' ? elements : undefined;
  }
  return undefined;
}
