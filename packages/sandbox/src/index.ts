export { createSandboxPool, type SandboxCall, type SandboxMemory, type SandboxPool, type SandboxPoolOptions, type SandboxRun } from './sandbox-pool.js';
export { runTransformation, type TransformationVerdict } from './run-transformation.js';
