// The preference center's public routes, reached by a signed unsubscribe link: the page, RFC 8058's one-click POST, the page's forms.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { CHANNELS } from '../../db/schema.js';
import type { App } from '../../http/types.js';
import { AppError } from '../../shared/errors.js';
import { noticePage, pageHeaders, preferencePage } from './preference-pages.js';
import { preferenceStrings, type PreferenceStrings } from './preference-strings.js';
import type { ChannelChoice, PageSubject, PreferenceService } from './preference.service.js';

const access = { auth: 'public' } as const;
// Pages for people and a protocol for mail providers, not an API a client calls: kept out of the OpenAPI document,
// like the dashboard's files (docs/CONTEXT.md, "Unsubscribe and the preference center", describes them). Mail clients
// and link scanners may append query parameters to a link: whatever the query, the token decides.
const schema = { hide: true, params: z.object({ token: z.string() }), querystring: z.looseObject({}) };

/** A form body is a few short fields. */
const FORM_BODY_LIMIT = 16 * 1024;

const formChoice = z.object({
  csrf: z.string().optional(),
  channel: z.enum(CHANNELS),
  enabled: z.enum(['true', 'false']),
});

/** The text fields of a parsed form (URLSearchParams or FormData); a multipart file is no field here. */
function textFields(form: { forEach(each: (value: unknown, name: string) => void): void }): Record<string, string> {
  const fields: Record<string, string> = {};
  form.forEach((value, name) => {
    if (typeof value === 'string') fields[name] = value;
  });
  return fields;
}

async function multipartFields(request: FastifyRequest, body: Uint8Array<ArrayBuffer>): Promise<Record<string, string>> {
  try {
    return textFields(await new Response(body, { headers: { 'content-type': request.headers['content-type'] ?? '' } }).formData());
  } catch {
    throw new AppError(400, 'invalid_form', 'The body is not valid multipart/form-data');
  }
}

/** RFC 8058: the POST's body says `List-Unsubscribe=One-Click`; nothing else is a one-click unsubscribe. */
const isOneClick = (body: unknown) => typeof body === 'object' && body !== null && (body as Record<string, unknown>)['List-Unsubscribe'] === 'One-Click';

/** Where the browser says a form was posted from: its Origin, else its Referer's origin, else nothing said. */
function formOrigin(request: FastifyRequest): string | undefined {
  const { origin, referer } = request.headers;
  if (origin !== undefined) return origin;
  if (referer === undefined) return undefined;
  return URL.canParse(referer) ? new URL(referer).origin : referer;
}

export async function preferenceRoutes(app: App, preferences: PreferenceService, publicUrl: string) {
  const headers = pageHeaders(publicUrl);
  const page = (reply: FastifyReply, status: number, html: string) => reply.status(status).headers(headers).send(html);
  const english = preferenceStrings(undefined);
  const invalidLink = (reply: FastifyReply) => page(reply, 404, noticePage(english, english.invalidLinkTitle, english.invalidLink));
  const badRequest = (reply: FastifyReply) => page(reply, 400, noticePage(english, english.badRequestTitle, english.badRequest));
  const notice = (reply: FastifyReply, status: number, subject: PageSubject, title: (s: PreferenceStrings) => string, message: (s: PreferenceStrings) => string) => {
    const strings = preferenceStrings(subject.language);
    return page(reply, status, noticePage(strings, title(strings), message(strings), { publicUrl, token: subject.token }));
  };
  const confirmation = (subject: PageSubject, choice: ChannelChoice) => (s: PreferenceStrings) => {
    if (choice.channel === 'email') return choice.enabled ? s.resubscribed(subject.sender) : s.unsubscribed(subject.sender);
    return choice.enabled ? s.channelTurnedOn(s.channelNames[choice.channel]) : s.channelTurnedOff(s.channelNames[choice.channel]);
  };

  // Only these routes read form bodies: the rest of the API takes JSON.
  await app.register(async (scope: App) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, async (_request: FastifyRequest, body: string | Buffer) =>
      textFields(new URLSearchParams(String(body))),
    );
    scope.addContentTypeParser('multipart/form-data', { parseAs: 'buffer', bodyLimit: FORM_BODY_LIMIT }, (request: FastifyRequest, body: string | Buffer) =>
      multipartFields(request, new Uint8Array(Buffer.from(body))),
    );

    // A GET only shows: mail scanners and link previews fetch every link of a mail.
    scope.get('/u/:token', { config: { access, secretParams: ['token'] }, schema }, async (request, reply) => {
      const view = await preferences.page(request.params.token);
      if (!view) return invalidLink(reply);
      return page(reply, 200, preferencePage(publicUrl, view, preferenceStrings(view.language)));
    });

    // No cookie and no CSRF token can come with a mail provider's POST: the signed token is the authority.
    scope.post('/u/:token', { bodyLimit: FORM_BODY_LIMIT, config: { access, secretParams: ['token'] }, schema }, async (request, reply) => {
      if (!isOneClick(request.body)) return badRequest(reply);
      const subject = await preferences.unsubscribeByToken(request.params.token, 'one_click');
      if (!subject) return invalidLink(reply);
      return notice(reply, 200, subject, (s) => s.doneTitle, (s) => s.unsubscribed(subject.sender));
    });

    scope.post('/u/:token/preferences', { bodyLimit: FORM_BODY_LIMIT, config: { access, secretParams: ['token'] }, schema }, async (request, reply) => {
      const form = formChoice.safeParse(request.body ?? {});
      if (!form.success) return badRequest(reply);
      const choice = { channel: form.data.channel, enabled: form.data.enabled === 'true' };
      const result = await preferences.change(request.params.token, { formToken: form.data.csrf, origin: formOrigin(request) }, choice);
      switch (result.outcome) {
        case 'not_found':
          return invalidLink(reply);
        case 'forbidden':
          return notice(reply, 403, result.subject, (s) => s.expiredFormTitle, (s) => s.expiredForm);
        case 'refused':
          return notice(reply, 409, result.subject, (s) => s.refusedTitle, (s) => s.refused);
        case 'changed':
          return notice(reply, 200, result.subject, (s) => s.doneTitle, confirmation(result.subject, choice));
      }
    });
  });
}
