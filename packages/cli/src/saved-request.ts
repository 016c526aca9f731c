/** A webhook request read back from a file: its headers (names lower-cased) and body, byte for byte. */
export interface SavedRequest {
  headers: Record<string, string>;
  body: string;
}

/**
 * Parses a request saved as HTTP/1.1 text (`request.http`, as `postern listen --save` writes it or
 * a proxy dumps it): an optional request line (`POST /hook HTTP/1.1`), header lines, a blank line,
 * then the body as it came. CRLF or LF line ends. Throws when there is no blank line after the
 * headers or a header line has no colon.
 */
export function parseSavedRequest(text: string): SavedRequest {
  const split = /\r?\n\r?\n/.exec(text);
  if (!split) throw new Error('the request has no blank line between its headers and its body');
  const head = text.slice(0, split.index).split(/\r?\n/);
  const body = text.slice(split.index + split[0].length);
  if (head[0] !== undefined && /^[A-Z]+ \S+ HTTP\/\d(\.\d)?$/.test(head[0])) head.shift();
  const headers: Record<string, string> = {};
  for (const line of head) {
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`not a header line: "${line.slice(0, 80)}"`);
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { headers, body };
}

/** A received request as HTTP/1.1 text, the form {@link parseSavedRequest} reads. */
export function formatSavedRequest(method: string, path: string, headers: Record<string, string | string[] | undefined>, body: string): string {
  const lines = [`${method} ${path} HTTP/1.1`];
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) lines.push(`${name}: ${Array.isArray(value) ? value.join(', ') : value}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}
