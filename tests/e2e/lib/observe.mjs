// Looking at fixture pages through the real extension: each look runs a one-step task whose mock
// LLM answers `done` at once, and returns the state text the extension sent — exactly what a
// model would see. Tests with more steps swap in their own policy.
import { startWithMockLlm, runTaskToEnd } from './harness.mjs';
import { answer } from './mock-llm.mjs';

export async function startObserver(settings = {}) {
  const world = await startWithMockLlm(() => answer('Look', [{ done: { text: 'Looked.', success: true } }]));
  const { h, llm } = world;
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model', ...settings });
  const panel = await h.openPanel();
  return {
    h,
    llm,
    panel,
    /** Uses `next` to answer until the task ends, then goes back to answering done. */
    setPolicy: world.setPolicy,
    /** Opens a fixture page in a new tab (optionally preparing it) and returns it. */
    async open(name) {
      return h.openFixture(name);
    },
    /** Runs a task on `page` and returns {states, final}: every state text sent, in order. */
    async run(page, task = 'Look at the page', timeout = 60_000) {
      // The panel is in a window of its own (harness.mjs): the page's window is brought to the
      // front, where a person looks while the task works, and the panel is typed into there.
      await panel.bringToFront();
      await page.bringToFront();
      const before = llm.requests.length;
      const final = await runTaskToEnd(panel, task, timeout);
      const states = llm.requests.slice(before).map((r) => textOf(r.body));
      return { states, final };
    },
    /** Runs a task whose model repeats `act(state)` (a list of actions) until the state text
     * matches `doneWhen`, then finishes. */
    async actUntil(page, task, doneWhen, act) {
      world.setPolicy((state) => (doneWhen.test(state)
        ? answer('Finish', [{ done: { text: 'Finished.', success: true } }])
        : answer('Act on the page', act(state))));
      try {
        return await this.run(page, task);
      } finally {
        world.setPolicy(null);
      }
    },
    /** The state text of `page` (one step). */
    async look(page) {
      const { states } = await this.run(page);
      return states[0];
    },
    close: world.close,
  };
}

/** The state text of a request (the text part when an image is attached). */
export function textOf(body) {
  const content = body.messages?.[1]?.content ?? '';
  return Array.isArray(content) ? content.filter((p) => p.type === 'text').map((p) => p.text).join('\n') : content;
}

/** The browser-state part of a state text: the page as the model sees it. */
export function pageOf(state) {
  const m = /<browser_state>\n([\s\S]*?)<\/browser_state>/.exec(state);
  return m ? m[1] : '';
}

/** The element line (with its indentation) whose text matches, or undefined. */
export function lineWith(state, needle) {
  return pageOf(state).split('\n').find((l) => l.includes(needle));
}
