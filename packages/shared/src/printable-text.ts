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
  return options.multiline
    ? `${field} must be printable text: no control character other than newline and tab, no line separator, no bidirectional control (U+202A–U+202E, U+2066–U+2069) and no unpaired surrogate`
    : `${field} must be printable text: no newline, tab or other control character, no line separator, no bidirectional control (U+202A–U+202E, U+2066–U+2069) and no unpaired surrogate`;
}
