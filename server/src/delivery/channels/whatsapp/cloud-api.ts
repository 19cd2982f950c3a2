// Meta's WhatsApp Cloud API (Graph): sending messages, reading a business account's templates, and what its error codes mean.
import { ProviderError, type ChannelProvider, type SendOutcome } from '../../channel.js';
import type { CloudApiAccount, WhatsAppItem } from './whatsapp-item.js';

export interface CloudApiOptions {
  /** WHATSAPP_GRAPH_URL: https://graph.facebook.com, or a local fake in tests. */
  graphUrl: string;
  /** WHATSAPP_GRAPH_VERSION, e.g. v21.0. */
  version: string;
  timeoutMs: number;
}

/** Cloud API error codes that mean "later": throughput and pair rate limits, spam-rate holds, Meta's own faults. */
const RETRYABLE_CODES = new Set([4, 80007, 130429, 131000, 131016, 131048, 131049, 131056, 133004]);
/** Cloud API error codes that say the person stopped the business's messages (blocked it, or stopped marketing). */
export const OPT_OUT_CODES = new Set([131050]);

interface GraphError {
  code?: number;
  message?: string;
  error_subcode?: number;
  title?: string;
}

/**
 * What a Cloud API refusal means for the engine: 131047 is the closed customer-service window, 131050 an opt-out (the
 * number then opted out),
 * 132001 a template Meta does not have in that language (`template_not_approved`: it cannot be sent); rate limits
 * and 5xx may pass later; anything else is final for this message.
 */
export function cloudApiFailure(status: number, error: GraphError | undefined): ProviderError {
  const code = error?.code;
  const providerCode = code === undefined ? `http_${status}` : `whatsapp_${code}`;
  const message = `${error?.message ?? `HTTP ${status}`}${code === undefined ? '' : ` (${code})`}`;
  if (code === 131047) return new ProviderError(message, { reason: 'outside_service_window', retryable: false, providerCode });
  if (code !== undefined && OPT_OUT_CODES.has(code)) return new ProviderError(message, { reason: 'recipient_opted_out', retryable: false, providerCode, deadRecipient: 'opted_out' });
  if (code === 132001 || code === 132015 || code === 132016) return new ProviderError(message, { reason: 'template_not_approved', retryable: false, providerCode });
  const retryable = (code !== undefined && RETRYABLE_CODES.has(code)) || status === 429 || status >= 500;
  return new ProviderError(message, { reason: 'provider_error', retryable, providerCode });
}

/** The Cloud API's JSON of one message. */
export function messageBody(item: WhatsAppItem): Record<string, unknown> {
  const base = { messaging_product: 'whatsapp', recipient_type: 'individual', to: item.to };
  const { content } = item;
  if (content.type === 'text') return { ...base, type: 'text', text: { body: content.text, preview_url: false } };
  const { name, language, components } = content.template;
  return { ...base, type: 'template', template: { name, language: { code: language }, ...(components ? { components } : {}) } };
}

const graphUrl = (options: CloudApiOptions, path: string) => `${options.graphUrl.replace(/\/+$/, '')}/${options.version}/${path}`;

export function createCloudApiProvider(options: CloudApiOptions): ChannelProvider<WhatsAppItem> {
  return {
    name: 'whatsapp-cloud-api',
    // The Cloud API takes one message per request.
    send: (items) =>
      Promise.all(
        items.map(async (item): Promise<SendOutcome> => {
          const { account } = item;
          if (account?.provider !== 'meta') return { ok: false, error: new ProviderError('no WhatsApp account for this message', { reason: 'provider_not_configured', retryable: false, providerCode: 'no_account' }) };
          let response: Response;
          try {
            response = await fetch(graphUrl(options, `${encodeURIComponent(account.phoneNumberId)}/messages`), {
              method: 'POST',
              headers: { authorization: `Bearer ${account.accessToken}`, 'content-type': 'application/json' },
              body: JSON.stringify(messageBody(item)),
              signal: AbortSignal.timeout(options.timeoutMs),
            });
          } catch (error) {
            const name = (error as Error).name;
            return { ok: false, error: new ProviderError((error as Error).message, { reason: 'provider_error', retryable: true, providerCode: name === 'TimeoutError' ? 'timeout' : 'network_error' }) };
          }
          const answer = (await response.json().catch(() => undefined)) as { messages?: { id?: string }[]; error?: GraphError } | undefined;
          if (!response.ok) return { ok: false, error: cloudApiFailure(response.status, answer?.error) };
          const id = answer?.messages?.[0]?.id;
          return { ok: true, providerCode: `http_${response.status}`, providerMessageId: id };
        }),
      ),
    close: async () => {},
  };
}

