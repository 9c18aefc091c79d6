import { fileURLToPath } from 'node:url';
import { Linter } from 'eslint';
import { describe, expect, it } from 'vitest';
import { featureBoundaries } from '../../tools/lint/feature-boundaries.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const options = {
  root: `${repoRoot}src`,
  features: ['tenancy', 'prompts', 'traces', 'sql'],
  shared: ['http', 'contract', 'stores'],
  allow: [{ from: 'src/prompts/metrics*.ts', to: 'src/traces/**', reason: 'test entry' }],
};

/** The messages of the rule on `code`, as if it were the file at `file` (relative to the repository). */
function lint(file: string, code: string): string[] {
  const linter = new Linter({ configType: 'flat' });
  const messages = linter.verify(
    code,
    [
      {
        files: ['**/*.ts'],
        plugins: { loupe: { rules: { 'feature-boundaries': featureBoundaries } } },
        rules: { 'loupe/feature-boundaries': ['error', options] },
      },
    ],
    `${repoRoot}${file}`,
  );
  return messages.map((m) => m.message);
}

describe('the feature boundary lint rule', () => {
  it('refuses an import, a re-export or a dynamic import from a sibling feature, at any depth', () => {
    expect(lint('src/traces/list.ts', "import { x } from '../prompts/store.js';")).toEqual([
      "The feature 'traces' imports '../prompts/store.js' from the feature 'prompts': go through contract/ or stores/ instead.",
    ]);
    expect(lint('src/traces/otlp/routes.ts', "import type { Key } from '../../tenancy/keys.js';")).toHaveLength(1);
    expect(lint('src/prompts/webhooks/send.ts', "export * from '../../sql/query.js';")).toHaveLength(1);
    expect(lint('src/sql/routes.ts', "export { listTraces } from '../traces/list.js';")).toHaveLength(1);
    expect(lint('src/tenancy/auth.ts', "const m = await import('../prompts/store.js');")).toHaveLength(1);
  });

  it('refuses a shared folder that imports a feature', () => {
    expect(lint('src/http/envelope.ts', "import { x } from '../traces/schemas.js';")).toEqual([
      "The shared folder 'http' imports '../traces/schemas.js' from the feature 'traces': shared code must not depend on a feature.",
    ]);
    expect(lint('src/stores/clickhouse.ts', "import { x } from '../tenancy/keys.js';")).toHaveLength(1);
  });

  it('lets a feature import itself, the shared folders and packages, and the top of src/ import anything', () => {
    const allowed = [
      "import { a } from './cost/pricing.js';",
      "import { b } from '../contract/index.js';",
      "import { c } from '../stores/postgres.js';",
      "import { d } from '../http/errors.js';",
      "import { z } from 'zod';",
    ].join('\n');
    expect(lint('src/traces/ingest.ts', allowed)).toEqual([]);
    expect(lint('src/traces/otlp/routes.ts', "import { e } from '../schemas.js';")).toEqual([]);
    expect(lint('src/app.ts', "import { f } from './traces/routes.js';\nimport { g } from './prompts/routes.js';")).toEqual([]);
  });

  it('lets an allow-listed file import what its entry names, and nothing else', () => {
    expect(lint('src/prompts/metrics.ts', "import { toStoredTime } from '../traces/rows.js';")).toEqual([]);
    expect(lint('src/prompts/metrics-schemas.ts', "import { q } from '../traces/schemas.js';")).toEqual([]);
    expect(lint('src/prompts/metrics.ts', "import { k } from '../tenancy/keys.js';")).toHaveLength(1);
    expect(lint('src/prompts/routes.ts', "import { q } from '../traces/schemas.js';")).toHaveLength(1);
  });
});
