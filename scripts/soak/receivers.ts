/**
 * The soak's receivers: one real HTTP server on 127.0.0.1 per endpoint, answering as its
 * {@link ReceiverBehaviour} decides and recording every request as a {@link ReceiverRecord}.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ReceiverRecord } from './records.js';

/** What the receiver does with one request. */
export type ReceiverDecision =
  | { kind: 'answer'; status: number; delayMs: number; retryAfterS?: number }
  /** Destroy the connection after `delayMs`, without an answer. */
  | { kind: 'close'; delayMs: number };

/** What a behaviour is told about a request: the event's number in the run (`data.n`), whether it came in a burst (`data.burst`), its attempt and the time. */
export interface RequestFacts {
  n: number;
  burst: boolean;
  attempt: number;
  nowMs: number;
}

/** Decides one answer; deterministic in its arguments (see `prng.ts` `hashUnit`). */
export type ReceiverBehaviour = (facts: RequestFacts) => ReceiverDecision;

/** A running receiver. */
export interface SoakReceiver {
  url: string;
  /** Requests still waiting for their answer. */
  open(): number;
  /** The client-side ports of the requests waiting for their answer (to find which sender sent them). */
  openRemotePorts(): number[];
  close(): Promise<void>;
}

const header = (v: string | string[] | undefined): string | null => (Array.isArray(v) ? (v[0] ?? null) : (v ?? null));

/** Starts a receiver for `endpointKey` on 127.0.0.1:0; every request is pushed to `records` when it ends. */
export async function startSoakReceiver(endpointKey: string, behaviour: ReceiverBehaviour, records: ReceiverRecord[]): Promise<SoakReceiver> {
  const sockets = new Set<Socket>();
  let open = 0;
  const openPorts = new Map<number, number>();
  const server: Server = createServer((req, res) => {
    const arrivalMs = Date.now();
    open++;
    const remotePort = req.socket.remotePort ?? 0;
    openPorts.set(remotePort, (openPorts.get(remotePort) ?? 0) + 1);
    const chunks: Buffer[] = [];
    let ended = false;
    let timer: NodeJS.Timeout | null = null;
    const record: ReceiverRecord = {
      endpointKey,
      deliveryId: header(req.headers['webhook-delivery-id']) ?? '',
      webhookId: header(req.headers['webhook-id']) ?? '',
      attempt: Number(header(req.headers['webhook-attempt']) ?? 0),
      orderingKey: header(req.headers['webhook-ordering-key']),
      sequence: header(req.headers['webhook-sequence']) === null ? null : Number(header(req.headers['webhook-sequence'])),
      arrivalMs,
      answerMs: arrivalMs,
      answer: 'closed-by-client',
      retryAfterS: null,
    };
    const finish = (answer: ReceiverRecord['answer']) => {
      if (ended) return;
      ended = true;
      open--;
      const left = (openPorts.get(remotePort) ?? 1) - 1;
      if (left > 0) openPorts.set(remotePort, left);
      else openPorts.delete(remotePort);
      if (timer) clearTimeout(timer);
      record.answerMs = Date.now();
      record.answer = answer;
      records.push(record);
    };
    // The client went away first (a timeout, or its process died).
    res.on('close', () => finish('closed-by-client'));
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let n = -1;
      let burst = false;
      try {
        const data = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { n?: number; burst?: boolean } }).data;
        n = Number(data?.n ?? -1);
        burst = data?.burst === true;
      } catch {
        // not a soak event: answer by attempt alone
      }
      const decision = behaviour({ n, burst, attempt: record.attempt, nowMs: Date.now() });
      timer = setTimeout(() => {
        if (ended) return;
        if (decision.kind === 'close') {
          finish('closed-by-receiver');
          req.socket.destroy();
          return;
        }
        if (decision.retryAfterS !== undefined) {
          res.setHeader('retry-after', String(decision.retryAfterS));
          record.retryAfterS = decision.retryAfterS;
        }
        res.statusCode = decision.status;
        finish(decision.status);
        res.end('soak');
      }, decision.delayMs);
    });
  });
  server.keepAliveTimeout = 5000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook/${endpointKey}`,
    open: () => open,
    openRemotePorts: () => [...openPorts.keys()],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** An event-loop delay of the receivers' process longer than this, ms, is recorded as a stall (`SoakRecords.receiverStalls`). */
export const RECEIVER_STALL_MS = 30;

/**
 * Watches this process's event loop (the receivers'): every 10 ms a timer notes how late it ran,
 * and a delay over {@link RECEIVER_STALL_MS} goes into `stalls` as `[fromMs, toMs]`. Returns stop.
 */
export function watchReceiverStalls(stalls: [number, number][]): () => void {
  const tickMs = 10;
  let last = Date.now();
  const timer = setInterval(() => {
    const now = Date.now();
    if (now - last - tickMs > RECEIVER_STALL_MS) stalls.push([last, now]);
    last = now;
  }, tickMs);
  timer.unref();
  return () => clearInterval(timer);
}
