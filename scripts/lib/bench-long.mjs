// The long-task benchmark: what a task of many steps costs as it goes on. A task of N steps (1,000
// by default) on a shop page (tests/e2e/fixtures/bench/cart-page.html, 300 items unless `--items`
// says how many, and as many at every step), driven by a mock LLM that answers at once: each step
// adds the item at the top of the shop to the cart, writes in `memory` what it did, and keeps a
// plan (given at step 1, ticked off at step N - 1); the last step is `done`. The task is started
// from the side panel, which is closed once the first step is done, so the figures are the service
// worker's (a panel keeps a card per step, as a chat does). While the task runs nothing is
// attached to the browser: Playwright sets it up and reads the end over a DevTools port, and lets
// go before Enter is pressed, for an automation client attached to the worker and the pages keeps
// records of its own in the extension's process, which grew it by a few KB a step; each look at a
// sample attaches to the worker for as long as it reads.
//
// At steps 1, 10, 100 and N it prints:
//   - overhead: the gap between answering request k and receiving request k + 1 (everything
//     the extension does between two LLM calls), the median of the five steps before (at step 1,
//     of steps 1 to 5), and of the fifty before: the five-step median of one build moves by
//     half between runs (a step's time hangs on when the page, the worker and Chrome each get
//     a core, of two), the fifty-step one by a few percent, so the goal is checked on it;
//   - request bytes: the size of the request the extension sent;
//   - cached: the share of the request that repeats the start of the one before it, byte for
//     byte (what a provider's prompt cache can serve; OpenAI's needs 1,024 tokens of it);
//   - storage bytes: chrome.storage.session's bytes in use (its quota is 10 MB);
//   - memory: the resident memory of the extension's process (Linux /proc), where its worker
//     runs, as found, and again after a full garbage collection of the worker's heap (over
//     CDP): what the extension keeps, rather than garbage V8 has not collected yet; with the
//     worker's JS heap in use and the core's wasm linear memory (which never shrinks). The
//     memory goal is checked on the figure after the collection.
// And the first step's own time from its record (observe and act; the model's time aside),
// and from the moment Enter is pressed in the panel to the first request. The shop opens just
// before the task by default, so the first look finds a page still drawing itself;
// `--settle MS` waits that long between the two, as a person reading the page would.
// Goals: overhead at step N within 10% of step 100 (fifty-step medians); memory growth at most 5
// KB a step between step 100 and N; session storage at most 2 MB at step 1,000; the first step at
// most 100 ms.
//
//   node --experimental-websocket scripts/lib/bench-long.mjs [--steps N] [--items N] [--settle MS] [--extension DIR] [--json FILE]
// `--extension DIR` measures another build of the extension (an earlier commit's, built).
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { launchDetachable, saveSettings } from './browser.mjs';
import { startFixtureServer } from '../../tests/e2e/lib/fixture-server.mjs';
import { openPanelIn } from '../../tests/e2e/lib/harness.mjs';
import { schemaOf, startMockLlm } from '../../tests/e2e/lib/mock-llm.mjs';
import { addTopItem, stepOf } from '../../tests/e2e/lib/state.mjs';
import { median } from './stats.mjs';

process.env.PLAYWRIGHT_DISABLE_SERVICE_WORKER_NETWORK = '1';

const { values: args } = parseArgs({
  options: {
    json: { type: 'string' },
    steps: { type: 'string', default: '1000' },
    items: { type: 'string' },
    settle: { type: 'string', default: '0' },
    extension: { type: 'string' },
  },
});
const STEPS = Math.max(20, Number(args.steps));
const SETTLE_MS = Math.max(0, Number(args.settle) || 0);
// Items in the shop, as many at every step (one added is replaced by a new one at the end).
const ITEMS = Math.max(1, Number(args.items) || 300);
const SAMPLES = [...new Set([1, 10, 100, STEPS].filter((s) => s <= STEPS))];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resident bytes of the extension's renderer process(es): Chromium marks them
 * `--extension-process` on their command line. */
function extensionMemory() {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('--extension-process')) continue;
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (rss) total += Number(rss[1]) * 1024;
    } catch { /* the process ended */ }
  }
  return total;
}

/** A free TCP port on this machine. */
async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const cdpPort = await freePort();

/** The DevTools targets (pages, workers) of the browser. */
async function targets() {
  return (await fetch(`http://127.0.0.1:${cdpPort}/json/list`)).json();
}

