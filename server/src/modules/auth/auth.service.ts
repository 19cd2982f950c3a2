// Login, the current user, password changes, and resolving a bearer token to a member of an organization.
import type { Db } from '../../db/database.js';
import { AppError, forbidden, INVALID_TOKEN, unauthorized, validationFailed } from '../../shared/errors.js';
import type { OrganizationTenant } from '../tenancy.js';
import { hashPassword, verifyPassword } from './password.js';
import type { TokenService } from './tokens.js';
import * as users from './user.repository.js';

export interface UserProfile {
  id: string;
  email: string;
  name: string;
  organizations: users.UserOrganization[];
}

export class AuthService {
  constructor(
    private readonly db: Db,
    private readonly tokens: TokenService,
  ) {}

  async login(email: string, password: string): Promise<{ access_token: string; user: UserProfile }> {
    const user = await users.findUserByEmail(this.db, email);
    if (!(await verifyPassword(user?.passwordHash, password)) || !user) {
      throw unauthorized('Invalid email or password', 'invalid_credentials');
    }
    return { access_token: await this.tokens.issue(user.id), user: await this.profile(user.id) };
  }

  async profile(userId: string): Promise<UserProfile> {
    const user = await users.findUserById(this.db, userId);
    if (!user) throw unauthorized(INVALID_TOKEN);
    return {
      id: user.id,
      email: user.email,
      name: user.name,
      organizations: await users.listUserOrganizations(this.db, userId),
    };
  }

  async changePassword(userId: string, currentPassword: string, newPassword: string): Promise<void> {
    const user = await users.findUserById(this.db, userId);
    if (!user || !(await verifyPassword(user.passwordHash, currentPassword))) {
      throw validationFailed([{ field: 'currentPassword', error: 'is not the current password' }]);
    }
    await users.updatePasswordHash(this.db, userId, await hashPassword(newPassword));
  }

  /** The user behind a bearer token, or undefined when the token is not valid now. */
  async userOfToken(token: string): Promise<string | undefined> {
    const userId = await this.tokens.verify(token);
    if (!userId) return undefined;
    return (await users.findUserById(this.db, userId)) ? userId : undefined;
  }

  async organizationTenant(userId: string, organizationId: string | undefined): Promise<OrganizationTenant> {
    if (!organizationId) throw forbidden('Missing x-org-id header', 'missing_org_id');
    // Read before validation (a header, or the query of an event stream): a NUL would fail the query, and names no organization.
    const role = organizationId.includes('\0') ? undefined : await users.findMembershipRole(this.db, organizationId, userId);
    if (!role) throw new AppError(403, 'not_a_member', 'You are not a member of this organization');
    return { kind: 'organization', organizationId, userId, role };
  }
}
