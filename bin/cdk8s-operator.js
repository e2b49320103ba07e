#!/usr/bin/env node
// The SDK ships TypeScript sources; tsx loads them (and a user's operator module) without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../lib/cli/main.ts');
