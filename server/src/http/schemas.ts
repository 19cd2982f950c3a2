// Schemas shared by every route: the error envelope, pagination and common path parameters.
import { z } from 'zod';

export const errorEnvelope = z
  .object({
    statusCode: z.number().int().describe('Equals the HTTP status'),
    code: z.string().describe('Stable machine-readable error code'),
    message: z.string().describe('Human-readable message'),
    requestId: z.string().describe('Id of the request; quote it to support'),
    details: z
      .array(z.object({ field: z.string(), error: z.string() }))
      .optional()
      .describe('Only on 422: one entry per failing field'),
  })
  .meta({ id: 'Error' });

export const paginationQuery = {
  page: z.coerce.number().int().min(1).default(1).describe('1-based page number'),
  pageSize: z.coerce.number().int().min(1).max(100).default(20).describe('Items per page (max 100)'),
};

export const paginated = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), page: z.number().int(), pageSize: z.number().int(), total: z.number().int() });

export const timestamp = z.string().describe('ISO 8601 timestamp');

export const timezone = z
  .string()
  .max(64)
  .refine((zone) => {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
      return true;
    } catch {
      return false;
    }
  }, 'must be an IANA time zone such as Europe/Paris');

/** Error responses every authenticated route can produce, for the OpenAPI document. */
export const commonErrors = {
  400: errorEnvelope,
  401: errorEnvelope,
  403: errorEnvelope,
  404: errorEnvelope,
  422: errorEnvelope,
  429: errorEnvelope,
} as const;
