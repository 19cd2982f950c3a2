// Meta's WhatsApp Cloud API (Graph): sending messages, reading a business account's templates, and what its error codes mean.
import { ProviderError, type ChannelProvider, type SendOutcome } from '../../channel.js';
import type { DeadRecipient, DeliveryReason } from '../../delivery-reason.js';
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

interface GraphError {
  code?: number;
  message?: string;
  error_subcode?: number;
  title?: string;
}

/** Meta's error code as a delivery's provider code, as `twilio_<code>` is Twilio's: `meta_131047`. */
export const metaProviderCode = (code: number | string) => `meta_${code}`;

/** What a Cloud API error code means for the message: its spec 7.4 reason, what it says of the number, whether it may pass. */
export interface MetaRefusal {
  reason: DeliveryReason;
  deadRecipient?: DeadRecipient | undefined;
  retryable: boolean;
}

/**
 * Meta's error codes, at the send and in a failed status callback alike: 131047 (re-engagement: the 24-hour
 * customer-service window is closed) → `outside_service_window`; 131050 (the person stopped the business's messages)
 * → `recipient_opted_out`, the number then opted out; 132001 (no template of that name in that language), 132015 and
 * 132016 (the template paused or disabled) → `template_not_approved`; rate limits, spam-rate holds and Meta's own
 * faults may pass later; anything else → `provider_error`.
 */
export function metaRefusal(code: number | undefined): MetaRefusal {
  if (code === 131047) return { reason: 'outside_service_window', retryable: false };
  if (code === 131050) return { reason: 'recipient_opted_out', retryable: false, deadRecipient: 'opted_out' };
  if (code === 132001 || code === 132015 || code === 132016) return { reason: 'template_not_approved', retryable: false };
  return { reason: 'provider_error', retryable: code !== undefined && RETRYABLE_CODES.has(code) };
}

/** What a Cloud API refusal of a send means for the engine: metaRefusal's, and 429 and 5xx may pass later too. */
export function cloudApiFailure(status: number, error: GraphError | undefined): ProviderError {
  const code = error?.code;
  const providerCode = code === undefined ? `http_${status}` : metaProviderCode(code);
  const message = `${error?.message ?? `HTTP ${status}`}${code === undefined ? '' : ` (${code})`}`;
  const refused = metaRefusal(code);
  const retryable = refused.reason === 'provider_error' && (refused.retryable || status === 429 || status >= 500);
  return new ProviderError(message, { reason: refused.reason, retryable, providerCode, deadRecipient: refused.deadRecipient });
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
          const answer = (await response.json().catch(() => undefined)) as { messages?: { id?: string; message_status?: string }[]; error?: GraphError } | undefined;
          if (!response.ok) return { ok: false, error: cloudApiFailure(response.status, answer?.error) };
          const [sent] = answer?.messages ?? [];
          // Meta's word for the message it took (`accepted`, or `held_for_quality_assessment` …), as Twilio's is kept.
          const status = typeof sent?.message_status === 'string' && /^[a-z_]{1,40}$/.test(sent.message_status) ? sent.message_status : 'accepted';
          return { ok: true, providerCode: metaProviderCode(status), providerMessageId: sent?.id };
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
