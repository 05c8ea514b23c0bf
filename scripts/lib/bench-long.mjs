// The long-task benchmark: what a task of many steps costs as it goes on. A task of N steps
// (1,000 by default) on a shop page (tests/e2e/fixtures/bench/cart-page.html, N + 50 items),
// driven by a mock LLM that answers at once: each step adds the item at the top of the shop
// to the cart, writes in `memory` what it did, and keeps a plan (given at step 1, ticked off
// at step N - 1); the last step is `done`. The task is started from the side panel, which is
// then closed, so the figures are the service worker's (a panel keeps a card per step, as a
// chat does).
//
// At steps 1, 10, 100 and N it prints:
//   - overhead: the gap between answering request k and receiving request k + 1 (everything
//     the extension does between two LLM calls), the median of the five steps before (at step 1,
//     of steps 1 to 5);
//   - request bytes: the size of the request the extension sent;
//   - cached: the share of the request that repeats the start of the one before it, byte for
//     byte (what a provider's prompt cache can serve; OpenAI's needs 1,024 tokens of it);
//   - storage bytes: chrome.storage.session's bytes in use (its quota is 10 MB);
//   - memory: the resident memory of the extension's process(es) (Linux /proc) as found, and
//     again after a full garbage collection of the worker's and the extension pages' V8 heaps
//     (over CDP): what the extension keeps, rather than garbage V8 has not collected yet; with
//     the worker's JS heap in use and the core's wasm linear memory (which never shrinks).
//     The memory goal is checked on the figure after the collection.
// And the first step's own time from its record (observe and act; the model's time aside).
// Goals: overhead at step N within 10% of step 100; memory growth at most 5 KB a step between
// step 100 and N; session storage at most 2 MB at step 1,000; the first step at most 100 ms.
//
//   node --experimental-websocket scripts/lib/bench-long.mjs [--steps N] [--json FILE]
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { parseArgs } from 'node:util';
import { startHarness, runTask } from '../../tests/e2e/lib/harness.mjs';
import { startMockLlm } from '../../tests/e2e/lib/mock-llm.mjs';
import { addTopItem, stepOf } from '../../tests/e2e/lib/state.mjs';

process.env.PLAYWRIGHT_DISABLE_SERVICE_WORKER_NETWORK = '1';

const { values: args } = parseArgs({ options: { json: { type: 'string' }, steps: { type: 'string', default: '1000' } } });
const STEPS = Math.max(20, Number(args.steps));
const SAMPLES = [...new Set([1, 10, 100, STEPS].filter((s) => s <= STEPS))];
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

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

// The extension's pages and worker over CDP, to collect their garbage before a look at the
// process's memory (Playwright offers no CDP session on a service worker).
const cdpPort = await freePort();

/** Runs a full garbage collection in every V8 heap of the extension (worker and pages) and
 * resolves to the worker's JS heap in use, in bytes. */
async function collectGarbage() {
  const targets = await (await fetch(`http://127.0.0.1:${cdpPort}/json/list`)).json();
  let workerHeap = null;
  for (const target of targets.filter((t) => t.url.startsWith('chrome-extension://') && t.webSocketDebuggerUrl)) {
    const ws = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => { ws.addEventListener('open', resolve); ws.addEventListener('error', reject); });
    let id = 0;
    const send = (method) => new Promise((resolve) => {
      const mine = ++id;
      const listen = (message) => {
        const data = JSON.parse(message.data);
        if (data.id !== mine) return;
        ws.removeEventListener('message', listen);
        resolve(data.result);
      };
      ws.addEventListener('message', listen);
      ws.send(JSON.stringify({ id: mine, method, params: {} }));
    });
    await send('HeapProfiler.collectGarbage');
    if (target.type === 'service_worker') workerHeap = (await send('Runtime.getHeapUsage'))?.usedSize ?? null;
    ws.close();
  }
  return workerHeap;
}

const h = await startHarness({ browserOptions: { args: [`--remote-debugging-port=${cdpPort}`] } });
const timeline = []; // per request: {step, received, answered, bytes, cachedBytes}
const samples = new Map(); // step → {storage, memory}
let previousRaw = '';
let probe = null; // an extension page to read session storage from
let finished;
const ended = new Promise((resolve) => { finished = resolve; });

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
    const storage = await probe.evaluate(() => chrome.storage.session.getBytesInUse(null));
    const worker = h.context.serviceWorkers().find((w) => w.url().includes(h.extensionId));
    const wasm = await worker?.evaluate(() => globalThis.tabwrightStartup?.memory?.buffer.byteLength ?? null).catch(() => null);
    const memory = extensionMemory();
    // What is kept, rather than garbage V8 has not collected yet (it collects lazily while
    // memory is plentiful, so the process's size alone moves by megabytes either way).
    // Not at step 1: a debugger attaching to the worker while its first request is under way
    // makes that request fail and be sent again.
    const heap = step > 1 ? await collectGarbage() : null;
    if (step > 1) await new Promise((resolve) => setTimeout(resolve, 300));
    samples.set(step, { storage, memory, kept: step > 1 ? extensionMemory() : null, heap, wasm });
  }
  setImmediate(() => { entry.answered = performance.now(); });
  const thoughts = { evaluation_previous_goal: `Judged at step ${step}.`, memory: `step ${step}: added one more item; the cart holds ${step - 1} before it`, next_goal: `Add the next item (step ${step})` };
  if (step >= STEPS) {
    setTimeout(finished, 2_000);
    return { output: { ...thoughts, action: [{ done: { text: `Added ${STEPS - 1} items.`, success: true } }] } };
  }
  const plan = step === 1 ? [{ text: `Add ${STEPS - 1} items`, done: false }, { text: 'Report', done: false }]
    : step === STEPS - 1 ? [{ text: `Add ${STEPS - 1} items`, done: true }, { text: 'Report', done: false }] : null;
  return { output: { ...thoughts, plan, action: [addTopItem(state)] } };
});

