/**
 * `require('weir')` (the `require` condition of package.json `exports`).
 *
 * weir is an ES module. Node 20.19+, 22.12+ and 24 can `require()` an ES module that has no
 * top-level `await` (weir has none), so this file hands back the same module namespace that
 * `import('weir')` gives: one instance of weir per process, whichever way it was loaded. Older
 * Nodes (20.10–20.18, 22.0–22.11) cannot; there it fails with an error that says what to do
 * instead of Node's generic ERR_REQUIRE_ESM. It is a plain Error with a code, not one of
 * `errors.ts`'s classes: those live in the ES module this Node cannot load.
 */

if ((process.features as { require_module?: boolean }).require_module !== true) {
  throw Object.assign(
    new Error(
      `require('weir') needs require() of ES modules: Node 20.19+, 22.12+ or 24, without ` +
        `--no-experimental-require-module; this is Node ${process.version}. Use \`await import('weir')\` ` +
        'instead, or upgrade Node.',
    ),
    { code: 'ERR_WEIR_REQUIRE_ESM' },
  );
}

module.exports = require('./index.js');
