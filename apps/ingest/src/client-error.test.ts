import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { answerClientError } from './client-error.js';

/** Requests Node's parser refuses get the API's error shape, not a bare status line. */

let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((_req, res) => res.end('ok'));
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Sends raw bytes and reads until the server closes the connection. */
function raw(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

test('both Content-Length and Transfer-Encoding: 400 bad_request in the API error shape, connection closed', async () => {
  const answer = await raw('POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc');
  expect(answer.startsWith('HTTP/1.1 400 Bad Request\r\n')).toBe(true);
  expect(answer).toMatch(/content-type: application\/json/);
  expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ error: { code: 'bad_request', message: expect.stringContaining('HTTP/1.1') } });
});

test('a request line that is not HTTP: 400 bad_request', async () => {
  const answer = await raw('HELLO THERE\r\n\r\n');
  expect(answer.startsWith('HTTP/1.1 400')).toBe(true);
  expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.code).toBe('bad_request');
});

test.each([
  ['one header of 20 KB', `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
  ['3000 small headers', `GET / HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 3000 }, (_, i) => `x-${i}: 1\r\n`).join('')}\r\n`],
  ['a 20 KB URL (the request line counts toward the same limit: 431, not 414)', `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`],
])('headers too large (%s): 431 headers_too_large in the API error shape', async (_name, request) => {
  const answer = await raw(request);
  expect(answer.startsWith('HTTP/1.1 431 Request Header Fields Too Large\r\n')).toBe(true);
  expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ error: { code: 'headers_too_large', message: 'the request headers are too large' } });
});
