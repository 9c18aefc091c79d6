import { RE2 } from 're2-wasm';

/** Compiles a workspace price's model pattern; throws the engine's message when it is invalid. */
export function compileModelPattern(pattern: string): RE2 {
  return new RE2(`^(?:${pattern})$`, 'iu');
}
