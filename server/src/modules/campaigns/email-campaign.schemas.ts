// Zod schemas of the email campaign routes (spec 2.3): the builder's fields, the counters and rates, the campaign family for email.
import { z } from 'zod';
import { CAMPAIGN_STATUSES } from '../../db/schema.js';
import { timestamp } from '../../http/schemas.js';
import { emailDesign, html, MERGE_TAGS_NOTE, preheader, subject, text } from '../email-templates/index.js';
import { email } from '../subscribers/index.js';
import { campaignSchedule, campaignSchemasOf, statsSchemaOf } from './campaign.schemas.js';

export const mailbox = (role: string) =>
  z
    .strictObject({
      email: email.describe(`The ${role} address: on a verified sending domain of the project, or a subdomain of one (422 otherwise)`),
      name: z
        .string()
        .trim()
        .min(1)
        .max(200)
        .refine((value) => !/[\r\n]/.test(value), 'must be one line')
        .optional()
        .describe('The display name'),
    })
    .describe(`The ${role}`);

const contentFields = {
  subject,
  preheader: preheader.unwrap().optional(),
  html,
  text: text.unwrap().optional().describe('The plain-text part with merge tags; absent: each recipient\'s is generated from its rendered HTML'),
  from: mailbox('From'),
  replyTo: mailbox('Reply-To').optional(),
  design: emailDesign
    .optional()
    .describe(
      "The visual editor's document `html` was rendered from, kept so the editor reopens it; absent: HTML written by hand. " +
        'Copied from the template with its html when that comes from `templateId`',
    ),
  templateId: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe(
      'Start from a saved email template of the same project and environment: the parts not given here (subject, preheader, html, text) ' +
        'are copied from it when the campaign is written; later edits of the template do not change the campaign',
    ),
};

const emailCampaignContent = z
  .strictObject({ ...contentFields, subject: subject.optional(), html: html.optional() })
  .refine((content) => content.templateId !== undefined || (content.subject !== undefined && content.html !== undefined), {
    message: 'needs subject and html, or a templateId to take them from',
  })
  .describe(
    `What each recipient receives. ${MERGE_TAGS_NOTE} A campaign's variables are its recipient's: its attributes and ` +
      "standard fields (docs/CONTEXT.md, \"Email campaigns\"); a recipient missing a variable the content needs without " +
      'a default is not sent (`template_variables_missing`). Every absolute link of the HTML gets the UTM parameters ' +
      'and a signed click-tracking URL; an unsubscribe footer, the open pixel and List-Unsubscribe headers are added.',
  );

/** The content as stored and answered: a template's parts already copied in. */
const storedContent = z.object({ ...contentFields, text: z.string().optional(), preheader: z.string().optional() });

const emailSchedule = campaignSchedule
  .extend({
    localTime: z
      .boolean()
      .optional()
      .describe(
        "Scheduled only. true: sendAt's wall-clock time is each recipient's own (its subscriber's timezone, else the " +
          "project's): a campaign for 09:00 goes out over the day as 09:00 comes round the world, and stays `sending` " +
          'until the last zone has had it. Recipients whose 09:00 has passed when the campaign starts get it then.',
      ),
  })
  .describe('When it is sent');

export const emailCampaignStats = statsSchemaOf(
  {
    totalTargeted: 'Recipients: the audience counted when dispatched, replaced by the snapshot size (one per distinct address) once written',
    sent: 'Accepted by the email provider (including those later delivered, opened, bounced …)',
    delivered: 'Reported delivered by the provider, or implied by an open or a click',
    opened: 'Opened at least once (the first open per recipient; machine opens included, flagged in the events log)',
    clicked: 'Clicked at least once (the first click per recipient)',
    bounced: 'Bounced after the provider accepted it (hard bounces: the address is suppressed)',
    complained: 'Marked as spam by the recipient (the address is suppressed for good)',
    unsubscribed: 'Unsubscribed through this email (its footer, preference center or List-Unsubscribe)',
    failed: 'Will not be sent: refused by the provider, missing merge-tag variables, retries exhausted',
    suppressed: 'Kept back on purpose: the frequency cap, or the campaign was cancelled',
  },
  {
    openRate: 'opened / sent, from 0 to 1 (4 decimals); 0 while nothing was sent. Every rate is over sent, which counts every recipient the others count',
    clickRate: 'clicked / sent (a recipient who clicked and later bounced stays in both)',
    bounceRate: 'bounced / sent',
    complaintRate: 'complained / sent',
    unsubscribeRate: 'unsubscribed / sent',
  },
)
  .meta({
    id: 'EmailCampaignStats',
    description:
      'Spec 2.3\'s live counters, from the delivery rows and the events log, each transition counted once whatever the workers and ' +
      'however often an event repeats. totalTargeted − sent − failed − suppressed is still to go.',
  });

export const emailCampaignSchemas = campaignSchemasOf({
  names: {
    create: 'NewEmailCampaign',
    campaign: 'EmailCampaign',
    createDescription: 'Required: name, projectId, content (subject, html and from, or templateId and from), segment, schedule.mode. The rest is optional.',
  },
  content: emailCampaignContent,
  storedContent,
  schedule: emailSchedule,
  scheduleView: {
    localTime: z.boolean(),
    localWindow: z
      .object({ from: timestamp, to: timestamp })
      .nullable()
      .describe(
        "A local-time send's span: when the first zone on Earth (UTC+14) and the last (UTC−12) reach sendAt's wall-clock " +
          'time, 26 hours apart; the campaign is dispatched at `from` and stays `sending` at least until `to`. null otherwise',
      ),
  },
  utm: {
    keys: ['source', 'medium', 'campaign', 'content'],
    description:
      'Optional. Appended as utm_source, utm_medium, utm_campaign and utm_content to every absolute http(s) link of the HTML when the ' +
      'campaign is sent (not to mailto:, tel:, #anchors or relative links, nor the unsubscribe footer): a parameter of the same name ' +
      'already in the URL is replaced, every other parameter and the fragment are kept exactly as written.',
  },
  statuses: z.enum(CAMPAIGN_STATUSES),
  statusDescription: 'As push campaigns (draft, scheduled, sending, sent, cancelled, failed, archived), and paused: sending held by POST /email-campaigns/{id}/pause',
  sandboxDescription: 'Made with a test key: sent to sandbox subscribers only, rendered and recorded, never handed to a provider',
  stats: emailCampaignStats,
  viewFields: {
    pauseReason: z
      .enum(['manual', 'monthly_cap_reached'])
      .nullable()
      .describe(
        'Why a paused campaign is paused: `manual` (POST /email-campaigns/{id}/pause), or `monthly_cap_reached` — the ' +
          "organization's monthly email cap held its emails: it resumes by itself on the first of next month (UTC), or " +
          'now with POST /email-campaigns/{id}/resume once the plan allows more. null unless paused',
      ),
  },
});

export const testBody = z.strictObject({
  emails: z
    .array(email)
    .min(1)
    .max(5)
    .describe('1 to 5 addresses (compared lower-cased; a repeated one is sent once)'),
});

export const testAnswer = z
  .object({
    data: z.array(
      z.object({
        email: z.string(),
        status: z.enum(['sent', 'failed']),
        reason: z.string().nullable().describe('Why it was not sent; null when sent'),
      }),
    ),
  })
  .meta({ id: 'EmailCampaignTestSend' });
