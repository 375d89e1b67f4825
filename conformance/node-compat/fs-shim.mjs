// Node's fs plus a globSync that fails loudly (see register.mjs).
import fs from 'node:fs';

export * from 'node:fs';
export default fs;

export function globSync() {
  throw new Error('fs.globSync needs Node.js 22 or newer');
}
