// What Tabwright puts into web pages, and when: nothing while no task runs.
//
// Every page a person opens is theirs. Scripts in it cost load time and memory, and scripts
// in its own JavaScript world (the patched addEventListener, attachShadow and dialogs) let any
// site tell that Tabwright is installed. So the manifest declares no content scripts; a task
// brings them:
//   - when it starts, the scripts are registered (chrome.scripting.registerContentScripts),
//     so every document that starts loading while it runs gets them: the page-world group at
//     document_start, before the page's own scripts, the rest at document_idle;
//   - a page that was loaded before (the tab the task starts on, a tab it switches to) gets
//     them injected into all its frames by the worker the first time it asks the page and
//     nothing answers (`inject`, from src/tabs/mod.rs);
//   - Chrome runs registered scripts in every tab, so a frame first asks whether its tab is
//     a task's (`wanted`: one of a running task's tabs, or a tab one of them opened) and takes
//     itself out if not;
//   - when a task ends, the pages it worked on take their scripts out when told the task is
//     over (content/main.js): the page's own functions are put back and the listeners
//     removed; when the last running task ends, the registration goes too (`end`).
// Several tasks may run at once, each on its own tabs: the registration is shared, the tabs
// are kept per task.
// A worker that starts with no task saved ends any registration an earlier worker left.
// The list of files below is the one list of them.

/** The two groups, in the order they are injected: the page's world first, so that what it
 * reports is listened for by the time the rest runs. */
/** @type {{id: string, world: "MAIN" | "ISOLATED", runAt: chrome.extensionTypes.RunAt, js: string[]}[]} */
export const PAGE_SCRIPTS = [
  {
    id: 'tabwright-page-world',
    world: 'MAIN',
    runAt: 'document_start',
    js: ['content/page-listeners.js', 'content/page-shadow-roots.js', 'content/page-dialogs.js', 'content/page-network.js'],
  },
  {
    id: 'tabwright-content',
    world: 'ISOLATED',
    runAt: 'document_idle',
    js: [
      'content/visibility.js',
      'content/interactive.js',
      'content/text.js',
      'content/frames.js',
      'content/indexer.js',
      'content/highlight.js',
      'content/act-facts.js',
      'content/pointer.js',
      'content/executor.js',
      'content/dropdowns.js',
      'content/page-tools.js',
      'content/main.js',
    ],
  },
];

const MATCHES = ['http://*/*', 'https://*/*'];

// Each running task's tabs, as the core last said; null when this worker has not been told (it
// started while a task may be running, and until the core restores it every frame is wanted).
/** @type {Map<string, Set<number>> | null} */
let taskTabs = null;
/** Every running task's tabs together. */
function allTaskTabs() {
  return new Set([...(taskTabs?.values() ?? [])].flatMap((tabs) => [...tabs]));
}
// Registration calls, one after another (a task that ends as another starts).
let queue = Promise.resolve();

function serially(work) {
  const next = queue.then(work);
  queue = next.catch(() => {});
  return next;
}

// Whether this worker injected scripts into a page since the last end.
let injected = false;

/** Registers the scripts for documents that load from now on, unless they are already. */
async function register() {
  const ids = PAGE_SCRIPTS.map((group) => group.id);
  const present = await chrome.scripting.getRegisteredContentScripts({ ids });
  if (present.length === ids.length) return;
  if (present.length) await chrome.scripting.unregisterContentScripts({ ids: present.map((s) => s.id) });
  await chrome.scripting.registerContentScripts(PAGE_SCRIPTS.map((group) => ({
    id: group.id,
    js: group.js,
    world: group.world,
    runAt: group.runAt,
    matches: MATCHES,
    allFrames: true,
    matchOriginAsFallback: true,
    persistAcrossSessions: false,
  })));
}

/** Removes the registration; whether there was one. */
async function unregister() {
  const ids = PAGE_SCRIPTS.map((group) => group.id);
  const present = await chrome.scripting.getRegisteredContentScripts({ ids });
  if (present.length) await chrome.scripting.unregisterContentScripts({ ids: present.map((s) => s.id) });
  return present.length > 0;
}

// How long a tab may take to hear that the task is over (a frame showing a dialog of the
// page's own never answers).
const TASK_OVER_WAIT_MS = 2_000;

