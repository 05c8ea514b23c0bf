// Reading the state text the extension sends to the LLM, the way a model would: find an
// element's index by what the line says, never by a number known in advance.
import { schemaOf, stateOf } from './mock-llm.mjs';

/** The element lines of the browser state: [{index, isNew, line}]. */
export function elements(state) {
  const out = [];
  for (const line of state.split('\n')) {
    const m = /^\s*(\*?)\[(\d+)\]<(.*)$/.exec(line);
    if (m) out.push({ index: Number(m[2]), isNew: m[1] === '*', line: m[3] });
  }
  return out;
}

/** The index of the first element whose line matches `pattern` (string or RegExp), or null. */
export function findIndex(state, pattern) {
  const test = typeof pattern === 'string' ? (l) => l.includes(pattern) : (l) => pattern.test(l);
  return elements(state).find((e) => test(e.line))?.index ?? null;
}

/** The index of the form field a person knows by `name`: what its label says, or else what it
 * shows before anything is typed (its placeholder). */
export function findField(state, name) {
  const quoted = name.includes(' ') ? `'${name}'` : name;
  return findIndex(state, `label=${quoted}`) ?? findIndex(state, `placeholder=${quoted}`);
}

export function field(state, name) {
  const m = new RegExp(`^${name}: (.*)$`, 'm').exec(state);
  return m ? m[1] : '';
}

/** The action names offered by a request's schema, in whichever provider's format the request
 * is (the schema's place differs: see schemaOf). */
export function offeredActions(body) {
  const branches = schemaOf(body)?.properties?.action?.items?.anyOf ?? [];
  return branches.map((b) => Object.keys(b.properties ?? {})[0]);
}

/** The action names the state text says the page allows now (`Available actions: a, b.`). The
 * schema offers every action of the site; the page's state (elements, history, tabs, a select)
 * decides which of them it takes. */
export function availableActions(body) {
  const line = /^Available actions: (.*)\.$/m.exec(stateOf(body) ?? '')?.[1] ?? '';
  return line ? line.split(', ') : [];
}

/** Steps the task completed before this request: one fewer than the step it is for. (Its
 * history lists fewer once older steps share memory lines or a summary.) */
export function stepsDone(state) {
  return stepOf(state) - 1;
}

/** The step a state text is for ("Step 12 of 150." in its step info). */
/** The task's text in a state message. */
export function taskOfState(state) {
  return /<task>\n([\s\S]*?)\n<\/task>/.exec(state)?.[1]?.trim() ?? '';
}

export function stepOf(state) {
  return Number(/<step_info>\nStep (\d+) of/.exec(state)?.[1]);
}

/** The action that adds the item at the top of the shop (fixtures/bench/cart-page.html) to the
 * cart, its button found by its text. */
export function addTopItem(state) {
  return { click: { index: findIndex(state, /^button\b[^>]*>Add Item \d+ to cart$/) } };
}
