import type { Rule } from 'eslint';

/** The rule of feature-layers.js: a file of a layered feature imports no layer above its own. */
export declare const featureLayers: Rule.RuleModule;
