// The signed-in frame: navigation, the organization switcher (sets x-org-id), the user and logout.
import { useQueryClient } from '@tanstack/react-query';
import { Link, Navigate, Outlet, useNavigate } from '@tanstack/react-router';
import { useId } from 'react';
import { useMe, useMembership } from '../auth/me';
import { session, useSession } from '../auth/session';
import { QueryState } from './query-state';

export function Layout() {
  const { token, orgId } = useSession();
  const me = useMe();
  const { role } = useMembership();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const switcher = useId();
  const member = me.data?.organizations.some((org) => org.id === orgId) ?? false;
  if (!token) return <Navigate to="/login" />;

  const switchTo = (id: string) => {
    session.selectOrganization(id);
    // Everything cached belongs to the previous organization.
    queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== 'me' });
    void navigate({ to: '/projects' });
  };

  return (
    <div className="frame">
      <header className="topbar">
        <Link to="/projects" className="brand">
          Herald
        </Link>
        <nav aria-label="Main">
          <Link to="/projects" activeProps={{ 'aria-current': 'page' }}>
            Projects
          </Link>
          <Link to="/members" activeProps={{ 'aria-current': 'page' }}>
            Members
          </Link>
        </nav>
        <div className="session">
          {me.data && me.data.organizations.length > 0 && (
            <>
              <label htmlFor={switcher}>Organization</label>
              <select id={switcher} value={orgId ?? ''} onChange={(event) => switchTo(event.target.value)}>
                {me.data.organizations.map((org) => (
                  <option key={org.id} value={org.id}>
                    {org.name}
                  </option>
                ))}
              </select>
              {role && <span className="badge">{role}</span>}
            </>
          )}
          {me.data && <span className="muted">{me.data.email}</span>}
          <button type="button" onClick={() => session.logout()}>
            Log out
          </button>
        </div>
      </header>
      <main className="content">
        {/* The organization chosen last is assumed while the user is read, so a page's own requests start at once. */}
        {(me.isPending && orgId) || member ? (
          <Outlet />
        ) : (
          <QueryState query={me}>
            {(user) =>
              user.organizations.length === 0 ? (
                <p className="empty">You are not a member of any organization yet. Ask an owner or admin to add you.</p>
              ) : (
                <OrganizationPicker organizations={user.organizations} onPick={switchTo} />
              )
            }
          </QueryState>
        )}
      </main>
    </div>
  );
}

function OrganizationPicker({ organizations, onPick }: { organizations: { id: string; name: string }[]; onPick: (id: string) => void }) {
  return (
    <section>
      <h1>Choose an organization</h1>
      <ul className="list">
        {organizations.map((org) => (
          <li key={org.id}>
            <button type="button" onClick={() => onPick(org.id)}>
              {org.name}
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
