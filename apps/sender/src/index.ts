export { createSender, RetryScheduledError, type Sender, type SenderDeps } from './sender.js';
export { deliver, type DeliverDeps, type DeliverOutcome } from './deliver.js';
export { createGotTransport, type DeliveryTransport, type OutboundRequest, type TransportResult } from './http-transport.js';
export { checkDestination, systemLookupAll, type LookupAll } from './destination-check.js';
export { classifyNetworkError } from './network-errors.js';
export { createReconciler, type Reconciler } from './reconciler.js';
export { loadSenderConfig, senderConfigSchema, type SenderConfig } from './config.js';
export { SENDER_USER_AGENT } from './user-agent.js';
export { createJanitor, type Janitor } from './janitor.js';
