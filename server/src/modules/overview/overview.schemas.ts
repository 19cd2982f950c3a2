// The overview's answer and query: described for the OpenAPI document the dashboard and the Node client are typed from.
import { z } from 'zod';
import { timestamp } from '../../http/schemas.js';

export const overviewQuery = z.strictObject({
  days: z.coerce.number().int().min(1).max(365).default(30).describe('The window: this many UTC days, today included (1–365, default 30)'),
});

const day = z.string().describe('A UTC day, YYYY-MM-DD');
const count = (what: string) => z.number().int().describe(what);

export const HEALTH_CODES = [
  'no_verified_domain',
  'domain_failing',
  'email_provider_missing',
  'bounce_rate_high',
  'complaint_rate_high',
  'vapid_subject_unset',
] as const;
export const FIX_PAGES = ['domains', 'email-provider', 'settings', 'suppressions'] as const;
export const CHECKLIST_STEPS = ['install_sdk', 'verify_domain', 'connect_provider', 'add_people', 'first_campaign'] as const;

export const overviewAudience = z
  .object({
    people: count('People of the live environment some channel reaches, or whose row is active'),
    push: count('Push devices a campaign would reach now (active subscription, push kept on)'),
    email: count('Distinct email addresses a marketing email would reach now (not bounced, complained, unsubscribed or suppressed)'),
    sms: count('Distinct phone numbers a marketing SMS would reach now'),
    whatsapp: count('Distinct phone numbers a marketing WhatsApp message would reach now'),
  })
  .meta({ id: 'OverviewAudience', description: 'Who is reachable now, by the same reading campaigns use' });

const activityShape = {
  days: z.number().int().describe('The window the figures cover, in UTC days (today included)'),
  growth: z
    .array(z.object({ day, subscribed: count('Live subscribers and contacts registered that day') }))
    .describe('One entry per UTC day of the window, oldest first, days without registrations as 0'),
  sends: z
    .array(
      z.object({
        day,
        push: count('Push deliveries the push services accepted that day'),
        email: count('Emails the provider accepted that day'),
        sms: count('SMS the provider accepted that day'),
        whatsapp: count('WhatsApp messages the provider accepted that day'),
      }),
    )
    .describe('Live deliveries sent per UTC day and channel (campaigns, automations and transactional sends), every day of the window'),
  rates: z
    .object({
      email: z.object({
        sent: count('Emails sent in the window'),
        delivered: count('Deliveries confirmed by the receiving server (providers that report it)'),
        opened: count('First opens'),
        clicked: count('First clicks'),
        bounced: count('Hard bounces'),
        complained: count('Spam complaints'),
      }),
      push: z.object({
        sent: count('Pushes the push services accepted in the window'),
        delivered: count("Pushes the device's service worker confirmed it received (shown or not)"),
        clicked: count('Pushes clicked'),
      }),
    })
    .describe('Counts of the window; a rate is counter / sent (capped at 1), as on a campaign'),
  recent: z.object({
    campaigns: z
      .array(
        z.object({
          id: z.string(),
          channel: z.enum(['push', 'email']),
          name: z.string(),
          status: z.string().describe('draft, scheduled, sending, paused, sent, cancelled or failed'),
          at: timestamp.describe('When it started sending, else when it is scheduled, else when it was made'),
        }),
      )
      .describe('The newest 5 live push and email campaigns (archived ones left out), newest first'),
    automations: z
      .array(z.object({ id: z.string(), name: z.string(), status: z.string().describe('draft, active or paused'), at: timestamp.describe('Last changed') }))
      .describe('The newest 5 live automations (archived ones left out), newest first'),
  }),
  health: z
    .array(
      z.object({
        code: z.enum(HEALTH_CODES).describe(
          'no_verified_domain: an email provider is set but no sending domain is verified (nothing can be sent); domain_failing: a ' +
            'verified domain\'s records are now missing or changed; email_provider_missing: the project uses email (a domain or an ' +
            'email campaign) but has no provider; bounce_rate_high: more than 2 % of the window\'s emails bounced (at least 100 sent); ' +
            'complaint_rate_high: more than 0.1 % were marked as spam (at least 100 sent); vapid_subject_unset: the project names no ' +
            'contact for push services (VAPID subject)',
        ),
        severity: z.enum(['warning', 'critical']).describe('critical: sending fails or mailbox providers start refusing mail'),
        fix: z.enum(FIX_PAGES).describe('The dashboard page that fixes it'),
      }),
    )
    .describe('What needs attention, critical first; empty when all is well'),
  checklist: z
    .array(z.object({ step: z.enum(CHECKLIST_STEPS), done: z.boolean() }))
    .describe(
      'Getting started, in order: install_sdk (a browser subscribed to push), verify_domain (a verified sending domain), ' +
        'connect_provider (an email, SMS or WhatsApp provider), add_people (anyone in the live audience), first_campaign (a campaign sent)',
    ),
};

export const overviewActivity = z
  .object(activityShape)
  .meta({ id: 'OverviewActivity', description: "A project's activity over the window, its health and set-up: the overview without its audience" });

export const projectOverview = z
  .object({ ...activityShape, audience: overviewAudience })
  .meta({ id: 'ProjectOverview', description: "A project's home: its live audience, activity over the window, health and set-up" });
