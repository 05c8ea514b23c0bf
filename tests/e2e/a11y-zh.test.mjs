// The same walk through every state as a11y.test.mjs, in a browser whose interface language is
// Chinese: zero serious or critical axe violations there too, no message name left
// untranslated, and each state's screenshot kept as state-zh_CN-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWithMockLlm } from './lib/harness.mjs';
import { answer } from './lib/mock-llm.mjs';
import { seriousViolations } from './lib/axe.mjs';
import { walkPanelStates } from './lib/panel-states.mjs';

let world;

before(async () => {
  world = await startWithMockLlm(() => answer('完成', [{ done: { text: '好的。', success: true } }]), { lang: 'zh-CN' });
  await world.h.settings({ baseUrl: world.llm.baseUrl, model: 'mock-model', vision: 'on' });
});

after(() => world?.close());

test('every state in Chinese: no serious or critical axe violation, no untranslated message name', async () => {
  await walkPanelStates(world, async (page, state) => {
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      const found = await seriousViolations(page);
      assert.deepEqual(found, [], `${state} (${scheme}): ${JSON.stringify(found, null, 1)}`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    const names = await page.evaluate(() => {
      const out = [];
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (/^[a-z]+[A-Z][A-Za-z]*$/.test(node.textContent.trim())) out.push(node.textContent.trim());
      }
      return out;
    });
    assert.deepEqual(names, [], `${state}: message names shown as text`);
    await world.h.screenshot(page, `state-zh_CN-${state}`);
  });
});
