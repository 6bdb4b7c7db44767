import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DatasetSettings } from '../../../src/types/workload-settings.js';
import { SeededRandom } from '../../../src/utils/random.js';
import { countWordTokens } from '../../../src/utils/word-tokenizer.js';
import { loadDataset } from '../../../src/workload/datasets/dataset-registry.js';
import { loadTokenizer } from '../../../src/workload/tokenizer/load-tokenizer.js';

const tokenizerPath = join(import.meta.dirname, '../../fixtures/tokenizers/byte-level-bpe/tokenizer.json');
const datasets = join(import.meta.dirname, '../../fixtures/datasets');

describe('datasets with tokenizerPath', () => {
  it('random: every prompt has exactly its drawn number of tokens, the lengths drawn as without a tokenizer', async () => {
    const settings: DatasetSettings = { datasetName: 'random', numPrompts: 60, randomInputLen: 300, randomOutputLen: 50, randomRangeRatio: 0.1 };
    const tokenizer = await loadTokenizer(tokenizerPath);
    const requests = await loadDataset({ ...settings, tokenizerPath }, new SeededRandom(5));
    const withWords = await loadDataset(settings, new SeededRandom(5));
    expect(requests.map((request) => request.inputLength)).toEqual(withWords.map((request) => request.inputLength));
    expect(requests.map((request) => request.outputLength)).toEqual(withWords.map((request) => request.outputLength));
    for (const request of requests) {
      expect(tokenizer.countTokens(request.prompt as string)).toBe(request.inputLength);
    }
    // The word count is not the token count: the prompts really are the tokenizer's.
    expect(requests.some((request) => countWordTokens(request.prompt as string) !== request.inputLength)).toBe(true);
    expect(await loadDataset({ ...settings, tokenizerPath }, new SeededRandom(5))).toEqual(requests);
  });

  it('shared-prefix: system prompts and questions have exact token lengths, inputLength counts the whole prompt', async () => {
    const tokenizer = await loadTokenizer(tokenizerPath);
    const settings: DatasetSettings = {
      datasetName: 'shared-prefix',
      numPrompts: 1,
      gspNumGroups: 3,
      gspPromptsPerGroup: 4,
      gspSystemPromptLen: 200,
      gspQuestionLen: 30,
      gspOutputLen: 16,
      tokenizerPath,
    };
    const requests = await loadDataset(settings, new SeededRandom(9));
    expect(requests).toHaveLength(12);
    const systemPrompts = new Map<number, string>();
    for (const request of requests) {
      // No drawn token is whitespace only, so the blank line that joins the two parts is the only one.
      const [systemPrompt, question, ...rest] = (request.prompt as string).split('\n\n');
      expect(rest).toEqual([]);
      expect(tokenizer.countTokens(systemPrompt as string)).toBe(200);
      expect(tokenizer.countTokens(question as string)).toBe(30);
      expect(request.inputLength).toBe(tokenizer.countTokens(request.prompt as string));
      const group = request.prefixGroup as number;
      expect(systemPrompts.get(group) ?? systemPrompt).toBe(systemPrompt);
      systemPrompts.set(group, systemPrompt as string);
    }
    expect(new Set(systemPrompts.values()).size).toBe(3);
    expect(await loadDataset(settings, new SeededRandom(9))).toEqual(requests);
  });

  it('sharegpt: prompt and answer lengths are counted with the tokenizer', async () => {
    const tokenizer = await loadTokenizer(tokenizerPath);
    const path = join(datasets, 'sharegpt-small.json');
    type Turn = { from: string; value: string };
    const conversations = JSON.parse(readFileSync(path, 'utf8')) as { conversations?: Turn[]; conversation?: Turn[] }[];
    const answers = new Map<string, string>();
    for (const record of conversations) {
      const turns = record.conversations ?? record.conversation ?? [];
      const question = turns.findIndex((turn) => turn.from === 'human');
      const answer = turns.slice(question + 1).find((turn) => turn.from === 'gpt');
      if (question >= 0 && answer !== undefined) answers.set((turns[question] as { value: string }).value, answer.value);
    }
    const requests = await loadDataset({ datasetName: 'sharegpt', datasetPath: path, numPrompts: 100, tokenizerPath }, new SeededRandom(2));
    expect(requests.length).toBeGreaterThan(1);
    for (const request of requests) {
      const prompt = request.prompt as string;
      expect(request.inputLength).toBe(tokenizer.countTokens(prompt));
      expect(request.outputLength).toBe(tokenizer.countTokens(answers.get(prompt) as string));
    }
    expect(requests.some((request) => request.inputLength !== countWordTokens(request.prompt as string))).toBe(true);
  });

  it('custom: prompt, message and conversation lengths are counted with the tokenizer; token ids stay as given', async () => {
    const tokenizer = await loadTokenizer(tokenizerPath);
    const requests = await loadDataset(
      { datasetName: 'custom', datasetPath: join(datasets, 'custom-small.jsonl'), numPrompts: 10, tokenizerPath },
      new SeededRandom(1),
    );
    const count = (text: string): number => tokenizer.countTokens(text);
    expect(requests.map((request) => request.inputLength)).toEqual([
      count('Summarise the plot of a novel about routers'),
      count('And now in one sentence'),
      5,
      count('Be brief.') + count('What is KV cache?'),
      count('An SGLang style row with a question'),
    ]);
    expect(requests[4]?.outputLength).toBe(count('and an answer of seven words here'));
    expect(requests[0]?.outputLength).toBe(64);
  });

  it('a missing tokenizer stops the dataset with FILE_NOT_FOUND naming the file', async () => {
    await expect(
      loadDataset({ datasetName: 'random', numPrompts: 2, randomInputLen: 8, tokenizerPath: '/nonexistent/tokenizer.json' }, new SeededRandom(1)),
    ).rejects.toMatchObject({ code: 'FILE_NOT_FOUND', message: expect.stringContaining('/nonexistent/tokenizer.json') as string });
  });
});
