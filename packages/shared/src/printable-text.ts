/**
 * Characters that are not printable text: controls (U+0000–U+001F, U+007F–U+009F: newline, tab,
 * NUL…), line and paragraph separators (U+2028, U+2029), bidirectional controls (U+202A–U+202E,
 * U+2066–U+2069, the "Trojan Source" characters) and unpaired surrogates. Text holding one reads
 * back differently in logs, terminals, CSV exports and pages than it was sent, or not at all: a
 * name could show an endpoint's URL backwards, or one org's name as another's.
 *
 * Joiners (U+200C, U+200D) stay allowed: emoji sequences and several scripts need them.
 */
const NOT_PRINTABLE = /[\p{Cc}\p{Zl}\p{Zp}\p{Cs}\u202a-\u202e\u2066-\u2069]/u;
const NOT_PRINTABLE_ALL = new RegExp(NOT_PRINTABLE.source, 'gu');

/** The same, with newline (U+000A) and tab (U+0009) allowed: multi-line text such as a description. */
const NOT_PRINTABLE_MULTILINE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\p{Zl}\p{Zp}\p{Cs}\u202a-\u202e\u2066-\u2069]/u;

/**
 * Whether `text` holds only printable characters (none of those listed above). Used by every
 * name the API stores for people to read: org, API key, platform key and portal display names,
 * endpoint descriptions (`multiline`: newline and tab allowed) and idempotency keys.
 */
export function isPrintableText(text: string, options: { multiline?: boolean } = {}): boolean {
  return !(options.multiline ? NOT_PRINTABLE_MULTILINE : NOT_PRINTABLE).test(text);
}

/** The message for a name that fails {@link isPrintableText}: `<field> must be printable text: …`. */
export function notPrintableMessage(field: string, options: { multiline?: boolean } = {}): string {
  const controls = options.multiline ? 'no control character other than newline and tab' : 'no newline, tab or other control character';
  return `${field} must be printable text: ${controls}, no line separator, no bidirectional control (U+202A–U+202E, U+2066–U+2069) and no unpaired surrogate`;
}

/**
 * `text` with every character {@link isPrintableText} refuses written as a visible escape
 * (`\n`, `\r`, `\t`, else `\u001b`, `\u202e`…). For showing text someone else chose (a
 * receiver's answer, a webhook's body) in a terminal: it cannot move the cursor, clear the screen,
 * retitle the window, forge lines or reverse text. One line in, one line out.
 */
export function escapeNotPrintable(text: string): string {
  return text.replace(NOT_PRINTABLE_ALL, (c) => (c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === '\t' ? '\\t' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}
