// Face of modules/idempotency (the only file others import): the service that stores a request's answer, and its cleanup task.
export { IdempotencyService } from './idempotency.service.js';
export { idempotencyCron, idempotencyTasks } from './idempotency.tasks.js';
