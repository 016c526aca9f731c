import type { Writable } from 'node:stream';
import { Redis, type Cluster } from 'ioredis';

/** The sockets already coalescing: a connection's 'connect' may come again for the same socket. */
const coalescing = new WeakSet<Writable>();

/**
 * Makes every socket a client opens to Redis send, in one write, all the commands written to it
 * during one turn of the event loop. The socket is corked at the first command of a turn and
 * uncorked in that turn's check phase (`setImmediate`), so the commands leave as one `writev`.
 *
 * Why: ioredis writes each command to its socket at once, one system call each, and Redis then
 * reads and answers each in its own wake-up. With many attempts in flight, the sender issues the
 * next command of several of them in the same turn (after one read brought several answers);
 * ingest likewise for concurrent requests. Coalesced, they cost one write here, one read and
 * one reply write in Redis. The bench measured about 10 % less CPU per delivery over ingest,
 * the sender and Redis together (docs/benchmarks.md, "Coalesced Redis writes").
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
 * second call for the same client adds nothing (a socket is hooked once).
 */
export function coalesceWrites(client: Redis | Cluster): void {
  if (client instanceof Redis) {
    client.on('connect', () => corkPerTurn(client.stream));
    return;
  }
  client.on('+node', (node: Redis) => coalesceWrites(node));
}

function corkPerTurn(socket: Writable | undefined): void {
  if (!socket || coalescing.has(socket)) return;
  coalescing.add(socket);
  const write = socket.write;
  let corked = false;
  const flush = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = function coalescedWrite(this: Writable, ...args: Parameters<Writable['write']>) {
    if (!corked && socket.writable) {
      corked = true;
      socket.cork();
      setImmediate(flush);
    }
    return write.apply(this, args);
  } as Writable['write'];
}
