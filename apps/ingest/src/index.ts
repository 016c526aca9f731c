export { createApp } from './app.js';
export type { AppDeps } from './app-deps.js';
export { ApiError } from './api-error.js';
export { hashApiKey } from './auth.js';
export { loadIngestConfig, ingestConfigSchema, type IngestConfig } from './config.js';
export { acceptEvent, type AcceptedEvent } from './accept-event.js';
