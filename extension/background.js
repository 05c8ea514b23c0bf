// Tabwright's service worker. It owns Chrome's events and forwards them to the Rust core; it
// decides nothing itself.
//
// Rules of the platform this file follows:
// - the wasm glue is imported statically (dynamic import() throws in a service worker), and
//   `init` starts at top level without top-level await (which would fail registration);
// - every listener is registered synchronously at top level, and each handler awaits `ready`;
// - message handlers return true to answer asynchronously.
import init, { handle_panel_message } from './pkg/tabwright.js';

const ready = init({ module_or_path: new URL('./pkg/tabwright_bg.wasm', import.meta.url) });
const PANEL_PORT = 'tabwright-panel';
const panelPorts = new Set();

/** Sends a task event to every open panel. */
function broadcast(event) {
  for (const port of panelPorts) {
    try {
      port.postMessage({ event });
    } catch {
      panelPorts.delete(port);
    }
  }
}

/** Only the extension's own pages may start, steer or read tasks. */
function fromOwnPage(sender) {
  return sender?.id === chrome.runtime.id && typeof sender.url === 'string'
    && sender.url.startsWith(chrome.runtime.getURL(''));
}

chrome.runtime.onConnect.addListener((port) => {
  if (port.name !== PANEL_PORT || !fromOwnPage(port.sender)) {
    port.disconnect();
    return;
  }
  panelPorts.add(port);
  port.onDisconnect.addListener(() => panelPorts.delete(port));
});

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  if (!fromOwnPage(sender) || message?.to !== 'core') return false;
  ready
    .then(() => handle_panel_message(message.request, broadcast))
    .then(sendResponse, (error) => sendResponse({
      type: 'refused', v: 1,
      message: `The Tabwright core failed to load (${error?.message ?? error}). Rebuild the extension with scripts/build and reload it.`,
    }));
  return true;
});

chrome.runtime.onInstalled.addListener(() => {
  chrome.sidePanel.setPanelBehavior({ openPanelOnActionClick: true }).catch(() => {});
});
