import { readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { ServelabError } from '../../errors/servelab-error.js';
import { TextTokenizer } from './text-tokenizer.js';

const FIX =
  'give --tokenizer (config: tokenizerPath) the path of the model\'s tokenizer.json on this machine, the file from the ' +
  "model's Hugging Face repository (servelab never downloads tokenizers)";

/** Loaded tokenizers by absolute path; a file that changed (size or modification time) is loaded again. */
const loaded = new Map<string, { sizeBytes: number; modifiedMs: number; tokenizer: Promise<TextTokenizer> }>();

/**
 * Loads a tokenizer from a local `tokenizer.json` (the Hugging Face tokenizers format; BPE, WordPiece and Unigram
 * models), with the `tokenizer_config.json` beside it when there is one. The library is handed parsed JSON and has no
 * way to reach a network, so nothing is ever downloaded. Throws FILE_NOT_FOUND or INVALID_DATASET naming the file.
 */
export async function loadTokenizer(path: string): Promise<TextTokenizer> {
  const absolutePath = resolve(path);
  let sizeBytes: number;
  let modifiedMs: number;
  try {
    const info = await stat(absolutePath);
    if (info.isDirectory()) {
      throw new ServelabError('INVALID_DATASET', `tokenizer path ${path} is a directory; ${FIX}`);
    }
    sizeBytes = info.size;
    modifiedMs = info.mtimeMs;
  } catch (error) {
    throw fileError(path, error);
  }
  const cached = loaded.get(absolutePath);
  if (cached !== undefined && cached.sizeBytes === sizeBytes && cached.modifiedMs === modifiedMs) return cached.tokenizer;
  const tokenizer = readTokenizer(path, absolutePath);
  loaded.set(absolutePath, { sizeBytes, modifiedMs, tokenizer });
  // A failed load is not remembered: the next call reports the problem afresh (or succeeds once the file is fixed).
  tokenizer.catch(() => {
    if (loaded.get(absolutePath)?.tokenizer === tokenizer) loaded.delete(absolutePath);
  });
  return tokenizer;
}

async function readTokenizer(path: string, absolutePath: string): Promise<TextTokenizer> {
  const tokenizerJson = await readJson(path, absolutePath);
  const configPath = join(dirname(absolutePath), 'tokenizer_config.json');
  let config: unknown = {};
  try {
    config = JSON.parse(await readFile(configPath, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new ServelabError(
        'INVALID_DATASET',
        `cannot read ${configPath} (read beside the tokenizer ${path}): ${describe(error)}; fix or remove it`,
        { cause: error },
      );
    }
  }
  if (!isObject(tokenizerJson) || !isObject(tokenizerJson['model'])) {
    throw new ServelabError('INVALID_DATASET', `${path} is not a tokenizer.json (no "model" object); ${FIX}`);
  }
  try {
    return new TextTokenizer(absolutePath, new Tokenizer(tokenizerJson, isObject(config) ? config : {}));
  } catch (error) {
    throw new ServelabError('INVALID_DATASET', `${path} is not a tokenizer.json this version can load: ${describe(error)}; ${FIX}`, {
      cause: error,
    });
  }
}

async function readJson(path: string, absolutePath: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(absolutePath, 'utf8');
  } catch (error) {
    throw fileError(path, error);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ServelabError('INVALID_DATASET', `${path} is not valid JSON (${describe(error)}); ${FIX}`, { cause: error });
  }
}

function fileError(path: string, error: unknown): ServelabError {
  if (error instanceof ServelabError) return error;
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
    return new ServelabError('FILE_NOT_FOUND', `tokenizer file not found: ${path}; ${FIX}`, { cause: error });
  }
  return new ServelabError('INVALID_DATASET', `cannot read tokenizer file ${path}: ${describe(error)}; ${FIX}`, { cause: error });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
