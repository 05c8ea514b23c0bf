// The real-browser harness: Debian Chromium, headless, with the built extension on a fresh
// profile, and the fixture server. Tests drive the extension through its own pages (the side
// panel opened as a tab, the options page), never through the service worker's console.
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launchWithExtension, saveSettings, ROOT } from '../../../scripts/lib/browser.mjs';
import { startFixtureServer } from './fixture-server.mjs';
import { startMockLlm, newGate } from './mock-llm.mjs';

export { saveSettings };
export const OUTPUT_DIR = path.join(ROOT, 'tests', 'e2e', 'output');

/** `lang`: the browser's interface language (such as 'zh-CN'); the default is English.
 * `browserOptions`: more for launchWithExtension (another extension folder, more flags).
 * `beforeLaunch(profile)`: prepares the fresh profile folder before Chromium first starts on it
 * (a native-messaging host's manifest, say). */
export async function startHarness({ lang = null, browserOptions = {}, beforeLaunch = null } = {}) {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'tabwright-e2e-'));
  await beforeLaunch?.(profile);
  const fixtures = await startFixtureServer();
  const launch = () => launchWithExtension(profile, { headless: true, lang, ...browserOptions });
  let browser = await launch();
  const { extensionId } = browser;
  return {
    get context() {
      return browser.context;
    },
    extensionId,
    fixtures,
    profile,
    /** Closes the browser and starts it again on the same profile, as a person quitting and
     * reopening Chrome would; the extension keeps its id and its storage. */
    async restart() {
      await browser.close();
      browser = await launch();
      if (browser.extensionId !== extensionId) throw new Error(`the extension id changed: ${browser.extensionId}`);
    },
    /** Opens the side panel page, in a window of its own: as the real side panel sits beside
     * the page, the page a task works on stays on screen (a page in a background tab paints
     * nothing, and its animations and frame callbacks stand still). */
    openPanel: () => openPanelIn(browser.context, extensionId),
    /** Opens a fixture page in a new tab (the tab the task will run on). */
    async openFixture(name) {
      const page = await browser.context.newPage();
      await page.goto(`${fixtures.url}/${name}`);
      return page;
    },
    settings: (values) => saveSettings(browser.context, extensionId, values),
    /** Stops the extension's service worker (see `stopServiceWorker`). */
    stopWorker: (page) => stopServiceWorker(browser.context, page, extensionId),
    async screenshot(page, name) {
      mkdirSync(OUTPUT_DIR, { recursive: true });
      await page.screenshot({ path: path.join(OUTPUT_DIR, `${name}.png`) });
    },
    async close() {
      await browser.close();
      await fixtures.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Stops extension `extensionId`'s service worker over CDP (from `page`, any page of
 * `context`) and waits until Chrome reports it stopped: the command may return before, so it
 * is repeated. */
export async function stopServiceWorker(context, page, extensionId) {
  const cdp = await context.newCDPSession(page);
  const status = new Map(); // the extension worker's versions → running status
  cdp.on('ServiceWorker.workerVersionUpdated', ({ versions }) => {
    for (const v of versions) {
      if (v.scriptURL.startsWith(`chrome-extension://${extensionId}/`)) status.set(v.versionId, v.runningStatus);
    }
  });
  await cdp.send('ServiceWorker.enable');
  const stopped = () => status.size > 0 && [...status.values()].every((s) => s === 'stopped');
  for (let tries = 0; !stopped(); tries++) {
    if (tries >= 20) throw new Error(`the worker did not stop: ${[...status.values()]}`);
    await cdp.send('ServiceWorker.stopAllWorkers');
    for (let waited = 0; waited < 500 && !stopped(); waited += 20) await new Promise((r) => setTimeout(r, 20));
  }
  await cdp.detach();
}

/** Opens the side panel page of the extension `extensionId` in `context`, in a window of its
 * own (see the harness's openPanel). */
export async function openPanelIn(context, extensionId) {
  const url = `chrome-extension://${extensionId}/panel/panel.html`;
  const before = new Set(context.pages());
  const anyPage = context.pages()[0] ?? await context.newPage();
  const cdp = await context.newCDPSession(anyPage);
  await cdp.send('Target.createTarget', { url, newWindow: true });
  await cdp.detach();
  const panel = await pageAt(context, url, { besides: before });
  await panel.waitForLoadState('domcontentloaded');
  await panel.setViewportSize({ width: 420, height: 800 });
  await allowConsentsFrom(panel);
  return panel;
}

/** Tests written for other concerns than the person's guard (src/guard) let every act it holds
 * go once, as a person who says yes would: a listener in the panel page answers each
 * `consent_asked` with `allow_once`, and counts them (`globalThis.tabwrightAllowedConsents`).
 * A test of the asking itself sets `globalThis.tabwrightManualConsent = true` in the panel (or
 * calls `manualConsents(panel)`) and answers as it likes. */
export async function allowConsentsFrom(panel) {
  await panel.evaluate(() => {
    if (globalThis.tabwrightAllowedConsents) return;
    globalThis.tabwrightAllowedConsents = [];
    const listen = () => {
      const port = chrome.runtime.connect({ name: 'tabwright-panel' });
      port.onMessage.addListener((message) => {
        const event = message?.event;
        if (event?.type !== 'consent_asked' || globalThis.tabwrightManualConsent) return;
        globalThis.tabwrightAllowedConsents.push(event.consent);
        chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'answer_consent', id: event.consent.id, answer: 'allow_once' } });
      });
      // The worker may be stopped (a test of its restart): listen again on its next start.
      port.onDisconnect.addListener(() => setTimeout(listen, 200));
    };
    listen();
  });
}

