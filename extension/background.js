// Tabwright's service worker. It owns Chrome's events and forwards them to the Rust core; it
// decides nothing itself. scripts/build bundles it with its imports into pkg/worker.js, a
// classic script that boot.js (the file the manifest names) loads once it has started fetching
// the wasm.
//
// Rules of the platform this file follows:
// - the wasm glue is imported statically (dynamic import() throws in a service worker), and
//   `init` starts at top level without awaiting it;
// - every listener is registered synchronously at top level (importScripts runs this file
//   during the worker's first evaluation), and each handler awaits the core (`coreLoaded`);
// - message handlers return true to answer asynchronously.
import init, { answer_panel_message, answer_bridge_message, bridge_closed, resume_interrupted_task, wake_schedules } from './pkg/tabwright.js';
import { contentChannel } from './content-channel.js';
import { recordEvent, catchUp } from './history-store.js';
import { readFileBase64 } from './files-store.js';
import { pageScripts } from './page-scripts.js';
import { t } from './i18n.js';
import { noteEvent as noteForAttention, showNotice, clearNotice } from './attention.js';

// The core reads these through its bindings (src/ext/chrome.rs).
globalThis.tabwrightContent = contentChannel;
// The files attached to a task, as the panel kept them (files-store.js): base64, or null.
globalThis.tabwrightFiles = { read: (id) => readFileBase64(id) };
// What goes into web pages while a task runs, and nothing while none does (page-scripts.js).
globalThis.tabwrightPageScripts = pageScripts;
// The notifications the core shows (a schedule's run ended, or waits for the person), as the
// waits' own are shown (attention.js).
globalThis.tabwrightNotices = { show: showNotice, clear: clearNotice };
const debuggerDetached = new Map(); // tabId → why Chrome detached the debugger
globalThis.tabwrightDebugger = {
  /** Why the debugger was detached from the tab since the last ask (e.g. canceled_by_user), or null. */
  detachReason(tabId) {
    const reason = debuggerDetached.get(tabId) ?? null;
    debuggerDetached.delete(tabId);
    return reason;
  },
};

// Frame tokens (extension/content/frames.js): a frame's content script asks for one when its
// parent wants to know which frame it is, and posts it up; the core turns the tokens in a
// parent's snapshot back into frame ids. A token is issued to the frame Chrome says sent the
// request, so no page can claim another frame's, and only in that frame's tab. Each frame has
// one token: a page that makes its frames ask again and again gets the same answer each time,
// which neither voids the frame's earlier answer in its parent nor pushes other frames' tokens
// out of the list. They last as long as this worker, which says who it is with each snapshot
// request so that frames drop tokens from an earlier one.
const MAX_FRAME_TOKENS = 5_000;
const frameTokens = new Map(); // token → {tabId, frameId, frame}, oldest first
const tokenOfFrame = new Map(); // frame (`${tabId}:${frameId}`) → its token
const workerInstance = randomToken();
function randomToken() {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
}
/** The token of frame `frameId` of tab `tabId`: the one it was issued before, or a new one. */
function frameToken(tabId, frameId) {
  const frame = `${tabId}:${frameId}`;
  const issued = tokenOfFrame.get(frame);
  if (issued) return issued;
  const token = randomToken();
  frameTokens.set(token, { tabId, frameId, frame });
  tokenOfFrame.set(frame, token);
  if (frameTokens.size > MAX_FRAME_TOKENS) {
    const [oldest, { frame: itsFrame }] = frameTokens.entries().next().value;
    frameTokens.delete(oldest);
    tokenOfFrame.delete(itsFrame);
  }
  return token;
}
globalThis.tabwrightFrames = {
  workerInstance: () => workerInstance,
  /** The frame of tab `tabId` that `token` was issued to, or -1. */
  frameIdOf(tabId, token) {
    const issued = frameTokens.get(token);
    return issued && issued.tabId === tabId ? issued.frameId : -1;
  },
};

// The open panels follow the list of tasks: the core hands it here whenever it changes (a task
// queued, started, paused, waiting, ended).
globalThis.tabwrightPanels = {
  tasksChanged(tasks) {
    toPanels({ tasks });
  },
  /** The coding agents waiting for the person's answer (src/worker/clients.rs), for the card. */
  clientsAsking(asking) {
    toPanels({ clients_asking: asking });
  },
};

/** Posts `message` to every open panel. */
function toPanels(message) {
  for (const port of panelPorts) {
    try {
      port.postMessage(message);
    } catch {
      panelPorts.delete(port);
    }
  }
}

