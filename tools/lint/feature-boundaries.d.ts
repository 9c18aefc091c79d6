import type { Rule } from 'eslint';

/** The rule of feature-boundaries.js: no feature folder of src/ imports a sibling feature. */
export declare const featureBoundaries: Rule.RuleModule;
