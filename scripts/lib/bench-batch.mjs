// The batch benchmark: what running tasks at once buys. The same 20 tasks on the e2e fixture
// pages (tests/e2e/lib/fixture-server.mjs) run as a batch (batch.mjs, as `scripts/run --tasks`
// runs them) at --parallel 1, 2 and 4, one after another in one headless Chromium, with a mock
// model (tests/e2e/lib/batch-model.mjs) that reads the state text, finds elements by their text
// and answers each request after 500 ms, as a model that thinks would.
//
// The tasks: clicking an "Action k" button on the 1,000-element step page and reporting it (2
// steps), logging in on the login form (2 steps, its password form allowed when asked), and
// reporting a page's title (1 step), in turn.
//
// Figures per level: the wall time of the 20 tasks and the throughput (tasks a minute); and the
// extension's own time per step: each task's seconds (from its start request until its end was
// seen, polled every 50 ms) minus the time the model held its requests, summed over the tasks
// and divided by their steps: opening the start page, observing, acting, recording, building
// the prompts and everything the browser does for the other tasks meanwhile (the measure of
// bench-step.mjs counts only the gaps between model calls; this one also counts the start and
// the end of each task). Before the levels one task runs uncounted (the worker's first start).
//
// Goals: parallel 4 at least 2.5× the throughput of parallel 1, and the step overhead at
// parallel 4 within 1.5× of parallel 1's. A task that fails still counts (it ran); each is
// named under the table. The machine's load average is printed with the figures: on a busy
// host the tasks at once share fewer free cores, and the overhead at parallel 4 grows. --json FILE writes {"rows": [{parallel, tasks,
// seconds, tasks_per_min, overhead_ms}]}.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { launchWithExtension, saveSettings, saveMaxParallelTasks } from './browser.mjs';
import { runBatch, useBrowser } from './batch.mjs';
import { startFixtureServer } from '../../tests/e2e/lib/fixture-server.mjs';
import { startBatchModel } from '../../tests/e2e/lib/batch-model.mjs';

const { values: args } = parseArgs({ options: { json: { type: 'string' } } });
const LEVELS = [1, 2, 4];
const TASKS = 20;
const MODEL_MS = 500;
const GOAL_THROUGHPUT = 2.5;
const GOAL_OVERHEAD = 1.5;

/** The 20 tasks of one level, their texts told apart by the level (the model's records of a
 * task are found by its text). */
function tasksFor(fixtures, label) {
  return Array.from({ length: TASKS }, (_, i) => {
    const n = i + 1;
    const kind = i % 3;
    const base = kind === 0 ? { task: `Click the button Action ${1 + 4 * (i % 5)}`, url: `${fixtures.url}/bench/step-page.html` }
      : kind === 1 ? { task: 'Log in as alice with password hunter2', url: `${fixtures.url}/login.html` }
        : { task: 'Report the page\'s title', url: `${fixtures.url}/start.html` };
    return { id: `b${String(n).padStart(2, '0')}`, line: n, task: `${base.task} (${label}, task ${n})`, url: base.url, schema: null, expect: null, expectUrlText: null };
  });
}

