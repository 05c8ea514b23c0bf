// The step benchmark: what the extension itself costs per agent step, and how long the service
// worker takes to come back from a stop. Prints a table; --json FILE writes the figures.
//
// Step overhead. A task of 20 clicks on a page of 1,000 elements (tests/e2e/fixtures/bench/
// step-page.html), driven through the side panel by a mock LLM that answers at once: each
// answer clicks a different "Action k" button (a click that stays on the page and shows an
// effect), the 21st answer is `done`. The mock timestamps each request when it has been read
// in full and each answer once it has been written; the gap between answering request k and
// receiving request k+1 is everything the extension does between two LLM calls: parse and
// check the answer, act, record and save the step, observe the page again, build the action
// union, the prompt and the schema, and send. That gap is the step overhead; the figures are
// the median and the 95th percentile of the 20 gaps. The step records' own timings break it
// down (`phases`).
//
// Cold start. From an extension page with no port open to the worker: stop every service
// worker (CDP `ServiceWorker.stopAllWorkers`), wait until Chrome reports the worker stopped,
// then time, in the page, one `get_status` message until its reply: that is Chrome starting
// the worker, the modules loading, the wasm compiling and instantiating, and the core
// answering. The figure is the median of --runs such starts. It is measured twice:
//   - in a Chromium started without Playwright and with no debugger attached to the worker,
//     as a user's browser runs it (the figure the goal is checked against). There the worker's
//     own startup marks (extension/background.js), read over CDP once it has answered, split
//     each start into Chrome starting the worker, the modules evaluating, the core loading and
//     the answer; and the same browser gives two anchors: a do-nothing MV3 worker's cold start,
//     and the time to compile the same wasm in a page;
//   - in the Playwright browser that ran the step task, for reference: Playwright attaches to
//     every new worker and holds it at its first line until it has set up its session, and
//     there the worker also restores the finished 21-step task from session storage.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromiumPath, EXTENSION_DIR } from './browser.mjs';
import { startHarness, runTaskToEnd } from '../../tests/e2e/lib/harness.mjs';
import { startMockLlm, answer } from '../../tests/e2e/lib/mock-llm.mjs';
import { elements } from '../../tests/e2e/lib/state.mjs';

const { values: args } = parseArgs({ options: { json: { type: 'string' }, runs: { type: 'string', default: '5' } } });
const RUNS = Math.max(1, Number(args.runs));
const CLICKS = 20;
const GOAL_MS = 50;
const FIXTURE = 'bench/step-page.html';

const sorted = (xs) => [...xs].sort((a, b) => a - b);
const median = (xs) => {
  const s = sorted(xs);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
/** Nearest-rank percentile. */
const percentile = (xs, p) => sorted(xs)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];
const round = (x) => Number(x.toFixed(2));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// --- Step overhead --------------------------------------------------------------------------

/** The mock LLM's policy: a different "Action k" button each step, found by its text in the
 * state the extension sent, then `done`. Returns {llm, timeline, clicked}; timeline[i] is
 * {received, answered} for request i, in performance.now() milliseconds. */
async function startClickingLlm() {
  const timeline = [];
  const clicked = [];
  const llm = await startMockLlm(async (state) => {
    const entry = { received: performance.now(), answered: null, bytes: state.length };
    timeline.push(entry);
    // The mock writes its answer synchronously once this policy's promise settles; an
    // immediate callback runs after that write.
    setImmediate(() => { entry.answered = performance.now(); });
    if (clicked.length >= CLICKS) {
      return answer('Finish', [{ done: { text: `Clicked ${clicked.length} buttons.`, success: true } }]);
    }
    const buttons = elements(state)
      .map((e) => ({ index: e.index, k: /^button\b[^>]*>Action (\d+) \/>/.exec(e.line)?.[1] }))
      .filter((e) => e.k !== undefined && !clicked.includes(e.k));
    if (!buttons.length) {
      return answer('Give up', [{ done: { text: `No unclicked Action button in view after ${clicked.length} clicks.`, success: false } }]);
    }
    clicked.push(buttons[0].k);
    return answer(`Click Action ${buttons[0].k}`, [{ click: { index: buttons[0].index } }]);
  });
  return { llm, timeline, clicked };
}

