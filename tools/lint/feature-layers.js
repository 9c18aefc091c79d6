// A lint rule for the layers inside a folder of src/ (src/traces, src/prompts, ...: see their READMEs): each first-level
// folder is a layer, the layers are listed top to bottom, and a file imports only from its own
// layer or from a layer below it. So a read or a write walks down the folders and never climbs back.
// Each option is one folder with its layers; a folder inside another's layer (src/traces/ingest/otlp
// inside `ingest`) is held to both.
import path from 'node:path';

/** @type {import('eslint').Rule.RuleModule} */
export const featureLayers = {
  meta: {
    type: 'problem',
    docs: { description: "Forbid imports from a feature's higher layer (a folder listed earlier)" },
    schema: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          /** The feature folder. */
          root: { type: 'string' },
          /** The layers top to bottom; each entry the folders of one layer (peers do not import each other). */
          layers: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
        },
        required: ['root', 'layers'],
        additionalProperties: false,
      },
    },
    messages: {
      up: "The layer '{{from}}' imports '{{source}}' from '{{to}}', which is not below it (order: {{order}}).",
      unlisted: "'{{folder}}' is not a layer of {{root}}: list it in the layers of the feature-layers rule.",
    },
  },
  create(context) {
    const checks = context.options.map((option) => layerCheck(context, option)).filter((check) => check !== null);
    if (checks.length === 0) return {};
    const check = (node, source) => {
      for (const one of checks) one(node, source);
    };
    const fromSource = (node) => {
      if (node.source) check(node.source, node.source.value);
    };
    return {
      Program: (node) => check(node, undefined),
      ImportDeclaration: fromSource,
      ExportNamedDeclaration: fromSource,
      ExportAllDeclaration: fromSource,
      ImportExpression: (node) => {
        if (node.source.type === 'Literal') check(node.source, node.source.value);
      },
    };
  },
};

/**
 * The check of one folder's layers for the file being linted: called with the program (source
 * undefined) and with each import's source; null when the file is not in one of its layers.
 */
function layerCheck(context, { root, layers }) {
  const base = path.resolve(root);
  const rank = new Map(layers.flatMap((folders, i) => folders.map((folder) => [folder, i])));
  const order = layers.map((folders) => folders.join('|')).join(' > ');
  /** The layer folder of a path inside the feature; null outside it, '' for a file at its top. */
  const layerOf = (file) => {
    const rel = path.relative(base, file);
    if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
    const parts = rel.split(path.sep);
    return parts.length > 1 ? parts[0] : '';
  };
  const from = layerOf(context.filename);
  if (from === null || from === '') return null;
  if (!rank.has(from)) {
    return (node, source) => {
      if (source === undefined) context.report({ node, messageId: 'unlisted', data: { folder: from, root } });
    };
  }
  return (node, source) => {
    if (typeof source !== 'string' || !source.startsWith('.')) return;
    const to = layerOf(path.resolve(path.dirname(context.filename), source));
    if (to === null || to === from) return;
    if (to !== '' && rank.has(to) && rank.get(to) > rank.get(from)) return;
    context.report({ node, messageId: 'up', data: { from, to: to || root, source, order } });
  };
}
