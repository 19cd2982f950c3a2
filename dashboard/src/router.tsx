// The route tree, in code: every path, its parameters and search parameters are typed for Link and navigate.
import { createRootRoute, createRoute, createRouter, lazyRouteComponent, Link, Outlet, redirect } from '@tanstack/react-router';
import { queryClient } from './api/query-client';
import { meQuery } from './auth/me';
import { session } from './auth/session';
import { Layout } from './components/layout';
import { ApiKeysPage } from './pages/api-keys';
import { AutomationEnrollmentsPage, enrollmentFiltersFromSearch } from './pages/automation-enrollments';
import { AutomationsPage } from './pages/automations';
import { emailCampaigns, listFiltersFromSearch, pushCampaigns } from './pages/campaign-channel';
import { CampaignListPage } from './pages/campaign-list';
import { EmailDomainsPage } from './pages/email-domains';
import { EmailProviderPage } from './pages/email-provider';
import { EmailTemplatePage, EmailTemplatesPage, NewEmailTemplatePage } from './pages/email-templates';
import { eventFiltersFromSearch, EventsPage } from './pages/events';
import { JoinPage } from './pages/join';
import { LoginPage } from './pages/login';
import { MembersPage } from './pages/members';
import { activityQuery, overviewSearch } from './pages/overview-window';
import { ForgotPasswordPage, ResetPasswordPage, resetSearch } from './pages/password-reset';
import { ProjectLayout, ProjectSettingsPage, projectQuery } from './pages/project';
import { ProjectsPage } from './pages/projects';
import { EditPushCampaignPage, NewPushCampaignPage, PushCampaignPage } from './pages/push-campaign';
import { sendFiltersFromSearch, TransactionalPage } from './pages/transactional';
import { NewSegmentPage, SegmentPage, SegmentsPage } from './pages/segments';
import { filtersFromSearch } from './pages/subscriber-filters';
import { SubscriberPage, SubscribersPage } from './pages/subscribers';
import { SmsPage } from './pages/sms';
import { SuppressionsPage, suppressionFiltersFromSearch } from './pages/suppressions';
import { WhatsAppSettingsPage } from './pages/whatsapp-settings';
import { NewWhatsAppTemplatePage, WhatsAppTemplatePage, WhatsAppTemplatesPage } from './pages/whatsapp-templates';

function NotFound() {
  return (
    <main className="content">
      <h1>Page not found</h1>
      <p>
        <Link to="/projects">Back to the projects</Link>
      </p>
    </main>
  );
}

const rootRoute = createRootRoute({ component: Outlet, notFoundComponent: NotFound });

const loginRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/login',
  component: LoginPage,
  beforeLoad: () => {
    if (session.get().token) throw redirect({ to: '/projects' });
  },
});

/** Open signed in or not: a new invitee creates their account here. */
const joinRoute = createRoute({ getParentRoute: () => rootRoute, path: '/join', component: JoinPage });

/** Open signed in or not: a forgotten password is reset by a link sent by email. */
const forgotRoute = createRoute({ getParentRoute: () => rootRoute, path: '/forgot', component: ForgotPasswordPage });
const resetRoute = createRoute({ getParentRoute: () => rootRoute, path: '/reset', component: ResetPasswordPage, validateSearch: resetSearch });

/** Every page but the login: without a token, the login page. */
const signedInRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: 'signed-in',
  component: Layout,
  beforeLoad: () => {
    if (!session.get().token) throw redirect({ to: '/login' });
  },
  // The user is asked for with the page's own requests, not after the app's first render (only while not yet read).
  loader: () => {
    void queryClient.prefetchQuery({ ...meQuery(session.get().token), staleTime: Infinity });
  },
});

const homeRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: '/',
  beforeLoad: () => {
    throw redirect({ to: '/projects' });
  },
});

const projectsRoute = createRoute({ getParentRoute: () => signedInRoute, path: '/projects', component: ProjectsPage });
const membersRoute = createRoute({ getParentRoute: () => signedInRoute, path: '/members', component: MembersPage });

const projectRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: '/projects/$projectId',
  component: ProjectLayout,
  // Likewise the project its frame names, once per project.
  loader: ({ params }) => {
    void queryClient.prefetchQuery({ ...projectQuery(params.projectId), staleTime: Infinity });
  },
});
const projectHomeRoute = createRoute({
  getParentRoute: () => projectRoute,
  path: '/',
  beforeLoad: ({ params }) => {
    throw redirect({ to: '/projects/$projectId/overview', params });
  },
});
// Its own chunk: the charting library loads with this page only.
const overviewRoute = createRoute({
  getParentRoute: () => projectRoute,
  path: '/overview',
  component: lazyRouteComponent(() => import('./pages/overview'), 'OverviewPage'),
  validateSearch: overviewSearch,
  // The activity is asked for while the page's code and charts load, not after; the audience once it has come.
  loaderDeps: ({ search }) => ({ days: search.days ?? 30 }),
  loader: ({ params, deps }) => {
    void queryClient.prefetchQuery(activityQuery(params.projectId, deps.days));
  },
});
const projectSettingsRoute = createRoute({ getParentRoute: () => projectRoute, path: '/settings', component: ProjectSettingsPage });
const apiKeysRoute = createRoute({ getParentRoute: () => projectRoute, path: '/keys', component: ApiKeysPage });
const emailDomainsRoute = createRoute({ getParentRoute: () => projectRoute, path: '/domains', component: EmailDomainsPage });
const emailProviderRoute = createRoute({ getParentRoute: () => projectRoute, path: '/email-provider', component: EmailProviderPage });
const smsRoute = createRoute({ getParentRoute: () => projectRoute, path: '/sms', component: SmsPage });
const suppressionsRoute = createRoute({
  getParentRoute: () => projectRoute,
  path: '/suppressions',
  component: SuppressionsPage,
  validateSearch: suppressionFiltersFromSearch,
});
const transactionalRoute = createRoute({
  getParentRoute: () => projectRoute,
  path: '/transactional',
  component: TransactionalPage,
  validateSearch: sendFiltersFromSearch,
});
const importRoute = createRoute({
  getParentRoute: () => projectRoute,
  path: '/import',
  component: lazyRouteComponent(() => import('./pages/contact-import'), 'ContactImportPage'),
});
// Its own chunk: the charting library loads with this page only.
const audienceRoute = createRoute({
  getParentRoute: () => projectRoute,
  path: '/audience',
  component: lazyRouteComponent(() => import('./pages/analytics'), 'AnalyticsPage'),
});
const campaignsRoute = createRoute({ getParentRoute: () => projectRoute, path: '/campaigns', component: Outlet });
const campaignListRoute = createRoute({
  getParentRoute: () => campaignsRoute,
  path: '/',
  component: () => <CampaignListPage channel={pushCampaigns} />,
  validateSearch: listFiltersFromSearch(pushCampaigns.statuses),
});
const newCampaignRoute = createRoute({ getParentRoute: () => campaignsRoute, path: '/new', component: NewPushCampaignPage });
const campaignRoute = createRoute({ getParentRoute: () => campaignsRoute, path: '/$campaignId', component: PushCampaignPage });
const editCampaignRoute = createRoute({ getParentRoute: () => campaignsRoute, path: '/$campaignId/edit', component: EditPushCampaignPage });
const emailCampaignsRoute = createRoute({ getParentRoute: () => projectRoute, path: '/email-campaigns', component: Outlet });
const emailCampaignListRoute = createRoute({
  getParentRoute: () => emailCampaignsRoute,
  path: '/',
  component: () => <CampaignListPage channel={emailCampaigns} />,
  validateSearch: listFiltersFromSearch(emailCampaigns.statuses),
});
// The builder and a campaign's page load on demand: what they bring (the builder's tabs, the charts) costs the first page nothing.
const newEmailCampaignRoute = createRoute({
  getParentRoute: () => emailCampaignsRoute,
  path: '/new',
  component: lazyRouteComponent(() => import('./pages/email-campaign'), 'NewEmailCampaignPage'),
});
const emailCampaignRoute = createRoute({
  getParentRoute: () => emailCampaignsRoute,
  path: '/$campaignId',
  component: lazyRouteComponent(() => import('./pages/email-campaign'), 'EmailCampaignPage'),
});
const editEmailCampaignRoute = createRoute({
  getParentRoute: () => emailCampaignsRoute,
  path: '/$campaignId/edit',
  component: lazyRouteComponent(() => import('./pages/email-campaign'), 'EditEmailCampaignPage'),
});
const segmentsRoute = createRoute({ getParentRoute: () => projectRoute, path: '/segments', component: Outlet });
const segmentListRoute = createRoute({ getParentRoute: () => segmentsRoute, path: '/', component: SegmentsPage });
const newSegmentRoute = createRoute({ getParentRoute: () => segmentsRoute, path: '/new', component: NewSegmentPage });
const segmentRoute = createRoute({ getParentRoute: () => segmentsRoute, path: '/$segmentId', component: SegmentPage });
const emailTemplatesRoute = createRoute({ getParentRoute: () => projectRoute, path: '/email-templates', component: Outlet });
const emailTemplateListRoute = createRoute({ getParentRoute: () => emailTemplatesRoute, path: '/', component: EmailTemplatesPage });
const newEmailTemplateRoute = createRoute({ getParentRoute: () => emailTemplatesRoute, path: '/new', component: NewEmailTemplatePage });
const emailTemplateRoute = createRoute({ getParentRoute: () => emailTemplatesRoute, path: '/$templateId', component: EmailTemplatePage });
const whatsappRoute = createRoute({ getParentRoute: () => projectRoute, path: '/whatsapp', component: WhatsAppSettingsPage });
const whatsappTemplatesRoute = createRoute({ getParentRoute: () => projectRoute, path: '/whatsapp-templates', component: Outlet });
const whatsappTemplateListRoute = createRoute({ getParentRoute: () => whatsappTemplatesRoute, path: '/', component: WhatsAppTemplatesPage });
const newWhatsappTemplateRoute = createRoute({ getParentRoute: () => whatsappTemplatesRoute, path: '/new', component: NewWhatsAppTemplatePage });
const whatsappTemplateRoute = createRoute({ getParentRoute: () => whatsappTemplatesRoute, path: '/$templateId', component: WhatsAppTemplatePage });
const automationsRoute = createRoute({ getParentRoute: () => projectRoute, path: '/automations', component: Outlet });
const automationListRoute = createRoute({ getParentRoute: () => automationsRoute, path: '/', component: AutomationsPage });
// The flow editor loads on demand: its step forms and graph cost the first page nothing.
const newAutomationRoute = createRoute({
  getParentRoute: () => automationsRoute,
  path: '/new',
  component: lazyRouteComponent(() => import('./pages/automation-editor'), 'NewAutomationPage'),
});
const automationRoute = createRoute({
  getParentRoute: () => automationsRoute,
  path: '/$automationId',
  component: lazyRouteComponent(() => import('./pages/automation-editor'), 'AutomationPage'),
});
const automationEnrollmentsRoute = createRoute({
  getParentRoute: () => automationsRoute,
  path: '/$automationId/enrollments',
  component: AutomationEnrollmentsPage,
  validateSearch: enrollmentFiltersFromSearch,
});
const eventsRoute = createRoute({ getParentRoute: () => projectRoute, path: '/events', component: EventsPage, validateSearch: eventFiltersFromSearch });
const subscribersRoute = createRoute({ getParentRoute: () => projectRoute, path: '/subscribers', component: Outlet });
const subscriberListRoute = createRoute({
  getParentRoute: () => subscribersRoute,
  path: '/',
  component: SubscribersPage,
  validateSearch: filtersFromSearch,
});
const subscriberRoute = createRoute({ getParentRoute: () => subscribersRoute, path: '/$subscriberId', component: SubscriberPage });

