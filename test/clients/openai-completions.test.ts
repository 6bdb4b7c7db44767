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
  it('sends model, prompt, max_tokens, temperature, rid, stream_options (usage on every chunk) and ignore_eos', async () => {
    const final = openAiCompletionsWire.tokenEvent(1, { finish: 'length' });
    const { outcome, sent } = await sendOnce('openai-completions', requestFor('cmpl-body'), [final, '[DONE]'], {
      model: 'meta-llama/Llama-3.1-8B-Instruct',
    });
    expect(outcome.success).toBe(true);
    expect(sent.body).toEqual({
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      max_tokens: 32,
      temperature: 0,
      stream: true,
      rid: 'cmpl-body',
      stream_options: { include_usage: true, continuous_usage_stats: true },
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
    expect(server.requests[0]?.body).toEqual({ model: 'default', max_tokens: 2, temperature: 0, stream: false, rid: 'cmpl-ids', prompt: [1, 2, 3] });
  });
});

describe('openai completions: per-chunk usage and error chunks (SGLang 2026)', () => {
  const chunk = (text: string, completionTokens: number | undefined, finish: string | null = null) =>
    JSON.stringify({
      id: 'cmpl-usage',
      object: 'text_completion',
      created: 1_760_000_000,
      model: 'm',
      choices: [{ index: 0, text, logprobs: null, finish_reason: finish, matched_stop: null }],
      usage: completionTokens === undefined ? null : { prompt_tokens: 8, total_tokens: 8 + completionTokens, completion_tokens: completionTokens, prompt_tokens_details: null, reasoning_tokens: 0 },
    });

  it('counts the tokens a chunk carried from its usage, also when its text was held back', async () => {
    const { outcome } = await sendOnce('openai-completions', requestFor('cmpl-held'), [
      chunk(' a', 1),
      chunk('', 2), // a token whose text the detokenizer has not released yet
      chunk(' bcd', 5),
      chunk(' e', 6, 'length'),
      '[DONE]',
    ]);
    expect(outcome.success).toBe(true);
    expect(outcome.actualOutputTokens).toBe(6);
    expect(outcome.interTokenLatencies).toHaveLength(5);
  });

  it('keeps counting right when usage is missing on some chunks', async () => {
    const { outcome } = await sendOnce('openai-completions', requestFor('cmpl-mixed'), [
      chunk(' a', undefined),
      chunk(' b', undefined),
      chunk(' cd', 4),
      chunk(' e', 5, 'length'),
      '[DONE]',
    ]);
    expect(outcome.actualOutputTokens).toBe(5);
    expect(outcome.interTokenLatencies).toHaveLength(4);
  });

  it('fails an error chunk with its code and message', async () => {
    const error = JSON.stringify({ error: { object: 'error', message: 'The server is overloaded.', type: 'SERVICE_UNAVAILABLE', param: null, code: 503 } });
    const { outcome } = await sendOnce('openai-completions', requestFor('cmpl-error'), [chunk(' a', 1), error, '[DONE]']);
    expect(outcome.success).toBe(false);
    expect(outcome.error).toBe('server_error');
    expect(outcome.errorMessage).toContain('The server is overloaded.');
    expect(outcome.serverStatusCode).toBe(503);
  });
});
