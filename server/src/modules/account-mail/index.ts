// Face of modules/account-mail (the only file others import): Herald's own mail to people (invitations, password resets) through a project that can send email.
export { AccountMailService, NO_SENDING_PROJECT, type AccountMailResult, type AccountMessage } from './account-mail.service.js';
