import { systemClock } from '../../../src/clock/clock.js';
import type { ProtocolName } from '../../../src/clients/registry.js';
import { createProtocolClient } from '../../../src/clients/registry.js';
import type { ClientRequest, ProtocolClientOptions } from '../../../src/types/client.js';
import type { ClientOutcome } from '../../../src/types/record.js';
import type { RecordedRequest } from './scripted-server.js';
import { sseEvent, startScriptedServer } from './scripted-server.js';

/** Sends one request to a server that answers with the given events, and returns what was sent and measured. */
export async function sendOnce(
  protocol: ProtocolName,
  request: ClientRequest,
  events: string[],
  options: Partial<ProtocolClientOptions> = {},
): Promise<{ outcome: ClientOutcome; sent: RecordedRequest }> {
  const server = await startScriptedServer(() => ({ steps: [...events.map((data) => ({ write: sseEvent(data) })), { end: true }] }));
  const client = createProtocolClient(protocol, {
    baseUrl: server.url,
    stream: true,
    sampling: { temperature: 0, ignoreEos: true },
    clock: systemClock,
    ...options,
  });
  try {
    const outcome = await client.send(request);
    const sent = server.requests[0];
    if (sent === undefined) throw new Error('the server received no request');
    return { outcome, sent };
  } finally {
    await client.close();
    await server.close();
  }
}
