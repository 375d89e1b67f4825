// Module resolve hook (see register.mjs): 'fs' imported from the conformance package resolves to fs-shim.mjs.
const shim = new URL('./fs-shim.mjs', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if (
    (specifier === 'fs' || specifier === 'node:fs') &&
    context.parentURL !== undefined &&
    context.parentURL.includes('/@modelcontextprotocol/conformance/')
  ) {
    return { url: shim, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
