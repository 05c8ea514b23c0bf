// Accessibility of the side panel and the options page, checked by truths nobody here wrote:
// axe-core (Deque's engine, npm) in every state a person meets (lib/panel-states.mjs; each
// state's screenshot is kept as state-en-*.png, and state-zh_CN-*.png by a11y-zh.test.mjs) and
// the options page with a fault marked, in light and dark, with zero serious or critical
// violations; WCAG's 4.5:1 contrast for every placeholder, measured; and the
// keyboard alone doing what the mouse does (Escape closes what opened).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWithMockLlm, runTask, runTaskToEnd, newConversation } from './lib/harness.mjs';
import { answer } from './lib/mock-llm.mjs';
import { seriousViolations } from './lib/axe.mjs';
import { walkPanelStates } from './lib/panel-states.mjs';

let world;
let h;
let llm;

before(async () => {
  world = await startWithMockLlm(() => answer('Finish', [{ done: { text: '## Done\n\n**All** fine.', success: true } }]));
  ({ h, llm } = world);
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model', vision: 'on' });
});

after(() => world?.close());

/** Checks `page` now, in light and in dark: no serious or critical violation. */
async function noViolations(page, state) {
  for (const scheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: scheme });
    const found = await seriousViolations(page);
    assert.deepEqual(found, [], `${state} (${scheme}): ${JSON.stringify(found, null, 1)}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** The contrast of every visible placeholder with its field's background, by WCAG's formula. */
function placeholderContrasts(page) {
  return page.evaluate(() => {
    const rgb = (css) => (css.match(/[\d.]+/g) ?? []).map(Number);
    const luminance = ([r, g, b]) => {
      const lin = (c) => (c / 255 <= 0.03928 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
      return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
    };
    const background = (el) => {
      for (let at = el; at; at = at.parentElement) {
        const [r, g, b, a = 1] = rgb(getComputedStyle(at).backgroundColor);
        if (a > 0) return [r, g, b];
      }
      return [255, 255, 255];
    };
    return [...document.querySelectorAll('input[placeholder], textarea[placeholder]')]
      .filter((el) => el.placeholder && el.getClientRects().length)
      .map((el) => {
        const a = luminance(rgb(getComputedStyle(el, '::placeholder').color));
        const b = luminance(background(el));
        return { field: el.id || el.className, ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05) };
      });
  });
}

test('the side panel and the options in every state: no serious or critical axe violation, light and dark', async () => {
  await walkPanelStates(world, async (page, state) => {
    await noViolations(page, state);
    await h.screenshot(page, `state-en-${state}`);
  });
});

test('every placeholder reads at 4.5:1 or more, in the panel and the options, light and dark', async () => {
  const panel = await h.openPanel();
  const options = await h.context.newPage();
  await options.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  await options.locator('body[data-ready="true"]').waitFor({ state: 'attached' });
  for (const page of [panel, options]) {
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      const measured = await placeholderContrasts(page);
      assert.ok(measured.length > 0, 'placeholders were measured');
      const low = measured.filter((m) => m.ratio < 4.5);
      assert.deepEqual(low, [], `${scheme}: ${JSON.stringify(low)}`);
    }
  }
  await options.emulateMedia({ colorScheme: 'light' });
  await noViolations(options, 'options');
  await options.fill('#model', '');
  await options.click('#save');
  await options.locator('#saved.error').waitFor();
  await noViolations(options, 'options with a fault marked');
  await options.fill('#model', 'mock-model');
  await options.click('#save');
  await options.locator('#saved:not(.error):not(:empty)').waitFor();
  await options.close();
});

test('the keyboard alone: a screenshot opens and Escape closes it; the pill is announced', async () => {
  const panel = await h.openPanel();
  await newConversation(panel);
  await h.openFixture('login.html');
  await panel.bringToFront();
  await runTaskToEnd(panel, 'Look at the page');
  const thumb = panel.locator('#log .shot-button').last();
  await thumb.focus();
  await panel.keyboard.press('Enter');
  assert.equal(await thumb.getAttribute('aria-expanded'), 'true', 'Enter opens it');
  assert.equal(await thumb.locator('img.large').count(), 1);
  await panel.keyboard.press('Escape');
  assert.equal(await thumb.getAttribute('aria-expanded'), 'false', 'Escape closes it');
  await panel.keyboard.press('Space');
  assert.equal(await thumb.getAttribute('aria-expanded'), 'true', 'Space opens it too');
  await panel.keyboard.press('Escape');
  assert.equal(await panel.getAttribute('#status', 'role'), 'status', 'a screen reader hears the pill change');
});

test('the theme chosen in the options (light, dark or the system\'s) applies at once to the panel and the options', async () => {
  const panel = await h.openPanel();
  const options = await h.context.newPage();
  await options.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  await options.locator('body[data-ready="true"]').waitFor({ state: 'attached' });
  const background = (page) => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const LIGHT = 'rgb(247, 248, 250)';
  const DARK = 'rgb(22, 25, 29)';
  try {
    for (const page of [panel, options]) await page.emulateMedia({ colorScheme: 'light' });
    assert.equal(await options.inputValue('#theme'), 'system');
    assert.equal(await background(panel), LIGHT, 'as the system, light');
    await options.selectOption('#theme', 'dark');
    await panel.waitForFunction((dark) => getComputedStyle(document.body).backgroundColor === dark, DARK);
    assert.equal(await background(options), DARK, 'and this page too');
    await noViolations(panel, 'dark chosen');
    await panel.reload();
    assert.equal(await background(panel), DARK, 'kept across a reload');
    for (const page of [panel, options]) await page.emulateMedia({ colorScheme: 'dark' });
    await options.selectOption('#theme', 'light');
    await panel.waitForFunction((light) => getComputedStyle(document.body).backgroundColor === light, LIGHT);
    assert.equal(await background(options), LIGHT, 'light, though the system is dark');
    await options.selectOption('#theme', 'system');
    await panel.waitForFunction((dark) => getComputedStyle(document.body).backgroundColor === dark, DARK);
  } finally {
    await options.evaluate(() => localStorage.removeItem('tabwright-theme'));
    for (const page of [panel, options]) await page.emulateMedia({ colorScheme: 'light' });
    await options.close();
  }
});
