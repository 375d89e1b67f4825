// Loaded with `node --import` by scripts/conformance.sh before the conformance suite's CLI.
//
// @modelcontextprotocol/conformance 0.2.0-alpha.x imports `globSync` from 'fs', which Node.js has only
// since 22.0; on Node 20 the whole CLI then fails to load, although it calls globSync only in its
// `tier-check` subcommand, which mcp-bridge does not use. On a Node without fs.globSync this registers a
// resolve hook that hands the suite's modules an 'fs' with a globSync that throws if it is ever called.
// On Node >= 22 it does nothing.
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') {
  register(new URL('./hooks.mjs', import.meta.url));
}
