// Tabwright in Chinese: a browser whose interface language is zh-CN shows the side panel, the
// history and the options page in Chinese (from _locales/zh_CN), with no message name left
// untranslated, in light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWithMockLlm, runTask, runTaskToEnd, newConversation } from './lib/harness.mjs';
import { answer } from './lib/mock-llm.mjs';
import { field, findField, findIndex, stepsDone } from './lib/state.mjs';

let world;
let h;

before(async () => {
  world = await startWithMockLlm((state) => answer('读取标题', [{ done: { text: `页面标题是 **${field(state, 'Title')}**。`, success: true } }]), { lang: 'zh-CN' });
  ({ h } = world);
  await h.settings({ baseUrl: world.llm.baseUrl, model: 'mock-model' });
});

after(() => world?.close());

/** Texts on the page that look like a message name (camelCase, no spaces): a string that did
 * not come through chrome.i18n. */
function untranslated(page) {
  return page.evaluate(() => {
    const names = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent.trim();
      if (/^[a-z]+[A-Z][A-Za-z]*$/.test(text)) names.push(text);
    }
    for (const el of document.querySelectorAll('[placeholder], [title], [aria-label]')) {
      for (const attr of ['placeholder', 'title', 'aria-label']) {
        const value = el.getAttribute(attr);
        if (value && /^[a-z]+[A-Z][A-Za-z]*$/.test(value)) names.push(`${attr}=${value}`);
      }
    }
    return names;
  });
}

test('the panel, its history and the options page speak Chinese', async () => {
  await h.openFixture('actions/history-a.html');
  const panel = await h.openPanel();
  assert.match(await panel.evaluate(() => chrome.i18n.getUILanguage()), /^zh/);
  assert.equal(await panel.locator('#run').innerText(), '运行');
  assert.equal(await panel.locator('#status').innerText(), '空闲');
  assert.match(await panel.getAttribute('#task', 'placeholder'), /要 Tabwright 做什么/);
  assert.equal(await panel.evaluate(() => document.documentElement.lang.startsWith('zh')), true);

  const final = await runTaskToEnd(panel, '这个页面的标题是什么？');
  assert.match(final, /^完成\n+页面标题是 Page A。/);
  assert.match(final, /1 步 · [\d,]+ 个令牌/);
  assert.match(await panel.locator('.step-number').first().innerText(), /^第 1 步，共 100 步$/);
  assert.deepEqual(await untranslated(panel), []);
  // The step's action reads in Chinese; what the model was told stays folded beneath it.
  assert.equal(await panel.locator('.action summary').first().innerText(), '✓ 结束：任务完成');
  assert.doesNotMatch(await panel.locator('#log').innerText(), /finish: task|Task done/i);
  await h.screenshot(panel, 'panel-zh_CN-light');
  await panel.emulateMedia({ colorScheme: 'dark' });
  await h.screenshot(panel, 'panel-zh_CN-dark');
  await panel.emulateMedia({ colorScheme: 'light' });

  await panel.click('#show-history');
  await panel.locator('.history-list .session').first().waitFor();
  assert.equal(await panel.locator('.history-list .session .danger-link').first().innerText(), '删除');
  assert.equal(await panel.getAttribute('.history-search', 'placeholder'), '搜索任务、回答、页面、目标');
  assert.deepEqual(await untranslated(panel), []);
  await h.screenshot(panel, 'panel-zh_CN-history');

  const options = await h.context.newPage();
  await options.setViewportSize({ width: 720, height: 1400 });
  await options.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  await options.waitForFunction(() => document.getElementById('model').value !== '');
  assert.equal(await options.title(), 'Tabwright 设置');
  assert.equal(await options.locator('#test-connection').innerText(), '测试连接');
  assert.match(await options.locator('#provider-hint').innerText(), /Chat Completions 接口/);
  assert.deepEqual(await untranslated(options), []);
  await h.screenshot(options, 'options-zh_CN');
  await options.close();
});

