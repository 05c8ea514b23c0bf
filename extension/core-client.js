// Asking the Rust core something from an extension page: the request goes to the service
// worker (background.js), which hands it to the core and sends back its reply.
import { t } from './i18n.js';

/** The protocol version the core speaks (src/protocol.rs). */
const PROTOCOL_VERSION = 1;

/** The core's reply to `request`; when the worker cannot be reached, a refusal saying what to
 * do, so callers handle one shape. */
export async function askCore(request) {
  try {
    const reply = await chrome.runtime.sendMessage({ to: 'core', request: { v: PROTOCOL_VERSION, ...request } });
    return reply ?? { type: 'refused', message: t('workerNoAnswer') };
  } catch (error) {
    return { type: 'refused', message: t('workerUnreachable', [error?.message ?? String(error)]) };
  }
}
