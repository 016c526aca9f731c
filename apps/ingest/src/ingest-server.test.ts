import type { AddressInfo } from 'node:net';
import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import express from 'express';
import { createIngestServer, expressMessageClasses, PROTOTYPES_AT_CREATION } from './ingest-server.js';

/**
 * With `expressMessageClasses`, requests reach express already carrying its prototypes, so its
 * per-request `Object.setPrototypeOf` changes nothing; they are still IncomingMessage and
 * ServerResponse, and a mounted sub-app (as Bull Board is) still gets its own prototypes and hands
 * them back. Checked on every Node, whichever way `createIngestServer` goes on this one.
 */
let server: Server;
let base: string;
const seen: { req: boolean; res: boolean }[] = [];
const app = express();
const sub = express();
sub.get('/inside', (req, res) => {
  res.json({ sub: Object.getPrototypeOf(req) === sub.request && Object.getPrototypeOf(res) === sub.response });
});
app.use('/mounted', sub);
app.get('/after', (req, res) => {
  res.json({ app: Object.getPrototypeOf(req) === app.request, instances: req instanceof IncomingMessage && res instanceof ServerResponse, ip: req.ip, path: req.path });
});
app.use(express.json());
app.post('/echo', (req, res) => void res.status(201).json(req.body));

beforeAll(async () => {
  server = createServer(expressMessageClasses(app), app);
  // Before express's own listener: what Node created.
  server.prependListener('request', (req, res) => void seen.push({ req: Object.getPrototypeOf(req) === app.request, res: Object.getPrototypeOf(res) === app.response }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

test('each request and response is created with the app\'s prototypes, and still works as one', async () => {
  expect(await (await fetch(`${base}/after?x=1`)).json()).toEqual({ app: true, instances: true, ip: '127.0.0.1', path: '/after' });
  const posted = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
  expect([posted.status, await posted.json()]).toEqual([201, { a: 1 }]);
  expect(seen.length).toBeGreaterThanOrEqual(2);
  expect(seen.every((s) => s.req && s.res)).toBe(true);
});

test('a mounted sub-app gets its own prototypes inside it', async () => {
  expect(await (await fetch(`${base}/mounted/inside`)).json()).toEqual({ sub: true });
  expect(await (await fetch(`${base}/after`)).json()).toMatchObject({ app: true });
});

test('createIngestServer creates requests with express\'s prototypes exactly on V8 before 13', async () => {
  expect(PROTOTYPES_AT_CREATION).toBe(Number(process.versions.v8.split('.')[0]) < 13);
  const own = createIngestServer(app);
  const atCreation: boolean[] = [];
  own.prependListener('request', (req) => void atCreation.push(Object.getPrototypeOf(req) === app.request));
  await new Promise<void>((resolve) => own.listen(0, '127.0.0.1', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(own.address() as AddressInfo).port}/after`);
    expect(await res.json()).toMatchObject({ app: true, instances: true });
    expect(atCreation).toEqual([PROTOTYPES_AT_CREATION]);
  } finally {
    await new Promise((resolve) => own.close(resolve));
  }
});