async function measureSteps(h) {
  const { llm, timeline, clicked } = await startClickingLlm();
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model' });
  const site = await h.openFixture(FIXTURE);
  const pageElements = await site.evaluate(() => document.getElementsByTagName('*').length);
  const panel = await h.openPanel();
  const getStatus = () => panel.evaluate(() => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'get_status' } }));
  let final;
  try {
    final = await runTaskToEnd(panel, `Click ${CLICKS} different Action buttons, one per step, then finish.`, 120_000);
  } catch (error) {
    const events = (await getStatus().catch(() => ({ events: [] }))).events ?? [];
    const told = events.slice(-4).map((e) => JSON.stringify(e).slice(0, 400));
    throw new Error(`The step task did not finish (${error.message.split('\n')[0]}); ${timeline.length} LLM requests; `
      + `panel notice: ${await panel.locator('#notice').textContent().catch(() => '')}; last events:\n  ${told.join('\n  ')}`);
  }
  const status = await getStatus();
  await llm.close();

  // The task must have been what it claims: 20 clicks that worked, on the same page, then done.
  const records = status.events.filter((e) => e.type === 'step_finished').map((e) => e.record);
  const problems = [];
  if (records.length !== CLICKS + 1) problems.push(`${records.length} steps instead of ${CLICKS + 1}`);
  if (timeline.length !== CLICKS + 1) problems.push(`${timeline.length} LLM requests instead of ${CLICKS + 1}`);
  records.slice(0, CLICKS).forEach((r) => {
    const action = r.actions[0];
    if (r.error || action?.name !== 'click' || action.result.is_error || r.url !== records[0].url) {
      problems.push(`step ${r.step}: ${r.error ?? `${action?.description} → ${action?.result.message}`} (${r.url})`);
    }
  });
  const shown = await site.locator('#last').innerText();
  if (shown !== `Action ${clicked.at(-1)}`) problems.push(`the page shows "${shown}" after clicking Action ${clicked.at(-1)}`);
  if (!final.includes(`Clicked ${CLICKS} buttons.`)) problems.push(`final answer: ${final}`);
  if (problems.length) throw new Error(`The step task did not run as planned:\n  ${problems.join('\n  ')}`);
  await panel.close();
  await site.close();

  // Gap k: from answering request k to receiving request k+1 (k = 0..19). Step k+1's record
  // (1-based) holds the act that starts the gap; step k+2's holds the observe that ends it.
  const gaps = [];
  const unattributed = [];
  for (let k = 0; k < CLICKS; k++) {
    const gap = timeline[k + 1].received - timeline[k].answered;
    gaps.push(gap);
    const acted = records[k].timings;
    const next = records[k + 1].timings;
    // The LLM call's own time in the extension, minus the time the mock held the request:
    // serializing and sending the request, then reading and parsing the answer. The send of
    // call k+1 and the parse of call k fall in this gap; the call k+1 stands for both.
    const client = next.llm_ms - (timeline[k + 1].answered - timeline[k + 1].received);
    unattributed.push(gap - acted.act_ms - next.observe_ms - client);
  }
  const actMs = records.slice(0, CLICKS).map((r) => r.timings.act_ms);
  const observeMs = records.slice(1, CLICKS + 1).map((r) => r.timings.observe_ms);
  const clientMs = records.slice(1, CLICKS + 1).map((r, i) => r.timings.llm_ms - (timeline[i + 1].answered - timeline[i + 1].received));
  return {
    pageElements,
    stateChars: median(timeline.map((t) => t.bytes)),
    gaps,
    phases: {
      observe_ms_median: round(median(observeMs)),
      act_ms_median: round(median(actMs)),
      llm_client_ms_median: round(median(clientMs)),
      unattributed_ms_median: round(median(unattributed)),
      first_observe_ms: round(records[0].timings.observe_ms),
    },
  };
}

// --- Cold start -----------------------------------------------------------------------------

/** Times one get_status from `page` (an extension page) while the worker runs, then RUNS
 * times from a stopped worker. `cdp` is {send(method, params), on(event, fn)} on that page;
 * `evaluate(fn)` runs an expression in the page and returns its value; `startupOf()`, when
 * given, reads the worker's own startup marks once it has answered. */
