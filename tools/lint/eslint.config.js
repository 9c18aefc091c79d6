// The repository's ESLint configuration (flat config), loaded through /eslint.config.js. It lives
// in this workspace so that typescript-eslint resolves the TypeScript 6.0 installed here: its
// type-aware rules need TypeScript's JavaScript API, which TypeScript 7 (the compiler of
// `npm run typecheck`) does not have.
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';
import { featureBoundaries } from './feature-boundaries.js';
import { featureLayers } from './feature-layers.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The folders of src/ in layers, each with its layers top to bottom (peers in one entry). */
const layeredFolders = {
  traces: [['api'], ['ingest', 'query'], ['fresh'], ['writer'], ['summaries'], ['cost'], ['tables'], ['model']],
  prompts: [['api'], ['service'], ['tables'], ['model']],
  tenancy: [['api'], ['service'], ['tables'], ['model']],
  http: [['routes'], ['requests', 'server'], ['wire']],
};

/** Folders with layers of their own inside a layer of the above: the OTLP bridge inside traces' `ingest` (its README; its entry points sit at its top). */
const innerLayers = {
  traces: [{ folder: 'traces/ingest/otlp', layers: [['logs'], ['mapping'], ['conventions'], ['values'], ['wire']] }],
};

const nodeGlobals = Object.fromEntries(
  ['process', 'console', 'Buffer', 'URL', 'URLSearchParams', 'setTimeout', 'clearTimeout', 'fetch', 'Response'].map((name) => [
    name,
    'readonly',
  ]),
);

export default tseslint.config(
  { ignores: ['**/node_modules/', '**/dist/', '.tmp/', 'data/', 'coverage/', 'packages/python/.venv/'] },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [js.configs.recommended],
    languageOptions: { globals: nodeGlobals },
  },
  {
    // The console's files (web/src) are checked against web/tsconfig.json, the service's against
    // the root one: the project service picks the nearest tsconfig of each file.
    files: ['**/*.ts', '**/*.tsx'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: repoRoot } },
    rules: {
      // Fastify plugins are async functions by contract (FastifyPluginAsync): one that only
      // registers routes has nothing to await and is still right. Promises that are dropped or
      // passed where none is expected are caught by no-floating-promises and no-misused-promises.
      '@typescript-eslint/require-await': 'off',
      // `_name` marks a binding kept on purpose (a destructured field left out, a parameter a
      // signature requires).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    files: ['web/src/**/*.ts', 'web/src/**/*.tsx'],
    extends: [reactHooks.configs.flat.recommended],
    rules: {
      // A missing dependency is a stale value on screen: an error, so it cannot land unseen.
      'react-hooks/exhaustive-deps': 'error',
      // Only says the React Compiler would skip a component (useVirtualizer's); the console is
      // not built with the compiler.
      'react-hooks/incompatible-library': 'off',
    },
  },
  {
    // The house rule of src/: a feature folder reaches another only through contract/ or stores/
    // (http/ is plumbing every route shares, egress/ the guard of outbound requests); see feature-boundaries.js.
    files: ['src/**/*.ts'],
    plugins: { loupe: { rules: { 'feature-boundaries': featureBoundaries } } },
    rules: {
      'loupe/feature-boundaries': [
        'error',
        {
          root: `${repoRoot}src`,
          features: ['tenancy', 'prompts', 'traces', 'sql', 'mcp', 'scores', 'datasets', 'evaluators', 'retention', 'monitors'],
          shared: ['http', 'contract', 'stores', 'egress', 'statistics'],
          allow: [],
        },
      ],
    },
  },
  // The layers of the folders that have them, top to bottom (each folder's README): a file imports
  // its own layer or one below, never one above, so a request only goes down; see feature-layers.js.
  // A folder with layers inside a layer (src/traces/ingest/otlp) is held to both.
  ...Object.entries(layeredFolders).map(([folder, layers]) => ({
    files: [`src/${folder}/**/*.ts`],
    plugins: { layers: { rules: { 'feature-layers': featureLayers } } },
    rules: {
      'layers/feature-layers': [
        'error',
        { root: `${repoRoot}src/${folder}`, layers },
        ...(innerLayers[folder] ?? []).map((inner) => ({ root: `${repoRoot}src/${inner.folder}`, layers: inner.layers })),
      ],
    },
  })),
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // Tests and benchmarks read JSON answers (`res.json()`, `fetch().json()` are `any`) and
      // check them with assertions; typing every answer would add casts that catch nothing the
      // assertions do not.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