/** Attaches over the DevTools port to the first target `which` picks for as long as `work`
 * runs (`work(send)`, where send(method, params) resolves to the command's result), and
 * detaches. */
async function onTarget(which, work) {
  const target = (await targets()).find(which);
  if (!target?.webSocketDebuggerUrl) throw new Error('no such target');
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => { ws.addEventListener('open', resolve); ws.addEventListener('error', reject); });
  let id = 0;
  const send = (method, params = {}) => new Promise((resolve, reject) => {
    const mine = ++id;
    const listen = (message) => {
      const data = JSON.parse(message.data);
      if (data.id !== mine) return;
      ws.removeEventListener('message', listen);
      if (data.error) reject(new Error(`${method}: ${data.error.message}`));
      else resolve(data.result);
    };
    ws.addEventListener('message', listen);
    ws.send(JSON.stringify({ id: mine, method, params }));
  });
  try {
    return await work(send);
  } finally {
    ws.close();
  }
}

/** The same on the extension's service worker. */
const onWorker = (work) => onTarget((t) => t.type === 'service_worker' && t.url.startsWith('chrome-extension://'), work);

/** What the worker holds: session storage's bytes in use and the core's wasm memory. */
const WORKER_HOLDS = `Promise.all([chrome.storage.session.getBytesInUse(null),
  globalThis.tabwrightStartup?.memory?.buffer.byteLength ?? null]).then(([storage, wasm]) => ({ storage, wasm }))`;

const profile = mkdtempSync(path.join(os.tmpdir(), 'tabwright-bench-long-'));
const fixtures = await startFixtureServer();
const browser = await launchDetachable(profile, { port: cdpPort, ...(args.extension ? { extensionDir: path.resolve(args.extension) } : {}) });
const timeline = []; // per request: {step, received, answered, bytes, cachedBytes}
const samples = new Map(); // step → {storage, memory, kept, heap, wasm}
let previousRaw = '';
let asked = null; // when Enter was pressed in the panel
let finished;
const ended = new Promise((resolve) => { finished = resolve; });
let closePanel = null; // closes the side panel, once

const llm = await startMockLlm(async (state, body) => {
  const raw = JSON.stringify(body);
  let same = 0;
  const n = Math.min(raw.length, previousRaw.length);
  while (same < n && raw.charCodeAt(same) === previousRaw.charCodeAt(same)) same++;
  previousRaw = raw;
  const step = stepOf(state);
  const entry = { step, received: performance.now(), answered: null, bytes: Buffer.byteLength(raw), cachedBytes: same };
  timeline.push(entry);
  if (SAMPLES.includes(step)) {
    // Read while the worker waits for this answer: outside the overhead measured.
    const memory = extensionMemory();
    // What is kept, rather than garbage V8 has not collected yet (it collects lazily while
    // memory is plentiful, so the process's size alone moves by megabytes either way).
    // Not at step 1: a debugger attaching to the worker while its first request is under way
    // makes that request fail and be sent again.
    if (step > 1) {
      const { holds, heap } = await onWorker(async (send) => {
        const { result } = await send('Runtime.evaluate', { expression: WORKER_HOLDS, awaitPromise: true, returnByValue: true });
        await send('HeapProfiler.collectGarbage');
        return { holds: result.value, heap: (await send('Runtime.getHeapUsage')).usedSize };
      });
      await sleep(300);
      samples.set(step, { memory, kept: extensionMemory(), heap, ...holds });
    } else {
      samples.set(step, { memory, kept: null, heap: null, storage: null, wasm: null });
    }
  }
  // The panel is open while the first step runs, as it is when a person starts a task; from
  // the second on the figures are the worker's alone.
  if (step === 2) await closePanel?.();
  setImmediate(() => { entry.answered = performance.now(); });
  const thoughts = { evaluation_previous_goal: `Judged at step ${step}.`, memory: `step ${step}: added one more item; the cart holds ${step - 1} before it`, next_goal: `Add the next item (step ${step})` };
  if (step >= STEPS) {
    setTimeout(finished, 2_000);
    return { output: { ...thoughts, action: [{ done: { text: `Added ${STEPS - 1} items.`, success: true } }] } };
  }
  // The plan in the shape the answer's schema gives it: a checklist, or (a build from before
  // the checklist) a list of texts.
  const planSchema = schemaOf(body)?.properties?.plan;
  if (!planSchema) return { output: { ...thoughts, action: [addTopItem(state)] } };
  let plan = step === 1 ? [{ text: `Add ${STEPS - 1} items`, done: false }, { text: 'Report', done: false }]
    : step === STEPS - 1 ? [{ text: `Add ${STEPS - 1} items`, done: true }, { text: 'Report', done: false }] : null;
  if (plan && !JSON.stringify(planSchema).includes('"done"')) plan = plan.map((p) => `${p.done ? '[x] ' : ''}${p.text}`);
  return { output: { ...thoughts, plan, action: [addTopItem(state)] } };
});

