// Face of modules/email-templates (the only file others import): the service, its routes and the content schemas campaigns and automations reuse.
export { emailDesign, type EmailDesign } from './email-design.schemas.js';
export { emailTemplateRoutes } from './email-template.routes.js';
export { html, MERGE_TAGS_NOTE, preheader, subject, text } from './email-template.schemas.js';
export { EmailTemplateService, type TemplateRender } from './email-template.service.js';
