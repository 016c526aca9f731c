import type { Writable } from 'node:stream';
import { Redis, type Cluster } from 'ioredis';

/** The clients already hooked: `connectRedis` hooks what `createRedisConnection` may have hooked. */
const hooked = new WeakSet<Redis | Cluster>();

/**
 * Makes every socket a client opens to Redis send, in one write, the commands written to it during
 * one turn of the event loop while earlier commands still await their replies. Such a command
 * corks the socket, and the socket is uncorked in that turn's check phase (`setImmediate`), so
 * the commands leave as one `writev`. A command written while none awaits a reply goes out at once.
 *
 * Why: ioredis writes each command to its socket as it is issued, one system call each, and Redis
 * then reads and answers each in its own wake-up. At full speed the sender issues the next
 * commands of several attempts in the same turn (one read brought several answers), and ingest
 * likewise for concurrent requests; coalesced, they cost one write here and one read and one reply
 * write in Redis (docs/benchmarks.md, "Coalesced Redis writes").
 *
 * Why only behind a reply still awaited (Nagle's rule for TCP, with a turn for the timer): such a
 * command is answered after those replies anyway, as one connection answers in order, so holding
 * it to the end of the turn rarely delays its answer. A command on an idle connection would wait
 * for the rest of the turn for nothing: with every write held, the first attempt's p50 at 250
 * events/s rose by a millisecond and its p99 by a few.
 *
 * Nothing waits longer than the rest of the current turn: the check phase runs right after the
 * I/O callbacks of the same turn, and an event loop with an immediate pending does not block in
 * its poll. Order is kept (one socket, one write queue). A socket that ends or is destroyed while
 * corked behaves as without coalescing: `end()` flushes it, `destroy()` drops what was not yet
 * written and ioredis fails or resends those commands as it does for any lost connection.
 *
 * A standalone or Sentinel client's every socket (each reconnect opens a new one) is hooked at its
 * `connect`, before AUTH, SELECT and the ready check are written; a cluster client's node
 * connections are hooked as they join (`+node`). Call it right after creating the client; a
 * second call for the same client adds nothing.
 */
export function coalesceWrites(client: Redis | Cluster): void {
  if (hooked.has(client)) return;
  hooked.add(client);
  if (client instanceof Redis) {
    // ioredis writes a command, then queues it to await its reply: the queue holds earlier ones only.
    const awaitingReplies = () => client.commandQueue.length;
    client.on('connect', () => corkPerTurn(client.stream, awaitingReplies));
    return;
  }
  client.on('+node', (node: Redis) => coalesceWrites(node));
}

function corkPerTurn(socket: Writable | undefined, awaitingReplies: () => number): void {
  if (!socket) return;
  const write = socket.write;
  let corked = false;
  const flush = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = function coalescedWrite(this: Writable, ...args: Parameters<Writable['write']>) {
    if (!corked && socket.writable && awaitingReplies() > 0) {
      corked = true;
      socket.cork();
      setImmediate(flush);
    }
    return write.apply(this, args);
  } as Writable['write'];
}