try {
  let { context, extensionId } = await browser.connect();
  await saveSettings(context, extensionId, { baseUrl: llm.baseUrl, model: 'mock-model', maxSteps: String(STEPS) });
  const panel = await openPanelIn(context, extensionId);
  // The shop opens just before the task, as a person opens a page and then asks; Playwright
  // lets go before the task starts.
  const shopUrl = `${fixtures.url}/bench/cart-page.html?n=${ITEMS}`;
  const site = await context.newPage();
  await site.goto(shopUrl);
  await site.bringToFront();
  await panel.fill('#task', `Add ${STEPS - 1} items to the cart, one a step, then report.`);
  await browser.disconnect();
  if (SETTLE_MS) await sleep(SETTLE_MS);
  // Enter, pressed as Playwright presses it (a trusted key event) over the DevTools port, and
  // when: the first step's time counts from there.
  const panelTarget = (await targets()).find((t) => t.url.endsWith('/panel/panel.html'));
  await onTarget((t) => t.id === panelTarget.id, async (send) => {
    await send('Runtime.evaluate', { expression: 'document.getElementById("task").focus()' });
    asked = performance.now();
    const enter = { key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 13 };
    await send('Input.dispatchKeyEvent', { type: 'keyDown', text: '\r', ...enter });
    await send('Input.dispatchKeyEvent', { type: 'keyUp', ...enter });
  });
  setTimeout(() => { if (!timeline.length) finished(new Error('the task did not start: no request in 30 s')); }, 30_000);
  let closed = null;
  closePanel = () => (closed ??= fetch(`http://127.0.0.1:${cdpPort}/json/close/${panelTarget.id}`).then(() => sleep(300)));
  const timeout = setTimeout(() => finished(new Error('timed out')), 60 * 60_000);
  const outcome = await ended;
  clearTimeout(timeout);
  if (outcome instanceof Error) throw outcome;
  ({ context } = await browser.connect());
  // A request the extension sent again (its client retries a request that broke) counts once,
  // as its last sending; how many there were is printed.
  const lastSending = new Map(timeline.map((e) => [e.step, e]));
  const retried = timeline.length - lastSending.size;
  timeline.splice(0, timeline.length, ...lastSending.values());
  if (timeline.length !== STEPS || timeline.some((e, i) => e.step !== i + 1)) {
    throw new Error(`the requests were not for steps 1 to ${STEPS}: ${timeline.map((e) => e.step).slice(0, 20).join(', ')}…`);
  }
  // The first step's own time, from its record: observing the page (opened before the task,
  // so its scripts go in first) and acting; the model answers at once.
  const probe = await context.newPage();
  await probe.goto(`chrome-extension://${extensionId}/options/options.html`);
  const status = await probe.evaluate(() => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'get_status' } }));
  const first = status.events.find((e) => e.type === 'step_finished' && e.record.step === 1)?.record.timings;
  if (!first) throw new Error('no record of step 1 in the task\'s log');
  const shop = context.pages().find((p) => p.url() === shopUrl);
  const added = Number(await shop?.locator('#count').innerText());
  // This build must have done the task; another one (an earlier commit's) is measured as it
  // did it, with how far it got printed.
  if (added !== STEPS - 1 && !args.extension) throw new Error(`the cart holds ${added} items, not ${STEPS - 1}`);

  // gap[k]: from answering request k to receiving request k + 1 (step k's overhead).
  const gap = (k) => timeline[k].received - timeline[k - 1].answered;
  // The `count` steps before a sample: the sample's own look at storage and memory (with its
  // garbage collection) comes after them. Step 1's are the first ones.
  const overheadAt = (step, count) => {
    const from = Math.max(1, step - count);
    const window = [];
    for (let s = from; s < from + count && s <= STEPS - 1; s++) window.push(gap(s));
    return median(window);
  };
  const rows = SAMPLES.map((step) => ({
    step,
    overhead_ms: Number(overheadAt(step, 5).toFixed(2)),
    overhead_50_ms: Number(overheadAt(step, 50).toFixed(2)),
    request_bytes: timeline[step - 1].bytes,
    cached_share: Number((timeline[step - 1].cachedBytes / timeline[step - 1].bytes).toFixed(3)),
    storage_bytes: samples.get(step)?.storage ?? null,
    memory_bytes: samples.get(step)?.memory ?? null,
    memory_after_gc_bytes: samples.get(step)?.kept ?? null,
    worker_heap_bytes: samples.get(step)?.heap ?? null,
    wasm_memory_bytes: samples.get(step)?.wasm ?? null,
  }));
  const firstGap = gap(1);
  const cachedAll = timeline.slice(1).reduce((a, e) => a + e.cachedBytes, 0) / timeline.slice(1).reduce((a, e) => a + e.bytes, 0);
  console.log(`Long task: ${STEPS} steps, one item added a step (first step's own overhead ${firstGap.toFixed(1)} ms; requests sent again: ${retried})`);
  const mb = (bytes) => (bytes === null ? '-' : (bytes / 1e6).toFixed(2));
  console.log('step   overhead ms (5 / 50 steps)   request bytes   cached   storage MB   memory MB   after GC   worker heap   wasm');
  for (const r of rows) {
    console.log(`${String(r.step).padStart(4)}   ${`${r.overhead_ms.toFixed(1)} / ${r.overhead_50_ms.toFixed(1)}`.padStart(26)}   ${String(r.request_bytes).padStart(13)}   ${(r.cached_share * 100).toFixed(0).padStart(5)}%   ${mb(r.storage_bytes).padStart(10)}   ${mb(r.memory_bytes).padStart(9)}   ${mb(r.memory_after_gc_bytes).padStart(8)}   ${mb(r.worker_heap_bytes).padStart(11)}   ${mb(r.wasm_memory_bytes).padStart(5)}`);
  }
  if (added !== STEPS - 1) console.log(`the cart holds ${added} items, not ${STEPS - 1}`);
  console.log(`cached share over all requests after the first: ${(cachedAll * 100).toFixed(1)}%`);
  const toFirstRequest = timeline[0].received - asked;
  console.log(`first step (a shop of ${ITEMS} items opened ${SETTLE_MS} ms before the task): observe ${first.observe_ms.toFixed(0)} ms + act ${first.act_ms.toFixed(0)} ms = ${(first.observe_ms + first.act_ms).toFixed(0)} ms `
    + `(goal ≤ 100, the model's time aside); from Enter in the panel to the first request ${toFirstRequest.toFixed(0)} ms`);
  const at100 = rows.find((r) => r.step === 100);
  const atN = rows.find((r) => r.step === STEPS);
  if (at100 && atN && STEPS > 100) {
    const perStep = (field) => ((atN[field] - at100[field]) / (STEPS - 100) / 1024).toFixed(1);
    const change = (field) => `${((atN[field] / at100[field] - 1) * 100).toFixed(1)}%`;
    console.log(`overhead at step ${STEPS} vs 100: ${change('overhead_50_ms')} over the 50 steps before each (goal within 10%); ${change('overhead_ms')} over the 5 before`);
    console.log(`memory growth between step 100 and ${STEPS}: ${perStep('memory_after_gc_bytes')} KB a step after a full GC (goal ≤ 5); `
      + `as found ${perStep('memory_bytes')}, the worker's JS heap ${perStep('worker_heap_bytes')}, the wasm memory ${perStep('wasm_memory_bytes')}`);
    console.log(`session storage at step ${STEPS}: ${(atN.storage_bytes / 1e6).toFixed(2)} MB (goal ≤ 2 at step 1,000)`);
  }
  if (args.json) {
    const report = { rows, first_step_overhead_ms: firstGap, first_step: first, enter_to_first_request_ms: toFirstRequest, settle_ms: SETTLE_MS, items: ITEMS, cached_share: cachedAll };
    writeFileSync(args.json, `${JSON.stringify(report, null, 2)}\n`);
  }
} finally {
  await browser.close();
  await llm.close();
  await fixtures.close();
  rmSync(profile, { recursive: true, force: true });
}
