// Why an email open or click was likely made by a machine (a proxy, a security scanner), not the recipient.

/** What a tracking request tells of its maker. */
export interface TrackingRequest {
  /** Unknown for a provider's Open or Click event, which names no method. */
  method: string | undefined;
  userAgent: string | undefined;
  ip: string;
}

/**
 * Clicks of one delivery following this many distinct links within BURST_WINDOW_MS are a scanner following every link
 * of the mail (`link_burst`): a person reads, clicks, and comes back to the mail before the next link — two links
 * opened in new tabs at once happen, three within a second do not.
 */
export const BURST_LINKS = 3;
export const BURST_WINDOW_MS = 1000;

// Link scanners (Safe Links, Mimecast, Proofpoint, Barracuda …), crawlers and HTTP libraries; not the mail clients'
// image proxies (GoogleImageProxy, YahooMailProxy), which fetch when the person opens the mail.
const SCANNER_AGENT =
  /bot\b|crawl|spider|slurp|scan|safelinks|mimecast|proofpoint|urldefense|barracuda|fortiguard|trendmicro|symantec|sophos|python|curl|wget|go-http-client|java\/|okhttp|libwww|httpclient|headless|phantomjs|node-fetch|axios|undici/i;

/** Apple's 17.0.0.0/8, as an IPv4 address or its IPv6-mapped form. */
const APPLE_NETWORK = /^(::ffff:)?17\.\d{1,3}\.\d{1,3}\.\d{1,3}$/i;

/**
 * The signals of a likely machine event that its request tells, none for a likely person — recorded in the event's
 * `detail.machine` so figures can be shown with and without them:
 * - `head_request`: browsers follow links with GET; HEAD is a checker;
 * - `no_user_agent`, `scanner_user_agent`: nothing, or a known scanner, crawler or HTTP library;
 * - `apple_mpp` (opens): Apple Mail Privacy Protection fetches every image of every mail through Apple's proxies as
 *   it arrives, with the bare agent `Mozilla/5.0` from Apple's network, whether or not the mail is read.
 * How soon after the send a click comes is no signal: a person who clicks as the mail arrives is a person. A click
 * burst (`link_burst`, BURST_LINKS) is told by the log, not by one request.
 */
export function machineSignals(kind: 'opened' | 'clicked', request: TrackingRequest): string[] {
  const signals: string[] = [];
  const agent = request.userAgent?.trim() ?? '';
  if (request.method === 'HEAD') signals.push('head_request');
  if (agent === '') signals.push('no_user_agent');
  else if (SCANNER_AGENT.test(agent)) signals.push('scanner_user_agent');
  if (kind === 'opened' && (agent === 'Mozilla/5.0' || APPLE_NETWORK.test(request.ip))) signals.push('apple_mpp');
  return signals;
}