// When this worker got going, in ms since Chrome started it: its modules evaluated, then the
// core loaded. Read by scripts/bench step (over CDP); nothing here depends on it.
/** @type {{evaluated: number, ready: number | null, memory?: WebAssembly.Memory}} */
const startup = { evaluated: performance.now(), ready: null };
globalThis.tabwrightStartup = startup;
// The core, one module: boot.js started fetching it before this file was read.
const coreLoaded = init({ module_or_path: globalThis.tabwrightCoreResponse ?? chrome.runtime.getURL('pkg/tabwright_bg.wasm') })
  .catch((error) => {
    throw new Error(`pkg/tabwright_bg.wasm: ${error?.message ?? error}`);
  });
coreLoaded.then((core) => {
  startup.ready = performance.now();
  // The core's linear memory, whose size scripts/bench long reads.
  startup.memory = core.memory;
}, () => {});
// Session storage as this worker found it, read while the core loads. With no task saved there
// (nothing was running when the last worker stopped) there is nothing to restore, and the first
// request is answered without waiting for the core to look; otherwise the core's first read of
// it (src/ext/chrome.rs) need not wait for Chrome.
const sessionAtStart = chrome.storage.session.get(null).catch(() => null);
// Settles once the core has started restoring the saved tasks, or there are none: requests
// wait for this, and the core holds them until the restore is over.
const restoreBegun = sessionAtStart.then(async (items) => {
  if (items && items.tasks === undefined && items.task_queue === undefined) {
    // No task: whatever an earlier worker registered for pages goes (it may have been stopped
    // before its task could end).
    pageScripts.end().catch((error) => console.warn('Tabwright could not unregister its page scripts:', error));
    await coreLoaded;
    return null;
  }
  if (items) globalThis.tabwrightSessionAtStart = items;
  await coreLoaded;
  // Called here, not after another turn: the core has begun before any request is handled.
  return { restored: resume_interrupted_task(broadcast).catch(noteCrash) };
});
const PANEL_PORT = 'tabwright-panel';
const panelPorts = new Set();
// Set when the core stops working (failed to load, or trapped): every later request gets this.
let coreFailure = null;

/** Sends a task event, with its task and position in the task's log, to every open panel,
 * and writes it into the task history at once (this worker may be stopped at any moment).
 * The history never throws, so the task goes on if IndexedDB fails. */
/**
 * @param {import('tabwright-types/from-core').AgentEvent} event
 * @param {number} seq
 * @param {string} taskId
 * @param {import('tabwright-types/from-core').TaskState} state where the core says the task stands after it
 */
function broadcast(event, seq, taskId, state) {
  recordEvent(taskId, seq, event, state);
  // A task waiting for the person: the toolbar badge, and a notification with no panel open.
  noteForAttention(taskId, event, state, panelPorts.size > 0);
  for (const port of panelPorts) {
    try {
      port.postMessage({ task_id: taskId, seq, event });
    } catch {
      panelPorts.delete(port);
    }
  }
}

// Who may talk to this worker, by what Chrome says of each sender (never by anything a message
// or a page says of itself). The manifest's externally_connectable names no extension and no
// site, and nothing listens to runtime.onMessageExternal or onConnectExternal: whatever reaches
// the listeners below comes from this extension, either one of its pages or one of its content
// scripts, which run inside web pages (sender.id is this extension's there too).
const OWN_ORIGIN = chrome.runtime.getURL('').slice(0, -1); // chrome-extension://<id>
// The extension's pages, as the manifest names them: the side panel and the options page.
const OWN_PAGES = ((m) => new Set([m.side_panel?.default_path, m.options_page]
  .filter((page) => typeof page === 'string').map((page) => chrome.runtime.getURL(page))))(chrome.runtime.getManifest());

/** Only the extension's own pages may start, steer or read tasks: a document of this extension
 * at one of its pages (its address without query or fragment), at the top of its tab or in the
 * side panel. A content script of this extension fails here: its url and origin are the web
 * page's. */
