// The monthly email cap under concurrency: parallel reservations never pass it, a nearly full month grants what fits,
// refunds give sends back, a new month starts at zero, and an organization without a cap is never held.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../test/harness.js';
import { emailUsage, refundEmailQuota, reserveEmailQuota } from './email-quota.repository.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const NOW = new Date('2026-11-25T12:00:00Z');
async function tenantWithCap(cap: number | null): Promise<Tenant> {
  const tenant = await createTenant(t);
  await t.database.pool.query(`UPDATE organizations SET monthly_email_cap = $2 WHERE id = $1`, [tenant.orgId, cap]);
  return tenant;
}

describe('the monthly email cap', () => {
  it('grants exactly the cap to 40 reservations racing from 10 connections, never more', async () => {
    const tenant = await tenantWithCap(50);
    // Two projects of one organization share its cap.
    const other = await t.services.projects.create(tenant.orgId, { name: 'Second' });
    const grants = await Promise.all(
      Array.from({ length: 40 }, (_, i) => reserveEmailQuota(t.database.db, i % 2 ? tenant.projectId : other.id, 3, NOW)),
    );
    expect(grants.reduce((sum, g) => sum + g.granted, 0)).toBe(50);
    expect(grants.every((g) => g.cap === 50 && g.granted >= 0 && g.granted <= 3)).toBe(true);
    expect(await emailUsage(t.database.db, tenant.orgId, NOW)).toEqual({ sent: 50, cap: 50, plan: 'self-hosted' });
    expect((await reserveEmailQuota(t.database.db, tenant.projectId, 1, NOW)).granted).toBe(0);
  });

  it('grants what fits of a batch, takes refunds back, and starts each month at zero', async () => {
    const tenant = await tenantWithCap(10);
    expect((await reserveEmailQuota(t.database.db, tenant.projectId, 8, NOW)).granted).toBe(8);
    expect((await reserveEmailQuota(t.database.db, tenant.projectId, 5, NOW)).granted).toBe(2);
    await refundEmailQuota(t.database.db, tenant.projectId, 3, NOW);
    expect((await reserveEmailQuota(t.database.db, tenant.projectId, 5, NOW)).granted).toBe(3);
    const december = new Date('2026-12-01T00:00:00Z');
    expect((await reserveEmailQuota(t.database.db, tenant.projectId, 5, december)).granted).toBe(5);
    expect(await emailUsage(t.database.db, tenant.orgId, NOW)).toMatchObject({ sent: 10 });
    expect(await emailUsage(t.database.db, tenant.orgId, december)).toMatchObject({ sent: 5 });
  });

  it('never holds an organization without a cap, and still counts its sends', async () => {
    const tenant = await tenantWithCap(null);
    expect(await reserveEmailQuota(t.database.db, tenant.projectId, 1000, NOW)).toEqual({ granted: 1000, cap: null });
    expect(await reserveEmailQuota(t.database.db, tenant.projectId, 7, NOW)).toEqual({ granted: 7, cap: null });
    expect(await emailUsage(t.database.db, tenant.orgId, NOW)).toMatchObject({ sent: 1007, cap: null });
  });
});
