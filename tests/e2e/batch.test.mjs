// Batch runs: `scripts/run --tasks FILE.jsonl --out results.jsonl` runs each line's task and
// appends one result line per task. A line that is not a task is reported with its number and
// skipped; an expectation the answer does not meet fails the task; --resume after the runner
// was killed runs only the tasks without a line (none twice, no line lost); and with two
// browsers given as --browser-endpoint, the tasks of one that dies finish on the other.
// The model (lib/batch-model.mjs) finds elements by their text in the state the extension sent.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, launchServing, tabwrightIdIn } from '../../scripts/lib/browser.mjs';
import { startFixtureServer } from './lib/fixture-server.mjs';
import { startBatchSite } from './lib/batch-site.mjs';
import { startBatchModel } from './lib/batch-model.mjs';
import { newGate } from './lib/mock-llm.mjs';
import { until, stopServiceWorker } from './lib/harness.mjs';

let fixtures;
let site;
let dir;

before(async () => {
  fixtures = await startFixtureServer();
  site = await startBatchSite();
  dir = mkdtempSync(path.join(os.tmpdir(), 'tabwright-batch-test-'));
});

after(async () => {
  await fixtures?.close();
  await site?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the runner (runner.mjs itself, without scripts/run's setup and build) with `args`
 * and the model's LLM settings; resolves to {child, done}: `done` resolves to {code, stdout,
 * stderr} when it exits (or is killed after 150 s). */
function start(args, model, env = {}) {
  const llm = model
    ? { TABWRIGHT_LLM_BASE_URL: model.llm.baseUrl, TABWRIGHT_LLM_MODEL: 'mock-model', TABWRIGHT_LLM_API_KEY: 'sk-batch' }
    : { TABWRIGHT_LLM_BASE_URL: '', TABWRIGHT_LLM_MODEL: '', TABWRIGHT_LLM_API_KEY: '' };
  const child = spawn(process.execPath, [path.join(ROOT, 'scripts', 'lib', 'runner.mjs'), ...args], {
    env: { ...process.env, ...llm, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => { output.stdout += d; });
  child.stderr.on('data', (d) => { output.stderr += d; });
  const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
  const done = new Promise((resolve) => child.on('close', (code, signal) => {
    clearTimeout(timer);
    resolve({ code, signal, ...output });
  }));
  return { child, done, output };
}

const run = (args, model, env) => start(args, model, env).done;

/** Writes `lines` (objects are written as JSON, strings as they are) to a new task file. */
function taskFile(name, lines) {
  const file = path.join(dir, name);
  writeFileSync(file, `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`);
  return file;
}

const readLines = (file) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);
const byId = (lines) => Object.fromEntries(lines.map((l) => [l.id, l]));
const RESULT_FIELDS = ['id', 'task', 'success', 'answer', 'end_kind', 'steps', 'input_tokens', 'cached_tokens', 'output_tokens', 'cost_usd', 'seconds', 'error', 'endpoint', 'attempts'];

test('a batch runs each task, appends one line each, skips a line that is no task, and fails an unmet expectation', async () => {
  const model = await startBatchModel({ delayMs: 150 });
  try {
    const tasks = taskFile('tasks.jsonl', [
      { id: 'login', task: 'Log in as alice with password hunter2', url: `${fixtures.url}/login.html`, expect: 'ALICE  is signed in' },
      { id: 'sign', task: 'Sign the guestbook with the note "batch note 1"', url: `${site.url}/guestbook`, expect_url_text: { url: `${site.url}/notes`, text: 'batch note 1' } },
      '{"id": "broken", "task": 5}',
      { id: 'title', task: "Report the page's title", url: `${fixtures.url}/start.html`, schema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] }, expect: { title: 'Start' } },
      '',
      '{"task": "Click the button Action 5", "url": ',
      { task: 'Click the button Action 5', url: `${fixtures.url}/bench/step-page.html`, expect: 'Clicked Action 5' },
      { id: 'wrong', task: 'Say what the page says about the moon', url: `${fixtures.url}/start.html`, expect: 'the moon is made of cheese' },
      { id: 'login', task: 'Log in again', url: `${fixtures.url}/login.html` },
      { id: 'ghost', task: 'Sign the guestbook with the note "never written"', url: `${site.url}/guestbook`, expect_url_text: { url: `${site.url}/notes`, text: 'a note nobody wrote' } },
    ]);
    const out = path.join(dir, 'results.jsonl');
    const { code, stdout, stderr } = await run(['--tasks', tasks, '--out', out, '--parallel', '2', '--confirm', 'allow'], model);
    assert.equal(code, 2, `some tasks fail and lines were skipped: exit 2\nstderr:\n${stderr}\nstdout:\n${stdout}`);

    // Each line that is not a task is named by its number, with why.
    assert.match(stderr, /tasks\.jsonl:3: skipped: "task" must be text, not a number/);
    assert.match(stderr, /tasks\.jsonl:6: skipped: not JSON/);
    assert.match(stderr, /tasks\.jsonl:9: skipped: the id "login" is already line 1's/);
    assert.doesNotMatch(stderr, /tasks\.jsonl:5:/, 'a blank line is nothing');

    const lines = readLines(out);
    assert.deepEqual(lines.map((l) => l.id).sort(), ['ghost', 'line-7', 'login', 'sign', 'title', 'wrong']);
    for (const line of lines) assert.deepEqual(Object.keys(line), RESULT_FIELDS, `fields of ${line.id}`);
    const got = byId(lines);
    assert.equal(got.login.success, true, JSON.stringify(got.login));
    assert.equal(got.login.answer, 'alice is signed in.');
    assert.equal(got.login.end_kind, 'done');
    assert.ok(got.login.steps >= 2, 'it typed and sent the form, then answered');
    assert.ok(got.login.input_tokens > 0 && got.login.output_tokens > 0, 'the tokens come from the task\'s usage');
    assert.equal(typeof got.login.cached_tokens, 'number');
    assert.equal(got.login.endpoint, 'local');
    assert.equal(got.login.attempts, 1);
    assert.ok(got.login.seconds > 0);
    assert.match(stderr, /\[login\] asked: .*Submit.* — allowed once by --confirm allow/);
    assert.equal(got.sign.success, true, JSON.stringify(got.sign));
    assert.deepEqual(site.notes.filter((n) => n === 'batch note 1'), ['batch note 1']);
    assert.equal(got.title.success, true, JSON.stringify(got.title));
    assert.deepEqual(got.title.answer, { title: 'Start' }, 'a task with a schema answers data');
    assert.equal(got['line-7'].success, true, JSON.stringify(got['line-7']));
    assert.equal(got['line-7'].task, 'Click the button Action 5');
    assert.equal(got.wrong.success, false, 'the answer does not contain what was expected');
    assert.equal(got.wrong.end_kind, 'done');
    assert.match(got.wrong.error, /expectation not met: the answer does not contain "the moon is made of cheese"/);
    assert.equal(got.ghost.success, false, 'the page checked after the task does not show the text');
    assert.match(got.ghost.error, /does not show "a note nobody wrote"/);

    // The summary: success rate, totals, the slowest tasks.
    assert.match(stdout, /success +4 of 6 \(66\.7%\)/);
    assert.match(stdout, /tasks +6 with a result; 3 lines skipped \(not a task\)/);
    assert.match(stdout, /steps +\d+/);
    assert.match(stdout, /input tokens +[\d,]+ \([\d,]+ from the provider's cache\)/);
    assert.match(stdout, /slowest +\S+ [\d.]+ s/);
    assert.match(stdout, /failed +(wrong|ghost) \(done\): expectation not met/);
    // Progress, one line per change when stderr is not a terminal.
    assert.match(stderr, /^\[6\/6 done, 0 running, 2 failed\]/m);
    // Two at once in the one browser: the model was asked for two tasks at the same time
    // (unless the extension runs one task at a time, which it then says).
    if (!/runs 1 task at a time/.test(stderr)) {
      const overlap = model.timeline.some((a) => model.timeline.some((b) => a.task !== b.task
        && a.received < b.answered && b.received < a.answered));
      assert.ok(overlap, 'two tasks ran at once');
      assert.match(stderr, /^\[\d\/6 done, 2 running/m);
    }

    // The same results file again, without --resume: refused, and nothing is lost.
    const before = readFileSync(out, 'utf8');
    const again = await run(['--tasks', tasks, '--out', out], model);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already holds results: add --resume/);
    assert.equal(readFileSync(out, 'utf8'), before);
  } finally {
    await model.close();
  }
});

test('bad input says what is wrong and runs nothing', async () => {
  const out = path.join(dir, 'bad-results.jsonl');
  const missing = await run(['--tasks', path.join(dir, 'no-such.jsonl'), '--out', out], null);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /The task file .*no-such\.jsonl could not be read: there is no such file/);

  const empty = await run(['--tasks', taskFile('empty.jsonl', ['', '  ']), '--out', out], null);
  assert.equal(empty.code, 1);
  assert.match(empty.stderr, /The task file .*empty\.jsonl is empty/);

  const none = await run(['--tasks', taskFile('none.jsonl', ['[1, 2]', '{"task": "x", "colour": "red"}', '{"task": "x", "url": "ftp://a"}', '{"task": "x", "expect": {"a": 1}}']), '--out', out], null);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /none\.jsonl:1: skipped: a task line is a JSON object .*not a list/);
  assert.match(none.stderr, /none\.jsonl:2: skipped: unknown field "colour"/);
  assert.match(none.stderr, /none\.jsonl:3: skipped: "url" must be an http\(s\) URL/);
  assert.match(none.stderr, /none\.jsonl:4: skipped: "expect" is data, which only a task with a "schema" gives/);
  assert.match(none.stderr, /No line of .*none\.jsonl is a task that can run \(4 skipped\)/);

  const tasks = taskFile('one.jsonl', [{ task: 'anything' }]);
  const parallel = await run(['--tasks', tasks, '--out', out, '--parallel', 'many'], null);
  assert.equal(parallel.code, 1);
  assert.match(parallel.stderr, /--parallel is a whole number from 1 to 8/);
  const noOut = await run(['--tasks', tasks], null);
  assert.equal(noOut.code, 1);
  assert.match(noOut.stderr, /--out names the results file/);
  const endpoint = await run(['--tasks', tasks, '--out', out, '--browser-endpoint', 'localhost:9222'], null);
  assert.equal(endpoint.code, 1);
  assert.match(endpoint.stderr, /--browser-endpoint takes a ws:\/\/ \(or http:\/\/\) DevTools address/);
  assert.equal(existsSync(out), false, 'no results file is made');
});

test('--resume after the runner was killed runs only the tasks without a line: none twice, no line lost', async () => {
  const model = await startBatchModel({ delayMs: 400 });
  const profile = path.join(dir, 'resume-profile');
  try {
    const names = ['Report the page\'s title', 'Click the button Action 1', 'Click the button Action 9', 'Log in as alice with password hunter2', 'Click the button Action 13', 'Say nothing'];
    const urls = ['start.html', 'bench/step-page.html', 'bench/step-page.html', 'login.html', 'bench/step-page.html', 'start.html'];
    const tasks = taskFile('resume.jsonl', names.map((task, i) => ({ id: `r${i + 1}`, task: `${task} (task ${i + 1})`, url: `${fixtures.url}/${urls[i]}` })));
    const out = path.join(dir, 'resume-results.jsonl');
    const first = start(['--tasks', tasks, '--out', out, '--parallel', '2', '--confirm', 'allow', '--profile', profile], model);
    const written = await until(() => readLines(out).length, (n) => n >= 2, 90_000);
    assert.ok(written >= 2, `two lines written before the kill; stderr:\n${first.output.stderr}`);
    first.child.kill('SIGKILL');
    await first.done;
    const kept = readFileSync(out, 'utf8');
    const finished = readLines(out).map((l) => l.id);
    assert.ok(finished.length < names.length, 'killed before the end');

    const second = await run(['--tasks', tasks, '--out', out, '--resume', '--parallel', '2', '--confirm', 'allow', '--profile', profile], model);
    assert.equal(second.code, 0, `stderr:\n${second.stderr}\nstdout:\n${second.stdout}`);
    assert.match(second.stderr, new RegExp(`${finished.length} of 6 tasks already have a result in .*; running the other ${6 - finished.length}`));
    const text = readFileSync(out, 'utf8');
    assert.ok(text.startsWith(kept), 'the lines written before are as they were');
    const lines = readLines(out);
    assert.deepEqual(lines.map((l) => l.id).sort(), ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'], 'one line per task');
    assert.ok(lines.every((l) => l.success), JSON.stringify(lines));
    assert.match(second.stdout, /tasks +6 with a result; \d of them from an earlier run/);
    assert.match(second.stdout, /success +6 of 6/);
    // The model saw each task that had a line before the kill start once; the others at most
    // twice (those running when the runner was killed start again).
    names.forEach((task, i) => {
      const starts = model.starts(`${task} (task ${i + 1})`);
      const id = `r${i + 1}`;
      if (finished.includes(id)) assert.equal(starts, 1, `${id} ran once`);
      else assert.ok(starts >= 1 && starts <= 2, `${id} started ${starts} times`);
    });
  } finally {
    await model.close();
  }
});

test('--resume keeps a line cut short as it is and runs its task again', async () => {
  const model = await startBatchModel();
  try {
    const tasks = taskFile('cut.jsonl', [
      { id: 'c1', task: 'Say nothing (cut 1)', url: `${fixtures.url}/start.html` },
      { id: 'c2', task: 'Say nothing (cut 2)', url: `${fixtures.url}/start.html` },
    ]);
    const out = path.join(dir, 'cut-results.jsonl');
    const kept = `${JSON.stringify({ id: 'c1', task: 'Say nothing (cut 1)', success: true })}\n{"id":"c2","task":"Say no`;
    writeFileSync(out, kept);
    const { code, stderr } = await run(['--tasks', tasks, '--out', out, '--resume'], model);
    assert.equal(code, 0, stderr);
    assert.match(stderr, /cut-results\.jsonl:2: not a result line .*; kept as it is, and its task runs again/);
    assert.match(stderr, /1 of 2 tasks already have a result/);
    const text = readFileSync(out, 'utf8');
    assert.ok(text.startsWith(`${kept}\n`), 'nothing written is changed; the next line starts on its own');
    assert.equal(model.starts('Say nothing (cut 1)'), 0);
    assert.equal(model.starts('Say nothing (cut 2)'), 1);
    assert.equal(JSON.parse(text.trim().split('\n').at(-1)).id, 'c2');
  } finally {
    await model.close();
  }
});

test('two browsers as --browser-endpoint: the tasks of one that dies finish on the other, which is named', async () => {
  let gate = newGate();
  const model = await startBatchModel({ delayMs: 100, hold: () => gate?.promise });
  const browsers = [];
  try {
    for (const name of ['a', 'b']) {
      const profile = path.join(dir, `endpoint-${name}`);
      browsers.push(await launchServing(profile));
    }
    const [a, b] = browsers;
    const names = ['Click the button Action 1', 'Report the page\'s title', 'Click the button Action 5', 'Say nothing', 'Click the button Action 9', 'Report the page\'s title'];
    const urls = ['bench/step-page.html', 'start.html', 'bench/step-page.html', 'start.html', 'bench/step-page.html', 'start.html'];
    const tasks = taskFile('fleet.jsonl', names.map((task, i) => ({ id: `f${i + 1}`, task: `${task} (fleet ${i + 1})`, url: `${fixtures.url}/${urls[i]}` })));
    const out = path.join(dir, 'fleet-results.jsonl');
    const runner = start(['--tasks', tasks, '--out', out, '--parallel', '1', '--browser-endpoint', a.wsEndpoint, '--browser-endpoint', b.wsEndpoint, '--browser-endpoint', 'http://127.0.0.1:9', '--confirm', 'deny'], model);
    // One task in each browser, both waiting for the model: then browser a dies.
    const inFlight = () => new Set(model.timeline.filter((e) => e.answered === null).map((e) => e.task)).size;
    assert.equal(await until(inFlight, (n) => n === 2, 60_000), 2, `two tasks at once; stderr:\n${runner.output.stderr}`);
    await a.kill();
    gate.release();
    gate = null;
    const { code, stdout, stderr } = await runner.done;
    assert.equal(code, 0, `stderr:\n${stderr}\nstdout:\n${stdout}`);
    assert.match(stderr, /Browser http:\/\/127\.0\.0\.1:9 cannot be used: /, 'one that cannot be reached is named and left out');
    assert.match(stderr, new RegExp(`Browser ${a.wsEndpoint.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} lost: its connection closed; its 1 unfinished task goes to the other browsers`));
    const lines = readLines(out);
    assert.deepEqual(lines.map((l) => l.id).sort(), ['f1', 'f2', 'f3', 'f4', 'f5', 'f6']);
    assert.ok(lines.every((l) => l.success), JSON.stringify(lines));
    const retried = lines.filter((l) => l.attempts === 2);
    assert.equal(retried.length, 1, 'the task in the lost browser was tried again');
    assert.equal(retried[0].endpoint, b.wsEndpoint, 'on the other browser');
    assert.ok(lines.filter((l) => l.attempts === 1).every((l) => [a.wsEndpoint, b.wsEndpoint].includes(l.endpoint)));
  } finally {
    gate?.release();
    await Promise.all(browsers.map((browser) => browser.close()));
    await model.close();
  }
});

test('a task whose worker Chrome stopped mid-run is followed through its restore, not lost', async () => {
  let gate = newGate();
  const model = await startBatchModel({ delayMs: 50, hold: () => gate?.promise });
  const served = await launchServing(path.join(dir, 'endpoint-restart'));
  const { chromium } = await import('playwright-core');
  const watcher = await chromium.connectOverCDP(served.wsEndpoint);
  try {
    const tasks = taskFile('restart.jsonl', [
      { id: 'r1', task: 'Click the button Action 5 (restart)', url: `${fixtures.url}/bench/step-page.html`, expect: 'Clicked Action 5' },
    ]);
    const out = path.join(dir, 'restart-results.jsonl');
    const runner = start(['--tasks', tasks, '--out', out, '--browser-endpoint', served.wsEndpoint, '--confirm', 'deny'], model);
    const inFlight = () => model.timeline.filter((e) => e.answered === null).length;
    assert.equal(await until(inFlight, (n) => n === 1, 60_000), 1, `the task waits for the model; stderr:\n${runner.output.stderr}`);
    // Chrome stops the extension's service worker while the task waits for its model.
    const context = watcher.contexts()[0];
    const page = context.pages()[0] ?? (await context.newPage());
    await stopServiceWorker(context, page, await tabwrightIdIn(context));
    gate.release();
    gate = null;
    const { code, stderr } = await runner.done;
    const [line] = readLines(out);
    assert.deepEqual([line.id, line.end_kind, line.success, line.attempts], ['r1', 'done', true, 1], JSON.stringify(line));
    assert.equal(code, 0, stderr);
  } finally {
    gate?.release();
    await watcher.close().catch(() => {});
    await served.close();
    await model.close();
  }
});
