import { connect } from 'node:net';

/** What {@link rawHttp} read: the status line's code, the header block as sent, and the body parsed as JSON (or its text). */
export interface RawAnswer {
  status: number;
  headers: string;
  body: any;
}

/**
 * Sends `request` byte for byte (what fetch would not send: no Host, odd framing) to the server at
 * `baseUrl` and reads until the server closes the connection; rejects after `timeoutMs` if it does
 * not, so an answer that leaves the connection open fails the test.
 */
export function rawHttp(baseUrl: string, request: string, timeoutMs = 5000): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server did not close the connection within ${timeoutMs} ms; read so far: ${JSON.stringify(text)}`));
    }, timeoutMs);
    socket.on('data', (chunk) => (text += chunk.toString('utf8')));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('end', () => {
      clearTimeout(timer);
      const split = text.indexOf('\r\n\r\n');
      const head = split < 0 ? text : text.slice(0, split);
      const rest = split < 0 ? '' : text.slice(split + 4);
      let body: unknown = rest;
      try {
        body = JSON.parse(rest);
      } catch {
        // not JSON: the text as it came
      }
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body });
    });
  });
}
