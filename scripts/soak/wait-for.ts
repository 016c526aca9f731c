/**
 * The soak waits as the tests do: polling a condition with a deadline, never a bare sleep
 * (`waitUntil` of the test support, under the soak's name).
 */
export { waitUntil as waitFor } from '../../test/support/wait-until.js';
