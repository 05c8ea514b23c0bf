// The headless runner: `scripts/run --task … --url … --out FILE` runs one task, prints each
// step as it happens and the final answer, and writes the history JSON. `--confirm` answers the
// task's questions before an act (here: sending the log-in form, which carries a password).
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
    if (/The person did not allow this/.test(state)) {
      return answer('Give up', [{ done: { text: 'Not allowed to sign in.', success: false } }]);
    }
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

/** Runs `scripts/run` with `args`; `input`, when given, is what it reads on stdin (a pipe,
 * not a terminal). `direct` runs the runner itself, without scripts/run's setup and build. */
function run(args, env, { input = null, direct = false } = {}) {
  return new Promise((resolve) => {
    const [command, all] = direct ? [process.execPath, [path.join(ROOT, 'scripts', 'lib', 'runner.mjs'), ...args]] : [path.join(ROOT, 'scripts', 'run'), args];
    const child = spawn(command, all, { env: { ...process.env, ...env }, stdio: [input === null ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (input !== null) child.stdin.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const LLM_ENV = () => ({ TABWRIGHT_LLM_BASE_URL: llm.baseUrl, TABWRIGHT_LLM_MODEL: 'mock-model', TABWRIGHT_LLM_API_KEY: 'sk-runner' });
const logins = () => fixtures.log.filter((line) => line === 'POST /login').length;

test('scripts/run --task runs one task headless, prints its steps and answer, and writes the history', async () => {
  const out = path.join(dir, 'history.json');
  const { code, stdout, stderr } = await run(
    ['--task', 'Log in as alice with password hunter2', '--url', `${fixtures.url}/login.html`, '--out', out, '--confirm', 'allow'],
    LLM_ENV(),
  );
  assert.equal(code, 0, `exit code; stderr:\n${stderr}\nstdout:\n${stdout}`);
  assert.match(stdout, /Step 1: Sign in/);
  assert.match(stdout, /^  ⚑ asked: .*Submit.* — allowed once by --confirm allow$/m, 'the form with the password waited, and was allowed');
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

test('--confirm: with no terminal the runner denies; --confirm ask reads the answer from stdin', async () => {
  const task = ['--task', 'Log in as alice with password hunter2', '--url', `${fixtures.url}/login.html`];

  // stdin is not a terminal: the default is deny, and the form is never sent.
  const before = logins();
  const denied = await run(task, LLM_ENV(), { direct: true });
  assert.equal(denied.code, 2, `exit code; stderr:\n${denied.stderr}\nstdout:\n${denied.stdout}`);
  assert.match(denied.stdout, /^  ⚑ asked: .*Submit.* — denied by --confirm deny$/m);
  assert.match(denied.stdout, /Final answer \(done, no success\):\nNot allowed to sign in\./);
  assert.equal(logins(), before, 'a denied submit never reaches the site');

  // Asked, the person's line answers: "t" allows such acts for the rest of the task.
  const asked = await run([...task, '--confirm', 'ask'], LLM_ENV(), { direct: true, input: 't\n' });
  assert.equal(asked.code, 0, `exit code; stderr:\n${asked.stderr}\nstdout:\n${asked.stdout}`);
  assert.match(asked.stdout, /^  ⚑ Tabwright asks before: .*Submit/m, 'the act is shown');
  assert.match(asked.stdout, /^    why: .+/m, 'and why it waits');
  assert.match(asked.stdout, /\[y\] once, \[t\] for this task; anything else: no › /, 'with the answers the task offers');
  assert.match(asked.stdout, /^  ⚑ asked: .*Submit.* — allowed for this task by you$/m);
  assert.match(asked.stdout, /Final answer \(done, success\):\nalice is signed in\./);
  assert.equal(logins(), before + 1, 'the allowed submit reached the site');

  // Anything but an offered answer is a no; so is a closed stdin.
  const refused = await run([...task, '--confirm', 'ask'], LLM_ENV(), { direct: true, input: 'a\n' });
  assert.equal(refused.code, 2, refused.stdout);
  assert.match(refused.stdout, /— denied by you$/m, '"a" is not offered for this act');
  const closed = await run([...task, '--confirm', 'ask'], LLM_ENV(), { direct: true, input: '' });
  assert.match(closed.stdout, /— denied by you$/m);
  assert.equal(logins(), before + 1);

  const wrong = await run([...task, '--confirm', 'maybe'], LLM_ENV(), { direct: true });
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /--confirm ask\|deny\|allow/);
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
