// Launching Chromium with the Tabwright extension, for the headless runner and the e2e tests.
import { chromium } from 'playwright-core';
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const EXTENSION_DIR = path.join(ROOT, 'extension');

export function chromiumPath() {
  const candidates = [process.env.CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(Boolean);
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error('Chromium not found: run scripts/setup (or set CHROMIUM to its path).');
  return found;
}

/** Launches Chromium on `profileDir` with the extension loaded; resolves to
 * {context, extensionId, close}. `lang` (such as 'zh-CN') sets the browser's interface
 * language, which chrome.i18n follows (on Linux Chromium takes it from the environment).
 * `extensionDir` is the built extension to load; `extraExtensions`, more extension folders to
 * load beside it (the id returned is still Tabwright's); `args`, more Chromium flags. */
export async function launchWithExtension(profileDir, {
  headless = true, lang = null, extensionDir = EXTENSION_DIR, extraExtensions = [], args = [],
} = {}) {
  if (!existsSync(path.join(extensionDir, 'pkg', 'tabwright_bg.wasm'))) {
    throw new Error('The extension is not built: run scripts/build first.');
  }
  const env = { ...process.env };
  if (lang) {
    const posix = lang.replace('-', '_');
    Object.assign(env, { LANGUAGE: posix, LANG: `${posix}.UTF-8`, LC_ALL: `${posix}.UTF-8` });
  }
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: chromiumPath(),
    headless,
    env,
    ...(lang ? { locale: lang } : {}),
    viewport: { width: 1280, height: 900 },
    args: [...chromiumArgs([extensionDir, ...extraExtensions].join(',')), ...(lang ? [`--lang=${lang}`] : []), ...args],
  });
  return { context, extensionId: await extensionIdOf(context), close: () => context.close() };
}

/** The flags every Chromium here runs with: the extensions (a folder, or several joined with
 * commas) loaded and no others, and none of Chromium's own traffic. */
export function chromiumArgs(extensionDir) {
  return [
    '--no-sandbox',
    `--disable-extensions-except=${extensionDir}`,
    `--load-extension=${extensionDir}`,
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-gpu',
    '--disable-quic',
  ];
}

/** The id of the extension whose service worker is the file `script` (Tabwright's is the one
 * its manifest names, boot.js), from the worker's URL. */
export async function extensionIdOf(context, script = 'boot.js') {
  const ours = (worker) => new URL(worker.url()).pathname === `/${script}`;
  const worker = context.serviceWorkers().find(ours) ?? await context.waitForEvent('serviceworker', { predicate: ours, timeout: 15_000 });
  return new URL(worker.url()).host;
}

/** Starts headless Chromium on `profileDir` with the extension loaded and DevTools on
 * `port`, with no automation attached: `connect()` attaches Playwright (its context, as
 * launchWithExtension gives it), and `disconnect()` lets go again, leaving the browser and
 * its pages as they are, so that what is measured meanwhile runs with nothing attached to
 * it. */
