// Status requests a worker with no task saved answers at a cold start, well-formed or not
// (core-load.test.mjs).
export const STATUS_REQUESTS = [
  { v: 1, type: 'get_status' },
  { v: 1, type: 'get_status', task_id: null, since: 0 },
  { v: 1, type: 'get_status', task_id: 'task-from-an-earlier-worker', since: 7 },
  { v: 1, type: 'get_status', since: 'not a number' },
  { v: 1, type: 'get_status', unexpected: true },
  { v: 2, type: 'get_status' },
  { type: 'get_status' },
];
