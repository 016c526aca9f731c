/**
 * The benchmark's egress proxy, in its own process so its CPU is measured apart from Postern's:
 * the npm `proxy` package (a forward proxy with CONNECT, as Squid would be) on 127.0.0.1, a port
 * of its choosing, printed as `{"port": N}` on stdout. It tunnels only to 127.0.0.1 (any other
 * target is refused with 407), so the benchmark's traffic never leaves loopback.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProxy } from 'proxy';

/** CONNECT's target is `host:port`; a plain proxied request names an absolute URL. */
function targetHost(req: IncomingMessage): string {
  const target = req.url ?? '';
  if (req.method === 'CONNECT') return target.slice(0, target.lastIndexOf(':')).replace(/^\[|\]$/g, '');
  try {
    return new URL(target).hostname;
  } catch {
    return '';
  }
}

const server = createProxy(createServer());
server.authenticate = (req) => targetHost(req) === '127.0.0.1';
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
// Tunnels are sockets the server no longer tracks: nothing to drain at the end of a benchmark.
process.on('SIGTERM', () => process.exit(0));
