// Zod schemas of the contact fields (email, phone, timezone, language, attributes, preferences), shared by the
// update routes, contact creation and bulk import.
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { z } from 'zod';
import { ATTRIBUTE_TYPES, MARKETING_CONSENTS } from '../../db/schema.js';
import { jsonQueryParam, timezone } from '../../http/schemas.js';
import { attributes } from './attributes.schemas.js';
import { language, tag } from './subscriber.schemas.js';
import { canonicalLanguage } from './user-agent.js';

export const IMPORT_MAX_ROWS = 10_000;
/** Body limit of the import route (JSON or CSV). */
export const IMPORT_MAX_BYTES = 20 * 1024 * 1024;

export const email = z
  .string()
  .trim()
  .max(254)
  .pipe(z.email('must be an email address'))
  .describe('Email address; matched case-insensitively');

/** E.164 after normalisation: `+44 20 7946 0958` → `+442079460958`. A national number without `+` is refused. */
export const phone = z
  .string()
  .trim()
  .max(32)
  .transform((value, ctx) => {
    const parsed = value.startsWith('+') ? parsePhoneNumberFromString(value) : undefined;
    if (!parsed?.isValid()) {
      ctx.addIssue({ code: 'custom', message: 'must be an international phone number such as +14155550123 (E.164)' });
      return z.NEVER;
    }
    return parsed.number as string;
  })
  .describe('Phone number in international format; stored as E.164');

const contactLanguage = language.transform((tag) => canonicalLanguage(tag) ?? tag).describe('BCP 47 language');

export const externalId = z.string().trim().min(1).max(255).describe("Your own user id");

export const preferences = z
  .strictObject({
    channels: z
      .strictObject({
        email: z.boolean().optional(),
        push: z.boolean().optional(),
        sms: z.boolean().optional(),
        whatsapp: z.boolean().optional(),
      })
      .optional()
      .describe('Per-channel consent; merged flag by flag. false excludes the subscriber from that channel'),
  })
  .describe('Preferences; only the given flags change');

export const tags = z.array(tag).max(100);

const consentState = z.enum(MARKETING_CONSENTS);
/** Marketing consent per channel of the contact's addresses (docs/CONTEXT.md, "Marketing consent"). */
export const marketingConsent = z
  .strictObject({ email: consentState.optional(), sms: consentState.optional(), whatsapp: consentState.optional() })
  .describe(
    'Marketing consent of the email address and of the phone number on SMS and WhatsApp: subscribed (campaigns and ' +
      'automations reach it), transactional (transactional sends only) or unsubscribed. Set only for the channels given; ' +
      'an address never stated is subscribed, unless Herald created its contact for a transactional send',
  );
export type MarketingConsentInput = z.output<typeof marketingConsent>;

/** A consent is said of an address: the email (email) or the phone (sms, whatsapp) must come with it. */
function consentWithAddress(value: { email?: unknown; phone?: unknown; marketingConsent?: MarketingConsentInput | undefined }, ctx: z.core.$RefinementCtx) {
  const consent = value.marketingConsent;
  if (consent?.email !== undefined && value.email === undefined) {
    ctx.addIssue({ code: 'custom', path: ['marketingConsent', 'email'], message: 'needs the email address in the same request' });
  }
  for (const channel of ['sms', 'whatsapp'] as const) {
    if (consent?.[channel] !== undefined && value.phone === undefined) {
      ctx.addIssue({ code: 'custom', path: ['marketingConsent', channel], message: 'needs the phone number in the same request' });
    }
  }
}

/** The contact fields a caller may change; null clears a field. */
const contactUpdateFields = {
  email: email.nullable().optional(),
  phone: phone.nullable().optional(),
  timezone: timezone.nullable().optional().describe('IANA time zone'),
  language: contactLanguage.nullable().optional(),
  attributes: attributes.optional(),
  preferences: preferences.optional(),
  marketingConsent: marketingConsent.optional(),
};

const atLeastOneField = (value: Record<string, unknown>, ctx: z.core.$RefinementCtx<Record<string, unknown>>) => {
  if (Object.keys(contactUpdateFields).every((key) => value[key] === undefined)) {
    ctx.addIssue({ code: 'custom', message: `give at least one of ${Object.keys(contactUpdateFields).join(', ')}` });
  }
};

export const updateByIdBody = z.strictObject(contactUpdateFields).superRefine(atLeastOneField);
export const updateByTokenBody = z
  .strictObject({ token: z.string().min(1).max(100), ...contactUpdateFields })
  .superRefine(atLeastOneField);

export type ContactUpdate = z.output<typeof updateByIdBody>;

/** One contact as created or imported (no nulls: an absent field is simply not set). */
export const contactFields = {
  externalId: externalId.optional(),
  email: email.optional(),
  phone: phone.optional(),
  timezone: timezone.optional().describe('IANA time zone'),
  language: contactLanguage.optional(),
  tags: tags.optional(),
  attributes: attributes.optional(),
  preferences: preferences.optional(),
  marketingConsent: marketingConsent.optional(),
};

