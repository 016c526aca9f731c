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
