import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layers of src/, lowest first. A file may import from its own layer and the layers below it, never above
 * (docs/CONTRIBUTING.md). Each entry lists the folders of one layer.
 */
const layers = [
  ['types'],
  ['clock', 'errors', 'utils', 'config'],
  ['workload', 'clients', 'engine', 'routing', 'analysis'],
  ['load', 'cluster', 'orchestration', 'scrape'],
  ['report'],
  ['experiments', 'cli'],
];

function layerRules() {
  return layers.slice(0, -1).map((folders, index) => {
    const above = layers.slice(index + 1).flat();
    return {
      files: folders.map((folder) => `src/${folder}/**/*.ts`),
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              {
                group: [...above.map((folder) => `**/${folder}/*`), '**/index.js'],
                message: `layer rule: src/${folders.join(', src/')} may not import from a higher layer (${above.join(', ')}) or the facade; see docs/CONTRIBUTING.md`,
              },
            ],
          },
        ],
      },
    };
  });
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'results/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  ...layerRules(),
);
