/**
 * The contract the server and the client share (span kinds, template grammar and renderer).
 * Its source lives in the client package, which ships it inside its build; the server reads
 * it from there through this module, so neither side keeps a copy.
 */
export * from '../../packages/sdk/src/contract/index.js';