async function measureColdStart({ cdp, evaluate, extensionId, startupOf = null }) {
  const statusOf = new Map(); // versionId → runningStatus, for the extension's worker
  const history = [];
  cdp.on('ServiceWorker.workerVersionUpdated', ({ versions }) => {
    for (const v of versions) {
      if (!v.scriptURL.startsWith(`chrome-extension://${extensionId}/`)) continue;
      statusOf.set(v.versionId, v.runningStatus);
      history.push(v.runningStatus);
    }
  });
  await cdp.send('ServiceWorker.enable');
  const allStopped = () => [...statusOf.values()].every((s) => s === 'stopped');
  const timeGetStatus = `(async () => {
    const started = performance.now();
    const reply = await chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'get_status' } });
    const ended = performance.now();
    return { ms: ended - started, type: reply?.type, sent: performance.timeOrigin + started, answered: performance.timeOrigin + ended };
  })()`;

  // The floor: the same message to a running worker.
  await evaluate(timeGetStatus);
  const warm = [];
  for (let i = 0; i < RUNS; i++) warm.push((await evaluate(timeGetStatus)).ms);

  const cold = [];
  const parts = [];
  for (let i = 0; i < RUNS; i++) {
    await cdp.send('ServiceWorker.stopAllWorkers');
    for (let waited = 0; !(statusOf.size && allStopped()); waited += 10) {
      if (waited > 10_000) throw new Error(`the worker did not stop (status ${[...statusOf.values()]})`);
      await sleep(10);
    }
    // Let the stop settle, so the next start is not queued behind it.
    await sleep(200);
    const mark = history.length;
    const reply = await evaluate(timeGetStatus);
    if (reply.type !== 'status') throw new Error(`get_status answered ${JSON.stringify(reply)}`);
    if (!history.slice(mark).includes('starting')) throw new Error('the worker was not started again: not a cold start');
    cold.push(reply.ms);
    // Where the time went, on one clock: the worker's time origin is when Chrome started it.
    const marks = startupOf ? await startupOf() : null;
    if (marks?.ready != null) {
      const began = marks.timeOrigin;
      parts.push({
        wake: began - reply.sent,
        modules: marks.evaluated,
        core: marks.ready - marks.evaluated,
        answer: reply.answered - (began + marks.ready),
      });
    }
  }
  return { warm, cold, parts };
}

/** Cold start in the Playwright browser, from a fresh options page (it opens no port). */
async function coldStartInHarness(h) {
  const page = await h.context.newPage();
  await page.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  const session = await h.context.newCDPSession(page);
  const result = await measureColdStart({
    cdp: session,
    evaluate: (expression) => page.evaluate(expression),
    extensionId: h.extensionId,
  });
  await page.close();
  return result;
}

/** The id Chrome gives an unpacked extension: the first 128 bits of the SHA-256 of its
 * absolute path, written with the letters a to p. */
function unpackedId(dir) {
  const hex = createHash('sha256').update(realpathSync(dir)).digest('hex').slice(0, 32);
  return [...hex].map((c) => String.fromCharCode(97 + parseInt(c, 16))).join('');
}

/** A stand-in extension whose worker (a classic script, as Tabwright's) does nothing but
 * answer every message: Chrome's own cost of starting an MV3 worker and routing one message,
 * on this machine. */
function writeEmptyExtension(dir) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({
    manifest_version: 3, name: 'Empty worker', version: '1', background: { service_worker: 'worker.js' },
  }));
  writeFileSync(path.join(dir, 'worker.js'), "chrome.runtime.onMessage.addListener((message, sender, reply) => { reply({ type: 'status' }); });\n");
  writeFileSync(path.join(dir, 'page.html'), '<!doctype html><title>Empty worker</title>\n');
}

/** A Chromium with the given unpacked extensions, driven over --remote-debugging-pipe with no
 * automation library, so nothing attaches to a service worker. */
