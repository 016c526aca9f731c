// Types of node-flags.mjs, for TypeScript callers (the benchmark and the tests).

/** The node flags Postern's apps run with wherever they are started. */
export declare const APP_NODE_FLAGS: readonly string[];
