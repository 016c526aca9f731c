// The node flags Postern's apps run with, wherever they are started: `npm start`
// (scripts/start.mjs), each app's `npm start`, the Docker image and docker-compose.yml, and the
// benchmark's processes. test/operate/node-flags.test.ts checks that those places say the same.
// Why these values: docs/operations.md, "Memory"; measured with `npm run bench:heap`.

/**
 * `--max-old-space-size=384`: V8 scales how far the old generation grows past what is live before
 * a full collection with this limit: about 1.3-1.4× at a few hundred MB, up to 4× under Node's
 * own ~4 GB. So each app peaks near 100 MB resident at full speed instead of 165-195 MB; 384 MB is
 * several times either app's live heap. `--max-semi-space-size=4`: young-generation semi-spaces of 4 MB
 * instead of 16 MB; 1 MB cost CPU per delivery, 8 MB saved none and held more.
 * `--single-threaded-gc`: V8 collects on the app's own thread, with no helper threads. Ingest, the
 * sender, Redis and the receivers share a few cores; helper threads competed with them, and a
 * collection's pause waited on helpers the scheduler had put aside. On 2 cores this took the
 * first-attempt p99 at 250 events/s from 14-16 ms to 9-10 ms and CPU per delivery down about 5 %,
 * at the same peak RSS (docs/benchmarks.md, "Heap settings").
 *
 * @type {readonly string[]}
 */
export const APP_NODE_FLAGS = Object.freeze(['--max-old-space-size=384', '--max-semi-space-size=4', '--single-threaded-gc']);
