import { constants } from 'node:buffer';

/**
 * The largest value `maxBodyBytes` and `maxSseEventBytes` may take. A body or an event is decoded into one JavaScript
 * string and then parsed; V8's strings end at `buffer.constants.MAX_STRING_LENGTH` characters (2^29 - 24 on 64-bit
 * Node, about 512 MiB), and a larger answer crashed the client with ERR_STRING_TOO_LONG, outside any request. Half of
 * that (256 MiB) leaves room for the decoded text and its parse side by side.
 */
export const MAX_RESPONSE_CAP_BYTES = Math.min(256 * 2 ** 20, constants.MAX_STRING_LENGTH - 1);

/**
 * The largest settings file `servelab run` and `servelab sweep` read. Real ones are a few kilobytes; a YAML parse of
 * hundreds of megabytes ends in a V8 abort instead of a message.
 */
export const MAX_SETTINGS_FILE_BYTES = 16 * 2 ** 20;
