// A project's sidebar: its pages in groups, the project switcher, links a role cannot use left out; behind "Menu" on phones.
import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useRouterState } from '@tanstack/react-router';
import { useEffect, useId, useState } from 'react';
import { api, unwrap } from '../api/client';
import { useMembership, type Role } from '../auth/me';

type ProjectPath =
  | '/projects/$projectId/overview'
  | '/projects/$projectId/campaigns'
  | '/projects/$projectId/email-campaigns'
  | '/projects/$projectId/automations'
  | '/projects/$projectId/transactional'
  | '/projects/$projectId/subscribers'
  | '/projects/$projectId/segments'
  | '/projects/$projectId/events'
  | '/projects/$projectId/import'
  | '/projects/$projectId/audience'
  | '/projects/$projectId/email-templates'
  | '/projects/$projectId/whatsapp-templates'
  | '/projects/$projectId/settings'
  | '/projects/$projectId/domains'
  | '/projects/$projectId/email-provider'
  | '/projects/$projectId/suppressions'
  | '/projects/$projectId/sms'
  | '/projects/$projectId/whatsapp'
  | '/projects/$projectId/keys';

interface NavItem {
  label: string;
  to: ProjectPath;
  /** A part of a page (the settings' web push fieldset). */
  hash?: string;
  /** The least role the page's API answers for reading (or, for a form-only page, writing); lower roles get no link. */
  minRole?: 'MEMBER' | 'ADMIN';
}

interface NavGroup {
  title: string;
  items: NavItem[];
}

const OVERVIEW: NavItem = { label: 'Overview', to: '/projects/$projectId/overview' };

const NAV_GROUPS: NavGroup[] = [
  {
    title: 'Messages',
    items: [
      { label: 'Push campaigns', to: '/projects/$projectId/campaigns' },
      { label: 'Email campaigns', to: '/projects/$projectId/email-campaigns' },
      { label: 'Automations', to: '/projects/$projectId/automations' },
      { label: 'Transactional log', to: '/projects/$projectId/transactional' },
    ],
  },
  {
    title: 'Audience',
    items: [
      { label: 'People', to: '/projects/$projectId/subscribers' },
      { label: 'Segments', to: '/projects/$projectId/segments' },
      { label: 'Events', to: '/projects/$projectId/events' },
      // POST /contacts/import is the page's only call: a write, MEMBER and up.
      { label: 'Import contacts', to: '/projects/$projectId/import', minRole: 'MEMBER' },
      { label: 'Audience analytics', to: '/projects/$projectId/audience' },
    ],
  },
  {
    title: 'Content',
    items: [
      { label: 'Email templates', to: '/projects/$projectId/email-templates' },
      { label: 'WhatsApp templates', to: '/projects/$projectId/whatsapp-templates' },
    ],
  },
  {
    title: 'Channels',
    items: [
      { label: 'Push', to: '/projects/$projectId/settings', hash: 'web-push' },
      { label: 'Sending domains', to: '/projects/$projectId/domains' },
      { label: 'Email provider', to: '/projects/$projectId/email-provider' },
      { label: 'Suppressions', to: '/projects/$projectId/suppressions' },
      { label: 'SMS', to: '/projects/$projectId/sms' },
      { label: 'WhatsApp', to: '/projects/$projectId/whatsapp' },
    ],
  },
  {
    title: 'Settings',
    items: [
      { label: 'Project', to: '/projects/$projectId/settings' },
      // Every API key route is ADMIN, the list included.
      { label: 'API keys', to: '/projects/$projectId/keys', minRole: 'ADMIN' },
    ],
  },
];

const RANK: Record<Role, number> = { VIEWER: 0, MEMBER: 1, ADMIN: 2, OWNER: 3 };

export function allows(role: Role | undefined, item: NavItem): boolean {
  if (!item.minRole) return true;
  return role !== undefined && RANK[role] >= RANK[item.minRole];
}

