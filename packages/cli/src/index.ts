/** `@postern/cli`: the `postern` command, runnable in process (`runCli`) as well as from its bin. */
export { runCli, checkSignature, UsageError, type CliEnvironment, type SignatureCheck } from './program.js';
export { EXIT } from './output.js';
export { configPath, readConfig, removeConfig, writeConfig, cliConfigSchema, type CliConfig } from './config-file.js';
export { parseSavedRequest, formatSavedRequest, type SavedRequest } from './saved-request.js';
export { sinceToMs } from './duration.js';