function fromOwnPage(sender) {
  if (sender?.id !== chrome.runtime.id || typeof sender.url !== 'string') return false;
  if (sender.origin !== undefined && sender.origin !== OWN_ORIGIN) return false;
  if (sender.frameId !== undefined && sender.frameId !== 0) return false;
  return OWN_PAGES.has(sender.url.split(/[?#]/)[0]);
}

/** A content script of this extension in a frame of a tab: Chrome names the tab and the frame,
 * and the document is not one of the extension's own. */
function fromContentScript(sender) {
  return sender?.id === chrome.runtime.id && Number.isInteger(sender.tab?.id) && sender.tab.id >= 0
    && Number.isInteger(sender.frameId) && sender.frameId >= 0
    && sender.origin !== OWN_ORIGIN && typeof sender.url === 'string' && !sender.url.startsWith(`${OWN_ORIGIN}/`);
}

function refusal(message) {
  return { type: 'refused', v: 1, message };
}

/** A WebAssembly trap leaves the core unusable: say so, and end the task in open panels. */
function noteCrash(error) {
  if (!(error instanceof WebAssembly.RuntimeError)) return;
  coreFailure = t('coreCrashed', [error.message]);
  for (const port of panelPorts) {
    try {
      port.postMessage({ crashed: coreFailure });
    } catch {
      panelPorts.delete(port);
    }
  }
}
self.addEventListener('error', (e) => noteCrash(e.error));
self.addEventListener('unhandledrejection', (e) => noteCrash(e.reason));

// Panels follow the task over a port of their own. (The ports to the content scripts are
// opened from here, by content-channel.js, and never arrive at this listener.)
chrome.runtime.onConnect.addListener((port) => {
  if (port.name !== PANEL_PORT || !fromOwnPage(port.sender)) {
    port.disconnect();
    return;
  }
  panelPorts.add(port);
  port.onDisconnect.addListener(() => panelPorts.delete(port));
});

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  // A frame's content script asks for a token to tell its parent which frame it is (frames.js).
  if (message?.to === 'frame-token' && fromContentScript(sender)) {
    sendResponse({ token: frameToken(sender.tab.id, sender.frameId) });
    return false;
  }
  // A frame the task's registered scripts ran in asks whether its tab is the task's; if not,
  // it takes them out again (page-scripts.js).
  if (message?.to === 'page-scripts' && fromContentScript(sender)) {
    pageScripts.wanted(sender.tab).then((wanted) => sendResponse({ wanted }), () => sendResponse({ wanted: true }));
    return true;
  }
  if (!fromOwnPage(sender) || message?.to !== 'core') return false;
  if (coreFailure) {
    sendResponse(refusal(coreFailure));
    return false;
  }
  coreLoaded.then(
    () => restoreBegun.then(() => answer_panel_message(message.request, broadcast)).then(sendResponse, (error) => {
      noteCrash(error);
      sendResponse(refusal(coreFailure ?? t('coreFailed', [error?.message ?? String(error)])));
    }),
    (error) => {
      coreFailure = t('coreNotLoaded', [error?.message ?? String(error)]);
      sendResponse(refusal(coreFailure));
    },
  );
  return true;
});

// The user closing the "started debugging this browser" bar detaches the debugger; the core
// must not attach again behind their back.
chrome.debugger.onDetach.addListener((source, reason) => {
  if (source.tabId !== undefined) debuggerDetached.set(source.tabId, reason);
});

// The tasks that were running when Chrome stopped this worker continue (or end saying why) as
// soon as the worker is back, whatever woke it; the alarm set while tasks run wakes it.
function resumeTask() {
  return coreLoaded.then(() => resume_interrupted_task(broadcast)).catch(noteCrash);
}
// Once the tasks are back, the history gets whatever the stopped worker broadcast but did not
// write (the core's saved logs), and tasks left running by an earlier worker are marked so.
restoreBegun
  .then((begun) => begun?.restored)
  .then(async () => {
    const status = await answer_panel_message({ v: 1, type: 'get_status' }, broadcast);
    const running = (status?.tasks ?? []).filter((task) => task.status !== 'queued').map((task) => task.task_id);
    const replies = await Promise.all(running.map((id) => answer_panel_message({ v: 1, type: 'get_status', task_id: id }, broadcast)));
    return catchUp(replies.length ? replies : [status]);
  })
  .catch((error) => console.warn('Tabwright could not bring the task history up to date:', error));
// A schedule's alarm (`tabwright-schedule:<id>`, src/schedule) starts its run once the tasks a
// stopped worker left are back; any other alarm is the wake-up of running tasks.
const SCHEDULE_ALARM = 'tabwright-schedule:';
// Where the core keeps the schedules (src/schedule: STORAGE_KEY).
const SCHEDULES_KEY = 'schedules';
/** Hands a promise's failure to the crash report, and says it. */
function warnOf(what) {
  return (error) => {
    noteCrash(error);
    console.warn(`Tabwright could not ${what}:`, error?.message ?? error);
  };
}
/** The schedules, after the restore: `alarm` rang (a schedule's), or, without one, the
 * schedules whose time passed while nothing ran run once and every alarm is set again. */
function toSchedules(alarm, what) {
  return restoreBegun.then((begun) => begun?.restored)
    .then(() => wake_schedules(alarm, broadcast)).catch(warnOf(what));
}
chrome.alarms.onAlarm.addListener((alarm) => {
  if (!alarm.name.startsWith(SCHEDULE_ALARM)) return resumeTask();
  return toSchedules(alarm.name, 'run a schedule');
});
// Whenever the worker starts, the browser starts or the extension is installed or updated
// (which clears its alarms): the schedules whose time passed while nothing ran (the browser was
// closed) run once, and every schedule's alarm is set again. Once a worker: a browser's start
// and an update also start the worker, which looks anyway.
let schedulesWoken = null;
function wakeSchedules() {
  schedulesWoken ??= toSchedules(null, 'look at its schedules');
  return schedulesWoken;
}
// A worker that starts with no schedule stored asks the core nothing (its cold start compiles
// no more than its first request needs); the browser's start and an update always ask.
chrome.storage.local.get(SCHEDULES_KEY).then(
  (stored) => (Array.isArray(stored[SCHEDULES_KEY]) && stored[SCHEDULES_KEY].length ? wakeSchedules() : null),
  () => wakeSchedules(),
);
chrome.runtime.onStartup.addListener(wakeSchedules);

chrome.runtime.onInstalled.addListener(() => {
  chrome.sidePanel.setPanelBehavior({ openPanelOnActionClick: true }).catch(() => {});
  wakeSchedules();
});

// Coding agents (MCP): the bridge Chrome starts for the native port (`tabwright-mcp`, the host
// com.tabwright.bridge) passes each client's requests here; the core answers them
// (src/worker/clients.rs), and nothing here reads them. The port is open while the person lets
// coding agents in (the options' switch, stored under `mcp`; on unless turned off), and an open
// native port keeps this worker running, as Chrome does for native ports. Without the host
// installed (scripts/install-mcp never ran, the normal case) Chrome refuses the port at once:
// that is told quietly, and tried again only at the next start of the worker or of the switch.
const HOST_NAME = 'com.tabwright.bridge';
const CLIENTS_KEY = 'mcp';
/** @type {chrome.runtime.Port | null} */
let bridgePort = null;
function connectBridge() {
  if (bridgePort) return;
  let port;
  try {
    port = chrome.runtime.connectNative(HOST_NAME);
  } catch (error) {
    console.info('Tabwright: no bridge for coding agents:', error?.message ?? error);
    return;
  }
  bridgePort = port;
  port.onMessage.addListener((message) => {
    /** Posts on the port, which may have closed meanwhile (the bridge ended). */
    const post = (/** @type {unknown} */ reply) => {
      try {
        port.postMessage(reply);
      } catch {}
    };
    /** A reply the core could not give: the request's own ids, refused with `text`. */
    const refuse = (/** @type {string} */ text) => post({
      v: 1,
      client: Number.isInteger(message?.client) ? message.client : 0,
      id: Number.isInteger(message?.id) ? message.id : 0,
      reply: { type: 'refused', why: 'failed', message: text },
    });
    if (coreFailure) {
      refuse(coreFailure);
      return;
    }
    // Like a panel's request: the core loaded, and the task of a stopped worker restored first.
    coreLoaded.then(
      () => restoreBegun
        .then(() => answer_bridge_message(JSON.stringify(message), broadcast))
        .then((reply) => post(JSON.parse(reply)))
        .catch((error) => {
          noteCrash(error);
          refuse(coreFailure ?? t('coreFailed', [error?.message ?? String(error)]));
        }),
      (error) => {
        coreFailure = t('coreNotLoaded', [error?.message ?? String(error)]);
        refuse(coreFailure);
      },
    );
  });
  port.onDisconnect.addListener(() => {
    const why = chrome.runtime.lastError?.message;
    if (why) console.info(`Tabwright: the bridge for coding agents is closed (${why}).`);
    if (bridgePort === port) bridgePort = null;
    coreLoaded.then(() => bridge_closed()).catch(() => {});
  });
}
function disconnectBridge() {
  const port = bridgePort;
  bridgePort = null;
  if (!port) return;
  port.disconnect();
  coreLoaded.then(() => bridge_closed()).catch(() => {});
}
chrome.storage.local.get(CLIENTS_KEY).then(
  (stored) => (/** @type {{enabled?: boolean} | undefined} */ (stored[CLIENTS_KEY])?.enabled === false ? null : connectBridge()),
  () => connectBridge(),
);
// Only the switch turned on or off opens or closes the port: the core rewrites the book at
// each answer, and a port Chrome refused is not tried again for that.
chrome.storage.onChanged.addListener((changes, area) => {
  if (area !== 'local' || !(CLIENTS_KEY in changes)) return;
  const on = (/** @type {{enabled?: boolean} | undefined} */ book) => book?.enabled !== false;
  const was = on(changes[CLIENTS_KEY].oldValue);
  const now = on(changes[CLIENTS_KEY].newValue);
  if (now && !was) connectBridge();
  else if (!now && was) disconnectBridge();
});
