// Writes scripts/split-core/startup-functions.txt: the names of the core's functions that a
// cold start of the service worker runs. scripts/build keeps these in the module the worker
// instantiates at once and moves every other function to the module loaded on first use
// (scripts/split-core). The worker answers a status request with no task saved from that
// module alone, so the list must hold every function that answer runs;
// tests/e2e/core-split.test.mjs checks it does, and that restoring a finished task needs no
// more, and says to run scripts/profile-startup when either needs the rest.
//
// How: the extension is loaded with the whole core (target/core-whole.wasm, which keeps its
// names) in a Chromium whose V8 reports each wasm function as it compiles it. V8 compiles a
// function the first time it is called, so the functions compiled after the worker starts
// again are the ones its start runs. Cold starts recorded, each from a stopped worker: status
// requests (STATUS_REQUESTS) and the panel opening (it connects, then asks for the status as
// its log stands), first with no task saved, then with a finished task saved, which the worker
// restores first (tests/e2e/lib/startup-task.mjs). A worker stopped in the middle of a task
// resumes it, which runs most of the core: that start loads the rest, and is not recorded.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Playwright prints the browser's output, where V8's reports go, when its `pw:browser` debug
// channel is on (read once, when it is first imported: everything that imports it is
// imported below, after this).
process.env.DEBUG = 'pw:browser';
const output = [];
const writeStderr = process.stderr.write.bind(process.stderr);
process.stderr.write = (chunk, ...rest) => {
  const text = String(chunk);
  if (text.includes('pw:browser')) {
    output.push(...text.split('\n'));
    return true;
  }
  return writeStderr(chunk, ...rest);
};
const { ROOT, EXTENSION_DIR } = await import('./browser.mjs');
const { startWithMockLlm, runTaskToEnd } = await import('../../tests/e2e/lib/harness.mjs');
const { STARTUP_TASK, answerStartupTask } = await import('../../tests/e2e/lib/startup-task.mjs');
// The status requests a worker answers from its first module alone: as the panel sends them
// (with the task it last showed, which a worker that has none ignores), and the malformed ones
// it refuses. tests/e2e/core-split.test.mjs sends the same.
const { STATUS_REQUESTS } = await import('../../tests/e2e/lib/status-requests.mjs');

const WHOLE = path.join(ROOT, 'target', 'core-whole.wasm');
const LIST = path.join(ROOT, 'scripts', 'split-core', 'startup-functions.txt');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Function index → name, from a module's `name` section. */
function functionNames(bytes) {
  const names = new Map();
  let i = 8;
  const leb = () => {
    let value = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[i++];
      value += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (b < 0x80) return value;
    }
  };
  const text = (n) => new TextDecoder().decode(bytes.subarray(i, (i += n)));
  while (i < bytes.length) {
    const id = bytes[i++];
    const size = leb();
    const end = i + size;
    if (id === 0 && text(leb()) === 'name') {
      while (i < end) {
        const sub = bytes[i++];
        const subEnd = leb() + i;
        if (sub === 1) {
          for (let n = leb(); n > 0; n--) {
            const index = leb();
            names.set(index, text(leb()));
          }
        }
        i = subEnd;
      }
    }
    i = end;
  }
  return names;
}

/** The function indices V8 reported compiling (with Liftoff, on first call) in `lines`. */
function compiledIn(lines) {
  const found = new Set();
  for (const line of lines) {
    const m = /Compiled function 0x[0-9a-f]+#(\d+) using Liftoff/.exec(line);
    if (m) found.add(Number(m[1]));
  }
  return found;
}

// The extension as built, with the whole core in place of the split one; the second module
// is never asked for, and an empty one stands in for it.
const dir = mkdtempSync(path.join(os.tmpdir(), 'tabwright-profile-'));
const extensionDir = path.join(dir, 'extension');
cpSync(EXTENSION_DIR, extensionDir, { recursive: true });
cpSync(WHOLE, path.join(extensionDir, 'pkg', 'tabwright_bg.wasm'));
writeFileSync(path.join(extensionDir, 'pkg', 'tabwright_rest.wasm'), Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));

const world = await startWithMockLlm(answerStartupTask, {
  browserOptions: { extensionDir, args: ['--js-flags=--trace-wasm-compilation-times'] },
});
const { h, llm } = world;
const found = new Set();
try {
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model' });
  const page = await h.context.newPage();
  await page.goto(`chrome-extension://${h.extensionId}/options/options.html`);

  /** Stops the worker, wakes it with `wake`, and adds what it compiled in the next second. */
  async function coldStart(name, wake) {
    await h.stopWorker(page);
    await sleep(300);
    const from = output.length;
    await wake();
    await sleep(1_000);
    const compiled = compiledIn(output.slice(from));
    if (compiled.size === 0) throw new Error(`${name}: V8 reported no compiled functions; was the worker started again?`);
    for (const f of compiled) found.add(f);
    console.log(`${name}: ${compiled.size} functions`);
  }

  const sendStatusRequests = () => page.evaluate(async (requests) => {
    for (const request of requests) await chrome.runtime.sendMessage({ to: 'core', request });
  }, STATUS_REQUESTS);

  await coldStart('status requests', sendStatusRequests);
  let panel = null;
  await coldStart('the panel opening', async () => { panel = await h.openPanel(); });
  await panel.close();

  const site = await h.openFixture('login.html');
  panel = await h.openPanel();
  await runTaskToEnd(panel, STARTUP_TASK);
  // Closed first: an open panel would reconnect, and so wake the worker, as soon as it stops.
  await panel.close();
  await coldStart('status requests, a finished task saved', sendStatusRequests);
  await coldStart('the panel opening, a finished task saved', async () => { panel = await h.openPanel(); });
  await panel.close();
  await site.close();
} finally {
  await world.close();
  rmSync(dir, { recursive: true, force: true });
}

const names = functionNames(readFileSync(WHOLE));
const listed = [...new Set([...found].map((f) => names.get(f)).filter(Boolean))].sort();
writeFileSync(LIST, `# The core's functions a cold start of the service worker runs, by name,
# written by scripts/profile-startup; scripts/build keeps them in the module the worker
# instantiates at once (scripts/split-core). ${listed.length} names.
${listed.join('\n')}
`);
console.log(`${LIST}: ${listed.length} functions`);
