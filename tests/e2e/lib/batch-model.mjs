// A mock model for batch runs: it reads the task and the page from the state text the
// extension sends, finds elements by their text (never by indices known in advance), and
// answers after `delayMs`, as a model that thinks would. It knows a few kinds of task, told
// apart by their words:
//   "Log in as alice with password hunter2"         the fixture login form, then done
//   "Sign the guestbook with the note …"            the guestbook form (batch-site.mjs), then done
//   "Click the button Action K"                     bench/step-page.html: one click, then done
//   "Report the page's title"                       done with the title (as data with a schema)
//   anything else                                   done at once: "Nothing to report."
// Each request is kept in `timeline` ({task, step, state, received, answered}, performance.now() ms);
// `starts(task)` counts the first steps a task's text was asked for (its starts).
import { startMockLlm, answer, schemaOf } from './mock-llm.mjs';
import { findIndex, findField, field, stepOf, taskOfState } from './state.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));


function decide(state, body) {
  const task = taskOfState(state);
  const step = stepOf(state);
  const title = field(state, 'Title');
  const structured = Boolean(schemaOf(body)?.properties?.action?.items?.anyOf?.some?.((b) => b.properties?.done?.properties?.data));
  const finish = (text, success = true, data = undefined) => answer('Report', [{
    done: structured && data !== undefined ? { data, success } : { text, success },
  }]);
  if (/The person did not allow this/.test(state)) return finish('Not allowed.', false);
  if (/Log in as alice/.test(task)) {
    if (title.startsWith('Welcome, alice')) return finish('alice is signed in.');
    return answer('Sign in', [
      { input: { index: findField(state, 'Username'), text: 'alice', clear: null } },
      { input: { index: findField(state, 'Password'), text: 'hunter2', clear: null } },
      { click: { index: findIndex(state, />Submit$/) } },
    ]);
  }
  const note = /Sign the guestbook with the note "([^"]+)"/.exec(task)?.[1];
  if (note) {
    if (title.startsWith('Signed')) return finish(`Signed the guestbook: ${note}.`);
    return answer('Sign', [
      { input: { index: findField(state, 'Note'), text: note, clear: null } },
      { click: { index: findIndex(state, />Sign the guestbook$/) } },
    ]);
  }
  const action = /Click the button Action (\d+)/.exec(task)?.[1];
  if (action) {
    if (step > 1) return finish(`Clicked Action ${action}.`);
    const index = findIndex(state, new RegExp(`^button\\b[^>]*>Action ${action}$`));
    if (index === null) return finish(`No button Action ${action} on the page.`, false);
    return answer(`Click Action ${action}`, [{ click: { index } }]);
  }
  if (/Report the page's title/.test(task)) return finish(`The title is ${title}.`, true, { title });
  return finish('Nothing to report.');
}

/** Starts the model; resolves to {llm (startMockLlm's), timeline, starts(task), close()}.
 * `hold(task)`, when given, is awaited before each answer (a test holds a task's answers). */
export async function startBatchModel({ delayMs = 0, hold = null } = {}) {
  const timeline = [];
  const llm = await startMockLlm(async (state, body) => {
    const entry = { task: taskOfState(state), step: stepOf(state), state, received: performance.now(), answered: null };
    timeline.push(entry);
    if (hold) await hold(entry.task);
    if (delayMs) await sleep(delayMs);
    // The mock writes its answer as soon as this settles; an immediate callback runs after.
    setImmediate(() => { entry.answered = performance.now(); });
    return decide(state, body);
  });
  return {
    llm,
    timeline,
    starts: (task) => timeline.filter((e) => e.task === task && e.step === 1).length,
    close: () => llm.close(),
  };
}
