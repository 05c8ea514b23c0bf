// Asking the Rust core something from an extension page: the request goes to the service
// worker (background.js), which hands it to the core and sends back its reply.
import { t } from './i18n.js';

/**
 * The messages, as the Rust types define them (generated: tests/types/, imported as tabwright-types/…).
 * @typedef {import('tabwright-types/to-core').PanelRequest} PanelRequest
 * @typedef {import('tabwright-types/from-core').PanelReply} PanelReply
 * @typedef {PanelRequest extends infer R ? (R extends unknown ? Omit<R, 'v'> : never) : never} Request
 *   a request as a page writes it: `askCore` adds the protocol version
 */

/** The protocol version the core speaks (src/protocol.rs). */
const PROTOCOL_VERSION = 1;

/**
 * The core's reply to `request`; when the worker cannot be reached, a refusal saying what to
 * do, so callers handle one shape.
 * @param {Request} request
 * @returns {Promise<PanelReply>}
 */
export async function askCore(request) {
  try {
    const reply = await chrome.runtime.sendMessage({ to: 'core', request: { v: PROTOCOL_VERSION, ...request } });
    return reply ?? { type: 'refused', v: PROTOCOL_VERSION, message: t('workerNoAnswer') };
  } catch (error) {
    return { type: 'refused', v: PROTOCOL_VERSION, message: t('workerUnreachable', [error?.message ?? String(error)]) };
  }
}