async function launchPlain(extensions) {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'tabwright-bench-'));
  const child = spawn(chromiumPath(), [
    '--headless', '--no-sandbox', '--disable-gpu', `--user-data-dir=${profile}`,
    `--disable-extensions-except=${extensions.join(',')}`, `--load-extension=${extensions.join(',')}`,
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
    '--disable-quic', '--disable-dev-shm-usage', '--remote-debugging-pipe', 'about:blank',
  ], { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] });
  const toChrome = child.stdio[3];
  const fromChrome = child.stdio[4];
  let nextId = 1;
  const pending = new Map();
  const listeners = [];
  let buffered = '';
  fromChrome.setEncoding('utf8');
  fromChrome.on('data', (chunk) => {
    const parts = (buffered + chunk).split('\0');
    buffered = parts.pop();
    for (const raw of parts) {
      const message = JSON.parse(raw);
      if (message.id && pending.has(message.id)) {
        const { resolve, reject } = pending.get(message.id);
        pending.delete(message.id);
        if (message.error) reject(new Error(`${message.error.message} (${message.error.code})`));
        else resolve(message.result);
      } else if (message.method) {
        for (const l of listeners) if (l.method === message.method && l.sessionId === message.sessionId) l.fn(message.params);
      }
    }
  });
  const send = (method, params = {}, sessionId) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    toChrome.write(`${JSON.stringify({ id, method, params, sessionId })}\0`);
  });
  const on = (method, fn, sessionId) => listeners.push({ method, fn, sessionId });
  const exited = new Promise((r) => child.once('exit', r));

  const ids = extensions.map(unpackedId);
  for (let waited = 0; ; waited += 50) {
    const { targetInfos } = await send('Target.getTargets');
    const running = new Set(targetInfos.filter((t) => t.type === 'service_worker').map((t) => new URL(t.url).host));
    if (ids.every((id) => running.has(id))) break;
    if (waited > 15_000) throw new Error('the extensions\' service workers did not start');
    await sleep(50);
  }
  return {
    ids,
    /** Opens `url` in a new tab once it has loaded, and returns a session on it. */
    async open(url) {
      const { targetId } = await send('Target.createTarget', { url });
      const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
      const page = {
        send: (method, params) => send(method, params, sessionId),
        on: (method, fn) => on(method, fn, sessionId),
        async evaluate(expression) {
          const { result, exceptionDetails } = await send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true }, sessionId);
          if (exceptionDetails) throw new Error(exceptionDetails.exception?.description ?? exceptionDetails.text);
          return result.value;
        },
      };
      // The new tab shows about:blank until the navigation commits.
      const loaded = `location.href === ${JSON.stringify(url)} && document.readyState === 'complete' && typeof chrome.runtime?.sendMessage === 'function'`;
      for (let waited = 0; !(await page.evaluate(loaded)); waited += 50) {
        if (waited > 10_000) throw new Error(`${url} did not load`);
        await sleep(50);
      }
      return page;
    },
    /** The startup marks of extension `id`'s running worker (see extension/background.js),
     * read by attaching to it after the fact and detaching again. */
    async startupOf(id) {
      const { targetInfos } = await send('Target.getTargets');
      const worker = targetInfos.find((t) => t.type === 'service_worker' && new URL(t.url).host === id);
      if (!worker) return null;
      const { sessionId } = await send('Target.attachToTarget', { targetId: worker.targetId, flatten: true });
      try {
        const expression = 'JSON.stringify({ timeOrigin: performance.timeOrigin, ...globalThis.tabwrightStartup })';
        const { result } = await send('Runtime.evaluate', { expression, returnByValue: true }, sessionId);
        return JSON.parse(result.value);
      } finally {
        await send('Target.detachFromTarget', { sessionId });
      }
    },
    async close() {
      await send('Browser.close').catch(() => {});
      await Promise.race([exited, sleep(5_000)]);
      if (child.exitCode === null) child.kill();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Cold starts with no debugger on the worker: Tabwright's, and the empty worker's in the same
 * browser; then the time to compile Tabwright's wasm in a page of the extension, measured last
 * so that no compiled module is alive in the extension's process while the worker starts. */
async function coldStartPlain() {
  const emptyDir = mkdtempSync(path.join(os.tmpdir(), 'tabwright-empty-worker-'));
  writeEmptyExtension(emptyDir);
  const browser = await launchPlain([EXTENSION_DIR, emptyDir]);
  try {
    const [ours, empty] = browser.ids;
    const page = await browser.open(`chrome-extension://${ours}/options/options.html`);
    const result = await measureColdStart({ cdp: page, evaluate: page.evaluate, extensionId: ours, startupOf: () => browser.startupOf(ours) });
    const emptyPage = await browser.open(`chrome-extension://${empty}/page.html`);
    const baseline = await measureColdStart({ cdp: emptyPage, evaluate: emptyPage.evaluate, extensionId: empty });
    const compile = await page.evaluate(`(async () => {
      const bytes = await (await fetch('/pkg/tabwright_bg.wasm')).arrayBuffer();
      const started = performance.now();
      await WebAssembly.compile(bytes);
      return { ms: performance.now() - started, bytes: bytes.byteLength };
    })()`);
    return { ...result, empty: baseline.cold, compile };
  } finally {
    await browser.close();
    rmSync(emptyDir, { recursive: true, force: true });
  }
}

// --- Run ------------------------------------------------------------------------------------

const h = await startHarness();
let steps;
let harnessCold;
try {
  steps = await measureSteps(h);
  harnessCold = await coldStartInHarness(h);
} finally {
  await h.close();
}
const plainCold = await coldStartPlain();

const figures = {
  step_overhead_ms_median: round(median(steps.gaps)),
  step_overhead_ms_p95: round(percentile(steps.gaps, 95)),
  cold_start_ms: round(median(plainCold.cold)),
  phases: steps.phases,
  step_overhead_ms: steps.gaps.map(round),
  cold_start_runs_ms: plainCold.cold.map(round),
  warm_get_status_ms_median: round(median(plainCold.warm)),
  cold_start_parts_ms_median: plainCold.parts.length ? Object.fromEntries(Object.keys(plainCold.parts[0]).map((k) => [k, round(median(plainCold.parts.map((p) => p[k])))])) : null,
  empty_worker_cold_start_ms: round(median(plainCold.empty)),
  wasm_compile_ms: round(plainCold.compile.ms),
  wasm_bytes: plainCold.compile.bytes,
  cold_start_ms_playwright: round(median(harnessCold.cold)),
  cold_start_runs_ms_playwright: harnessCold.cold.map(round),
  page_elements: steps.pageElements,
  state_chars_median: steps.stateChars,
};

const pad = (v, n) => String(v).padStart(n);
const verdict = (ms) => (ms <= GOAL_MS ? 'met' : 'NOT met');
console.log(`Step benchmark — ${CLICKS} click steps on a ${steps.pageElements}-element page with a zero-latency mock LLM; cold start median of ${RUNS}`);
console.log(`${'figure'.padEnd(44)}${pad('ms', 9)}${pad('goal', 9)}  verdict`);
const row = (name, ms, goal = '') => console.log(`${name.padEnd(44)}${pad(ms.toFixed(1), 9)}${pad(goal, 9)}  ${goal ? verdict(ms) : ''}`);
row('step overhead, median', figures.step_overhead_ms_median, `≤ ${GOAL_MS}`);
row('step overhead, p95', figures.step_overhead_ms_p95);
row('  observe (median)', figures.phases.observe_ms_median);
row('  act (median)', figures.phases.act_ms_median);
row('  LLM call, client side (median)', figures.phases.llm_client_ms_median);
row('  unattributed (median)', figures.phases.unattributed_ms_median);
row('cold start to reply, median', figures.cold_start_ms, `≤ ${GOAL_MS}`);
const parts = figures.cold_start_parts_ms_median;
if (parts) {
  row('  Chrome starting the worker', parts.wake);
  row('  loading the JS modules', parts.modules);
  row('  loading the core (wasm init)', parts.core);
  row('  answering get_status', parts.answer);
}
row('  get_status to a running worker', figures.warm_get_status_ms_median);
row('  an empty worker\'s cold start', figures.empty_worker_cold_start_ms);
row(`  compiling the wasm (${(figures.wasm_bytes / 1024).toFixed(0)} KiB), in a page`, figures.wasm_compile_ms);
row('  cold start under Playwright', figures.cold_start_ms_playwright);
console.log(`step overhead per step (ms): ${figures.step_overhead_ms.map((x) => x.toFixed(0)).join(' ')}`);
console.log(`cold start runs (ms): ${figures.cold_start_runs_ms.map((x) => x.toFixed(0)).join(' ')}; under Playwright: ${figures.cold_start_runs_ms_playwright.map((x) => x.toFixed(0)).join(' ')}`);
console.log('step overhead: from the mock LLM answering one step to the next request arriving (act, record, observe, prompt, send).');
console.log('cold start: a get_status sent to a stopped worker until its reply, timed in an extension page; no debugger on the worker.');
if (args.json) {
  writeFileSync(args.json, `${JSON.stringify(figures, null, 2)}\n`);
  console.log(`Figures written to ${args.json}`);
}