/** The page the address is on, and its group: the first path segment after the project decides (a detail page is its list's). */
function currentPlace(pathname: string, hash: string): { item: NavItem; group: NavGroup | undefined } | undefined {
  const segment = /^\/projects\/[^/]+\/([^/]+)/.exec(pathname)?.[1];
  if (!segment) return undefined;
  const matches = (item: NavItem) => item.to.split('/')[3] === segment && (item.hash ?? '') === hash;
  if (matches(OVERVIEW)) return { item: OVERVIEW, group: undefined };
  for (const group of NAV_GROUPS) {
    const item = group.items.find(matches) ?? group.items.find((candidate) => candidate.to.split('/')[3] === segment && !candidate.hash);
    if (item) return { item, group };
  }
  return undefined;
}

export function useCurrentPlace() {
  const location = useRouterState({ select: (state) => state.location });
  return currentPlace(location.pathname, location.hash);
}

export function ProjectNav({ projectId }: { projectId: string }) {
  const { role } = useMembership();
  const place = useCurrentPlace();
  const location = useRouterState({ select: (state) => state.location.href });
  const [open, setOpen] = useState(false);
  const menuId = useId();
  // A link followed (or the back button) closes the menu: the page is what the user came for.
  useEffect(() => setOpen(false), [location]);
  const link = (item: NavItem) => {
    const current = place?.item === item;
    return (
      <li key={item.label}>
        <Link to={item.to} params={{ projectId }} hash={item.hash} activeOptions={{ includeHash: true }} aria-current={current ? 'page' : undefined}>
          {item.label}
        </Link>
      </li>
    );
  };
  return (
    <div className="sidebar-frame">
      <div className="menu-bar">
        <button type="button" className="menu-button" aria-expanded={open} aria-controls={menuId} onClick={() => setOpen(!open)}>
          Menu
        </button>
        {place && (
          <span className="menu-place">
            {place.group ? `${place.group.title} › ` : ''}
            {place.item.label}
          </span>
        )}
      </div>
      <div id={menuId} className={open ? 'sidebar open' : 'sidebar'}>
        <ProjectSwitcher projectId={projectId} />
        <nav aria-label="Project">
          <ul className="nav-list">{link(OVERVIEW)}</ul>
          {NAV_GROUPS.map((group) => {
            const items = group.items.filter((item) => allows(role, item));
            const headingId = `${menuId}-${group.title}`;
            return (
              <div key={group.title} className={place?.group === group ? 'nav-group current' : 'nav-group'}>
                <p className="nav-heading" id={headingId}>
                  {group.title}
                </p>
                <ul className="nav-list" aria-labelledby={headingId}>
                  {items.map(link)}
                  {group.title === 'Settings' && (
                    <li>
                      <Link to="/members">
                        Members
                      </Link>
                    </li>
                  )}
                </ul>
              </div>
            );
          })}
        </nav>
      </div>
    </div>
  );
}

/** The organization's projects; picking one opens the same page there (its list, for a detail page), else its overview. */
function ProjectSwitcher({ projectId }: { projectId: string }) {
  const id = useId();
  const navigate = useNavigate();
  const place = useCurrentPlace();
  const projects = useQuery({
    queryKey: ['projects', 'switcher'],
    queryFn: () => unwrap(api.GET('/projects', { params: { query: { page: 1, pageSize: 100 } } })),
  });
  const list = projects.data?.data ?? [];
  if (list.length < 2) return null;
  const switchTo = (other: string) => {
    const item = place?.item ?? OVERVIEW;
    void navigate({ to: item.to, params: { projectId: other }, hash: item.hash });
  };
  return (
    <div className="field project-switcher">
      <label htmlFor={id}>Project</label>
      <select id={id} value={projectId} onChange={(event) => switchTo(event.target.value)}>
        {list.map((project) => (
          <option key={project.id} value={project.id}>
            {project.name}
          </option>
        ))}
      </select>
    </div>
  );
}
