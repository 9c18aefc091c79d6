#!/usr/bin/env node
// Runs the TypeScript sources directly (no build step), as `npm start` does.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
