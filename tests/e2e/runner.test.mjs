// The headless runner: `scripts/run --task … --url … --out FILE` runs one task, prints each
// step as it happens and the final answer, and writes the history JSON.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../../scripts/lib/browser.mjs';
import { startFixtureServer } from './lib/fixture-server.mjs';
import { startMockLlm, answer } from './lib/mock-llm.mjs';
import { findIndex, field, findField } from './lib/state.mjs';

let fixtures;
let llm;
let dir;

before(async () => {
  fixtures = await startFixtureServer();
  llm = await startMockLlm((state) => {
    if (field(state, 'Title').startsWith('Welcome, alice')) {
      return answer('Report the result', [{ done: { text: 'alice is signed in.', success: true } }]);
    }
    const user = findField(state, 'Username');
    const pass = findField(state, 'Password');
    const submit = findIndex(state, />Submit$/);
    return answer('Sign in', [
      { input: { index: user, text: 'alice', clear: null } },
      { input: { index: pass, text: 'hunter2', clear: null } },
      { click: { index: submit } },
    ]);
  });
  dir = mkdtempSync(path.join(os.tmpdir(), 'tabwright-runner-'));
});

after(async () => {
  await fixtures?.close();
  await llm?.close();
  rmSync(dir, { recursive: true, force: true });
});

function run(args, env) {
  return new Promise((resolve) => {
    const child = spawn(path.join(ROOT, 'scripts', 'run'), args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('scripts/run --task runs one task headless, prints its steps and answer, and writes the history', async () => {
  const out = path.join(dir, 'history.json');
  const { code, stdout, stderr } = await run(
    ['--task', 'Log in as alice with password hunter2', '--url', `${fixtures.url}/login.html`, '--out', out],
    { TABWRIGHT_LLM_BASE_URL: llm.baseUrl, TABWRIGHT_LLM_MODEL: 'mock-model', TABWRIGHT_LLM_API_KEY: 'sk-runner' },
  );
  assert.equal(code, 0, `exit code; stderr:\n${stderr}\nstdout:\n${stdout}`);
  assert.match(stdout, /Step 1: Sign in/);
  assert.match(stdout, /✓ click \[\d+\] Submit — Clicked/);
  assert.match(stdout, /Final answer \(done, success\):\nalice is signed in\./);
  const history = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(history.task, 'Log in as alice with password hunter2');
  assert.equal(history.steps.length, 2);
  assert.deepEqual(history.steps[0].actions.map((a) => a.name), ['input', 'input', 'click']);
  assert.deepEqual(history.end, { kind: 'done', text: 'alice is signed in.', success: true });
  assert.equal(llm.requests[0].headers.authorization, 'Bearer sk-runner');
  assert.ok(fixtures.log.includes('POST /login'));
});

test('scripts/run --task without an LLM says which variables to set', async () => {
  const { code, stderr } = await run(['--task', 'anything', '--url', `${fixtures.url}/login.html`], {
    TABWRIGHT_LLM_BASE_URL: '', TABWRIGHT_LLM_MODEL: '',
  });
  assert.equal(code, 1);
  assert.match(stderr, /No model is chosen/);
  assert.match(stderr, /TABWRIGHT_LLM_MODEL/);
});

test('scripts/run --task with half an LLM configuration names the missing variable', async () => {
  const { code, stderr } = await run(['--task', 'anything', '--url', `${fixtures.url}/login.html`], {
    TABWRIGHT_LLM_BASE_URL: llm.baseUrl, TABWRIGHT_LLM_MODEL: '',
  });
  assert.equal(code, 1);
  assert.match(stderr, /Set TABWRIGHT_LLM_MODEL too/);
});