/** What reading a phone number said: how Meta shows it, or who refused — Meta the token or the number, or the network Meta. */
export type PhoneNumberCheck =
  | { ok: true; displayPhoneNumber: string | undefined; verifiedName: string | undefined }
  | { ok: false; refused: 'token' | 'phone_number' | 'unreachable'; message: string };

/**
 * Reads a business phone number with the project's token (`GET /{phone-number-id}`): Meta's 190 (and 401, 403) is a
 * token it does not take, any other refusal a phone number id it does not know for that token.
 */
export async function readPhoneNumber(options: CloudApiOptions, account: CloudApiAccount): Promise<PhoneNumberCheck> {
  let response: Response;
  try {
    response = await fetch(`${graphUrl(options, encodeURIComponent(account.phoneNumberId))}?fields=display_phone_number,verified_name`, {
      headers: { authorization: `Bearer ${account.accessToken}` },
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (error) {
    return { ok: false, refused: 'unreachable', message: `Meta unreachable: ${(error as Error).message}` };
  }
  const answer = (await response.json().catch(() => undefined)) as { display_phone_number?: unknown; verified_name?: unknown; error?: GraphError } | undefined;
  if (response.ok) {
    const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
    return { ok: true, displayPhoneNumber: text(answer?.display_phone_number), verifiedName: text(answer?.verified_name) };
  }
  const code = answer?.error?.code;
  const message = `${answer?.error?.message ?? `HTTP ${response.status}`}${code === undefined ? '' : ` (${code})`}`;
  if (response.status >= 500) return { ok: false, refused: 'unreachable', message };
  return { ok: false, refused: code === 190 || response.status === 401 || response.status === 403 ? 'token' : 'phone_number', message };
}

/** One template as the business account lists it. */
export interface ProviderTemplate {
  id: string | undefined;
  name: string;
  language: string;
  category: string;
  status: string;
  components: Record<string, unknown>[];
}

/**
 * Every template of a WhatsApp Business Account (`GET /{waba-id}/message_templates`, following its pages). A refusal
 * is thrown with what Meta said.
 */
export async function listMessageTemplates(options: CloudApiOptions, account: { wabaId: string; accessToken: string }): Promise<ProviderTemplate[]> {
  const templates: ProviderTemplate[] = [];
  let url: string | undefined = `${graphUrl(options, `${encodeURIComponent(account.wabaId)}/message_templates`)}?fields=id,name,language,category,status,components&limit=100`;
  // A business account has at most a few thousand templates: the page count is bounded all the same.
  for (let page = 0; url !== undefined && page < 100; page++) {
    const response: Response = await fetch(url, { headers: { authorization: `Bearer ${account.accessToken}` }, signal: AbortSignal.timeout(options.timeoutMs) });
    const answer = (await response.json().catch(() => undefined)) as
      | { data?: Partial<ProviderTemplate>[]; paging?: { next?: string }; error?: GraphError }
      | undefined;
    if (!response.ok) throw new Error(`Meta refused to list the templates: ${answer?.error?.message ?? `HTTP ${response.status}`}`);
    for (const row of answer?.data ?? []) {
      if (typeof row.name !== 'string' || typeof row.language !== 'string') continue;
      templates.push({
        id: typeof row.id === 'string' ? row.id : undefined,
        name: row.name,
        language: row.language,
        category: String(row.category ?? 'UTILITY').toUpperCase(),
        status: String(row.status ?? 'PENDING').toUpperCase(),
        components: Array.isArray(row.components) ? row.components : [],
      });
    }
    url = answer?.paging?.next;
  }
  return templates;
}
