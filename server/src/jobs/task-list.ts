// Every background task Herald runs, keyed by job name; delivery, campaigns and automations register theirs here.
import type { TaskList } from 'graphile-worker';
import type { Services } from '../services.js';

export function createTaskList(_services: Services): TaskList {
  return {};
}