const fixtures = await startFixtureServer();
const model = await startBatchModel({ delayMs: MODEL_MS });
const profile = mkdtempSync(path.join(os.tmpdir(), 'tabwright-bench-batch-'));
const launched = await launchWithExtension(profile, { headless: true });
const rows = [];
const notes = [];
try {
  await saveSettings(launched.context, launched.extensionId, { baseUrl: model.llm.baseUrl, model: 'mock-model' });
  const lost = (b, why) => notes.push(`the browser went away: ${why}`);
  const browser = await useBrowser('local', { ...launched, disconnects: (fn) => launched.context.on('close', fn) }, 1, lost);
  const run = async (tasks, parallel) => {
    await saveMaxParallelTasks(launched.context, launched.extensionId, parallel);
    browser.capacity = parallel;
    browser.noted = false;
    const results = [];
    const began = performance.now();
    const outcome = await runBatch(tasks, [browser], { write: (r) => results.push(r), confirm: 'allow', pollMs: 50, log: () => {} });
    const seconds = (performance.now() - began) / 1000;
    if (outcome.notRun.length) throw new Error(`At parallel ${parallel}, ${outcome.notRun.length} tasks did not run.`);
    // A task that failed still ran and counts; the figures say how many did.
    for (const r of results.filter((x) => !x.success)) notes.push(`at parallel ${parallel}, ${r.id} failed: ${r.end_kind}: ${String(r.error ?? r.answer).slice(0, 160)}`);
    if (browser.capacity < parallel) notes.push(`at parallel ${parallel} the extension took ${browser.capacity} task${browser.capacity > 1 ? 's' : ''} at a time`);
    return { results, seconds };
  };

  // One task first, not counted: the worker's first start, the pages' first loads.
  await run(tasksFor(fixtures, 'warm-up').slice(0, 1), 1);
  for (const parallel of LEVELS) {
    const tasks = tasksFor(fixtures, `parallel ${parallel}`);
    const { results, seconds } = await run(tasks, parallel);
    let own = 0;
    let steps = 0;
    for (const r of results) {
      const text = tasks.find((t) => t.id === r.id).task;
      const waits = model.timeline.filter((e) => e.task === text).reduce((sum, e) => sum + (e.answered - e.received), 0) / 1000;
      own += r.seconds - waits;
      steps += r.steps;
    }
    rows.push({
      parallel,
      tasks: results.length,
      seconds: Number(seconds.toFixed(2)),
      tasks_per_min: Number(((60 * results.length) / seconds).toFixed(1)),
      overhead_ms: Number(((1000 * own) / steps).toFixed(1)),
      steps,
    });
  }
  await browser.close();
} finally {
  await launched.close().catch(() => {});
  await fixtures.close();
  await model.close();
  rmSync(profile, { recursive: true, force: true });
}

const pad = (v, n) => String(v).padStart(n);
console.log(`Batch benchmark — ${TASKS} tasks on the fixture pages (${rows[0].steps} steps), a mock model that answers after ${MODEL_MS} ms, one headless Chromium`);
console.log(`${'parallel'.padStart(8)}${pad('tasks', 7)}${pad('seconds', 9)}${pad('tasks/min', 11)}${pad('overhead ms/step', 18)}`);
for (const r of rows) console.log(`${pad(r.parallel, 8)}${pad(r.tasks, 7)}${pad(r.seconds.toFixed(1), 9)}${pad(r.tasks_per_min.toFixed(1), 11)}${pad(r.overhead_ms.toFixed(0), 18)}`);
const one = rows.find((r) => r.parallel === 1);
const four = rows.find((r) => r.parallel === 4);
const speedup = four.tasks_per_min / one.tasks_per_min;
const overheadRatio = four.overhead_ms / one.overhead_ms;
console.log(`${'throughput at parallel 4 / parallel 1'.padEnd(44)}${pad(`${speedup.toFixed(2)}×`, 8)}  goal ≥ ${GOAL_THROUGHPUT}×  ${speedup >= GOAL_THROUGHPUT ? 'met' : 'NOT met'}`);
console.log(`${'step overhead at parallel 4 / parallel 1'.padEnd(44)}${pad(`${overheadRatio.toFixed(2)}×`, 8)}  goal ≤ ${GOAL_OVERHEAD}×  ${overheadRatio <= GOAL_OVERHEAD ? 'met' : 'NOT met'}`);
for (const note of notes) console.log(`note: ${note}`);
console.log(`load average at the end (1, 5, 15 min): ${os.loadavg().map((x) => x.toFixed(2)).join(', ')} on ${os.cpus().length} CPUs`);
console.log('overhead: a task\'s seconds (start request to its end seen, polled every 50 ms) minus the model\'s 500 ms answers, over its steps.');
if (args.json) {
  writeFileSync(args.json, `${JSON.stringify({ rows: rows.map(({ steps, ...row }) => row) }, null, 2)}\n`);
  console.log(`Figures written to ${args.json}`);
}
