import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock/clock.js';
import { createProtocolClient } from '../../src/clients/registry.js';
import type { ClientRequest } from '../../src/types/client.js';
import { requestFor, runClientConformance } from './conformance.js';
import { sendOnce } from './helpers/one-shot.js';
import { openAiChatWire } from './helpers/wires.js';

runClientConformance(openAiChatWire, 'socket');
runClientConformance(openAiChatWire, 'undici');

describe('openai chat specifics', () => {
  it('sends messages (a text prompt becomes one user message) and counts reasoning content as tokens', async () => {
    const reasoning = JSON.stringify({
      id: 'c',
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta: { role: 'assistant', content: null, reasoning_content: 'thinking' }, finish_reason: null }],
    });
    const final = openAiChatWire.tokenEvent(2, { finish: 'stop' });
    const { outcome, sent } = await sendOnce('openai-chat', requestFor('chat-body'), [reasoning, final, '[DONE]'], {
      model: 'm',
      apiKey: 'sk-test',
    });
    expect(sent.body?.['messages']).toEqual([{ role: 'user', content: 'one two three four five six seven eight' }]);
    expect(sent.body?.['model']).toBe('m');
    expect(sent.body?.['stream_options']).toEqual({ include_usage: true, continuous_usage_stats: true });
    expect(sent.body?.['rid']).toBe('chat-body');
    expect(sent.headers['authorization']).toBe('Bearer sk-test');
    expect(outcome.success).toBe(true);
    expect(outcome.actualOutputTokens).toBe(2);
    expect(outcome.finishReason).toBe('stop');
  });

  it('sends plain OpenAI requests without the SGLang and vLLM extensions when asked (for OpenAI\'s own API)', async () => {
    const final = openAiChatWire.tokenEvent(2, { finish: 'stop' });
    const { outcome, sent } = await sendOnce('openai-chat', requestFor('plain'), [final, '[DONE]'], { openaiExtensions: false });
    expect(sent.body?.['stream_options']).toEqual({ include_usage: true });
    expect(sent.body).not.toHaveProperty('rid');
    expect(sent.body).not.toHaveProperty('ignore_eos');
    expect(outcome.success).toBe(true);
  });

  it('refuses a token-id workload with a clear configuration error', async () => {
    const client = createProtocolClient('openai-chat', {
      baseUrl: 'http://127.0.0.1:9',
      stream: true,
      sampling: { temperature: 0, ignoreEos: true },
      clock: systemClock,
    });
    const idsOnly: ClientRequest = { requestId: 'ids', workload: { datasetIndex: 0, inputIds: [1], inputLength: 1, outputLength: 1 } };
    await expect(client.send(idsOnly)).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    await client.close();
  });
});
