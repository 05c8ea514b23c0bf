// Driving widget pages (tests/e2e/widgets/) through the mock LLM the way a model would, and
// measuring how it went: how many model calls the task took, whether the page's own saved value
// is right, and whether any step was reported as done although the page did not change.
//
// The model reads only the state text: it finds the control by its label, the option by its
// text and Save by its name. A way of choosing is a short list of steps, each answering one
// state; the model never waits or presses Escape, and tries a step again only when its action
// worked and the page has not saved (then the number of calls goes past the limit), so it shows
// whether the extension's hands and eyes make the direct path work. When a step's action
// failed, a step cannot find what it needs in the state, or the steps run out before the page
// saved (and after two more tries of the last step), the model gives up with a failed `done`, saying why, so a broken way ends
// quickly and tells its cause (and never goes on to save a value it did not choose).
import { answer } from './mock-llm.mjs';
import { findIndex, elements } from './state.mjs';
import { pageOf } from './observe.mjs';

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A control's line by its label: the name a label gives it (`label=Fruit`, `label='Home
 * city'`), or a name that holds the label's words among others (React Aria names its button by
 * the value it shows and then the label: `label='Choose a city Home city'`), or a combo box
 * whose own text is its label (Material's outlined field shows its label inside the box). */
export const labelled = (label) => {
  const words = escape(label);
  return new RegExp(`label=(?:${words}[ >]|'[^']*\\b${words}\\b[^']*')|(?:role=(?:combobox|listbox)|aria-haspopup=\\w+)[^>]*>${words}$`);
};
/** An element whose line ends with `text` (its words). */
export const saying = (text) => new RegExp(`>${escape(text)}$`);

/** Thrown by a step that cannot find what it needs in the state: the model gives up. */
class NotInState extends Error {}

/** The index of the element whose line matches `pattern`; a step that needs it and finds none
 * gives up, naming `what`. */
export function need(state, pattern, what) {
  const index = findIndex(state, pattern);
  if (!index) throw new NotInState(`no ${what} in the state`);
  return index;
}

const finish = (text, success) => answer('Finish', [{ done: { text, success } }]);

/** How many times the last step is tried again when its action worked but the page has not
 * saved. */
const AGAIN = 2;

/** The model opens the control (found by its label), clicks the option (by its text), then
 * Save: a person's way with a mouse. */
export const byClicks = (label, option, save = 'Save') => [
  (s) => answer(`Open ${label}`, [{ click: { index: need(s, labelled(label), `control labelled ${label}`) } }]),
  (s) => answer(`Choose ${option}`, [{ click: { index: need(s, saying(option), `option ${option}`) } }]),
  (s) => answer('Save', [{ click: { index: need(s, saying(save), 'Save') } }]),
];

/** The model opens the control (found by its label), presses `keys(state)` — what a person
 * would type there, worked out from what the state shows — then clicks Save. */
export const byKeys = (label, keys, save = 'Save') => [
  (s) => answer(`Open ${label}`, [{ click: { index: need(s, labelled(label), `control labelled ${label}`) } }]),
  (s) => answer('Choose with the keyboard', [{ send_keys: { keys: keys(s) } }]),
  (s) => answer('Save', [{ click: { index: need(s, saying(save), 'Save') } }]),
];

/** The model chooses with select_dropdown on the control, then clicks Save. */
export const bySelect = (label, option, save = 'Save') => [
  (s) => answer(`Choose ${option}`, [{ select_dropdown: { index: need(s, labelled(label), `control labelled ${label}`), text: option } }]),
  (s) => answer('Save', [{ click: { index: need(s, saying(save), 'Save') } }]),
];

/** Keys that type the start of an option's text (each character a key), then `then`: a
 * person's way with a list that jumps to what is typed, or a box that filters by it. */
export const typing = (start, then = 'Enter') => () => `${[...start].join(' ')} ${then}`;

/** Keys that move down the open list to `option` and press Enter. The model counts from what
 * the state shows: the options listed in order, and the one marked selected, if any (from
 * there), else from before the first. */
export const arrowsTo = (option) => (state) => {
  const options = elements(state).filter((e) => /\brole=option\b/.test(e.line));
  const target = options.findIndex((e) => saying(option).test(e.line));
  if (target < 0) throw new NotInState(`no option ${option} listed in the state`);
  const current = options.findIndex((e) => /(?:^|\s)(?:aria-selected=true|selected)(?=[\s>])/.test(e.line));
  const presses = current < 0 ? target + 1 : target - current;
  return [...Array(Math.max(presses, 0)).fill('ArrowDown'), 'Enter'].join(' ');
};

/** The page part of a state with what changes between looks without the page changing taken
 * out: the new-element marks and the index numbers. */
function pageLines(state) {
  return pageOf(state).split('\n').map((l) => l.replace(/^(\s*)\*?\[\d+\]/, '$1[]')).join('\n');
}

/** What the history in `state` says of its last step's actions: [{action, ok, message}], from
 * its lines "- click {...} → ok: Clicked [6] <li>" (or "→ error: ..."), and "- error: ..."
 * when the step was refused before any action ran. */
function lastStepResults(state) {
  const history = /<history>\n([\s\S]*?)<\/history>/.exec(state)?.[1] ?? '';
  const last = history.split(/^Step \d+:$/m).at(-1) ?? '';
  const actions = [...last.matchAll(/^\s+- (\w+) .*? → (ok|error): (.*)$/gm)]
    .map(([, action, mark, message]) => ({ action, ok: mark === 'ok', message }));
  // A step refused as a whole (an action the page does not offer) says so on a line of its own.
  const refused = [...last.matchAll(/^\s+- error: (.*)$/gm)].map(([, message]) => ({ action: 'step', ok: false, message }));
  return [...actions, ...refused];
}

/** Steps reported as done that changed nothing the model could see: every action of the step
 * says "ok", yet the state after it shows the same page as the state before it. Returns
 * [{step, results}] (steps count from 1). */
export function emptySuccesses(states) {
  const out = [];
  for (let k = 1; k < states.length; k++) {
    const results = lastStepResults(states[k]);
    if (results.length && results.every((r) => r.ok) && pageLines(states[k]) === pageLines(states[k - 1])) {
      out.push({ step: k, results: results.map((r) => `${r.action}: ${r.message}`).join('; ') });
    }
  }
  return out;
}

/** Runs one way of choosing on a fresh copy of widget page `name` (ready once `ready` shows):
 * the model plays `steps` until the page shows "Saved:", then finishes. Returns {calls, saved,
 * final, states, gaveUp, empty}: the model calls the task took, the page's own saved text, the
 * task's final answer, every state sent, why the model gave up (or null), and the steps that
 * reported success for nothing (see emptySuccesses). */
export async function attempt(o, name, ready, task, steps) {
  const page = await o.open(`widgets/${name}.html`);
  let gaveUp = null;
  try {
    await page.locator(ready).first().waitFor();
    let i = 0;
    o.setPolicy((state) => {
      if (state.includes('Saved:')) return finish('Saved.', true);
      const failed = lastStepResults(state).find((r) => !r.ok);
      if (failed) {
        gaveUp = `step ${i} failed: ${failed.action}: ${failed.message}`;
        return finish(gaveUp, false);
      }
      if (i >= steps.length + AGAIN) {
        gaveUp = `the page had not saved after ${steps.length} steps and ${AGAIN} tries more`;
        return finish(gaveUp, false);
      }
      try {
        // Past the last step, the last step again, as a model whose step seemed to work tries
        // once more: the call count then says so.
        return steps[Math.min(i++, steps.length - 1)](state);
      } catch (error) {
        if (!(error instanceof NotInState)) throw error;
        gaveUp = `step ${i}: ${error.message}`;
        return finish(gaveUp, false);
      }
    });
    const { states, final } = await o.run(page, task);
    const saved = await page.locator('#saved').innerText();
    return { calls: states.length, saved, final, states, gaveUp, empty: emptySuccesses(states) };
  } finally {
    o.setPolicy(null);
    await page.close();
  }
}

/** What a failed way shows, for its assertion message: why the model stopped, the steps it
 * took with their results, and the page as the model saw it at each call. */
export function explain(run) {
  const history = /<history>\n([\s\S]*?)<\/history>/.exec(run.states.at(-1) ?? '')?.[1] ?? '';
  return [
    `saved: ${run.saved}; calls: ${run.calls}; model gave up: ${run.gaveUp ?? 'no'}`,
    `final: ${run.final}`,
    `history:\n${history}`,
    ...run.states.map((s, k) => `--- state ${k + 1}\n${pageOf(s)}`),
  ].join('\n');
}
