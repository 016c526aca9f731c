/** The User-Agent of every request Postern sends (docs/architecture.md: `Postern/<version>`). */
export const SENDER_USER_AGENT = 'Postern/0.1.0';
