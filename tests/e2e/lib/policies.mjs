// Models shared by several tests, each reading the state text the extension sent.
import { answer } from './mock-llm.mjs';
import { findIndex, field, findField } from './state.mjs';

/** Logs in as alice: fills the fields found by placeholder, then (seeing the filled form)
 * presses the button found by its text, and reports success once the page welcomes alice. */
export function loginPolicy(state) {
  const user = findField(state, 'Username');
  const pass = findField(state, 'Password');
  const submit = findIndex(state, />Submit$/);
  if (field(state, 'Title').startsWith('Welcome, alice')) {
    return answer('Report that alice is logged in', [{ done: { text: 'Logged in as alice.', success: true } }]);
  }
  if (user && pass && submit && !/value=alice/.test(state)) {
    return answer('Fill in the log-in form', [
      { input: { index: user, text: 'alice', clear: null } },
      { input: { index: pass, text: 'hunter2', clear: true } },
    ]);
  }
  if (submit) return answer('Submit the form', [{ click: { index: submit } }]);
  return answer('No log-in form here', [{ done: { text: 'No log-in form found.', success: false } }]);
}
