// A lint rule for the folders of src/: a feature (tenancy, prompts, traces, sql, mcp) imports another
// feature only through what every feature shares (contract/, stores/, http/, egress/), never directly, so
// each feature can be read, tested and changed alone. The shared folders import no feature at all.
// Files at the top of src/ (app.ts, main.ts, ...) wire the features together and may import any.
import path from 'node:path';

/** A path pattern of the allow-list: `**` spans folders, `*` stays within one. */
function globToRegExp(glob) {
  const body = glob
    .split('**')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '[^/]*'))
    .join('.*');
  return new RegExp(`^${body}$`);
}

/** @type {import('eslint').Rule.RuleModule} */
export const featureBoundaries = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid imports from a sibling feature folder of src/ except through the shared folders' },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string' },
          features: { type: 'array', items: { type: 'string' } },
          shared: { type: 'array', items: { type: 'string' } },
          allow: {
            type: 'array',
            items: {
              type: 'object',
              properties: { from: { type: 'string' }, to: { type: 'string' }, reason: { type: 'string' } },
              required: ['from', 'to', 'reason'],
              additionalProperties: false,
            },
          },
        },
        required: ['root', 'features', 'shared'],
        additionalProperties: false,
      },
    ],
    messages: {
      sibling: "The feature '{{from}}' imports '{{source}}' from the feature '{{to}}': go through contract/ or stores/ instead.",
      shared: "The shared folder '{{from}}' imports '{{source}}' from the feature '{{to}}': shared code must not depend on a feature.",
    },
  },
  create(context) {
    const { root, features, shared, allow = [] } = context.options[0];
    const src = path.resolve(root);
    const allowed = allow.map((entry) => ({ from: globToRegExp(entry.from), to: globToRegExp(entry.to) }));
    /** The first folder under src/ a path is in, and the path relative to the repository. */
    const locate = (file) => {
      const rel = path.relative(src, file);
      if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
      const parts = rel.split(path.sep);
      return parts.length > 1 ? { folder: parts[0], rel: path.relative(path.dirname(src), file).split(path.sep).join('/') } : null;
    };
    const importer = locate(context.filename);
    if (!importer || (!features.includes(importer.folder) && !shared.includes(importer.folder))) return {};

    const check = (node, source) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = locate(path.resolve(path.dirname(context.filename), source));
      if (!target || target.folder === importer.folder || !features.includes(target.folder)) return;
      const targetRel = target.rel.replace(/\.js$/, '.ts');
      if (allowed.some((entry) => entry.from.test(importer.rel) && entry.to.test(targetRel))) return;
      context.report({
        node,
        messageId: shared.includes(importer.folder) ? 'shared' : 'sibling',
        data: { from: importer.folder, to: target.folder, source },
      });
    };
    const fromSource = (node) => {
      if (node.source) check(node.source, node.source.value);
    };
    return {
      ImportDeclaration: fromSource,
      ExportNamedDeclaration: fromSource,
      ExportAllDeclaration: fromSource,
      ImportExpression: (node) => {
        if (node.source.type === 'Literal') check(node.source, node.source.value);
      },
    };
  },
};
