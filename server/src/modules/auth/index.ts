// Face of modules/auth (the only file others import): Sign-up, sign-in and tokens: the auth service, its routes, the JWT and password helpers and the user lookups.
export { authRoutes } from './auth.routes.js';
export { AuthService } from './auth.service.js';
export { resolveJwtSecret } from './jwt-secret.js';
export { hashPassword } from './password.js';
export { passwordResetRoutes } from './password-reset.routes.js';
export { PasswordResetService } from './password-reset.service.js';
export { createTokenService } from './tokens.js';
export { userDirectory, type UserDirectory } from './user-directory.js';