/** Tells every frame of the tab with scripts that the task is over (content/main.js). */
function tellTaskOver(tabId) {
  const told = chrome.tabs.sendMessage(tabId, { v: 1, type: 'task_over' }).catch(() => {});
  return Promise.race([told, new Promise((resolve) => setTimeout(resolve, TASK_OVER_WAIT_MS))]);
}

export const pageScripts = {
  /** Task `taskId` starts (or continues after a worker restart) in `tabIds`: documents that
   * load from now on get the scripts. */
  begin(taskId, tabIds) {
    taskTabs ??= new Map();
    taskTabs.set(taskId, new Set(tabIds));
    return serially(register);
  },

  /** Task `taskId`'s tabs changed (one opened, one closed). */
  setTabs(taskId, tabIds) {
    taskTabs ??= new Map();
    taskTabs.set(taskId, new Set(tabIds));
  },

  /** Task `taskId` is over: its tabs are told, and their frames take the scripts out. Once
   * no task runs, no document that loads from now on gets anything, and every frame that
   * has the scripts is told. (With nothing registered and nothing injected, as when a worker
   * starts with no task, no page has any.) `taskId` absent or empty: no task runs. */
  end(taskId) {
    if (taskId === '') taskId = undefined;
    // A worker that just started does not know yet which tasks run (they are being restored,
    // and a task that cannot go on ends first): every frame stays wanted until one begins.
    if (taskTabs === null && taskId !== undefined) return Promise.resolve();
    const itsTabs = taskId === undefined ? new Set() : (taskTabs?.get(taskId) ?? new Set());
    taskTabs ??= new Map();
    if (taskId === undefined) taskTabs.clear();
    else taskTabs.delete(taskId);
    const othersRun = taskTabs.size > 0;
    const stillWanted = allTaskTabs();
    return serially(async () => {
      if (othersRun) {
        await Promise.all([...itsTabs].filter((id) => !stillWanted.has(id)).map((id) => tellTaskOver(id)));
        return;
      }
      const registered = await unregister();
      if (!registered && !injected) return;
      injected = false;
      const tabs = await chrome.tabs.query({});
      await Promise.all(tabs.map((tab) => tellTaskOver(tab.id)));
    });
  },

  /** Injects the scripts into every frame of a tab whose pages loaded before the task (or
   * before this extension was loaded). */
  async inject(tabId) {
    injected = true;
    for (const group of PAGE_SCRIPTS) {
      await chrome.scripting.executeScript({ target: { tabId, allFrames: true }, files: group.js, world: group.world });
    }
  },

  /** Injects the scripts into the frames of a tab that lack them, or whose listeners are
   * gone: a script that writes a document into a blank frame (document.open) takes the
   * listeners of the scripts that ran there with it. Returns how many frames got them. */
  async injectWhereMissing(tabId) {
    const probes = await chrome.scripting.executeScript({
      target: { tabId, allFrames: true },
      func: () => {
        const tw = globalThis.tabwright;
        if (typeof tw?.snapshot !== 'function') return false;
        // frames.js answers this event while its listeners live.
        let alive = false;
        tw.answerAlive = () => { alive = true; };
        document.dispatchEvent(new Event('tabwright:alive'));
        delete tw.answerAlive;
        return alive;
      },
    });
    const frameIds = probes.filter((probe) => probe.result !== true).map((probe) => probe.frameId);
    if (!frameIds.length) return 0;
    injected = true;
    for (const group of PAGE_SCRIPTS) {
      await chrome.scripting.executeScript({ target: { tabId, frameIds }, files: group.js, world: group.world });
    }
    return frameIds.length;
  },

  /** Whether a frame of `tab` (a sender's tab) may be one the task works in: one of its
   * tabs, a tab one of them opened, or any tab in a window one of them is in (a link with
   * target=_blank opens a tab with no opener, and the task takes it in once it looks). A tab
   * wrongly kept loses its scripts when the task ends. */
  async wanted(tab) {
    if (taskTabs === null) return true;
    const tabs = allTaskTabs();
    if (!tab || !tabs.size) return false;
    if (tabs.has(tab.id) || tabs.has(tab.openerTabId)) return true;
    const windows = await Promise.all([...tabs].map((id) => chrome.tabs.get(id).then((t) => t.windowId, () => null)));
    return windows.includes(tab.windowId);
  },
};
