import { fileURLToPath } from 'node:url';
import { Linter } from 'eslint';
import { describe, expect, it } from 'vitest';
import { featureLayers } from '../../tools/lint/feature-layers.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const options = { root: `${repoRoot}src/traces`, layers: [['api'], ['ingest', 'query'], ['writer'], ['model']] };

/** The messages of the rule on `code`, as if it were the file at `file` (relative to the repository). */
function lint(file: string, code: string): string[] {
  const linter = new Linter({ configType: 'flat' });
  const messages = linter.verify(
    code,
    [
      {
        files: ['**/*.ts'],
        plugins: { traces: { rules: { 'feature-layers': featureLayers } } },
        rules: { 'traces/feature-layers': ['error', options] },
      },
    ],
    `${repoRoot}${file}`,
  );
  return messages.map((m) => m.message);
}

describe('the feature layers lint rule', () => {
  it('takes an import from its own layer or from any layer below', () => {
    expect(lint('src/traces/api/routes.ts', "import { ingest } from '../ingest/ingest.js';")).toEqual([]);
    expect(lint('src/traces/api/routes.ts', "import { schema } from '../model/schemas.js';")).toEqual([]);
    expect(lint('src/traces/ingest/otlp/export.ts', "import { storeTraces } from '../ingest.js';")).toEqual([]);
    expect(lint('src/traces/writer/flush.ts', "import { configSchema } from '../../config.js';")).toEqual([]);
  });

  it('refuses an import, a re-export or a dynamic import from a layer above, or from a peer', () => {
    expect(lint('src/traces/writer/flush.ts', "import { rows } from '../ingest/rows.js';")).toEqual([
      "The layer 'writer' imports '../ingest/rows.js' from 'ingest', which is not below it (order: api > ingest|query > writer > model).",
    ]);
    expect(lint('src/traces/model/schemas.ts', "export * from '../api/routes.js';")).toHaveLength(1);
    expect(lint('src/traces/ingest/otlp/log-records.ts', "const m = await import('../../query/read.js');")).toHaveLength(1);
    expect(lint('src/traces/query/read.ts', "import { tombstone } from '../ingest/otlp/log-records.js';")).toHaveLength(1);
  });

  it('refuses a file at the top of the feature or in a folder that is not a layer', () => {
    expect(lint('src/traces/model/schemas.ts', "import { x } from '../loose.js';")).toHaveLength(1);
    expect(lint('src/traces/misc/thing.ts', 'export const x = 1;')).toEqual([
      "'misc' is not a layer of " + `${repoRoot}src/traces` + ': list it in the layers of the feature-layers rule.',
    ]);
  });

  it('leaves files outside the feature alone', () => {
    expect(lint('src/app.ts', "import { traceRoutes } from './traces/api/traces-routes.js';")).toEqual([]);
  });
});
