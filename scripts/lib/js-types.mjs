// The extension's message types for TypeScript's checker, made from the JSON Schemas the Rust
// types derive (tests/types/*.schema.json, written by tests/js_types.rs) with
// json-schema-to-typescript. `--write` writes tests/types/*.d.ts; without it, a declaration
// file that differs from what the schema makes fails, saying how to make it again.
import { compile } from 'json-schema-to-typescript';
import { readFile, writeFile } from 'node:fs/promises';

const root = new URL('../../tests/types/', import.meta.url);
const write = process.argv.includes('--write');
const stale = [];
/** `node` with every `$ref` standing alone: schemars writes a field's default beside its `$ref`,
 * and json-schema-to-typescript makes each such pair a type of its own (a second `StoredLlm`). */
function bareRefs(node) {
  if (Array.isArray(node)) return node.map(bareRefs);
  if (!node || typeof node !== 'object') return node;
  if (typeof node.$ref === 'string') return { $ref: node.$ref, ...(node.description ? { description: node.description } : {}) };
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, bareRefs(value)]));
}

for (const name of ['to-core', 'from-core']) {
  const schema = bareRefs(JSON.parse(await readFile(new URL(`${name}.schema.json`, root), 'utf8')));
  const made = await compile(schema, schema.title, {
    bannerComment: `// Generated from ${name}.schema.json by scripts/lib/js-types.mjs: do not edit.`,
    additionalProperties: false,
    strictIndexSignatures: true,
    unreachableDefinitions: true,
    format: true,
    style: { singleQuote: true, printWidth: 120 },
  });
  const target = new URL(`${name}.d.ts`, root);
  if (write) {
    await writeFile(target, made);
    continue;
  }
  const kept = await readFile(target, 'utf8').catch(() => '');
  if (kept !== made) stale.push(`tests/types/${name}.d.ts`);
}
if (stale.length) {
  console.error(`${stale.join(' and ')} not what the schemas make: run node scripts/lib/js-types.mjs --write`);
  process.exit(1);
}
