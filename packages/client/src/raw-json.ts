/**
 * JSON text to send as it is, byte for byte, where a request body holds a value — e.g. an event's
 * `data` with `1.0`, integers past 2^53 or a key order that must survive, which a parse and
 * `JSON.stringify` would change. Make one with {@link rawJson}.
 */
export class RawJson {
  /** @internal */
  constructor(readonly text: string) {}
}

/**
 * Marks `text` as JSON to send unchanged: `events.create({ type, data: rawJson('{"amount":1.0}') })`.
 *
 * @throws TypeError when `text` is not one valid JSON value.
 */
export function rawJson(text: string): RawJson {
  try {
    JSON.parse(text);
  } catch {
    throw new TypeError('rawJson: text must be one valid JSON value');
  }
  return new RawJson(text);
}

/** `JSON.stringify(value)`, with every {@link RawJson} inside written as its text. */
export function stringifyBody(value: unknown): string {
  const raws: string[] = [];
  const nonce = Math.random().toString(36).slice(2);
  const json = JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof RawJson) {
      raws.push(v.text);
      return `\u0000${nonce}:${raws.length - 1}`;
    }
    return v;
  });
  if (raws.length === 0) return json;
  // The placeholder as JSON.stringify wrote it: a string with an escaped NUL, which no caller's string carries with this nonce.
  return json.replace(new RegExp(`"\\\\u0000${nonce}:(\\d+)"`, 'g'), (_m, i: string) => raws[Number(i)] as string);
}
