// Status requests a worker with no task saved answers from the first module of the core alone
// (extension/background.js): scripts/lib/profile-startup.mjs records the functions they run,
// and core-split.test.mjs checks that answering them does not load the rest.
export const STATUS_REQUESTS = [
  { v: 1, type: 'get_status' },
  { v: 1, type: 'get_status', task_id: null, since: 0 },
  { v: 1, type: 'get_status', task_id: 'task-from-an-earlier-worker', since: 7 },
  { v: 1, type: 'get_status', since: 'not a number' },
  { v: 1, type: 'get_status', unexpected: true },
  { v: 2, type: 'get_status' },
  { type: 'get_status' },
];
