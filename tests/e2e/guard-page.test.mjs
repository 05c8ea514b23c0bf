// The person's guard (src/guard) where it meets the page: the element's facts are read by the
// page just before the act, and the act carries them back. A page that changes the button or
// its form while the person is being asked, a button whose script moves its form elsewhere,
// and a button whose script sends another form: none of them gets a form sent, and the model
// is told why. Effects are what the fixture server received (tests/e2e/lib/fixture-server.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { runTaskToEnd, manualConsents } from './lib/harness.mjs';
import { answer } from './lib/mock-llm.mjs';
import { startObserver } from './lib/observe.mjs';
import { findIndex } from './lib/state.mjs';

let o;
let h;
let llm;
let policy = null;

before(async () => {
  o = await startObserver();
  ({ h, llm } = o);
  o.setPolicy((state, body) => policy(state, body));
  await manualConsents(o.panel);
});

after(async () => {
  await o?.close();
});

/** The consent the task waits on, from the task's state (`get_status`), once there is one. */
async function pendingConsent(panel, timeout = 15_000) {
  const until = Date.now() + timeout;
  for (;;) {
    const status = await panel.evaluate(() => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'get_status' } }));
    const consent = status?.state?.pending_consent;
    if (consent) return consent;
    if (Date.now() > until) throw new Error(`no consent asked: ${JSON.stringify(status?.state)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const answerConsent = (panel, id, answer) => panel.evaluate(
  ([id, answer]) => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'answer_consent', id, answer } }),
  [id, answer],
);

/** Clicks the element whose line matches `pattern` once, then reports what it was told. */
function clickOnce(pattern) {
  let told = null;
  return {
    policy: (state) => {
      if (told !== null || /Step 1:/.test(state)) {
        told ??= state;
        return answer('Report', [{ done: { text: 'Reported.', success: true } }]);
      }
      return answer('Go on', [{ click: { index: findIndex(state, pattern), x: null, y: null } }]);
    },
    told: () => told,
  };
}

test('a button changed while the person is asked is refused by the page, and nothing is sent', async () => {
  for (const change of ['label', 'action']) {
    h.fixtures.reset();
    const run = clickOnce('Place order');
    policy = run.policy;
    const site = await o.open('guard/changed-after-check.html');
    await site.bringToFront();
    await o.panel.bringToFront();
    const done = runTaskToEnd(o.panel, 'Look at my checkout');
    const consent = await pendingConsent(o.panel);
    assert.equal(consent.kind, 'held_act');
    assert.match(consent.act, /Place order on 127\.0\.0\.1/);
    // Nothing reached the page while the person is asked.
    assert.equal(h.fixtures.effects().effects.length, 0);
    await site.evaluate((change) => {
      if (change === 'label') document.getElementById('place').textContent = 'Place order and subscribe';
      else document.getElementById('checkout').setAttribute('action', `${location.origin.replace('127.0.0.1', 'localhost')}/attacks/collect`);
    }, change);
    assert.deepEqual(await answerConsent(o.panel, consent.id, 'allow_once'), { v: 1, type: 'accepted' });
    await done;
    assert.equal(h.fixtures.effects().effects.length, 0, `${change}: the order was sent`);
    assert.equal(h.fixtures.effects().collected.length, 0, `${change}: the form went to the other site`);
    assert.match(run.told(), /it changed after Tabwright checked it/, change);
    await site.close();
  }
});

test('a form moved by its button\'s own script after the check is not sent', async () => {
  h.fixtures.reset();
  const run = clickOnce('Continue');
  policy = run.policy;
  const site = await o.open('guard/moves-on-click.html');
  await o.run(site, 'Go on with the delivery');
  assert.equal(h.fixtures.effects().effects.length, 0, JSON.stringify(h.fixtures.effects().effects));
  assert.match(run.told(), /tried to send another form than the one checked/);
  assert.match(site.url(), /moves-on-click\.html$/, 'the page stayed');
  await site.close();
});

test('a form sent from script during a checked click leaves nothing at the server', async () => {
  h.fixtures.reset();
  const run = clickOnce(/>Next$/);
  policy = run.policy;
  const site = await o.open('guard/submits-from-script.html');
  await o.run(site, 'Look at my cart');
  const { effects } = h.fixtures.effects();
  assert.equal(effects.filter((e) => e.effect === 'order' || /4111/.test(JSON.stringify(e.fields))).length, 0, JSON.stringify(effects));
  assert.match(run.told(), /tried to send another form than the one checked/);
  await site.close();
});
