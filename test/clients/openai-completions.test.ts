import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock/clock.js';
import { createProtocolClient } from '../../src/clients/registry.js';
import type { ClientRequest } from '../../src/types/client.js';
import { requestFor, runClientConformance } from './conformance.js';
import { sendOnce } from './helpers/one-shot.js';
import { startScriptedServer } from './helpers/scripted-server.js';
import { openAiCompletionsWire } from './helpers/wires.js';

runClientConformance(openAiCompletionsWire, 'socket');
runClientConformance(openAiCompletionsWire, 'undici');

describe('openai completions specifics', () => {
  it('sends model, prompt, max_tokens, temperature, stream_options and ignore_eos', async () => {
    const final = openAiCompletionsWire.tokenEvent(1, { finish: 'length' });
    const { outcome, sent } = await sendOnce('openai-completions', requestFor('cmpl-body'), [final, '[DONE]'], {
      model: 'meta-llama/Llama-3.1-8B-Instruct',
    });
    expect(outcome.success).toBe(true);
    expect(sent.body).toEqual({
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      max_tokens: 4,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
      ignore_eos: true,
      prompt: 'one two three four five six seven eight',
    });
    expect(sent.headers['authorization']).toBeUndefined();
  });

  it('sends token ids as the prompt and leaves stream_options out when not streaming', async () => {
    const request: ClientRequest = {
      requestId: 'cmpl-ids',
      workload: { datasetIndex: 0, inputIds: [1, 2, 3], inputLength: 3, outputLength: 2 },
    };
    const server = await startScriptedServer(() => ({
      headers: { 'content-type': 'application/json' },
      steps: [{ write: openAiCompletionsWire.wholeBody(3, 2, 'length') }, { end: true }],
    }));
    const client = createProtocolClient('openai-completions', {
      baseUrl: `${server.url}/prefix/`,
      stream: false,
      sampling: { temperature: 0, ignoreEos: false },
      clock: systemClock,
    });
    const outcome = await client.send(request);
    await client.close();
    await server.close();
    expect(outcome.success).toBe(true);
    expect(server.requests[0]?.path).toBe('/prefix/v1/completions');
    expect(server.requests[0]?.body).toEqual({ model: 'default', max_tokens: 2, temperature: 0, stream: false, prompt: [1, 2, 3] });
  });
});
