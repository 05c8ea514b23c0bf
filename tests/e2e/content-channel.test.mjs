// The worker's ports to the content scripts (extension/content-channel.js), against a stand-in
// for chrome.tabs.connect: when a port closes is up to Chrome, so the cases a real page makes
// only by chance (a request sent just as its document went away) are made here on purpose.
// Every browser test that runs a task exercises the real ports.
import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';

/** A port as the worker sees it; the test plays the page's side. */
function fakePort(tabId, frameId) {
  const listeners = { message: [], disconnect: [] };
  const port = {
    tabId,
    frameId,
    sent: [],
    closed: false,
    onMessage: { addListener: (fn) => listeners.message.push(fn) },
    onDisconnect: { addListener: (fn) => listeners.disconnect.push(fn) },
    postMessage(envelope) {
      if (port.closed) throw new Error('Attempting to use a disconnected port object');
      port.sent.push(envelope);
    },
    disconnect() {
      port.closed = true;
    },
    /** The page answers the request with this id. */
    answer(id, reply) {
      for (const fn of listeners.message) fn({ id, reply });
    },
    /** Chrome closes the port, with `lastError` set for the listeners when given. */
    close(lastError = null) {
      port.closed = true;
      globalThis.chrome.runtime.lastError = lastError ? { message: lastError } : undefined;
      for (const fn of listeners.disconnect) fn();
      globalThis.chrome.runtime.lastError = undefined;
    },
  };
  return port;
}

const opened = [];
globalThis.chrome = {
  runtime: { lastError: undefined },
  tabs: {
    connect(tabId, { frameId, name }) {
      assert.equal(name, 'tabwright-content');
      const port = fakePort(tabId, frameId);
      opened.push(port);
      return port;
    },
  },
};
const { contentChannel } = await import('../../extension/content-channel.js');
const tick = () => new Promise((resolve) => setImmediate(resolve));

// The tabs the tests ask in.
const TABS = Array.from({ length: 20 }, (_, i) => i);

beforeEach(() => {
  contentChannel.closeTabs(TABS);
  opened.length = 0;
});

test('one port per frame carries every request, and each reply reaches its own request', async () => {
  const first = contentChannel.ask(7, 0, { type: 'click', index: 3 });
  const second = contentChannel.ask(7, 0, { type: 'snapshot' });
  const child = contentChannel.ask(7, 12, { type: 'snapshot' });
  assert.equal(opened.length, 2, 'a port for the top frame and one for the child frame');
  const [top, inner] = opened;
  assert.deepEqual([top.tabId, top.frameId, inner.frameId], [7, 0, 12]);
  assert.deepEqual(top.sent.map((e) => e.message.type), ['click', 'snapshot']);
  // Answered out of order: each reply goes to the request with its id.
  top.answer(top.sent[1].id, { ok: true, snapshot_json: '{}' });
  top.answer(top.sent[0].id, { ok: true, result: { effect: true } });
  inner.answer(inner.sent[0].id, { ok: true, snapshot_json: '[]' });
  assert.deepEqual(await first, { ok: true, result: { effect: true } });
  assert.deepEqual(await second, { ok: true, snapshot_json: '{}' });
  assert.deepEqual(await child, { ok: true, snapshot_json: '[]' });
  // The next request uses the same port.
  const third = contentChannel.ask(7, 0, { type: 'point', index: 1 });
  assert.equal(opened.length, 2);
  top.answer(top.sent[2].id, { ok: true, result: { x: 1, y: 2 } });
  assert.deepEqual(await third, { ok: true, result: { x: 1, y: 2 } });
});

test('a frame without a content script fails with Chrome\'s own error, and is not asked again on its own', async () => {
  const asked = contentChannel.ask(3, 0, { type: 'snapshot' });
  opened[0].close('Could not establish connection. Receiving end does not exist.');
  await assert.rejects(asked, { message: 'Could not establish connection. Receiving end does not exist.' });
  assert.equal(opened.length, 1, 'no second port: the core injects the scripts first');
});

test('a request that only reads is sent again on a new port when its document went away first', async () => {
  const asked = contentChannel.ask(5, 0, { type: 'snapshot' });
  opened[0].close();
  await tick();
  assert.equal(opened.length, 2, 'a new port to the frame\'s new document');
  assert.equal(opened[1].sent[0].message.type, 'snapshot');
  opened[1].answer(opened[1].sent[0].id, { ok: true, snapshot_json: '{"new":true}' });
  assert.deepEqual(await asked, { ok: true, snapshot_json: '{"new":true}' });
});

test('an action whose page went away is not repeated: it fails as a closed message port', async () => {
  const clicked = contentChannel.ask(5, 0, { type: 'click', index: 9 });
  const typed = contentChannel.ask(5, 0, { type: 'input', index: 4, text: 'x' });
  opened[0].close();
  await assert.rejects(clicked, { message: 'The message port closed before a response was received.' });
  await assert.rejects(typed, { message: 'The message port closed before a response was received.' });
  assert.equal(opened.length, 1, 'nothing was sent again');
  // The frame's next request opens a new port.
  const next = contentChannel.ask(5, 0, { type: 'snapshot' });
  assert.equal(opened.length, 2);
  opened[1].answer(opened[1].sent[0].id, { ok: true });
  assert.deepEqual(await next, { ok: true });
});

test('a port Chrome closed before the worker heard of it is replaced at once, even for an action: it was never sent', async () => {
  const first = contentChannel.ask(2, 0, { type: 'highlight', labels: [] });
  opened[0].answer(opened[0].sent[0].id, { ok: true, shown: 0 });
  await first;
  opened[0].closed = true; // posting now throws, the disconnect event not yet delivered
  const clicked = contentChannel.ask(2, 0, { type: 'click', index: 6 });
  await tick();
  assert.equal(opened.length, 2);
  assert.deepEqual(opened[1].sent.map((e) => e.message), [{ type: 'click', index: 6 }], 'sent once, on the new port');
  opened[1].answer(opened[1].sent[0].id, { ok: true, result: { effect: true } });
  assert.deepEqual(await clicked, { ok: true, result: { effect: true } });
});

test('closing a task\'s ports at its end ends what still waits there, sends none of it again, leaves another task\'s tab alone, and the next task opens new ones', async () => {
  const clicked = contentChannel.ask(8, 0, { type: 'click', index: 1 });
  // Boxes drawn for the last look, still waiting for the page to paint them.
  const highlighted = contentChannel.ask(8, 0, { type: 'highlight', labels: [[1, 1]] });
  // Another task works in tab 9 meanwhile.
  const elsewhere = contentChannel.ask(9, 0, { type: 'snapshot' });
  contentChannel.closeTabs([8]);
  assert.equal(opened[0].closed, true, 'the port was disconnected');
  assert.equal(opened[1].closed, false, 'the other task\'s port stays open');
  await assert.rejects(clicked, { message: 'The task ended before the page answered.' });
  await assert.rejects(highlighted, { message: 'The task ended before the page answered.' });
  opened[1].answer(opened[1].sent[0].id, { ok: true, tab: 9 });
  assert.deepEqual(await elsewhere, { ok: true, tab: 9 }, 'and its request is answered');
  // The page then closes its end too: nothing is sent again, or the page would think a task
  // still works there (its dialogs answered) and draw boxes after the task.
  opened[0].close();
  await tick();
  assert.equal(opened.length, 2, 'no port was opened after the task ended');
  const later = contentChannel.ask(8, 0, { type: 'snapshot' });
  assert.equal(opened.length, 3);
  opened[2].answer(opened[2].sent[0].id, { ok: true });
  assert.deepEqual(await later, { ok: true });
});
