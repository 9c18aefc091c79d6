import { fileURLToPath } from 'node:url';
import { Linter } from 'eslint';
import { describe, expect, it } from 'vitest';
import { featureLayers } from '../../tools/lint/feature-layers.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const options = { root: `${repoRoot}src/traces`, layers: [['api'], ['ingest', 'query'], ['writer'], ['model']] };

const otlp = { root: `${repoRoot}src/traces/ingest/otlp`, layers: [['mapping'], ['wire']] };

/** The messages of the rule on `code`, as if it were the file at `file` (relative to the repository). */
function lint(file: string, code: string, features: (typeof options)[] = [options]): string[] {
  const linter = new Linter({ configType: 'flat' });
  const messages = linter.verify(
    code,
    [
      {
        files: ['**/*.ts'],
        plugins: { traces: { rules: { 'feature-layers': featureLayers } } },
        rules: { 'traces/feature-layers': ['error', ...features] },
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
    expect(lint('src/traces/writer/flush.ts', "import { toSpanRows } from '../ingest/ingest.js';")).toEqual([
      "The layer 'writer' imports '../ingest/ingest.js' from 'ingest', which is not below it (order: api > ingest|query > writer > model).",
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

  it('holds a folder inside a layer to its own layers as well as to those of the feature', () => {
    const both = [options, otlp];
    expect(lint('src/traces/ingest/otlp/mapping/normalize.ts', "import { x } from '../wire/model.js';", both)).toEqual([]);
    expect(lint('src/traces/ingest/otlp/export.ts', "import { x } from './mapping/normalize.js';", both)).toEqual([]);
    expect(lint('src/traces/ingest/otlp/wire/json.ts', "import { x } from '../mapping/normalize.js';", both)).toEqual([
      "The layer 'wire' imports '../mapping/normalize.js' from 'mapping', which is not below it (order: mapping > wire).",
    ]);
    expect(lint('src/traces/ingest/otlp/wire/json.ts', "import { x } from '../../../api/routes.js';", both)).toHaveLength(1);
    expect(lint('src/traces/ingest/otlp/misc/thing.ts', 'export const x = 1;', both)).toHaveLength(1);
  });

  it('leaves files outside the feature alone', () => {
    expect(lint('src/app.ts', "import { traceRoutes } from './traces/api/traces-routes.js';")).toEqual([]);
  });
});
