// Face of modules/automations (the only file others import): the service and executor, their routes and background tasks, and and the enrollRegistered verb the composition root hands subscribers.
export { AutomationExecutor } from './automation-executor.js';
export { automationRoutes } from './automation.routes.js';
export { AutomationService } from './automation.service.js';
export { automationCron, automationTasks } from './automation.tasks.js';
