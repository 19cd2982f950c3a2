// Face of modules/automations (the only file others import): the service and executor, their routes and background tasks, and the enrollment SQL subscribers use.
export { ENROLL_REGISTERED } from './automation-enrollment.repository.js';
export { AutomationExecutor } from './automation-executor.js';
export { automationRoutes } from './automation.routes.js';
export { AutomationService } from './automation.service.js';
export { automationCron, automationTasks } from './automation.tasks.js';
