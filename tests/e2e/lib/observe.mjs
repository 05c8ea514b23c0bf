// Looking at fixture pages through the real extension: each look runs a one-step task whose mock
// LLM answers `done` at once, and returns the state text the extension sent — exactly what a
// model would see. Tests with more steps swap in their own policy.
import { startWithMockLlm, runTaskToEnd, runTask } from './harness.mjs';
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
    /** Opens a tab on a start page and runs a task whose model navigates it to fixture
     * `name`, so the page loads while the task runs (with the scripts a task registers, from
     * the document's start); then, if `act` is given, repeats `act(state)` until the state text
     * matches `doneWhen`. Returns {page, states}: the tab, and every state text sent from the
     * first that shows the fixture. */
    async loadDuringTask(name, { act = null, doneWhen = null } = {}) {
      const page = await h.openFixture('start.html');
      const url = `${h.fixtures.url}/${name}`;
      const finish = answer('Finish', [{ done: { text: 'Finished.', success: true } }]);
      world.setPolicy((state) => {
        if (!state.includes(`URL: ${url}`)) return answer('Open the page', [{ navigate: { url } }]);
        if (!act || doneWhen?.test(state)) return finish;
        return answer('Act on the page', act(state));
      });
      try {
        const { states } = await this.run(page, 'Open the page and work on it');
        const first = states.findIndex((s) => s.includes(`URL: ${url}`));
        if (first < 0) throw new Error(`the task never saw ${url}:\n${states.join('\n---\n')}`);
        return { page, states: states.slice(first) };
      } finally {
        world.setPolicy(null);
      }
    },
    /** Runs `work()` while a task holds `page` (the content scripts are in a page only while
     * a task runs): the task's model waits, after its first look, until `work` is done, then
     * finishes; returns what `work` returned once the task has ended. */
    async whileTaskHolds(page, work, task = 'Hold the page') {
      let started;
      const looking = new Promise((r) => { started = r; });
      let release;
      const held = new Promise((r) => { release = r; });
      world.setPolicy(async () => {
        started();
        await held;
        return answer('Done', [{ done: { text: 'Finished.', success: true } }]);
      });
      try {
        await panel.bringToFront();
        await page.bringToFront();
        await runTask(panel, task);
        await looking;
        return await work();
      } finally {
        release();
        world.setPolicy(null);
        await panel.locator('#log .final').last().waitFor({ timeout: 30_000 }).catch(() => {});
      }
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