export const contactRow = z.strictObject(contactFields).superRefine(consentWithAddress);
export type ContactInput = z.output<typeof contactRow>;

export const createContactBody = z
  .strictObject({ projectId: z.string().min(1), ...contactFields })
  .superRefine((value, ctx) => {
    if (value.externalId === undefined && value.email === undefined && value.phone === undefined) {
      ctx.addIssue({ code: 'custom', message: 'give at least one of externalId, email or phone' });
    }
    consentWithAddress(value, ctx);
  });

const UPSERT_KEYS = ['externalId', 'email'] as const;
export type UpsertKey = (typeof UPSERT_KEYS)[number];

/**
 * An import row as the body accepts it: anything, for validateRows (contact-import.ts) checks the rows one by one
 * and names a bad one rows[<index>]; the document still shows a row's fields.
 */
const contactRowDocumented = z.unknown().meta(z.toJSONSchema(contactRow, { io: 'input', unrepresentable: 'any' }));

export const importBody = z.strictObject({
  projectId: z.string().min(1).describe('The project to import into (with CSV: the projectId query parameter)'),
  upsertBy: z
    .enum(UPSERT_KEYS)
    .default('externalId')
    .describe('Match existing subscribers by externalId or by email (case-insensitive); default externalId'),
  contacts: z
    .array(contactRowDocumented)
    .min(1)
    .max(IMPORT_MAX_ROWS)
    .describe(
      'Contacts. Each row is validated on its own and must carry the upsertBy field, each value once per upload; ' +
        'errors are reported as rows[<index>].<field>',
    ),
});

const SIMPLE_COLUMNS = new Set(['externalId', 'email', 'phone', 'timezone', 'language', 'tags']);
const CHANNELS = new Set(['email', 'push', 'sms', 'whatsapp']);
const CONSENT_CHANNELS = new Set(['email', 'sms', 'whatsapp']);
export const ATTRIBUTE_COLUMN = /^attributes\.[^.].{0,99}$/s;

/** Whether a CSV column (by header or by mapping) names a field an import row has. */
export const isImportColumn = (column: string) =>
  SIMPLE_COLUMNS.has(column) ||
  ATTRIBUTE_COLUMN.test(column) ||
  (column.startsWith('preferences.channels.') && CHANNELS.has(column.slice('preferences.channels.'.length))) ||
  (column.startsWith('marketingConsent.') && CONSENT_CHANNELS.has(column.slice('marketingConsent.'.length)));


export const csvMapping = z
  .record(
    z.string().max(200),
    z
      .string()
      .refine(isImportColumn, 'must be externalId, email, phone, timezone, language, tags, attributes.<name>, preferences.channels.<channel> or marketingConsent.<channel>')
      .nullable(),
  )
  .refine((value) => Object.keys(value).length <= 500, 'must map at most 500 columns');
export type CsvMapping = z.output<typeof csvMapping>;

export const csvTypes = z
  .record(z.string().min(1).max(100), z.enum(ATTRIBUTE_TYPES))
  .refine((value) => Object.keys(value).length <= 500, 'must type at most 500 attributes');
export type CsvTypes = z.output<typeof csvTypes>;

export const importQuery = z.strictObject({
  projectId: z.string().min(1).optional().describe('CSV uploads only: the project to import into'),
  upsertBy: z.enum(UPSERT_KEYS).optional().describe('CSV uploads only: externalId (default) or email'),
  mapping: jsonQueryParam(csvMapping)
    .optional()
    .describe(
      'CSV uploads only: where each column goes, as URL-encoded JSON keyed by header name: a field (externalId, email, ' +
        'phone, timezone, language, tags, attributes.<name>, preferences.channels.<channel>, ' +
        'marketingConsent.<channel>) or null to skip the column. A column left out is read by its header name, as ' +
        'without a mapping; a key that is no header of the file, or two columns going to one field, is a 422.',
    )
    .meta({ example: '{"E-mail":"email","First name":"attributes.first_name","Score":"attributes.score","Notes":null}' }),
  types: jsonQueryParam(csvTypes)
    .optional()
    .describe(
      'CSV uploads only: the type of attribute columns, as URL-encoded JSON keyed by attribute name: text (the cell ' +
        'as written, the default), number (1234.5, -3, 1,234,567.89: commas only between groups of three digits), ' +
        'boolean (true/false, yes/no, 1/0, any case) or date (an ISO 8601 date or date-time, stored as an ISO UTC ' +
        'timestamp; without an offset it is UTC). A cell that does not read as its type is a row error ' +
        'rows[<index>].attributes.<name> naming the column; empty cells are left out. Each type given is declared in the ' +
        'project\'s attribute list once the import is written (as PUT /projects/{projectId}/attributes/{name} does).',
    )
    .meta({ example: '{"score":"number","vip":"boolean","signed_up":"date"}' }),
});
export type ImportQuery = z.output<typeof importQuery>;

export const importResult = z
  .object({
    created: z.number().int().describe('New contacts'),
    updated: z.number().int().describe('Rows that matched existing subscribers (every match is updated)'),
    total: z.number().int().describe('Rows in the upload'),
  })
  .meta({ id: 'ContactImportResult' });
