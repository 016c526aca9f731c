import { createRequire } from 'node:module';
import type * as BullMQ from 'bullmq';

const requireFromStore = createRequire(import.meta.url);

/**
 * BullMQ's `Queue` and `Job` classes, each loaded from its own module rather than from BullMQ's
 * index. Ingest uses only these two; the index also loads the worker, the sandboxed processor's
 * child processes, flow producers and BullMQ's PostgreSQL, Bun and Valkey backends, 246 modules
 * against 163 (docs/benchmarks.md, "Idle memory"). These are the very files the index loads
 * (CommonJS, one module cache), so the sender, which loads the index for its `Worker`, gets the
 * same classes and nothing twice.
 */
export const Queue = (requireFromStore('bullmq/dist/cjs/classes/queue.js') as Pick<typeof BullMQ, 'Queue'>).Queue;

/** BullMQ's `Job`, from its own module: see {@link Queue}. */
export const Job = (requireFromStore('bullmq/dist/cjs/classes/job.js') as Pick<typeof BullMQ, 'Job'>).Job;