try {
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model', maxSteps: String(STEPS) });
  probe = await h.context.newPage();
  await probe.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  const panel = await h.openPanel();
  // The shop opens just before the task, as a person opens a page and then asks.
  const site = await h.openFixture(`bench/cart-page.html?n=${STEPS + 50}`);
  await site.bringToFront();
  await runTask(panel, `Add ${STEPS - 1} items to the cart, one a step, then report.`);
  await panel.locator('#log .step').first().waitFor({ timeout: 30_000 });
  await panel.close();
  const timeout = setTimeout(() => finished(new Error('timed out')), 60 * 60_000);
  const outcome = await ended;
  clearTimeout(timeout);
  if (outcome instanceof Error) throw outcome;
  // A request the extension sent again (its client retries a request that broke) counts once,
  // as its last sending; how many there were is printed.
  const lastSending = new Map(timeline.map((e) => [e.step, e]));
  const retried = timeline.length - lastSending.size;
  timeline.splice(0, timeline.length, ...lastSending.values());
  if (timeline.length !== STEPS || timeline.some((e, i) => e.step !== i + 1)) {
    throw new Error(`the requests were not for steps 1 to ${STEPS}: ${timeline.map((e) => e.step).slice(0, 20).join(', ')}…`);
  }
  // The first step's own time, from its record: observing the page (opened before the task,
  // so its scripts go in first) and acting; the model answers at once (its wait here is the
  // benchmark's own look at memory).
  const status = await probe.evaluate(() => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'get_status' } }));
  const first = status.events.find((e) => e.type === 'step_finished' && e.record.step === 1)?.record.timings;
  if (!first) throw new Error('no record of step 1 in the task\'s log');
  const added = Number(await site.locator('#count').innerText());
  if (added !== STEPS - 1) throw new Error(`the cart holds ${added} items, not ${STEPS - 1}`);

  // gap[k]: from answering request k to receiving request k + 1 (step k's overhead).
  const gap = (k) => timeline[k].received - timeline[k - 1].answered;
  // The five steps before a sample: the sample's own look at storage and memory (with its
  // garbage collection) comes after them. Step 1's are steps 1 to 5.
  const overheadAt = (step) => {
    const from = Math.max(1, step - 5);
    const window = [];
    for (let s = from; s < from + 5 && s <= STEPS - 1; s++) window.push(gap(s));
    return median(window);
  };
  const rows = SAMPLES.map((step) => ({
    step,
    overhead_ms: Number(overheadAt(step).toFixed(2)),
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
  console.log('step   overhead ms   request bytes   cached   storage MB   memory MB   after GC   worker heap   wasm');
  for (const r of rows) {
    console.log(`${String(r.step).padStart(4)}   ${r.overhead_ms.toFixed(1).padStart(11)}   ${String(r.request_bytes).padStart(13)}   ${(r.cached_share * 100).toFixed(0).padStart(5)}%   ${mb(r.storage_bytes).padStart(10)}   ${mb(r.memory_bytes).padStart(9)}   ${mb(r.memory_after_gc_bytes).padStart(8)}   ${mb(r.worker_heap_bytes).padStart(11)}   ${mb(r.wasm_memory_bytes).padStart(5)}`);
  }
  console.log(`cached share over all requests after the first: ${(cachedAll * 100).toFixed(1)}%`);
  console.log(`first step: observe ${first.observe_ms.toFixed(0)} ms + act ${first.act_ms.toFixed(0)} ms = ${(first.observe_ms + first.act_ms).toFixed(0)} ms (goal ≤ 100, the model's time aside)`);
  const at100 = rows.find((r) => r.step === 100);
  const atN = rows.find((r) => r.step === STEPS);
  if (at100 && atN && STEPS > 100) {
    const perStep = (field) => ((atN[field] - at100[field]) / (STEPS - 100) / 1024).toFixed(1);
    console.log(`overhead at step ${STEPS} vs 100: ${((atN.overhead_ms / at100.overhead_ms - 1) * 100).toFixed(1)}% (goal within 10%)`);
    console.log(`memory growth between step 100 and ${STEPS}: ${perStep('memory_after_gc_bytes')} KB a step after a full GC (goal ≤ 5); `
      + `as found ${perStep('memory_bytes')}, the worker's JS heap ${perStep('worker_heap_bytes')}, the wasm memory ${perStep('wasm_memory_bytes')}`);
    console.log(`session storage at step ${STEPS}: ${(atN.storage_bytes / 1e6).toFixed(2)} MB (goal ≤ 2 at step 1,000)`);
  }
  if (args.json) writeFileSync(args.json, `${JSON.stringify({ rows, first_step_overhead_ms: firstGap, first_step: first, cached_share: cachedAll }, null, 2)}\n`);
} finally {
  await h.close();
  await llm.close();
}
