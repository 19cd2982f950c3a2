// Email campaigns' kind: a saved template's parts copied in, merge tags parsed, senders on verified domains, the
// personalized email a dispatch writes (UTM on every link), and the campaign of spec 2.3 with its live counters.
import type { z } from 'zod';
import type { CampaignSegment, CampaignUtm, EmailCampaignContent, EmailContent } from '../../db/schema.js';
import type { ContentProblem } from '../../delivery/index.js';
import type { EmailDesign } from '../email-templates/index.js';
import { validationFailed, type FieldError } from '../../shared/errors.js';
import { parseTemplate, type MergeTagFormat } from '../../shared/merge-tags.js';
import type { ProjectScope } from '../tenancy.js';
import { rate, scheduleView, sharedView, type CampaignKind } from './campaign-kind.js';
import { localTimeWindow } from './campaign-schedule.js';
import type { CampaignWithCounters } from './campaign.repository.js';
import type { emailCampaignSchemas, emailCampaignStats } from './email-campaign.schemas.js';
import { applyUtmToHtml } from './utm.js';

type EmailCampaignStats = z.output<typeof emailCampaignStats>;
export type EmailCampaign = Omit<z.output<typeof emailCampaignSchemas.campaign>, 'segment'> & { segment: CampaignSegment };

/** A saved template's parts. */
export interface TemplateParts {
  subject: string;
  preheader: string | null;
  html: string;
  text: string | null;
  design: EmailDesign | null;
}

export interface EmailCampaignDeps {
  /** The email adapter's check of a message's content. */
  validate: (content: EmailContent) => ContentProblem[] | undefined;
  /** Whether a verified sending domain of the project covers `address`. */
  senderVerified: (projectId: string, address: string) => Promise<boolean>;
  /** A saved template of the scope's project and environment, or undefined. */
  template: (scope: ProjectScope, id: string) => Promise<TemplateParts | undefined>;
}

export function emailStats(row: Pick<CampaignWithCounters, 'audienceSize' | 'counters'>): EmailCampaignStats {
  const { sent, delivered, opened, clicked, bounced, complained, unsubscribed, failed, suppressed } = row.counters;
  return {
    totalTargeted: row.audienceSize,
    sent,
    delivered,
    opened,
    clicked,
    bounced,
    complained,
    unsubscribed,
    failed,
    suppressed,
    // One whole for every rate: a recipient who clicked and later bounced stays in both (docs/CONTEXT.md).
    openRate: rate(opened, sent),
    clickRate: rate(clicked, sent),
    bounceRate: rate(bounced, sent),
    complaintRate: rate(complained, sent),
    unsubscribeRate: rate(unsubscribed, sent),
  };
}

const PARTS: { part: 'subject' | 'preheader' | 'html' | 'text'; format: MergeTagFormat }[] = [
  { part: 'subject', format: 'text' },
  { part: 'preheader', format: 'text' },
  { part: 'html', format: 'html' },
  { part: 'text', format: 'text' },
];

function windowOf(sendAt: Date, zone: string) {
  const { first, last } = localTimeWindow(sendAt, zone);
  return { from: first.toISOString(), to: last.toISOString() };
}

const toEmailContent = (content: EmailCampaignContent, utm: CampaignUtm | null): EmailContent => ({
  subject: content.subject,
  preheader: content.preheader,
  html: applyUtmToHtml(content.html, utm),
  text: content.text,
  from: content.from,
  replyTo: content.replyTo,
});

/** Email campaign content as a create or edit gives it: subject and html may come from its template. */
export type EmailCampaignInput = Omit<EmailCampaignContent, 'subject' | 'html'> & Partial<Pick<EmailCampaignContent, 'subject' | 'html'>>;

export function emailCampaignKind(deps: EmailCampaignDeps): CampaignKind<EmailCampaignInput, EmailCampaignContent, EmailCampaign> {
  return {
    channel: 'email',
    async prepare(scope, content) {
      if (content.templateId === undefined) {
        // The body's schema asks for both without a template.
        return { ...content, subject: content.subject!, html: content.html! };
      }
      const template = await deps.template(scope, content.templateId);
      if (!template) throw validationFailed([{ field: 'content.templateId', error: 'is not an email template of this project and environment' }]);
      return {
        ...content,
        subject: content.subject ?? template.subject,
        html: content.html ?? template.html,
        // The template's design describes the template's html: it comes along only with it.
        ...(content.html === undefined && content.design === undefined && template.design !== null && { design: template.design }),
        ...(content.preheader === undefined && template.preheader !== null && { preheader: template.preheader }),
        ...(content.text === undefined && template.text !== null && { text: template.text }),
      };
    },
    async check(scope, content, utm) {
      const problems: FieldError[] = [];
      for (const { part, format } of PARTS) {
        const source = content[part];
        if (source === undefined) continue;
        const parsed = parseTemplate(source, format);
        if (!parsed.ok) for (const p of parsed.problems) problems.push({ field: `content.${part}`, error: `line ${p.line}, column ${p.column}: ${p.message}` });
      }
      for (const [field, mailbox] of [['content.from.email', content.from], ['content.replyTo.email', content.replyTo]] as const) {
        if (mailbox && !(await deps.senderVerified(scope.projectId, mailbox.email))) {
          problems.push({ field, error: 'is not on a verified sending domain of the project (sender_domain_not_verified)' });
        }
      }
      for (const problem of deps.validate(toEmailContent(content, utm)) ?? []) {
        problems.push({ field: problem.field ? `content.${problem.field}` : 'content', error: problem.error });
      }
      return problems;
    },
    message: (content, utm) => ({ channel: 'email', content: toEmailContent(content, utm), options: { personalized: true } }),
    stats: emailStats,
    view: (row) => ({
      ...sharedView(row),
      status: row.status,
      // Checked by the content schema when written.
      content: row.content as EmailCampaign['content'],
      schedule: {
        ...scheduleView(row),
        localTime: row.localTime,
        localWindow: row.localTime && row.sendAt ? windowOf(row.sendAt, row.timezone ?? 'UTC') : null,
      },
      stats: emailStats(row),
      pauseReason: row.status === 'paused' ? row.pauseReason : null,
    }),
  };
}
