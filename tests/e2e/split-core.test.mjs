// scripts/split-core on a small module, run in Node's V8: the two modules it makes behave as
// the whole module did, the rest is loaded once, and only when a moved function is called.
// (core-split.test.mjs covers the core's own split in the browser.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../../scripts/lib/browser.mjs';

const SPLIT = path.join(ROOT, 'target', 'split-core', 'release', 'split-core');
const WASM_AS = path.join(ROOT, 'node_modules', '.bin', 'wasm-as');
let dir;
let whole;

before(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tabwright-split-'));
  // -g: keep the functions' names, which the split goes by.
  execFileSync(WASM_AS, ['-g', path.join(ROOT, 'tests', 'fixtures', 'split', 'module.wat'), '-o', path.join(dir, 'whole.wasm')]);
  whole = readFileSync(path.join(dir, 'whole.wasm'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Splits the module keeping `listed`; returns the split-core report and the two modules. */
function split(listed) {
  writeFileSync(path.join(dir, 'list.txt'), `# kept\n${listed.join('\n')}\n`);
  const report = execFileSync(SPLIT, ['whole.wasm', 'list.txt', 'startup.wasm', 'rest.wasm'], { cwd: dir, encoding: 'utf8' });
  return { report, startup: readFileSync(path.join(dir, 'startup.wasm')), rest: readFileSync(path.join(dir, 'rest.wasm')) };
}

/** The split pair instantiated as the worker does: the rest when the first module's loader asks. */
function instantiateSplit({ startup, rest }) {
  const loads = [];
  let exports = null;
  const instance = new WebAssembly.Instance(new WebAssembly.Module(startup), {
    env: {
      load() {
        loads.push(new WebAssembly.Instance(new WebAssembly.Module(rest), { startup: exports }));
      },
    },
  });
  exports = instance.exports;
  return { exports, loads };
}

test('the split pair computes what the whole module does, loading the rest once, on first use', () => {
  const pair = split(['square', 'start_only', 'everything']);
  assert.match(pair.report, /kept for the start \(0 listed names matching none\), 3 moved/);
  const reference = new WebAssembly.Instance(new WebAssembly.Module(whole), { env: { load() { throw new Error('the whole module never loads anything'); } } }).exports;
  const { exports, loads } = instantiateSplit(pair);

  // A kept function that calls only kept ones: no load.
  assert.equal(exports.start_only(7), reference.start_only(7));
  assert.equal(loads.length, 0, 'nothing moved was called');

  // Moved functions called directly, through the table, and calling back into a kept one,
  // with the first module's global and memory: the same results, call after call.
  for (const n of [3, 4, 10]) assert.equal(exports.everything(n), reference.everything(n), `everything(${n})`);
  assert.equal(loads.length, 1, 'the rest is loaded once');
  assert.equal(new Int32Array(exports.memory.buffer)[4], 100, 'the moved function wrote into the shared memory');
});

test('a listed name is matched without rustc\'s hash when none has it whole any more', () => {
  // The fixture's names have no hash; a list written by an older build has them.
  const pair = split(['square::h0123456789abcdef', 'start_only::hfedcba9876543210', 'everything::h00000000000000ff']);
  assert.match(pair.report, /3 moved/);
  const { exports, loads } = instantiateSplit(pair);
  assert.equal(exports.start_only(5), 25);
  assert.equal(loads.length, 0);
});

test('with nothing listed every function moves, and the pair still computes the same', () => {
  const pair = split([]);
  assert.match(pair.report, /moved/);
  const { exports, loads } = instantiateSplit(pair);
  assert.equal(exports.start_only(6), 36);
  assert.equal(exports.everything(2), 4 + 2 + 4);
  assert.equal(loads.length, 1);
});

test('a module without the loader export is refused, saying what is missing', () => {
  execFileSync(WASM_AS, ['-g', '-o', path.join(dir, 'bare.wasm'), '-'], { input: '(module (func $f (export "f")))' });
  assert.throws(
    () => execFileSync(SPLIT, ['bare.wasm', 'list.txt', 's.wasm', 'r.wasm'], { cwd: dir, encoding: 'utf8', stdio: 'pipe' }),
    (error) => /no `load_rest_of_core` export/.test(error.stderr),
  );
});