test('the core\'s refusals and errors reach a Chinese reader in Chinese', async () => {
  await h.openFixture('actions/history-a.html');
  const panel = await h.openPanel();
  try {
    // A refusal: settings with no model. The core's English names the empty field; the panel
    // shows the same message from _locales/zh_CN.
    const saved = await h.settings({ baseUrl: world.llm.baseUrl, model: '' }).then(() => null, (error) => error.message);
    assert.match(saved, /^已保存，但任务还无法开始：尚未选择模型。/, 'the options page says it too');
    await runTask(panel, '这个页面的标题是什么？');
    const notice = panel.locator('#notice');
    await notice.filter({ hasText: /\S/ }).waitFor();
    const refused = await notice.innerText();
    assert.match(refused, /^尚未选择模型。请在 Tabwright 设置中选择一个/);
    assert.doesNotMatch(refused, /No model is chosen/);

    // A task that ends on an error: the model's server refuses the key. The provider's own
    // words and the status stay as they came; the sentence around them is Chinese.
    await h.settings({ baseUrl: world.llm.baseUrl, model: 'mock-model' });
    world.setPolicy(() => ({ status: 401, body: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: null } } }));
    const final = await runTaskToEnd(panel, '这个页面的标题是什么？');
    assert.match(final, /位于 http:\/\/127\.0\.0\.1:\d+\/\S+ 的语言模型返回了 HTTP 401：Incorrect API key provided。请检查 Tabwright 设置中的 API 密钥。/);
    assert.doesNotMatch(final, /answered HTTP/);
    assert.equal(await panel.locator('#log .final').last().getByRole('button', { name: '打开设置' }).count(), 1, 'with the way to fix it');
    // The history keeps the English too (searching and exports read it).
    const status = await panel.evaluate(() => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'get_status' } }));
    const end = status.events.at(-1).end;
    assert.equal(end.kind, 'error');
    assert.match(end.message, /answered HTTP 401: Incorrect API key provided\. Check the API key in Tabwright's settings\./);
    assert.equal(end.locale_text.key, 'llm_http_key');
    await h.screenshot(panel, 'panel-zh_CN-error');
  } finally {
    world.setPolicy(null);
    await h.settings({ baseUrl: world.llm.baseUrl, model: 'mock-model' });
    await panel.close();
  }
});

test('a step\'s actions read in Chinese, page text as it is; what the model was told is folded', async () => {
  world.setPolicy((state) => {
    if (stepsDone(state) >= 1) return answer('完成', [{ done: { text: '已登录。', success: true } }]);
    return answer('填写表单', [
      { input: { index: findField(state, 'Username'), text: 'alice', clear: true } },
      { click: { index: findIndex(state, />Submit$/) } },
    ]);
  });
  await h.openFixture('login.html');
  const panel = await h.openPanel();
  await newConversation(panel);
  await runTaskToEnd(panel, '以 alice 登录');
  const lines = await panel.locator('#log .step').first().locator('.action summary').allInnerTexts();
  assert.equal(lines.length, 2, JSON.stringify(lines));
  assert.match(lines[0], /^✓ 在 \[\d+\] \S.* 中输入 "alice"$/);
  assert.match(lines[1], /^✓ 点击 \[\d+\] Submit$/);
  const log = await panel.locator('#log').innerText();
  assert.doesNotMatch(log, /\b(type|into|click|Typed|Clicked)\b/, 'no English of the core left in sight');
  await panel.locator('#log .action summary').first().click();
  const told = await panel.locator('#log .action .result').first().innerText();
  assert.match(told, /^告诉模型的原话：/, 'the fold says, in Chinese, whose words these are');
  assert.match(told, /alice/, 'the model\'s words, on asking');
  await h.screenshot(panel, 'panel-zh_CN-actions');
  world.setPolicy(null);
});
