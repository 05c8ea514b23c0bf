// The task after which core-load.test.mjs checks a cold start with a finished task saved:
// typing into login.html's user name field, then done. The mock LLM's answers come from `answerStartupTask(state)`.
import { answer } from './mock-llm.mjs';
import { findIndex, stepsDone, findField } from './state.mjs';

export const STARTUP_TASK = 'Type into the user name field';

export function answerStartupTask(state) {
  if (stepsDone(state) >= 1) return answer('Finish', [{ done: { text: 'Typed the name.', success: true } }]);
  return answer('Type the name', [{ input: { index: findField(state, 'Username'), text: 'ada', clear: true } }]);
}
