// Face of modules/overview (the only file others import): a project's overview, its service and its route.
export { overviewRoutes } from './overview.routes.js';
export { OverviewService } from './overview.service.js';