/** The panel leaves consents to the test from now on. */
export async function manualConsents(panel) {
  await panel.evaluate(() => {
    globalThis.tabwrightManualConsent = true;
  });
}

/** The harness with a mock LLM (OpenAI's format) whose answers come from `fallback(state,
 * body)` unless a test set its own policy. A test can also hold answers: a policy awaits
 * `gate()` (null when none is open) after the test called `openGate()`. Settings are the
 * test's to save; `harnessOptions` go to startHarness (the interface language). `close()`
 * releases any held answer and closes both. */
export async function startWithMockLlm(fallback, harnessOptions = {}) {
  const h = await startHarness(harnessOptions);
  let policy = null;
  let gate = null;
  const llm = await startMockLlm((...request) => (policy ?? fallback)(...request));
  return {
    h,
    llm,
    /** Answers with `next` from now on; null goes back to the fallback. */
    setPolicy(next) {
      policy = next;
    },
    /** A new gate; policies waiting on `gate()` hold their answer until it is released. */
    openGate() {
      gate = newGate();
      return gate;
    },
    /** The open gate, or null. */
    gate: () => gate,
    /** No more holding: the next answers come at once. */
    closeGate() {
      gate = null;
    },
    async close() {
      gate?.release();
      await h.close();
      await llm.close();
    },
  };
}

/** Reads `read()` every 50 ms until `done(value)` holds or `timeout` ms pass; resolves to the
 * last value read, for the caller to assert. */
export async function until(read, done = Boolean, timeout = 5_000) {
  let value;
  for (const started = Date.now(); ; await new Promise((r) => setTimeout(r, 50))) {
    value = await read();
    if (done(value) || Date.now() - started > timeout) return value;
  }
}

/** The page of `context` at `url`, once there is one (other than the pages in `besides`: those
 * open before it was asked for). Read from the context's pages, not its 'page' event: a tab
 * opened by the browser itself is announced while it still shows about:blank, so a test
 * waiting for the event with its address could wait forever. */
export async function pageAt(context, url, { besides = new Set(), timeout = 10_000 } = {}) {
  const found = await until(() => context.pages().find((p) => !besides.has(p) && p.url() === url), Boolean, timeout);
  if (!found) throw new Error(`no page at ${url} within ${timeout} ms; open: ${context.pages().map((p) => p.url()).join(', ')}`);
  return found;
}

/** Types a task into the panel and presses Enter, as a person would. */
export async function runTask(panel, task) {
  await panel.fill('#task', task);
  await panel.press('#task', 'Enter');
}

/** Runs a task and waits for its final answer in the chat; earlier answers (and those of a
 * past conversation the panel holds open) are skipped. Resolves to the final answer's text. */
export async function runTaskToEnd(panel, task, timeout = 60_000) {
  const before = await panel.locator('#log .final').count();
  await runTask(panel, task);
  const final = panel.locator('#log .final').nth(before);
  await final.waitFor({ timeout });
  return final.innerText();
}

/** Starts a new conversation in the panel when one is open (the button shows only then), so
 * the next task is not a follow-up. */
export async function newConversation(panel) {
  const fresh = panel.locator('#new-conversation');
  if (await fresh.isVisible()) await fresh.click();
}

/** Runs a task on `site` (brought to the front, then the panel beside it) and waits for its
 * final answer; a start the panel refuses (a notice instead of an answer) throws with the
 * notice. Resolves to the final answer's text. */
export async function runTaskOn(panel, site, task, timeout = 60_000) {
  const before = await panel.locator('#log .final').count();
  await site.bringToFront();
  await panel.bringToFront();
  await runTask(panel, task);
  const final = panel.locator('#log .final').nth(before);
  await panel.locator('#notice:not([hidden])').or(final).first().waitFor({ timeout });
  const notice = await panel.locator('#notice').innerText();
  if (notice) throw new Error(`the panel refused the task: ${notice}`);
  return final.innerText();
}
