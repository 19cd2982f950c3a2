// A project's sending domains: add one (DKIM keys generated), the DNS records to publish, verify, list, delete.
import { z } from 'zod';
import { CHECKED_RECORDS, EMAIL_DOMAIN_STATUSES, RECORD_PROBLEMS } from '../../db/schema.js';
import { projectOf } from '../../http/access.js';
import { commonErrors, domainName, errorEnvelope, timestamp } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { RECORD_PURPOSES } from './domain-records.js';
import type { EmailDomainService } from './email-domain.service.js';

const tags = ['Sending domains'];

const dnsRecord = z
  .object({
    type: z.literal('TXT'),
    name: z.string().describe('The full name to publish it at'),
    value: z
      .string()
      .describe('The record value; a DNS provider that limits strings to 255 characters splits a longer one into several, which is fine'),
    purpose: z
      .enum(RECORD_PURPOSES)
      .describe(
        '`dkim`: the RSA key receivers verify signatures with; `dkim_ed25519`: the optional second key (RFC 8463); ' +
          '`ownership`: proves the project controls the domain; `spf`: merge the include into the domain\'s one SPF ' +
          'record if it has one; `dmarc`: a policy to start with (`p=none`), tightened once reports are clean',
      ),
    checked: z.boolean().describe('Whether verification looks for it; false: a recommendation (SPF, DMARC), never checked'),
  })
  .meta({ id: 'DnsRecord' });

const emailDomain = z
  .object({
    id: z.string(),
    projectId: z.string(),
    domain: z.string().describe('Lower case; an internationalized name in A-labels (xn--…)'),
    status: z
      .enum(EMAIL_DOMAIN_STATUSES)
      .describe(
        '`pending`: not verified yet; `verified`: the ownership and DKIM records were found as published here, and ' +
          'mail may be sent from the domain and its subdomains; `failing`: verified once, its records since found ' +
          'missing or changed — nothing is sent from it until a check finds them again',
      ),
    records: z.array(dnsRecord).describe('The records to publish'),
    problems: z
      .array(
        z.object({
          record: z.enum(CHECKED_RECORDS),
          name: z.string(),
          problem: z
            .enum(RECORD_PROBLEMS)
            .describe('`missing`: no TXT record at the name; `wrong_value`: none with the expected value; `lookup_failed`: DNS gave no answer'),
        }),
      )
      .describe('What the last check found wrong, one entry per record; empty when verified or never checked'),
    verifiedAt: timestamp.nullable().describe('When it last became verified'),
    lastCheckedAt: timestamp.nullable().describe('When its records were last looked up (verify, or the hourly re-check)'),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({
    id: 'EmailDomain',
    description:
      'A domain the project sends email from, with DKIM keys Herald generated (the private keys are sealed at rest and ' +
      'never returned). Verified when the ownership and DKIM records are found with their values; domains verified ' +
      'once are looked up again every hour.',
  });

const projectParams = z.object({ projectId: z.string() });
const domainParams = z.object({ projectId: z.string(), domainId: z.string() });

export async function emailDomainRoutes(app: App, emailDomains: EmailDomainService) {
  app.post(
    '/projects/:projectId/email-domains',
    {
      config: { access: { auth: 'project', project: 'params.projectId', minRole: 'ADMIN' } },
      schema: {
        tags,
        summary: 'Add a sending domain (OWNER or ADMIN): Herald generates its DKIM keys and answers the DNS records to publish',
        description:
          'The domain starts `pending`; publish its `records`, then call verify. A domain the project already has → ' +
          '409 `email_domain_exists`. A test key cannot add domains (403 `test_key_forbidden`).',
        params: projectParams,
        body: z.strictObject({
          domain: domainName,
          ed25519: z.boolean().optional().describe('Also generate an Ed25519 key (RFC 8463) for a second DKIM signature. Default false'),
        }),
        response: { 201: emailDomain, ...commonErrors, 409: errorEnvelope },
      },
    },
    async (request, reply) => reply.status(201).send(await emailDomains.add(projectOf(request), request.body)),
  );

  app.get(
    '/projects/:projectId/email-domains',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: {
        tags,
        summary: "The project's sending domains, by name",
        params: projectParams,
        response: { 200: z.object({ data: z.array(emailDomain) }), ...commonErrors },
      },
    },
    (request) => emailDomains.list(projectOf(request)),
  );

  app.get(
    '/projects/:projectId/email-domains/:domainId',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: { tags, summary: 'One sending domain', params: domainParams, response: { 200: emailDomain, ...commonErrors } },
    },
    (request) => emailDomains.get(projectOf(request), request.params.domainId),
  );

  app.post(
    '/projects/:projectId/email-domains/:domainId/verify',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: {
        tags,
        summary: 'Look the domain\'s records up now: verified when the ownership and DKIM records match',
        description:
          'Answers the domain with its new status and `problems`. Records just published may take a while to reach ' +
          'the resolvers Herald asks; call again later. Lookups that get no answer (`lookup_failed`) leave the status as it was.',
        params: domainParams,
        response: { 200: emailDomain, ...commonErrors },
      },
    },
    (request) => emailDomains.verify(projectOf(request), request.params.domainId),
  );

  app.delete(
    '/projects/:projectId/email-domains/:domainId',
    {
      config: { access: { auth: 'project', project: 'params.projectId', minRole: 'ADMIN' } },
      schema: {
        tags,
        summary: 'Delete a sending domain and its keys (OWNER or ADMIN); nothing is sent from it any more',
        description: 'A test key cannot delete domains (403 `test_key_forbidden`).',
        params: domainParams,
        response: { 204: z.null(), ...commonErrors },
      },
    },
    async (request, reply) => {
      await emailDomains.remove(projectOf(request), request.params.domainId);
      return reply.status(204).send(null);
    },
  );
}
