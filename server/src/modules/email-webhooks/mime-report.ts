// The parts of a top-level `multipart/report` (RFC 6522): DSNs and ARF complaint reports come back as one.
import type { ParsedMail } from 'mailparser';

export interface ReportPart {
  /** The part's Content-Type, lower-cased, without parameters. */
  type: string;
  body: string;
}

/**
 * The parts of `mail` when it is a `multipart/report`, else undefined; what it reports is told by its parts' types
 * (its `report-type` parameter is not relied on). mailparser folds a report's machine-readable parts into the text,
 * so the report is split on its own boundary here.
 */
export function reportParts(mail: ParsedMail, raw: Buffer): ReportPart[] | undefined {
  const type = mail.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
  const boundary = type?.params?.boundary;
  if (type?.value?.toLowerCase() !== 'multipart/report' || !boundary) return undefined;
  return raw
    .toString('utf8')
    .split(`--${boundary}`)
    .slice(1)
    .map((part) => {
      const [head = '', ...body] = part.replace(/^\r?\n/, '').split(/\r?\n\r?\n/);
      const partType = /^content-type:\s*([^;\s]+)/im.exec(head)?.[1]?.toLowerCase() ?? 'text/plain';
      return { type: partType, body: body.join('\r\n\r\n') };
    });
}

/** The header-style fields of one block (a report's fields, a quoted message's headers), names lower-cased. */
export function headerFields(block: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) map.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return map;
}