export async function launchDetachable(profileDir, { port, extensionDir = EXTENSION_DIR } = {}) {
  const child = spawn(chromiumPath(), [
    '--headless', `--user-data-dir=${profileDir}`, `--remote-debugging-port=${port}`,
    '--window-size=1280,900', ...chromiumArgs(extensionDir), 'about:blank',
  ], { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let browser = null;
  const endpoint = `http://127.0.0.1:${port}`;
  for (let waited = 0; ; waited += 100) {
    try {
      if ((await fetch(`${endpoint}/json/version`)).ok) break;
    } catch { /* not listening yet */ }
    if (waited > 15_000 || child.exitCode !== null) throw new Error(`Chromium did not open DevTools on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    async connect() {
      browser = await chromium.connectOverCDP(endpoint);
      const [context] = browser.contexts();
      return { context, extensionId: await extensionIdOf(context) };
    },
    async disconnect() {
      // Over CDP, close() disconnects and leaves the browser running.
      await browser?.close();
      browser = null;
    },
    async close() {
      await browser?.close().catch(() => {});
      child.kill();
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    },
  };
}

/** Saves LLM settings through the options page, as a user would. `extraHeaders` is an object
 * {name: value}; `apiVersion` is for Azure OpenAI only, `contextTokens` for Ollama only (the page
 * shows each field for its provider alone). `maxParallelTasks`, the tasks one browser runs at
 * once (`max_parallel_tasks`), is left as it is when empty.
 * Throws with the page's own words when it refuses the values. */
export async function saveSettings(context, extensionId, {
  provider = 'openai', baseUrl = '', model = '', apiKey = '', maxSteps = '', viewportExpansion = '', highlights = true,
  extractionModel = '', searchEngine = 'duckduckgo', evaluateDomains = [], excludeActions = [],
  apiVersion = '', extraHeaders = {}, fallbackModel = '', llmTimeout = '',
  vision = 'auto', thinking = true, requestBudget = '', structuredOutput = '', contextTokens = '',
  maxParallelTasks = '',
}) {
  const page = await context.newPage();
  try {
    await page.goto(`chrome-extension://${extensionId}/options/options.html`);
    // The page fills its form from storage first; a value typed before would be overwritten.
    await page.locator('body[data-ready="true"]').waitFor({ state: 'attached', timeout: 10_000 });
    const offered = await page.locator('#provider option').evaluateAll((os) => os.map((o) => o.value));
    if (!offered.includes(provider)) {
      throw new Error(`LLM provider "${provider}" is not supported; choose one of: ${offered.join(', ')}`);
    }
    await page.selectOption('#provider', provider);
    await page.fill('#base-url', baseUrl);
    if (await page.locator('#api-version').isVisible()) {
      await page.fill('#api-version', apiVersion);
    } else if (apiVersion) {
      throw new Error(`The API version is an Azure OpenAI setting; the options page has no such field for "${provider}".`);
    }
    await page.fill('#model', model);
    if (await page.locator('#structured-output').isVisible()) {
      await page.selectOption('#structured-output', structuredOutput);
    } else if (structuredOutput) {
      throw new Error(`How JSON is asked for is an OpenAI-compatible setting; the options page has no such field for "${provider}".`);
    } else {
      // Hidden for this provider, but kept in the store: reset it, so one saved choice does not
      // follow later settings.
      await page.locator('#structured-output').evaluate((select) => { select.value = ''; });
    }
    if (await page.locator('#context-tokens').isVisible()) {
      await page.fill('#context-tokens', String(contextTokens));
    } else if (contextTokens) {
      throw new Error(`The context window is an Ollama setting; the options page has no such field for "${provider}".`);
    } else {
      // Hidden for this provider but kept in the store, like the JSON mode: reset it.
      await page.locator('#context-tokens').evaluate((input) => { input.value = ''; });
    }
    await page.fill('#api-key', apiKey);
    await page.fill('#extraction-model', extractionModel);
    await page.fill('#fallback-model', fallbackModel);
    await page.fill('#llm-timeout', String(llmTimeout));
    await page.fill('#extra-headers', Object.entries(extraHeaders).map(([name, value]) => `${name}: ${value}`).join('\n'));
    await page.fill('#max-steps', String(maxSteps));
    await page.fill('#max-parallel', String(maxParallelTasks));
    await page.fill('#viewport-expansion', String(viewportExpansion));
    await page.setChecked('#highlights', highlights);
    await page.selectOption('#vision', vision);
    await page.setChecked('#thinking', thinking);
    await page.fill('#request-budget', String(requestBudget));
    await page.selectOption('#search-engine', searchEngine);
    await page.fill('#evaluate-domains', evaluateDomains.join('\n'));
    await page.fill('#exclude-actions', excludeActions.join(', '));
    // The browser's own checks (a required field, a number out of range) block the submit with
    // a bubble only a person sees; name the field instead of waiting for a "Saved." that never comes.
    const invalid = await page.evaluate(() => {
      const bad = [...document.getElementById('settings').elements].find((e) => e.willValidate && !e.checkValidity());
      return bad ? `#${bad.id}: ${bad.validationMessage}` : null;
    });
    if (invalid) throw new Error(`The options page refuses ${invalid}`);
    await page.click('#save');
    const status = page.locator('#saved:not(:empty)');
    await status.waitFor({ timeout: 5_000 });
    if ((await status.getAttribute('class')) === 'error') throw new Error(await status.innerText());
  } finally {
    await page.close();
  }
}

/** Sets how many tasks one browser runs at once (`max_parallel_tasks` in the stored settings;
 * null: the default), leaving every other setting as it is. */
export async function saveMaxParallelTasks(context, extensionId, count) {
  const page = await context.newPage();
  try {
    await page.goto(`chrome-extension://${extensionId}/options/options.html`);
    await page.locator('body[data-ready="true"]').waitFor({ state: 'attached', timeout: 10_000 });
    await storeMaxParallelTasks(page, count);
  } finally {
    await page.close();
  }
}

/** Writes `max_parallel_tasks` into the stored settings from `page`, an extension page. */
async function storeMaxParallelTasks(page, count) {
  const n = count === null ? null : Number(count);
  if (n !== null && (!Number.isInteger(n) || n < 1)) throw new Error(`The tasks at once must be a whole number from 1: ${count}`);
  await page.evaluate(async (value) => {
    const { settings } = await chrome.storage.local.get('settings');
    const { max_parallel_tasks: _, ...others } = settings ?? {};
    await chrome.storage.local.set({ settings: value === null ? others : { ...others, max_parallel_tasks: value } });
  }, n);
}

// --- Browsers reached over the DevTools protocol ---------------------------------------------

/** Starts headless Chromium on `profileDir` with the extension loaded, serving the DevTools
 * protocol on a free port (`--remote-debugging-port=0`), as a machine of a fleet would. Resolves
 * to {wsEndpoint, pid, close(), kill()}: `close()` ends it and waits (at most 5 s), `kill()`
 * ends it at once, as a machine that fails. */
export async function launchServing(profileDir, { extensionDir = EXTENSION_DIR, args = [] } = {}) {
  if (!existsSync(path.join(extensionDir, 'pkg', 'tabwright_bg.wasm'))) {
    throw new Error('The extension is not built: run scripts/build first.');
  }
  const child = spawn(chromiumPath(), [
    '--headless', `--user-data-dir=${profileDir}`, '--remote-debugging-port=0',
    '--window-size=1280,900', ...chromiumArgs(extensionDir), ...args, 'about:blank',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let said = '';
  const wsEndpoint = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`Chromium did not open DevTools within 15 s: ${said.slice(-500)}`));
    }, 15_000);
    child.stderr.on('data', (chunk) => {
      said += chunk;
      const found = /DevTools listening on (ws:\/\/\S+)/.exec(said);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Chromium exited (${code}) before opening DevTools: ${said.slice(-500)}`));
    });
  });
  // Chromium keeps writing to stderr; keep reading it so it never blocks on a full pipe.
  child.stderr.resume();
  const wait = () => Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
  return {
    wsEndpoint,
    pid: child.pid,
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill();
      await wait();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await wait();
    },
  };
}

/** Attaches to a Chromium that runs Tabwright at `endpoint` (a ws:// DevTools URL, or the
 * http:// address that serves /json/version), within `timeout` ms. Resolves to {browser,
 * context, extensionId, close()}; `close()` lets go of the browser and leaves it running. */
export async function connectEndpoint(endpoint, { timeout = 30_000 } = {}) {
  const browser = await chromium.connectOverCDP(endpoint, { timeout });
  try {
    const context = browser.contexts()[0];
    if (!context) throw new Error('it has no browser context');
    const extensionId = await tabwrightIdIn(context);
    return { browser, context, extensionId, close: () => browser.close().catch(() => {}) };
  } catch (error) {
    await browser.close().catch(() => {});
    throw error;
  }
}

/** Tabwright's id in `context`: from its service worker's URL (chrome-extension://<id>/boot.js)
 * when it runs; otherwise (Chrome stops an idle worker) from the browser's list of extensions
 * (chrome://extensions-internals). Throws when Tabwright is not there. */
export async function tabwrightIdIn(context) {
  const ours = (worker) => new URL(worker.url()).pathname === '/boot.js';
  const running = context.serviceWorkers().find(ours);
  if (running) return new URL(running.url()).host;
  const page = await context.newPage();
  let listed;
  try {
    await page.goto('chrome://extensions-internals/', { timeout: 10_000 });
    listed = JSON.parse(await page.evaluate(() => document.body.innerText));
  } catch (error) {
    throw new Error(`Tabwright's service worker is not running there, and the list of extensions could not be read (${error.message.split('\n')[0]})`);
  } finally {
    await page.close().catch(() => {});
  }
  const found = Array.isArray(listed) ? listed.find((e) => e?.name === 'Tabwright') : undefined;
  if (!found?.id) throw new Error('Tabwright is not loaded in that browser (start it with --load-extension=<the extension folder>)');
  return found.id;
}