const routeTree = rootRoute.addChildren([
  loginRoute,
  joinRoute,
  forgotRoute,
  resetRoute,
  signedInRoute.addChildren([
    homeRoute,
    projectsRoute,
    membersRoute,
    projectRoute.addChildren([
      projectHomeRoute,
      overviewRoute,
      projectSettingsRoute,
      apiKeysRoute,
      emailDomainsRoute,
      emailProviderRoute,
      suppressionsRoute,
      smsRoute,
      transactionalRoute,
      audienceRoute,
      importRoute,
      campaignsRoute.addChildren([campaignListRoute, newCampaignRoute, campaignRoute, editCampaignRoute]),
      emailCampaignsRoute.addChildren([emailCampaignListRoute, newEmailCampaignRoute, emailCampaignRoute, editEmailCampaignRoute]),
      segmentsRoute.addChildren([segmentListRoute, newSegmentRoute, segmentRoute]),
      emailTemplatesRoute.addChildren([emailTemplateListRoute, newEmailTemplateRoute, emailTemplateRoute]),
      whatsappRoute,
      whatsappTemplatesRoute.addChildren([whatsappTemplateListRoute, newWhatsappTemplateRoute, whatsappTemplateRoute]),
      subscribersRoute.addChildren([subscriberListRoute, subscriberRoute]),
      automationsRoute.addChildren([automationListRoute, newAutomationRoute, automationRoute, automationEnrollmentsRoute]),
      eventsRoute,
    ]),
  ]),
]);

export const router = createRouter({ routeTree, basepath: '/app', defaultPreload: 'intent' });

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
